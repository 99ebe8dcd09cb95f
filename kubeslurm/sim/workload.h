// A trace mapped onto a cluster: core::Job values ready for replay, and the cluster they run on.
//
// SWF jobs are rigid processor counts; they become GPU jobs by one rule: a cluster of N nodes
// with G GPUs each, one processor = one GPU. With G = 1 (the default) a job of P processors asks
// P nodes of one GPU, exactly the trace's machine. With G > 1 a job of P <= G processors asks one
// node with P GPUs, and a larger one ceil(P/G) nodes with ceil(P/nodes) GPUs each (a 13-processor
// job on 8-GPU nodes asks 2 nodes x 7 GPUs: the rounding is reported as allocated, not used).
// Alibaba pods are one-node tasks (see alibaba.h for fractional GPUs) on the trace's node list.
//
// Time limits. Where the trace has the user's requested time it is the limit (the job is killed
// there if it ran longer). Where it has none (-1, as all of Lublin-256), the limit is the actual
// run time times `timeLimitFactor`: 1.0 models perfect user estimates, larger factors the usual
// over-estimation that makes backfill less effective.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/sim/trace.h"

namespace kubeslurm::sim {

// Trace time 0 is replayed at this instant (2026-01-01T00:00:00Z), so that the core sees
// plausible epoch times and never a 0 that it might read as "unset".
inline constexpr core::Time kDefaultEpoch = 1767225600;

// Which account a trace job is charged to, for fair-share. Neither bundled trace carries real
// users (README of traces/), so the rule is explicit and reported with the results:
//   none                  every job in one account, "all"
//   user | group | queue | partition | qos
//                         one account per distinct value: "user-17", "qos-LS"; unknown values
//                         (-1 / empty) go to "<field>-unknown"
//   FIELD%N[@SEED]        N accounts "acct-0".."acct-(N-1)": bucket = splitmix64(fnv1a(value) +
//                         SEED) mod N. FIELD may also be `job` (the job id), which spreads a
//                         trace without users over N accounts deterministically.
// Every account gets one share (equal shares), under the root account "root".
enum class AccountField { kNone, kUser, kGroup, kQueue, kPartition, kQos, kJob };

struct AccountRule {
  AccountField field = AccountField::kNone;
  std::uint32_t buckets = 0;  // 0: one account per distinct value
  std::uint64_t seed = 0;
  std::string text = "none";  // the rule as written, for reports
};

StatusOr<AccountRule> parseAccountRule(std::string_view text);
std::string accountFor(const AccountRule& rule, const TraceJob& job);

struct ClusterShape {
  // Node names; empty: `nodeCount` names "node-001"... (width at least 3). For a topology file,
  // name the nodes as it does.
  std::vector<std::string> nodeNames;
  std::uint32_t nodeCount = 0;    // 0: SWF MaxProcs, else MaxNodes, else the largest job
  std::uint32_t gpusPerNode = 0;  // 0: 1 (one processor = one GPU)
  std::uint64_t cpuMillisPerNode = 64000;
  std::uint64_t memoryBytesPerNode = 512000ULL * 1024 * 1024;  // RealMemory=512000 (MB)
  slurm::TopologyConf topology;
  bool useTraceNodes = true;  // Alibaba: the trace's node list when it has one
};

struct WorkloadOptions {
  ClusterShape cluster;
  AccountRule accounts;
  double timeLimitFactor = 1.0;  // > 0
  core::SchedulerConfig config;
  std::string partition = "batch";
  core::Time epoch = kDefaultEpoch;
};

struct SimJob {
  core::Job job;               // pending, as submitted
  core::Duration runTime = 0;  // what it will run if not killed at its time limit
  std::uint32_t gpuMilli = 0;  // Alibaba: the fraction of each GPU actually asked for
};

struct Workload {
  core::Snapshot cluster;    // nodes, topology, partition, accounts, config; no jobs
  std::vector<SimJob> jobs;  // by submit time, then trace order
  core::Time epoch = kDefaultEpoch;
  std::uint64_t dropped = 0;       // jobs no node set of this cluster could ever hold
  std::vector<std::string> notes;  // the trace's notes, then the mapping's
  std::string accountRule;         // as written
};

// Errors: a trace with no nodes to run on, duplicate job ids, a bad option.
StatusOr<Workload> buildWorkload(const Trace& trace, const WorkloadOptions& options);

}  // namespace kubeslurm::sim

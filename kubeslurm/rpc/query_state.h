// What the query API serves, as plain values: the operator fills it from each scheduling cycle,
// the server turns it into scheduler.proto messages, and the client hands the same values back
// to the CLI. No gRPC type appears here, so neither the controllers nor the CLI's formatters
// compile against gRPC's headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::rpc {

// A job's priority factors, already weighted as sprio prints them, and sshare's rows: the
// scheduling core's own types, which the cycle computes.
using PriorityFactors = core::PriorityFactors;
using FairShareRow = core::FairShareRow;

struct PartitionPriority {
  std::string partition;
  PriorityFactors priority;
};

struct PendingJob {
  std::int64_t jobId = 0;
  std::string namespaceName;
  std::string name;
  std::string partition;
  std::string user;
  std::string account;
  std::string qos;
  std::string reason;
  PriorityFactors priority;
  // A job of several partitions: its priority in each, in the order it names them (sprio's
  // rows); empty for a job of one.
  std::vector<PartitionPriority> partitionPriorities;
  std::int64_t estimatedStart = 0;  // 0: unknown
  std::string estimatedNodes;       // hostlist; "" unknown
  std::int64_t arrayJobId = 0;
  std::int64_t arrayTaskId = -1;
};

struct PriorityWeights {
  std::uint32_t age = 0;
  std::uint32_t fairshare = 0;
  std::uint32_t jobSize = 0;
  std::uint32_t partition = 0;
  std::uint32_t qos = 0;
  std::string tres;  // "GRES/gpu=1000"; "" none
};

struct Statistics {
  std::int64_t serverStart = 0;
  std::uint64_t cycles = 0;
  double lastCycleSeconds = 0;
  double meanCycleSeconds = 0;
  double maxCycleSeconds = 0;
  std::uint32_t jobsConsidered = 0;
  std::uint32_t jobsStarted = 0;
  std::uint32_t jobsBackfilled = 0;
  std::uint32_t backfillDepth = 0;
  std::uint64_t totalJobsStarted = 0;
  std::uint64_t totalJobsBackfilled = 0;
  std::map<std::string, std::int64_t> jobsByState;
};

// sbatch --test-only's answer.
struct TestOnlyAnswer {
  std::int64_t jobId = 0;
  std::int64_t startTime = 0;
  std::uint32_t processors = 0;
  std::string nodes;
  std::string partition;
};

// One cycle's answer to every query. `planTime` 0: no cycle has run (a follower, or a leader
// before its first plan): calls fail with UNAVAILABLE rather than answer with nothing.
struct QueryState {
  std::int64_t planTime = 0;
  std::vector<PendingJob> pending;  // every namespace
  PriorityWeights weights;
  std::vector<FairShareRow> fairShare;
  bool fairTree = true;
  Statistics statistics;
};

}  // namespace kubeslurm::rpc

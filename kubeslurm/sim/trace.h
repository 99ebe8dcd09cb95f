// A workload trace as plain values: what the trace files say, before any mapping onto a
// cluster. Parsers (swf.h, alibaba.h) fill it; workload.h maps it onto core::Job values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kubeslurm::sim {

enum class TraceFormat { kSwf, kAlibaba };

struct TraceJob {
  std::uint64_t id = 0;
  std::int64_t submit = 0;                    // seconds from the trace's origin
  std::int64_t runTime = 0;                   // what it actually ran, seconds (>= 0)
  std::int64_t traceWait = -1;                // the wait the trace recorded; -1 unknown
  std::optional<std::int64_t> requestedTime;  // the user's time limit, seconds

  // SWF: processors requested (else allocated). A rigid job: the mapping onto nodes and GPUs is
  // the workload's choice, not the trace's.
  std::uint32_t procs = 0;

  // Alibaba: one pod is a one-node task asking for these per node.
  std::uint32_t gpus = 0;      // whole GPUs after mapping fractions up (see alibaba.h)
  std::uint32_t gpuMilli = 0;  // thousandths of one GPU the pod asked for per GPU (1000: whole)
  std::uint64_t cpuMillis = 0;
  std::uint64_t memoryBytes = 0;
  std::string gpuSpec;  // required GPU model(s), "" for any

  // Who ran it, as far as the trace says: "" when unknown (-1 in SWF).
  std::string user;
  std::string group;
  std::string queue;
  std::string partition;
  std::string qos;
  std::string name;
  std::int32_t status = -1;  // SWF status: 1 completed, 0 failed, 5 cancelled, -1 unknown
};

struct TraceNode {
  std::string name;
  std::uint32_t gpus = 0;
  std::uint64_t cpuMillis = 0;
  std::uint64_t memoryBytes = 0;
  std::string model;
};

struct Trace {
  TraceFormat format = TraceFormat::kSwf;
  std::vector<TraceJob> jobs;    // in file order
  std::vector<TraceNode> nodes;  // Alibaba's node list; empty for SWF
  // SWF header (";  MaxNodes: 256"); 0 when absent.
  std::uint32_t maxNodes = 0;
  std::uint32_t maxProcs = 0;
  // Records read but not replayable (never ran, unknown size...), with why, one line per cause:
  // "37 jobs skipped: run time -1 (never ran)".
  std::uint64_t skipped = 0;
  std::vector<std::string> notes;
};

}  // namespace kubeslurm::sim

// SWF parser, and the replay of what it accepts: parse; map small traces onto a small cluster;
// replay them through the real scheduler and check the simulator's books.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kubeslurm/sim/simulator.h"
#include "kubeslurm/sim/swf.h"

namespace {

constexpr std::size_t kMaxReplayedJobs = 24;

void replaySmall(const kubeslurm::sim::Trace& trace, std::uint8_t knob) {
  if (trace.jobs.size() > kMaxReplayedJobs) return;
  kubeslurm::sim::WorkloadOptions options;
  options.cluster.nodeCount = 4 + knob % 5U;
  options.cluster.gpusPerNode = 1 + (knob >> 3U) % 4U;
  options.config.policy = static_cast<kubeslurm::core::SchedulingPolicy>(knob % 3U);
  options.timeLimitFactor = 0.5 + (knob >> 5U);
  auto workload = kubeslurm::sim::buildWorkload(trace, options);
  if (!workload.isOk()) return;
  auto result = kubeslurm::sim::simulate(*workload, {});
  if (!result.isOk()) return;
  for (const kubeslurm::sim::JobOutcome& job : result->jobs) {
    if (job.start >= 0 && job.start < job.submit) std::abort();  // started before submitted
  }
  if (result->rejectedStarts != 0) std::abort();  // the scheduler overfilled a node
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = kubeslurm::sim::parseSwf(text);
  if (trace.isOk()) replaySmall(*trace, size == 0 ? 0 : data[0]);
  (void)kubeslurm::sim::parseSwf(text, {.maxRecords = 3});
  return 0;
}

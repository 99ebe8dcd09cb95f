// Alibaba GPU v2023 parsers: the input is a pod list, then optionally "\n---\n" and a node
// list. What parses and is small is replayed through the real scheduler.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kubeslurm/sim/alibaba.h"
#include "kubeslurm/sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t split = text.find("\n---\n");
  const std::string_view pods = text.substr(0, split);
  const std::string_view nodes =
      split == std::string_view::npos ? std::string_view() : text.substr(split + 5);
  auto trace = kubeslurm::sim::parseAlibabaPods(pods);
  auto nodeList = kubeslurm::sim::parseAlibabaNodes(nodes);
  if (!trace.isOk() || !nodeList.isOk()) return 0;
  if (trace->jobs.size() > 24 || nodeList->size() > 16) return 0;
  trace->nodes = std::move(*nodeList);
  kubeslurm::sim::WorkloadOptions options;
  options.config.policy = static_cast<kubeslurm::core::SchedulingPolicy>(size % 3);
  auto workload = kubeslurm::sim::buildWorkload(*trace, options);
  if (!workload.isOk()) return 0;
  auto result = kubeslurm::sim::simulate(*workload, {});
  if (result.isOk() && result->rejectedStarts != 0) std::abort();
  return 0;
}

// srun's command line and the step layout it asks for (outside input: what a batch script
// passes to srun). The first byte picks the allocation (1-4 nodes of 1-8 CPUs); the rest is the
// argument list, one argument per line, parsed against a batch environment that also feeds
// srun's input variables. Each parse that succeeds is laid out over the allocation, and every
// task's environment is computed, so -N/-n/-w/-x/-m values reach the layout code. The same
// arguments are read as salloc's command line too (its own table, -K/--kill-command's signal
// names, SALLOC_* variables).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kubeslurm/inpod/srun_options.h"
#include "kubeslurm/step/step_layout.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace kubeslurm;

using fuzz::splitLines;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t shape = data[0];
  const std::uint32_t nodes = 1 + (shape & 0x3U);
  const std::uint32_t cpus = 1 + ((shape >> 2U) & 0x7U);
  step::StepAllocation allocation;
  allocation.jobId = 7;
  for (std::uint32_t i = 0; i < nodes; ++i) allocation.nodes.push_back("n" + std::to_string(i));
  allocation.ntasks = nodes;
  allocation.cpusPerNode = cpus;
  allocation.gpusPerNode = (shape & 0x20U) != 0 ? 8 : 0;
  const std::map<std::string, std::string> environment = {
      {"SLURM_JOB_ID", "7"},
      {"SLURM_JOB_NUM_NODES", std::to_string(nodes)},
      {"SLURM_NTASKS", std::to_string(nodes)},
      {"SLURM_DISTRIBUTION", (shape & 0x40U) != 0 ? "block" : ""},
      {"SLURM_LABELIO", (shape & 0x80U) != 0 ? "1" : "0"},
  };
  const std::vector<std::string> args = splitLines(data + 1, size - 1);
  (void)inpod::parseSallocArguments(args, {{"SALLOC_KILL_CMD", (shape & 0x10U) != 0 ? "usr1" : ""},
                                           {"SALLOC_PARTITION", "gpu"},
                                           {"SALLOC_BELL", (shape & 0x80U) != 0 ? "1" : "0"}});
  auto parsed = inpod::parseSrunArguments(args, environment);
  if (!parsed.isOk()) return 0;
  auto layout = step::layoutStep(allocation, parsed->request);
  if (!layout.isOk()) return 0;
  for (std::uint32_t node = 0; node < layout->nodes.size(); ++node) {
    const auto tasks = static_cast<std::uint32_t>(layout->nodes[node].tasks.size());
    for (std::uint32_t local = 0; local < tasks; ++local) {
      (void)step::taskEnvironment(allocation, parsed->request, *layout, 0, node, local);
    }
  }
  return 0;
}

// The in-pod tool, `kubeslurm-inpod`: what a rank pod runs. Rank 0 runs `kubeslurm-inpod
// batch-step SCRIPT` (`kubeslurm-inpod allocation` in an interactive allocation, which srun on a
// login host releases), every other rank `kubeslurm-inpod step-agent`, and the script
// finds `srun` and `scontrol` (links to this binary) first on its PATH. It links the in-pod runtime
// only: no scheduler, YAML or Kubernetes client, so that it is small and can carry its own C
// library into any image (docs/runtime.md, "In any image").
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/inpod/entry.h"

namespace {

constexpr std::string_view kUsage =
    "Usage: kubeslurm-inpod step-agent [--listen ADDRESS] [--kill-wait SECONDS]\n"
    "       kubeslurm-inpod batch-step [--listen ADDRESS] [--kill-wait SECONDS] SCRIPT [ARGS...]\n"
    "       kubeslurm-inpod allocation [--listen ADDRESS] [--kill-wait SECONDS]\n"
    "Invoked as srun or scontrol, it is that command (docs/runtime.md).\n";

std::string_view commandName(const char* argv0) {
  std::string_view invoked = argv0 != nullptr ? argv0 : "kubeslurm-inpod";
  if (const auto slash = invoked.rfind('/'); slash != std::string_view::npos) {
    invoked = invoked.substr(slash + 1);
  }
  return invoked;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view invoked = commandName(argc > 0 ? argv[0] : nullptr);
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  if (invoked == "srun") return kubeslurm::inpod::srunMain(args);
  if (invoked == "scontrol") return kubeslurm::inpod::scontrolMain(args);
  if (!args.empty()) {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "step-agent") return kubeslurm::inpod::stepAgentMain(rest);
    if (args[0] == "batch-step") return kubeslurm::inpod::batchStepMain(rest);
    if (args[0] == "allocation") return kubeslurm::inpod::allocationMain(rest);
    if (args[0] == "--help" || args[0] == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  std::cerr << kUsage;
  return 2;
}

// `scontrol` in a rank pod. The in-pod tool answers what a batch script asks without a controller
// (`scontrol show hostnames "$SLURM_JOB_NODELIST"`, `show hostlist`, `show hostlistsorted`), as
// the CLI's scontrol does (slurm/hostlist_show.h); every other command goes to the full CLI
// (`kubeslurm`) when the job's image has it on PATH, since only it talks to the cluster.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::inpod {

struct ScontrolIo {
  std::ostream& out;
  std::ostream& err;
  std::function<std::optional<std::string>(std::string_view)> getenv;
  std::function<StatusOr<std::string>(const std::string&)> readFile;
};

// `scontrol show <hostnames|hostlist|hostlistsorted>[=VALUE] [VALUE]`: prints as scontrol does
// and returns its exit code. nullopt: any other command line, which needs the cluster.
std::optional<int> runOfflineScontrol(const std::vector<std::string>& args, ScontrolIo& io);

// What runOfflineScontrol leaves to the full CLI: exec of `kubeslurm` found on PATH, as
// `scontrol`; where the image has none, scontrol's error saying so (exit code 1).
int runFullScontrol(const std::vector<std::string>& args);

}  // namespace kubeslurm::inpod

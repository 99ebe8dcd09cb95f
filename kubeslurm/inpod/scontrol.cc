#include "kubeslurm/inpod/scontrol.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include "kubeslurm/slurm/hostlist_show.h"

namespace kubeslurm::inpod {
namespace {

// The full CLI's name: in the job's image, from the kubeslurm-client package. The tools the
// init container copies hold no file of that name, so a PATH lookup never finds this binary.
constexpr const char* kFullCli = "kubeslurm";

}  // namespace

std::optional<int> runOfflineScontrol(const std::vector<std::string>& args, ScontrolIo& io) {
  // Only `show ENTITY[=VALUE] [VALUE]`, nothing before or after: options and interactive mode
  // are the full scontrol's. "sho" is the shortest `show` scontrol takes.
  if (args.size() < 2 || args.size() > 3 ||
      !slurm::scontrolKeywordMatches(args[0], "show", std::max<std::size_t>(args[0].size(), 3))) {
    return std::nullopt;
  }
  const slurm::ShowOperand operand =
      slurm::splitShowOperand(args[1], args.size() == 3 ? &args[2] : nullptr);
  const std::optional<slurm::HostlistEntity> entity =
      slurm::hostlistEntity(args[1], operand.tagLength);
  if (!entity) return std::nullopt;
  const slurm::HostlistShown shown =
      slurm::showHostlistEntity(*entity, operand.value, io.getenv, io.readFile, io.out, io.err);
  return shown.failed || shown.fatal ? 1 : 0;
}

int runFullScontrol(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"scontrol"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  std::cout.flush();
  ::execvp(kFullCli, pointers.data());
  if (errno != ENOENT) {
    // One thread here: strerror's static buffer cannot race.
    const char* why = std::strerror(errno);  // NOLINT(concurrency-mt-unsafe)
    std::cerr << "scontrol: error: " << kFullCli << ": " << why << "\n";
    return 1;
  }
  std::cerr << "scontrol: error: this job's image has kubeslurm's in-pod tools only, which answer "
               "`scontrol show hostnames|hostlist|hostlistsorted`; the commands the cluster "
               "answers need the full CLI (the kubeslurm-client package) in the image\n";
  return 1;
}

}  // namespace kubeslurm::inpod

// The `kubeslurm` binary: wires the real process environment into the testable CLI.
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "kubeslurm/cli/allocation.h"
#include "kubeslurm/cli/cli.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/login_steps.h"
#include "kubeslurm/inpod/entry.h"
#include "kubeslurm/inpod/srun_options.h"

namespace {

kubeslurm::StatusOr<std::string> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return kubeslurm::notFound("Unable to open file " + path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::int32_t localUtcOffset(std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  return static_cast<std::int32_t>(local.tm_gmtoff);
}

// The CLI's streams, environment, files and clock: the process's.
kubeslurm::cli::CliIo processIo() {
  const std::time_t now = std::time(nullptr);
  return kubeslurm::cli::CliIo{
      .in = std::cin,
      .out = std::cout,
      .err = std::cerr,
      .getenv = [](std::string_view name) -> std::optional<std::string> {
        // The CLI is single-threaded and never sets variables, so getenv cannot race.
        const char* value =
            std::getenv(std::string(name).c_str());  // NOLINT(concurrency-mt-unsafe)
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      },
      .readFile = readWholeFile,
      .now = static_cast<std::int64_t>(now),
      .utcOffsetSeconds = localUtcOffset(now),
      .errIsTerminal = isatty(STDERR_FILENO) == 1,
  };
}

// srun --test-only outside a job asks the operator, as sbatch --test-only does (the CLI's); any
// other srun runs a step inside a job (the in-pod tool's), which also says what it cannot do.
std::optional<int> srunTestOnly(const std::vector<std::string>& args) {
  if (std::getenv("SLURM_JOB_ID") != nullptr) return std::nullopt;  // NOLINT(concurrency-mt-unsafe)
  const auto parsed =
      kubeslurm::inpod::parseSrunArguments(args, kubeslurm::inpod::processEnvironment());
  if (!parsed.isOk() || !parsed->testOnly || parsed->help || parsed->usage || parsed->version) {
    return std::nullopt;
  }
  kubeslurm::cli::CliIo io = processIo();
  for (const std::string& line : parsed->warnings) io.err << line << "\n";
  return kubeslurm::cli::runSrunTestOnly(parsed->options, parsed->command, io);
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view invoked = argc > 0 ? argv[0] : "kubeslurm";
  if (auto slash = invoked.rfind('/'); slash != std::string_view::npos) {
    invoked = invoked.substr(slash + 1);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  // srun owns real signals and threads, so it runs outside runCli().
  if (invoked == "srun") {
    if (const std::optional<int> code = srunTestOnly(args)) return *code;
    // NOLINTBEGIN(concurrency-mt-unsafe): one thread, and nothing sets variables
    const bool inJob = std::getenv("SLURM_JOB_ID") != nullptr;
    const bool inSalloc = inJob &&
                          std::getenv(kubeslurm::cli::kAllocationVariable.data()) != nullptr &&
                          std::getenv("KUBESLURM_STEP_TOKEN") == nullptr;
    // NOLINTEND(concurrency-mt-unsafe)
    kubeslurm::cli::CliIo io = processIo();
    // On a login host srun makes its own allocation, or steps in salloc's (issue 19).
    if (!inJob) return kubeslurm::cli::runLoginSrun(args, io);
    if (inSalloc) return kubeslurm::cli::runSrunInAllocation(args, io);
    return kubeslurm::inpod::srunMain(args);
  }
  if (invoked == "salloc") {
    kubeslurm::cli::CliIo io = processIo();
    return kubeslurm::cli::runSalloc(args, io);
  }
  if (invoked == "sattach") {
    kubeslurm::cli::CliIo io = processIo();
    return kubeslurm::cli::runSattach(args, io);
  }
  kubeslurm::cli::CliIo io = processIo();
  return kubeslurm::cli::runCli(invoked, args, io);
}

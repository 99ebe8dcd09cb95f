// The `kubeslurm` binary: wires the real process environment into the testable CLI.
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include "kubeslurm/cli/cli.h"
#include "kubeslurm/inpod/entry.h"

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

}  // namespace

int main(int argc, char** argv) {
  std::string_view invoked = argc > 0 ? argv[0] : "kubeslurm";
  if (auto slash = invoked.rfind('/'); slash != std::string_view::npos) {
    invoked = invoked.substr(slash + 1);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  // srun owns real signals and threads, so it runs outside runCli(). Outside a job it says that
  // it runs steps inside one.
  if (invoked == "srun") return kubeslurm::inpod::srunMain(args);
  const std::time_t now = std::time(nullptr);
  kubeslurm::cli::CliIo io{
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
  return kubeslurm::cli::runCli(invoked, args, io);
}

// What the differential tests need to run the real Slurm beside ours: a scratch directory, and
// a program run to completion with its output captured in files (no pipes to drain, so no
// deadlock on large outputs) under a watchdog.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kubeslurm::diff {

// A directory of its own under the system's temporary directory, removed with everything in it.
class Scratch {
 public:
  explicit Scratch(const std::string& prefix);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::filesystem::path& dir() const { return dir_; }  // empty if it could not be made

  // Writes `contents` to dir()/name; returns the path.
  std::string write(const std::string& name, const std::string& contents) const;

 private:
  std::filesystem::path dir_;
};

std::string readAll(const std::filesystem::path& path);

struct ProgramRun {
  std::string out;
  std::string err;
  int rc = 0;  // the exit code, 128 + the signal, or -1 when it could not be started
};

struct ProgramSpec {
  std::string path;                        // the program, absolute
  std::vector<std::string> args;           // after argv[0] (the program's file name)
  std::map<std::string, std::string> env;  // the whole environment
  std::filesystem::path cwd;               // empty: the test's
  std::chrono::seconds timeLimit{30};      // then SIGKILL
};

// Runs `spec` to its end with stdin /dev/null, its stdout and stderr in files under `scratch`.
ProgramRun runProgram(const ProgramSpec& spec, const Scratch& scratch);

// `strings` as the null-terminated array of pointers exec and posix_spawn take (argv, envp);
// valid while `strings` is unchanged.
std::vector<char*> cStrings(std::vector<std::string>& strings);

// A TCP port on 127.0.0.1 that nothing listened on a moment ago.
int freeLocalPort();

}  // namespace kubeslurm::diff

#include "tests/integration/slurm_diff/real_slurm.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kubeslurm::diff {

Scratch::Scratch(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
}

Scratch::~Scratch() {
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

std::string Scratch::write(const std::string& name, const std::string& contents) const {
  const std::filesystem::path path = dir_ / name;
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

std::string readAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

ProgramRun runProgram(const ProgramSpec& spec, const Scratch& scratch) {
  static std::atomic<int> runs{0};
  const std::string stem = (scratch.dir() / ("run" + std::to_string(runs++))).string();
  const std::string out = stem + ".out";
  const std::string err = stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string cwd = spec.cwd.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<std::string> argStrings = {std::filesystem::path(spec.path).filename().string()};
  argStrings.insert(argStrings.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> envStrings;
  envStrings.reserve(spec.env.size());
  for (const auto& [name, value] : spec.env) envStrings.push_back(name + "=" += value);
  std::vector<char*> argv = cStrings(argStrings);
  std::vector<char*> envp = cStrings(envStrings);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, spec.path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ProgramRun run;
  if (spawned != 0) {
    run.rc = -1;
    run.err = "could not start " + spec.path;
    return run;
  }
  const auto deadline = std::chrono::steady_clock::now() + spec.timeLimit;
  bool killed = false;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  run.out = readAll(out);
  run.err = readAll(err);
  run.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (killed) run.err += "\n[killed by the test's watchdog: ran too long]";
  return run;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

int freeLocalPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API's own cast
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if (bind(fd, generic, sizeof(address)) == 0 && getsockname(fd, generic, &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace kubeslurm::diff

#include "tests/integration/support/operator_process.h"

#include <csignal>
#include <utility>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): for posix_spawn

namespace kubeslurm::testing_support {

OperatorProcess::OperatorProcess(std::string binary, std::string identity, std::string logFile,
                                 std::vector<std::string> extraArgs)
    : binary_(std::move(binary)),
      identity_(std::move(identity)),
      logFile_(std::move(logFile)),
      extraArgs_(std::move(extraArgs)) {}

OperatorProcess::~OperatorProcess() { stop(SIGTERM); }

bool OperatorProcess::start() {
  std::vector<std::string> args = {binary_,
                                   "--kubeconfig",
                                   SandboxEnvironment::env()["KUBECONFIG"],
                                   "--namespace",
                                   "kubeslurm-system",
                                   "--identity",
                                   identity_,
                                   "--scheduling-interval",
                                   "1",
                                   "--min-cycle-interval",
                                   "0.1",
                                   "--kill-wait",
                                   "2",
                                   "--metrics-bind-address",
                                   "127.0.0.1:0",
                                   "--health-probe-bind-address",
                                   "127.0.0.1:0"};
  args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logFile_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0;
}

void OperatorProcess::stop(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = 0;
}

int OperatorProcess::waitForExit(std::chrono::milliseconds timeout) {
  int status = 0;
  const bool ended =
      pid_ > 0 && waitUntil([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
  if (!ended) return -1;
  pid_ = 0;
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

std::size_t OperatorProcess::count(const std::string& needle) const {
  const std::string text = log();
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

bool OperatorProcess::waitForLeadership(std::chrono::milliseconds timeout) const {
  return waitUntil([&] { return count("recovery:") > 0; }, timeout);
}

std::string OperatorProcess::logTail(std::size_t bytes) const {
  const std::string text = log();
  return text.substr(text.size() > bytes ? text.size() - bytes : 0);
}

std::string installCrdsAndOperatorNamespace(const std::string& sourceDir) {
  const CommandResult crds = kubectl("apply -f " + shellQuote(sourceDir + "/crds/"));
  if (crds.exitCode != 0) return "kubectl apply -f crds/: " + crds.output;
  const CommandResult established =
      kubectl("wait --for condition=established --timeout=30s crd --all");
  if (established.exitCode != 0) return "CRDs not established: " + established.output;
  const CommandResult made = kubectl("create namespace kubeslurm-system");
  if (made.exitCode != 0) return "create namespace kubeslurm-system: " + made.output;
  return "";
}

bool waitForServiceAccountToken(const std::string& namespaceName,
                                std::chrono::milliseconds timeout) {
  return waitUntil(
      [&] {
        const CommandResult token = kubectl("-n " + shellQuote(namespaceName) +
                                            " get sa default -o jsonpath={.secrets[0].name}");
        return token.exitCode == 0 && !token.output.empty();
      },
      timeout);
}

}  // namespace kubeslurm::testing_support

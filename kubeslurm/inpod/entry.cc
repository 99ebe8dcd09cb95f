#include "kubeslurm/inpod/entry.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/inpod/agent.h"
#include "kubeslurm/inpod/scontrol.h"
#include "kubeslurm/inpod/srun.h"
#include "kubeslurm/inpod/task_process.h"
#include "kubeslurm/step/pod_contract.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace kubeslurm::inpod {
namespace {

// The signals srun and the launchers act on (srun.c's sig_array, less SIGALRM and SIGPIPE).
constexpr std::array kHandledSignals = {SIGINT, SIGQUIT, SIGCONT, SIGTERM,
                                        SIGHUP, SIGUSR1, SIGUSR2};

sigset_t handledSet() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kHandledSignals) sigaddset(&set, sig);
  return set;
}

// srun's own: the handled signals and SIGWINCH, which a --pty step passes on as its window size
// (srun_pty.c); the launchers leave it alone.
sigset_t srunSet() {
  sigset_t set = handledSet();
  sigaddset(&set, SIGWINCH);
  return set;
}

// Blocks `handled` in every thread (call before any thread exists; children unblock them in
// task_process.cc) and hands each one to `handler` on a thread of its own until the returned
// object is destroyed.
class SignalThread {
 public:
  explicit SignalThread(std::function<void(int)> handler, sigset_t handled = handledSet())
      : handler_(std::move(handler)), waitSet_(handled) {
    // A real-time signal nobody sends us: a queued wake-up that cannot be mistaken for one of
    // the handled signals.
    sigaddset(&waitSet_, kWakeSignal);
    pthread_sigmask(SIG_BLOCK, &waitSet_, nullptr);
    thread_ = std::thread([this] {
      while (true) {
        int sig = 0;
        if (sigwait(&waitSet_, &sig) != 0) continue;
        if (sig == kWakeSignal) return;  // the destructor's: the process is ending
        handler_(sig);
      }
    });
  }
  ~SignalThread() {
    // Wakes the thread at once: every srun ends through here, so a polling wait would add its
    // period to every step.
    pthread_kill(thread_.native_handle(), kWakeSignal);
    thread_.join();
  }
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

 private:
  static inline const int kWakeSignal = SIGRTMIN;

  std::function<void(int)> handler_;
  sigset_t waitSet_;
  std::thread thread_;
};

std::string workingDirectory() {
  std::string buffer(4096, '\0');
  if (getcwd(buffer.data(), buffer.size()) == nullptr) return "/";
  buffer.resize(buffer.find('\0'));
  return buffer;
}

struct LauncherOptions {
  std::string listen;
  std::chrono::milliseconds killWait{std::chrono::seconds(10)};
  std::vector<std::string> operands;
};

// "--listen ADDRESS", "--kill-wait SECONDS", then operands (the first operand ends the options,
// so a script's own arguments are never taken for ours).
std::optional<LauncherOptions> parseLauncher(const std::string& program,
                                             const std::vector<std::string>& args,
                                             const std::map<std::string, std::string>& env) {
  LauncherOptions options;
  const auto port = agentPort(env);
  if (!port.isOk()) {
    std::cerr << program << ": " << port.status().message() << "\n";
    return std::nullopt;
  }
  options.listen = "0.0.0.0:" + std::to_string(*port);
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if ((arg == "--listen" || arg == "--kill-wait") && i + 1 < args.size()) {
      if (arg == "--listen") {
        options.listen = args[++i];
      } else {
        const std::string& text = args[++i];
        const auto seconds = parseInteger<std::uint32_t>(text);
        if (!seconds) {
          std::cerr << program << ": --kill-wait needs a number of seconds: " << text << "\n";
          return std::nullopt;
        }
        options.killWait = std::chrono::seconds(*seconds);
      }
      continue;
    }
    if (arg.starts_with("--")) {
      std::cerr << program << ": unknown option " << arg << "\n";
      return std::nullopt;
    }
    break;
  }
  options.operands.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return options;
}

// The process's umask without changing it (umask(2) can only set it): "Umask:\t0022".
std::string currentUmask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Umask:")) {
      const auto digits = line.find_first_of("01234567");
      return digits == std::string::npos ? "" : line.substr(digits);
    }
  }
  return "";
}

// sbatch --output/--error on the shared volume: the launcher's own stdout and stderr become the
// files, so the script, its sruns and slurmstepd-style messages all land there, as in Slurm.
// Opened as slurmstepd opens them (io.c io_get_file_flags: O_APPEND always, O_TRUNC unless
// --open-mode=append; mode 0666 less the umask). False (and Slurm's message on the pod's log)
// when a file cannot be opened: the job fails, as a batch step whose output cannot be opened.
bool redirectBatchOutput(const std::map<std::string, std::string>& env) {
  const auto get = [&env](std::string_view name) {
    const auto found = env.find(std::string(name));
    return found == env.end() ? std::string() : found->second;
  };
  const std::string out = get(step::kStdoutVariable);
  if (out.empty()) return true;
  const std::string err = get(step::kStderrVariable);
  int flags = O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC;
  if (get(step::kOpenModeVariable) != "append") flags |= O_TRUNC;
  auto openOnto = [flags](const std::string& path, int target, std::string_view what) {
    const int fd = ::open(path.c_str(), flags, 0666);
    if (fd < 0) {
      const int error = errno;
      std::cerr << "slurmstepd: error: Could not open " << what << " file " << path << ": "
                << std::strerror(error) << "\n";  // NOLINT(concurrency-mt-unsafe): one thread
      return false;
    }
    ::dup2(fd, target);
    ::close(fd);
    return true;
  };
  if (!openOnto(out, STDOUT_FILENO, "stdout")) return false;
  if (err.empty() || err == out) {
    ::dup2(STDOUT_FILENO, STDERR_FILENO);
    return true;
  }
  return openOnto(err, STDERR_FILENO, "stderr");
}

int exitStatusOf(int waitStatus) {
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return WEXITSTATUS(waitStatus);
}

}  // namespace

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    environment.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return environment;
}

int srunMain(const std::vector<std::string>& args) {
  return srunThrough(args, processEnvironment(), StepTransport{});
}

void blockSrunSignals() {
  const sigset_t set = srunSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool takePendingInterrupt() {
  sigset_t interrupts;
  sigemptyset(&interrupts);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&interrupts, sig);
  const timespec now{};
  return sigtimedwait(&interrupts, nullptr, &now) > 0;
}

int srunThrough(const std::vector<std::string>& args,
                std::map<std::string, std::string> environment, StepTransport transport) {
  Srun srun(std::move(environment),
            SrunSettings{.workingDirectory = workingDirectory(),
                         .umask = currentUmask(),
                         .inputFd = STDIN_FILENO,
                         .terminalFd = STDOUT_FILENO},
            std::cout, std::cerr);
  if (transport.connect) srun.useTransport(std::move(transport));
  SignalThread signals([&srun](int sig) { srun.onSignal(sig); }, srunSet());
  return srun.run(args);
}

int scontrolMain(const std::vector<std::string>& args) {
  const std::map<std::string, std::string> environment = processEnvironment();
  ScontrolIo io{
      .out = std::cout,
      .err = std::cerr,
      .getenv = [&environment](std::string_view name) -> std::optional<std::string> {
        const auto it = environment.find(std::string(name));
        if (it == environment.end()) return std::nullopt;
        return it->second;
      },
      .readFile = [](const std::string& path) -> StatusOr<std::string> {
        std::ifstream in(path, std::ios::binary);
        if (!in) return notFound("Unable to open file " + path);
        std::ostringstream contents;
        contents << in.rdbuf();
        return contents.str();
      },
  };
  if (std::optional<int> code = runOfflineScontrol(args, io)) return *code;
  return runFullScontrol(args);
}

int stepAgentMain(const std::vector<std::string>& args) {
  const auto env = processEnvironment();
  auto options = parseLauncher("kubeslurm-inpod step-agent", args, env);
  if (!options) return 2;
  std::atomic<bool> stop{false};
  SignalThread signals([&stop](int sig) {
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) stop = true;
  });
  const auto token = env.find(std::string(kTokenVariable));
  auto agent = startAgent(AgentOptions{.listenAddress = options->listen,
                                       .token = token == env.end() ? "" : token->second,
                                       .killWait = options->killWait});
  if (!agent.isOk()) {
    std::cerr << "kubeslurm-inpod step-agent: " << agent.status().message() << "\n";
    return 1;
  }
  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (*agent)->stop();
  return 0;
}

namespace {

// The job's step records as the container's termination message, which the kubelet hands to
// the operator (step/step_records.h). Only where the file exists: the kubelet creates it.
void writeStepRecords(const std::map<std::string, std::string>& env,
                      const std::vector<step::StepRecord>& steps) {
  if (steps.empty()) return;
  const auto configured = env.find(std::string(step::kTerminationLogVariable));
  const std::string path =
      configured != env.end() ? configured->second : std::string(step::kTerminationMessagePath);
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return;
  std::ofstream out(path, std::ios::trunc);
  out << step::encodeStepRecords(steps);
  if (!out) {
    std::cerr << "kubeslurm-inpod batch-step: cannot write the step records to " << path << "\n";
  }
}

}  // namespace

int batchStepMain(const std::vector<std::string>& args) {
  const auto env = processEnvironment();
  auto options = parseLauncher("kubeslurm-inpod batch-step", args, env);
  if (!options) return 2;
  if (options->operands.empty()) {
    std::cerr << "kubeslurm-inpod batch-step: no script to run\n";
    return 2;
  }
  if (!redirectBatchOutput(env)) return 1;
  std::atomic<pid_t> scriptGroup{0};
  // Signals the pod gets (SIGTERM when the job is cancelled or its time runs out) go to the
  // script's whole process group, its sruns included, as slurmstepd signals a batch step.
  SignalThread signals([&scriptGroup](int sig) {
    if (const pid_t group = scriptGroup.load(); group > 0) ::kill(-group, sig);
  });
  std::unique_ptr<Agent> agent;
  if (const auto token = env.find(std::string(kTokenVariable)); token != env.end()) {
    auto started = startAgent(AgentOptions{
        .listenAddress = options->listen, .token = token->second, .killWait = options->killWait});
    if (!started.isOk()) {
      std::cerr << "kubeslurm-inpod batch-step: " << started.status().message() << "\n";
      return 1;
    }
    agent = std::move(*started);
  } else {
    std::cerr << "kubeslurm-inpod batch-step: warning: no " << kTokenVariable
              << ": srun cannot start steps in this job\n";
  }
  auto script = startTask(options->operands, env, "", TaskIo{.captureOutput = false});
  if (!script.isOk()) {
    std::cerr << "kubeslurm-inpod batch-step: " << script.status().message() << "\n";
    return 1;
  }
  std::cerr << script->startMessages << std::flush;
  scriptGroup = script->pid;
  int status = 0;
  while (::waitpid(script->pid, &status, 0) < 0 && errno == EINTR) {
  }
  scriptGroup = 0;
  // Steps the script left running (`srun ... &` without `wait`) end with the job, as in Slurm.
  if (agent) {
    agent->stop();
    writeStepRecords(env, agent->steps());
  }
  return exitStatusOf(status);
}

int allocationMain(const std::vector<std::string>& args) {
  const auto env = processEnvironment();
  auto options = parseLauncher("kubeslurm-inpod allocation", args, env);
  if (!options) return 2;
  // The exit code once known: a Release, or 128 + the signal that ended the pod.
  std::mutex mutex;
  std::condition_variable ended;
  std::optional<int> exitCode;
  auto finish = [&](int code) {
    const std::lock_guard lock(mutex);
    if (!exitCode) exitCode = code;
    ended.notify_all();
  };
  SignalThread signals([&finish](int sig) {
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) finish(128 + sig);
  });
  const auto token = env.find(std::string(kTokenVariable));
  auto agent = startAgent(AgentOptions{.listenAddress = options->listen,
                                       .token = token == env.end() ? "" : token->second,
                                       .killWait = options->killWait},
                          finish);
  if (!agent.isOk()) {
    std::cerr << "kubeslurm-inpod allocation: " << agent.status().message() << "\n";
    return 1;
  }
  int code = 0;
  {
    std::unique_lock lock(mutex);
    ended.wait(lock, [&exitCode] { return exitCode.has_value(); });
    code = *exitCode;
  }
  (*agent)->stop();
  writeStepRecords(env, (*agent)->steps());
  return code;
}

}  // namespace kubeslurm::inpod

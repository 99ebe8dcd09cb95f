#include "kubeslurm/inpod/task_process.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "kubeslurm/base/text.h"

namespace kubeslurm::inpod {
namespace {

constexpr std::string_view kTaskPidVariable = "SLURM_TASK_PID=";
constexpr std::size_t kPidDigits = 20;

// What the child tells its parent through the close-on-exec pipe before it execs: which step
// failed and the errno. Nothing arrives when exec succeeds.
enum class ChildFailure : int { kChdir = 1, kExec = 2, kTerminal = 3 };
struct ChildReport {
  ChildFailure what;
  int error;
};

// Only async-signal-safe calls between fork and exec: the parent may be multi-threaded (gRPC).
void writeAll(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void formatPid(pid_t pid, char* digits) {
  std::array<char, kPidDigits> reversed{};
  std::size_t n = 0;
  auto value = static_cast<unsigned long>(pid);
  do {
    reversed[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0 && n < kPidDigits);
  for (std::size_t i = 0; i < n; ++i) digits[i] = reversed[n - 1 - i];
  digits[n] = '\0';
}

// The descriptors a child starts with: stdin's read side (-1: /dev/null), the output pipes'
// write sides (-1: the agent's own), or the pseudo-terminal's name for all three.
struct ChildIo {
  int stdinRead = -1;
  int stdoutWrite = -1;
  int stderrWrite = -1;
  const char* terminal = nullptr;
  int terminalMaster = -1;
};

[[noreturn]] void runChild(const ChildIo& io, int reportWrite,
                           const std::vector<std::string>& candidates, char* const* argv,
                           char* const* envp, char* taskPidDigits, const char* workingDirectory) {
  // The agent may block or ignore signals (its own handling); a task starts with the defaults.
  sigset_t none;
  sigemptyset(&none);
  // The child has one thread: sigprocmask is the async-signal-safe call here.
  sigprocmask(SIG_SETMASK, &none, nullptr);  // NOLINT(concurrency-mt-unsafe)
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &defaults, nullptr);

  if (io.terminal != nullptr) {
    // A session of its own whose controlling terminal is the pty: the line discipline then
    // turns a Ctrl-C typed at srun into SIGINT for the task's foreground job, as on a login.
    setsid();
    // The peer straight from the master (Linux 4.13): no path to look up, which a container's
    // /dev (another devpts instance than the master's) could send elsewhere. By name before.
    int terminal = ioctl(io.terminalMaster, TIOCGPTPEER, O_RDWR);
    if (terminal < 0 && io.terminal[0] != '\0') terminal = ::open(io.terminal, O_RDWR);
    if (terminal < 0 || ioctl(terminal, TIOCSCTTY, 0) != 0) {
      const ChildReport report{ChildFailure::kTerminal, errno};
      writeAll(reportWrite, &report, sizeof report);
      _exit(1);
    }
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(terminal, fd);
    if (terminal > STDERR_FILENO) ::close(terminal);
  } else {
    setpgid(0, 0);
    const int input = io.stdinRead >= 0 ? io.stdinRead : ::open("/dev/null", O_RDONLY);
    if (input >= 0) dup2(input, STDIN_FILENO);
    if (io.stdoutWrite >= 0) dup2(io.stdoutWrite, STDOUT_FILENO);
    if (io.stderrWrite >= 0) dup2(io.stderrWrite, STDERR_FILENO);
  }
  formatPid(getpid(), taskPidDigits);

  if (workingDirectory[0] != '\0' && chdir(workingDirectory) != 0) {
    const ChildReport report{ChildFailure::kChdir, errno};
    writeAll(reportWrite, &report, sizeof report);
    if (chdir("/tmp") != 0) {
      // Stay where the agent is: slurmstepd gives up on /tmp the same way.
    }
  }
  int error = ENOENT;
  for (const auto& candidate : candidates) {
    execve(candidate.c_str(), argv, envp);
    // execvp's rule: a permission problem is reported over a later "not found".
    if (errno != ENOENT || error == ENOENT) error = errno;
  }
  const ChildReport report{ChildFailure::kExec, error};
  writeAll(reportWrite, &report, sizeof report);
  _exit(error);
}

}  // namespace

std::string resolveCommand(const std::string& command, const std::string& path) {
  if (command.find('/') != std::string::npos) return command;
  std::string_view rest = path;
  while (true) {
    const auto colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";  // an empty PATH element is the working directory
    std::string candidate = std::move(dir);
    candidate += '/';
    candidate += command;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return "";
}

bool setWindowSize(int inputFd, unsigned rows, unsigned columns) {
  winsize size{};
  size.ws_row = static_cast<unsigned short>(std::min(rows, 0xffffU));
  size.ws_col = static_cast<unsigned short>(std::min(columns, 0xffffU));
  return ::isatty(inputFd) != 0 && ioctl(inputFd, TIOCSWINSZ, &size) == 0;
}

StatusOr<TaskProcess> startTask(const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& environment,
                                const std::string& workingDirectory, const TaskIo& io) {
  if (argv.empty()) return invalidArgument("a task needs a command");

  // Everything the child touches is built before the fork: it may not allocate.
  std::vector<std::string> candidates;
  if (argv[0].find('/') != std::string::npos) {
    candidates.push_back(argv[0]);
  } else {
    const auto path = environment.find("PATH");
    const std::string resolved =
        resolveCommand(argv[0], path == environment.end() ? "" : path->second);
    if (!resolved.empty()) candidates.push_back(resolved);
  }
  std::vector<char*> argvPointers;
  argvPointers.reserve(argv.size() + 1);
  for (const auto& arg : argv) argvPointers.push_back(const_cast<char*>(arg.c_str()));
  argvPointers.push_back(nullptr);

  std::vector<std::string> envStrings;
  envStrings.reserve(environment.size() + 1);
  for (const auto& [name, value] : environment) {
    std::string entry = name;
    entry += '=';
    if (entry == kTaskPidVariable) continue;
    entry += value;
    envStrings.push_back(std::move(entry));
  }
  envStrings.push_back(std::string(kTaskPidVariable) + std::string(kPidDigits + 1, '\0'));
  std::vector<char*> envPointers;
  envPointers.reserve(envStrings.size() + 1);
  for (auto& entry : envStrings) envPointers.push_back(entry.data());
  envPointers.push_back(nullptr);
  char* taskPidDigits = envStrings.back().data() + kTaskPidVariable.size();

  std::array<int, 2> in = {-1, -1};
  std::array<int, 2> out = {-1, -1};
  std::array<int, 2> err = {-1, -1};
  std::array<int, 2> report = {-1, -1};
  int terminal = -1;  // the pty's master side
  std::array<char, 64> terminalName{};
  auto closeAll = [&] {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], report[0], report[1], terminal}) {
      if (fd >= 0) close(fd);
    }
  };
  const bool pipes = io.captureOutput && !io.pty;
  if ((pipes && (pipe2(out.data(), O_CLOEXEC) != 0 || pipe2(err.data(), O_CLOEXEC) != 0)) ||
      (io.input && !io.pty && pipe2(in.data(), O_CLOEXEC) != 0) ||
      pipe2(report.data(), O_CLOEXEC) != 0) {
    const int error = errno;
    closeAll();
    return internalError("pipe: " + errnoText(error));
  }
  if (io.pty) {
    terminal = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (terminal < 0 || grantpt(terminal) != 0 || unlockpt(terminal) != 0) {
      const int error = errno;
      closeAll();
      return internalError("pty: " + errnoText(error));
    }
    // Only the fallback's: ptsname_r checks the name, which a /dev whose devpts is not the
    // master's lacks, where TIOCGPTPEER still opens the peer.
    if (ptsname_r(terminal, terminalName.data(), terminalName.size()) != 0) terminalName[0] = '\0';
    if (io.rows > 0 && io.columns > 0) setWindowSize(terminal, io.rows, io.columns);
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    closeAll();
    return internalError("fork: " + errnoText(error));
  }
  if (pid == 0) {
    runChild(ChildIo{.stdinRead = in[0],
                     .stdoutWrite = out[1],
                     .stderrWrite = err[1],
                     .terminal = io.pty ? terminalName.data() : nullptr,
                     .terminalMaster = terminal},
             report[1], candidates, argvPointers.data(), envPointers.data(), taskPidDigits,
             workingDirectory.c_str());
  }
  // The parent sets the group too: a signal sent right after this returns must already reach
  // the task's group, whichever of the two runs first. Not for a pty task, whose setsid() would
  // fail in a process that already leads a group (it is its own group once it runs).
  if (!io.pty) setpgid(pid, pid);
  for (int fd : {in[0], out[1], err[1], report[1]}) {
    if (fd >= 0) close(fd);
  }

  TaskProcess task;
  task.pid = pid;
  task.stdoutFd = io.pty ? terminal : out[0];
  task.stderrFd = err[0];
  task.inputFd = io.pty ? fcntl(terminal, F_DUPFD_CLOEXEC, 0) : in[1];
  // A task that does not read its input must not stop the agent's writer: writes wait in poll.
  if (task.inputFd >= 0) {
    fcntl(task.inputFd, F_SETFL, fcntl(task.inputFd, F_GETFL) | O_NONBLOCK);
  }
  ChildReport child{};
  std::string messages;
  while (true) {
    const ssize_t n = ::read(report[0], &child, sizeof child);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof child)) break;
    if (child.what == ChildFailure::kTerminal) {
      messages += "slurmstepd: error: pty: ";
      messages += errnoText(child.error);
      messages += '\n';
    } else if (child.what == ChildFailure::kChdir) {
      messages += "slurmstepd: error: couldn't chdir to `";
      messages += workingDirectory;
      messages += "': ";
      messages += errnoText(child.error);
      messages += ": going to /tmp instead\n";
    } else {
      messages += "slurmstepd: error: execve(): ";
      messages += argv[0];
      messages += ": ";
      messages += errnoText(child.error);
      messages += '\n';
    }
  }
  close(report[0]);
  task.startMessages = std::move(messages);
  return task;
}

}  // namespace kubeslurm::inpod

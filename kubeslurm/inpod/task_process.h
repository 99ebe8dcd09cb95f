// Starting one task of a step as slurmstepd starts it: its own process group (so a signal to the
// step reaches everything the task forked), its environment exactly as given (plus
// SLURM_TASK_PID, which only the child knows), the command looked up on the task's own PATH,
// stdout and stderr on pipes the agent streams back to srun, stdin from /dev/null or a pipe
// srun's input is written into; or, for srun --pty, a pseudo-terminal for all three.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

#include "kubeslurm/base/status.h"

namespace kubeslurm::inpod {

struct TaskProcess {
  pid_t pid = -1;     // also the task's process-group id (and session id with a pty)
  int stdoutFd = -1;  // with a pty: its master side, which carries stdout and stderr both
  int stderrFd = -1;
  // Where the task's stdin is written (non-blocking; -1 when it reads /dev/null). With a pty, a
  // descriptor of its own on the master side, also the one window sizes are set on.
  int inputFd = -1;
  // What slurmstepd would have written to the task's stderr before the command ran (a working
  // directory it could not enter, a command it could not execute): the caller sends it first.
  std::string startMessages;
};

struct TaskIo {
  // false: the task writes to the caller's own stdout and stderr (the batch script, whose output
  // is the rank-0 pod's log) and the returned descriptors are -1.
  bool captureOutput = true;
  bool input = false;  // stdin a pipe (TaskProcess::inputFd), not /dev/null
  // A pseudo-terminal for stdin, stdout and stderr, the task's controlling terminal in a session
  // of its own (slurmstepd's --pty task); implies captured output and input. A size of 0 leaves
  // the kernel's.
  bool pty = false;
  unsigned rows = 0;
  unsigned columns = 0;
};

// Forks and executes `argv`. A command that cannot be executed (not found, not executable) is
// still a started task: like slurmstepd's, it writes "slurmstepd: error: execve(): <cmd>: <why>"
// to its stderr and exits with the errno. Errors: kInvalidArgument for an empty argv;
// kInternal when the pipes, the pseudo-terminal or the fork fail.
StatusOr<TaskProcess> startTask(const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& environment,
                                const std::string& workingDirectory, const TaskIo& io = {});

// Sets a pty task's window size (its foreground process group gets SIGWINCH). False when
// `inputFd` is not a terminal.
bool setWindowSize(int inputFd, unsigned rows, unsigned columns);

// The executable execvp would run for `command` given the task's PATH ("" when there is none:
// the caller then lets execve fail with ENOENT). A command with a '/' is itself.
std::string resolveCommand(const std::string& command, const std::string& path);

}  // namespace kubeslurm::inpod

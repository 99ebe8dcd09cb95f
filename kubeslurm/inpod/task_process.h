// Starting one task of a step as slurmstepd starts it: its own process group (so a signal to the
// step reaches everything the task forked), its environment exactly as given (plus
// SLURM_TASK_PID, which only the child knows), the command looked up on the task's own PATH,
// stdout and stderr on pipes the agent streams back to srun.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <sys/types.h>

#include "kubeslurm/base/status.h"

namespace kubeslurm::inpod {

struct TaskProcess {
  pid_t pid = -1;  // also the task's process-group id
  int stdoutFd = -1;
  int stderrFd = -1;
  // What slurmstepd would have written to the task's stderr before the command ran (a working
  // directory it could not enter, a command it could not execute): the caller sends it first.
  std::string startMessages;
};

// Forks and executes `argv`. With `captureOutput` false the task writes to the caller's own
// stdout and stderr (the batch script, whose output is the rank-0 pod's log) and the returned
// descriptors are -1. A command that cannot be executed (not found, not executable) is
// still a started task: like slurmstepd's, it writes "slurmstepd: error: execve(): <cmd>: <why>"
// to its stderr and exits with the errno. Errors: kInvalidArgument for an empty argv;
// kInternal when the pipes or the fork fail.
StatusOr<TaskProcess> startTask(const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& environment,
                                const std::string& workingDirectory, bool captureOutput = true);

// The executable execvp would run for `command` given the task's PATH ("" when there is none:
// the caller then lets execve fail with ENOENT). A command with a '/' is itself.
std::string resolveCommand(const std::string& command, const std::string& path);

}  // namespace kubeslurm::inpod

// srun and salloc on a login host (issue 19): an interactive allocation (allocation.h), steps
// run on it through the operator's step proxy with the caller's own credentials, and the
// allocation released when they are done.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "kubeslurm/cli/cli_io.h"

namespace kubeslurm::cli {

// `srun [options] command...` outside a job (no SLURM_JOB_ID), not --test-only: allocates as
// Slurm's srun does (src/srun/libsrun/allocate.c), runs one step on the allocation with the
// in-job srun's layout, output, signals and exit code, then releases the allocation with that
// exit code (slurm_complete_job), which the job ends with.
int runLoginSrun(const std::vector<std::string>& args, CliIo& io);

// `salloc [options] [command...]`: allocates as srun does (salloc.c: "Granted job allocation N"),
// runs the command (the user's shell without one) on this host with the job's SLURM_* variables
// and kAllocationVariable, so that srun in it runs steps on the allocation, in a process group
// of its own that holds the terminal's foreground while it runs (so that a Ctrl-C is the
// command's, not salloc's); then "Relinquishing job allocation N" and the release with the
// command's exit status. Signals meanwhile: superviseCommand. The job is named "interactive"
// unless -J names it (salloc/opt.c).
int runSalloc(const std::vector<std::string>& args, CliIo& io);

// How salloc's command ended, and what salloc did meanwhile.
struct CommandEnd {
  bool exited = false;  // the command ended; `waitStatus` is waitpid's
  int waitStatus = 0;
  bool hungUp = false;           // SIGHUP came: passed on to the command, salloc stopped waiting
  bool revoked = false;          // a signal revoked the allocation
  bool allocationEnded = false;  // the allocation ended under the command (scancel, time limit)
};

// What salloc hears of its allocation while the command runs (salloc.c _job_complete_handler).
struct AllocationEnd {
  // Polled each turn (every 200 ms at most): whether the allocation has ended, which another
  // thread learns.
  std::function<bool()> ended;
  // Called once when it has and salloc did not revoke it itself: says so.
  std::function<void()> said;
  // -K/--kill-command's signal, then sent to the command's process group; 0: the command runs
  // on (a salloc built without SALLOC_KILL_CMD).
  int killCommandSignal = 0;
};

// What salloc does while its command runs (salloc.c after the grant): SIGHUP is passed on to the
// command's process group and ends the wait (salloc then relinquishes the allocation); SIGINT,
// SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2 revoke the allocation (`revoke`, once: slurm_complete_job
// with NO_VAL, the job CANCELLED) and the wait goes on, the command left to run as a salloc
// built without SALLOC_KILL_CMD leaves it. An allocation that ends elsewhere (`allocationEnd`)
// is said, a foreground process group of the terminal that is neither salloc's nor the
// command's (a job of salloc's shell) gets SIGHUP, and the command -K's signal. Those signals
// and SIGCHLD must be blocked in every thread (runSalloc blocks them before any thread exists).
CommandEnd superviseCommand(pid_t command, const std::function<void()>& revoke,
                            const AllocationEnd& allocationEnd = {});

// salloc's exit status (salloc.c): the command's exit code; 0 when SIGHUP, SIGINT, SIGQUIT or
// SIGKILL ended it ("most likely sent from the user"); 1 otherwise (another signal, or salloc
// stopped waiting).
int sallocExitStatus(const CommandEnd& end);

// `sattach [options] <jobid.stepid>` (src/sattach): the output of a running step of a job in the
// caller's namespace, from now on, through the step proxy (every rank of the job is asked; those
// the step does not run on say so), labelled with -l, filtered with --output-filter and
// --error-filter, "sattach: error: task N exited with exit code C" for each task that fails;
// exits with the highest such code once the step's tasks have all ended (at least 1 when a rank
// could not be asked: "sattach: error: Node H: unable to attach: ..."). --layout prints the
// step's layout as the ranks report it and exits. Detaching (Ctrl-C, a dropped connection)
// leaves the step running.
int runSattach(const std::vector<std::string>& args, CliIo& io);

// srun inside salloc's shell (SLURM_JOB_ID and kAllocationVariable set, no step token): one step
// on the allocation through the step proxy; the allocation stays salloc's.
int runSrunInAllocation(const std::vector<std::string>& args, CliIo& io);

}  // namespace kubeslurm::cli

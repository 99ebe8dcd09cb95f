// srun's command line inside a kubeslurm job: the options that shape a step, the command, and
// srun's own messages for what it cannot accept. Options end at the first operand (srun passes
// everything after the command to it untouched: `srun python -u x.py -n 3` runs `python` with
// `-n 3`), as srun's getopt string starting with '+' makes glibc do. Long options may be
// abbreviated to any unambiguous prefix, with glibc's getopt_long messages; the option table is
// srun 22.05's own (src/common/slurm_opt.c), so what is ambiguous for srun is ambiguous here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/step/step_layout.h"

namespace kubeslurm::inpod {

struct SrunInvocation {
  // The step's shape: srun's input environment first, then the command line (see StepRequest).
  step::StepRequest request;
  std::vector<std::string>
      command;                 // argv of the tasks; empty only for help/usage/version/--test-only
  bool label = false;          // -l/--label (also SLURM_LABELIO): "<task>: " prefixes
  bool killOnBadExit = false;  // -K/--kill-on-bad-exit[=n] (also SLURM_KILL_BAD_EXIT)
  std::optional<std::string> jobName;  // -J as given: SLURM_JOB_NAME of the step's tasks
  // -D/--chdir (also SLURM_REMOTE_CWD, SLURM_WORKING_DIR) as given: srun makes a relative one
  // absolute against its own working directory, which is the caller's to do.
  std::optional<std::string> chdir;
  // -i/--input (also SLURM_STDINMODE) as given: "all", "none", a task id, or a file on srun's
  // host (fname.c fname_create: a number that is not below the step's task count is a file
  // name). Unset: srun's stdin goes to every task.
  std::optional<std::string> input;
  // --pty: task 0 runs on a pseudo-terminal; srun's terminal goes raw and its size follows.
  bool pty = false;
  // --export (SLURM_EXPORT_ENV, SRUN_EXPORT_ENV) split as find_quote_token(); empty: not given
  std::vector<std::string> exportVars;
  // on ','; empty: ALL
  bool help = false;     // -h/--help: print usage, exit 0
  bool usage = false;    // --usage
  bool version = false;  // -V/--version: "slurm 22.05.8"
  int verbose = 0;       // -v, each one (SLURM_DEBUG sets the count)
  bool quiet = false;    // -Q/--quiet
  // Options Slurm accepts that change nothing here (--mpi, --cpu-bind, --gpus-per-task, ...),
  // by long name, so that srun -v can say it ignored them.
  std::vector<std::string> ignored;
  // --test-only: where and when a job of these options would start (slurm_job_will_run); no
  // command is needed. Answered from a login shell (the kubeslurm CLI asks the operator); the
  // in-pod srun refuses it.
  bool testOnly = false;
  // --jobid: run the step in that job (srun_opt->jobid). A login host's srun reaches any job its
  // caller may run steps in through the operator's step proxy; the in-pod srun only its own.
  std::optional<std::int64_t> jobId;
  // Every option of the command line, in order, by its long name (a short option by the first
  // long name of its key: -p is "partition"), with its value when it took one: what an
  // allocation made of srun's options asks for.
  std::vector<std::pair<std::string, std::optional<std::string>>> options;
  // Lines srun prints on stderr and carries on, verbatim ("srun: Job step's --cpus-per-task
  // value exceeds that of job (4 > 2). Job step may never run.").
  std::vector<std::string> warnings;
};

// `args` without argv[0]; `environment` the process's, for the input variables srun reads
// before its command line (src/srun/libsrun/opt.c, env_vars, in that table's order; each also
// with the _PACK_GROUP_0 and _HET_GROUP_0 suffixes): SLURM_DISTRIBUTION, SLURM_EXPORT_ENV,
// SRUN_EXPORT_ENV, SLURM_JOB_NUM_NODES (-N), SLURM_KILL_BAD_EXIT, SLURM_LABELIO, SLURM_NPROCS and
// then SLURM_NTASKS (-n), SLURM_NTASKS_PER_NODE, SLURM_REMOTE_CWD, SLURM_WORKING_DIR,
// SRUN_CPUS_PER_TASK (-c) and SLURM_DEBUG. So inside a batch step the job's task and node
// counts ARE srun's defaults: `srun hostname` in a 4-task job runs 4 tasks. (SLURM_NNODES and
// SLURM_CPUS_PER_TASK are not read: srun 22.05 reads SLURM_JOB_NUM_NODES and
// SRUN_CPUS_PER_TASK.) SLURM_DIST_PLANESIZE gives a bare `-m plane` its size.
//
// Errors carry what srun prints, without the leading "srun: " (lines after the first keep it),
// and the Status code says how srun goes on (see srunPrintsTryHelp, srunExitStatus):
//  - kInvalidArgument: glibc's getopt refused the command line ("invalid option -- 'z'",
//    "option '--nodes' requires an argument", "unrecognized option '--bogus'", "option '--n'
//    is ambiguous; possibilities: '--network' ..."); srun follows it with
//    `Try "srun --help" for more information` and exits 255.
//  - kOutOfRange: an option's value is refused where srun sets it ("error: \"x\" is not a
//    valid node count", "error: Invalid --distribution specification"); exit 255.
//  - kFailedPrecondition: srun gives up later ("error: Invalid numeric value \"0\" for
//    --ntasks.", "fatal: No command given to execute.", "error: don't specify both --verbose
//    (-v) and --quiet (-Q)"); exit 1.
//  - kUnimplemented: an srun feature kubeslurm does not have (--multi-prog, -o/-e,
//    node files, heterogeneous steps); the message starts with "error: "; exit 1.
// Without --test-only, a command is needed ("fatal: No command given to execute.").
StatusOr<SrunInvocation> parseSrunArguments(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& environment);

// salloc's command line (src/salloc/opt.c): the allocation options it shares with srun, read
// from its own table (no step options; its -K is --kill-command) and its own input variables
// (SALLOC_PARTITION, SALLOC_TIMELIMIT, ... which, unlike srun's, are allocation options and so
// are listed in `allocation.options`), and what only salloc has. The command may be empty:
// salloc then runs the user's shell. Errors as parseSrunArguments', the program being salloc.
struct SallocInvocation {
  SrunInvocation allocation;
  bool noShell = false;  // --no-shell: exit once granted, the allocation left to run
  // -K/--kill-command[=signal] (SALLOC_KILL_CMD; SIGTERM without a value): sent to the command
  // when the allocation ends under it (scancel, its time limit). 0: none, as salloc.c without
  // the option (the command runs on).
  int killCommandSignal = 0;
  // --bell / --no-bell (SALLOC_BELL, SALLOC_NO_BELL): ring the terminal's bell once granted;
  // by default only when the wait was longer than DEFAULT_BELL_DELAY (10 s).
  enum class Bell { kAfterDelay, kAlways, kNever };
  Bell bell = Bell::kAfterDelay;
};
StatusOr<SallocInvocation> parseSallocArguments(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& environment);

// Whether srun prints `Try "srun --help" for more information` after the error.
bool srunPrintsTryHelp(const Status& status);
// The exit status srun ends with after the error.
int srunExitStatus(const Status& status);

}  // namespace kubeslurm::inpod

// sbatch's command line, SBATCH_* input variables and #SBATCH directives, parsed with Slurm
// 22.05's semantics into a JobRequest: the content of a SlurmJob's spec.
//
// What is pinned (against the real sbatch 22.05.8 and src/sbatch/{opt,sbatch}.c,
// src/common/{slurm_opt,proc_args}.c; the tests cite each):
//  - getopt_long with a leading '+': options stop at the first operand (the script), "--" ends
//    them, short options combine ("-HN4"), long options take unambiguous prefixes ("--partit"),
//    an ambiguous prefix or unknown option prints glibc's message and "Try "sbatch --help" for
//    more information", exit 255.
//  - Two passes, as sbatch runs them. Pass 1 validates the command line in order (so a bad value
//    there is reported before the script is read). Pass 2 starts afresh: #SBATCH directives,
//    then SBATCH_* variables, then the command line again, so the command line wins.
//  - Directives come only from the leading comment block: scanning stops at the first line with
//    anything but white space before a '#'. Words split as Slurm's get_argument() splits them
//    (quotes group, backslash escapes, an unquoted '#' starts a comment).
//  - Exit codes: 255 for a bad option value (exit(-1)), 1 for parse_int()/fatal(), and
//    SLURM_EXIT_ERROR (default 1) for the rest, as Slurm's error_exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/dependency.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::slurm {

// -N min[-max]. A single count leaves `max` empty (Slurm sets max = min).
struct NodeRange {
  std::uint32_t min = 1;
  std::optional<std::uint32_t> max;
  friend bool operator==(const NodeRange&, const NodeRange&) = default;
};

// One generic resource request: "gpu", "gpu:8", "gpu:a100:2".
struct GresRequest {
  std::string name = "gpu";
  std::string type;  // "a100", or empty for any type
  std::uint64_t count = 1;
  friend bool operator==(const GresRequest&, const GresRequest&) = default;
};

// "gpu:8", "gpu:a100:2" (without Slurm's "gres:" TRES prefix).
std::string formatGres(const GresRequest& gres);
// "gpu:8,gpu:a100:2".
std::string formatGresList(const std::vector<GresRequest>& gres);
// For --gpus* values: "8", "a100:2", "a100:2,v100:1".
std::string formatGpuList(const std::vector<GresRequest>& gpus);
// Parses a --gres value ("gpu:8,gpu:a100:2", "none") or, with `gpusOnly`, a --gpus* value
// ("8", "a100:2") as Slurm's _get_next_gres() does. nullopt for what Slurm rejects with "Invalid
// generic resource (gres) specification"; the only generic resource is "gpu". A list of more
// than kMaxGresEntries entries is refused so: it names more GPU types than a cluster has, and
// every reader of a tenant's spec (the webhook, each scheduling cycle) would pay for its length.
inline constexpr std::size_t kMaxGresEntries = 64;
std::optional<std::vector<GresRequest>> parseGresList(std::string_view text, bool gpusOnly);

struct ContainerSpec {  // Pyxis flags (--container-*)
  std::string image;
  std::vector<std::string> mounts;  // "SRC[:DST[:FLAGS]]" as given, one per entry
  std::string workdir;
  std::vector<std::string> env;  // variable names
  std::string name;              // "NAME[:FLAGS]"
  friend bool operator==(const ContainerSpec&, const ContainerSpec&) = default;
};

// Slurm's opt.shared: --exclusive[=user|mcs] and -s/--oversubscribe write the same field, so the
// last one given wins.
enum class SharedMode { kDefault, kExclusive, kExclusiveUser, kExclusiveMcs, kOversubscribe };

enum class OpenMode { kDefault, kAppend, kTruncate };

// --signal=[{R|B}:]<sig_num>[@sig_time].
struct SignalSpec {
  int number = 0;              // SIGUSR1 = 10 ...
  std::uint32_t seconds = 60;  // before the time limit; Slurm's default is 60
  bool batchOnly = false;      // "B:": only the batch shell
  bool reservation = false;    // "R:": also at the end of a reservation
  friend bool operator==(const SignalSpec&, const SignalSpec&) = default;
};
// As Slurm writes it back (signal_opts_to_cmdline): "B:USR1@90", "TERM" (@60 is implied).
std::string formatSignal(const SignalSpec& signal);
// Parses the --signal text; nullopt for what Slurm rejects ("Invalid --signal specification").
std::optional<SignalSpec> parseSignal(std::string_view text);

// --mail-type as a Slurm bit mask; formatMailType prints it as scontrol does
// ("BEGIN,END,FAIL"). parseMailType is Slurm's parse_mail_type(): unknown words are skipped,
// nullopt when nothing valid was given.
std::optional<std::uint16_t> parseMailType(std::string_view text);
std::string formatMailType(std::uint16_t mask);

// Megabytes as "64G", "1T", "512M": the largest binary unit that divides evenly.
std::string formatMegabytes(std::uint64_t megabytes);
// Slurm's str_to_mbytes(): "4096", "4G", "512m", "1TB"; K rounds up to whole megabytes.
std::optional<std::uint64_t> parseMegabytes(std::string_view text);

// Everything an sbatch invocation asks for, as sbatch would send it to slurmctld: unset
// optionals mean "not given" so that the operator applies defaults (partition, time limit from
// the partition, output file name...) as slurmctld does. Counts are what sbatch itself derives
// before it submits (-w sets the minimum node count, --ntasks-per-node with a fixed node count
// sets --ntasks), so that a SlurmJob reads like `scontrol show job`.
struct JobRequest {
  std::string jobName;  // -J; defaults to the script's file name, "wrap", or "sbatch" (stdin)
  std::string partition;
  std::string account;
  std::string qos;
  std::optional<NodeRange> nodes;
  std::optional<std::uint32_t> ntasks;
  std::optional<std::uint32_t> ntasksPerNode;
  std::optional<std::uint32_t> cpusPerTask;
  // --mincpus: at least this many CPUs on each node (slurmctld's pn_min_cpus, which MinCPUsNode
  // shows as the largest of it, cpus-per-task and cpus-per-task x ntasks-per-node).
  std::optional<std::uint32_t> minCpusPerNode;
  // GPUs. Each list holds "[type:]count" entries as given (comma lists are allowed); entries
  // with a zero count are dropped, as Slurm drops them.
  std::vector<GresRequest> gres;              // --gres, per node
  std::vector<GresRequest> gpus;              // --gpus, per job
  std::vector<GresRequest> gpusPerNode;       // --gpus-per-node
  std::vector<GresRequest> gpusPerTask;       // --gpus-per-task
  std::optional<std::uint64_t> memPerNodeMb;  // --mem; 0 = all of the node's memory
  std::optional<std::uint64_t> memPerCpuMb;   // --mem-per-cpu
  std::optional<std::uint64_t> memPerGpuMb;   // --mem-per-gpu
  std::optional<TimeLimit> timeLimit;         // -t, whole minutes (Slurm rounds up)
  std::optional<TimeLimit> timeMin;           // --time-min
  std::optional<ArraySpec> array;             // -a
  std::string arrayText;                      // -a as given, for display
  std::optional<DependencySpec> dependency;   // -d
  SharedMode shared = SharedMode::kDefault;   // --exclusive / --oversubscribe
  std::optional<bool> requeue;                // --requeue / --no-requeue
  std::string output;     // -o pattern, absolute (relative to the working directory) or empty
  std::string error;      // -e pattern
  std::string input;      // -i pattern; "none" becomes /dev/null as in Slurm
  std::string workDir;    // -D, absolute; the submission directory when not given
  std::string exportEnv;  // --export as given (ALL, NONE, or a list); empty = not given
  // The variables shipped with the job from the submitting environment (shippedEnvironment()):
  // not the whole environment Slurm copies, only what the user named.
  std::map<std::string, std::string> environment;
  std::optional<std::int32_t> nice;
  std::optional<std::uint32_t> priority;  // "TOP" is kPriorityTop
  std::string nodeList;                   // -w, a hostlist expression
  std::string excludeList;                // -x
  std::string constraint;                 // -C
  std::optional<std::uint32_t> switches;  // --switches=count[@max-time]
  bool contiguous = false;                // --contiguous: consecutive nodes
  std::optional<std::int64_t> switchesWaitSeconds;
  std::optional<EpochSeconds> begin;
  std::optional<EpochSeconds> deadline;
  std::optional<SignalSpec> signal;
  OpenMode openMode = OpenMode::kDefault;
  bool hold = false;  // -H
  // An allocation for srun or salloc from a login host (Slurm's batch_flag 0): no script; rank 0
  // holds the nodes and runs the steps the login side sends, until it releases the allocation.
  bool interactive = false;
  bool parsable = false;
  bool testOnly = false;
  std::string wrap;  // --wrap command
  std::string comment;
  std::optional<std::uint16_t> mailType;  // bit mask, see parseMailType
  std::string mailUser;
  ContainerSpec container;
  // Options sbatch accepts that kubeslurm does not act on ("--reservation", "--licenses"...),
  // in the order given, without their values: the CLI warns about them.
  std::vector<std::string> ignoredOptions;
  friend bool operator==(const JobRequest&, const JobRequest&) = default;
};

// Slurm's NO_VAL - 1: --priority=TOP.
inline constexpr std::uint32_t kPriorityTop = 0xfffffffdU;

// What sbatch would do: the request, the script text to run, and the script's arguments.
struct SbatchInvocation {
  JobRequest request;
  // The script as Slurm names it in Command=: a plain relative name is made absolute against the
  // submission directory; "./x" and "/abs/x" stay as typed. Empty with --wrap or stdin.
  std::string scriptPath;
  bool scriptFromStdin = false;
  std::string script;  // the batch script ("#!/bin/sh\n# This script was created ..." for --wrap)
  std::vector<std::string> scriptArgs;
  // Lines sbatch prints to stderr on the way to a successful submission ("sbatch: error: Change
  // from #SLURM to #SBATCH ...", "sbatch: Warning: can't run 1 processes on 2 nodes, ...").
  std::vector<std::string> warnings;
};

// sbatch stops here: a bad option or script (stderr lines, exit 255/1/SLURM_EXIT_ERROR), or
// --help, --usage, --version, --gres=help (stdout lines, exit 0).
struct SbatchExit {
  std::vector<std::string> out;
  std::vector<std::string> err;
  int exitCode = 1;
};

struct SbatchContext {
  EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
  // The submission directory (sbatch's getcwd()); relative -D/-o/-e/-i and the script name are
  // made absolute against it. Empty leaves them as given.
  std::string cwd;
  // Input environment variables sbatch reads (see sbatchInputEnvNames()); others are ignored.
  std::map<std::string, std::string, std::less<>> env;
};

// The environment variables sbatch 22.05 reads as options (SBATCH_ACCOUNT, SBATCH_TIMELIMIT...),
// in the order it applies them, plus SLURM_EXIT_ERROR.
const std::vector<std::string_view>& sbatchInputEnvNames();

// The script the caller must read before parsing can finish.
struct ScriptToRead {
  std::string path;       // resolved as SbatchInvocation::scriptPath; empty = standard input
  std::string operand;    // as typed, for "Unable to open file <operand>"
  int errorExitCode = 1;  // what sbatch exits with when it cannot be read (SLURM_EXIT_ERROR)
};

// Exactly one member is set.
struct SbatchParseResult {
  std::optional<SbatchInvocation> invocation;
  std::optional<SbatchExit> exit;
  std::optional<ScriptToRead> scriptToRead;
};

// argv: the arguments after "sbatch". scriptText: the script's content, or nullopt when the
// caller has not read it yet; then, unless --wrap gives the script or the command line is
// rejected first, the result says which script to read, and the caller calls again with it.
SbatchParseResult parseSbatch(const std::vector<std::string>& argv,
                              const std::optional<std::string>& scriptText,
                              const SbatchContext& context);

// The #SBATCH words of a script's leading comment block, in order ("--nodes=4", "-J", "x"),
// split as Slurm splits a directive line. Stops where Slurm would stop (the first command line,
// a "hetjob" separator, or an unmatched quote, which Slurm treats as fatal).
std::vector<std::string> extractSbatchDirectives(std::string_view script);

// How many argv elements getopt_long would consume as one option token starting at argv[i]:
// 1 or 2 ("-J name", "--nodes 4"), or 0 when argv[i] is an operand (the script) or "--".
// Unknown or ambiguous options count as 1. Lets a front end find its own flags among sbatch's.
std::size_t sbatchOptionSpan(const std::vector<std::string>& argv, std::size_t i);

// Every long option sbatch accepts ("account", "array", ...), for shell completion.
std::vector<std::string_view> sbatchLongOptionNames();

// --export's tokens as find_quote_token() (src/common/env.c) splits them: on commas outside
// quotes, with the quotes around a whole token taken off. srun's --export uses it too.
std::vector<std::string> splitExportTokens(std::string_view text);

// What sbatch ships with `request` from its environment (`getenv`). Slurm copies the whole
// submitting environment into the job (--export=ALL, the default); a SlurmJob is readable by
// everyone who may list the namespace's jobs, so kubeslurm ships only what was named:
// - --export's NAME=VALUE tokens, and its NAME tokens the environment has (env_merge_filter);
// - Pyxis's --container-env names, with their values from the environment, when the job's
//   environment would hold them (no --export, ALL, or a list with ALL; a NAME listed by
//   --export is already there).
// SLURM_* are left out: the job's own are the operator's.
std::map<std::string, std::string> shippedEnvironment(
    const JobRequest& request,
    const std::function<std::optional<std::string>(std::string_view)>& getenv);

}  // namespace kubeslurm::slurm

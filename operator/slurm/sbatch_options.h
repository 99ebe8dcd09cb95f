// sbatch's command line and #SBATCH directives, parsed with Slurm's getopt_long semantics
// into a JobRequest: the content of a SlurmJob's spec.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"
#include "operator/slurm/array_spec.h"
#include "operator/slurm/dependency.h"
#include "operator/slurm/time_format.h"

namespace kubeslurm::slurm {

struct NodeRange {
  std::uint32_t min = 1;
  std::optional<std::uint32_t> max;  // -N min-max
  friend bool operator==(const NodeRange&, const NodeRange&) = default;
};

struct GresRequest {
  std::string name;  // "gpu"
  std::string type;  // "a100", or empty
  std::uint64_t count = 1;
  friend bool operator==(const GresRequest&, const GresRequest&) = default;
};

struct ContainerSpec {  // Pyxis flags
  std::string image;
  std::vector<std::string> mounts;  // "src:dst[:flags]"
  std::string workdir;
  std::vector<std::string> env;
  std::string name;
  friend bool operator==(const ContainerSpec&, const ContainerSpec&) = default;
};

// Everything an sbatch invocation asks for. Unset optionals mean "not given" so that defaults
// (partition, time limit from the partition...) are applied by the operator, as slurmctld does.
struct JobRequest {
  std::string jobName;  // -J; defaults to the script's file name, or "wrap"
  std::string partition;
  std::string account;
  std::string qos;
  std::optional<NodeRange> nodes;
  std::optional<std::uint32_t> ntasks;
  std::optional<std::uint32_t> ntasksPerNode;
  std::optional<std::uint32_t> cpusPerTask;
  std::vector<GresRequest> gres;                 // --gres
  std::optional<std::uint64_t> gpus;             // --gpus (per job)
  std::optional<std::uint64_t> gpusPerNode;      // --gpus-per-node
  std::optional<std::uint64_t> gpusPerTask;      // --gpus-per-task
  std::optional<std::uint64_t> memMegabytes;     // --mem (per node); 0 = all memory
  std::optional<std::uint64_t> memPerCpuMegabytes;
  std::optional<std::uint64_t> memPerGpuMegabytes;
  std::optional<TimeLimit> timeLimit;  // -t
  std::optional<TimeLimit> timeMin;    // --time-min
  std::optional<ArraySpec> array;      // -a
  std::string arrayText;               // as given, for display
  std::optional<DependencySpec> dependency;  // -d
  bool exclusive = false;
  std::optional<bool> requeue;  // --requeue / --no-requeue
  std::string output;           // -o pattern
  std::string error;            // -e pattern
  std::string input;            // -i pattern
  std::string workDir;          // -D
  std::string exportEnv;        // --export (ALL, NONE, or a list)
  std::optional<std::int32_t> nice;
  std::optional<std::uint32_t> priority;
  std::string nodeList;     // -w, a hostlist expression
  std::string excludeList;  // -x
  std::string constraint;   // -C
  std::optional<std::uint32_t> switches;           // --switches=N[@wait]
  std::optional<std::int64_t> switchesWaitSeconds;
  std::optional<EpochSeconds> begin;
  std::optional<EpochSeconds> deadline;
  std::string signal;     // --signal=[{R|B}:]num[@time], as given after validation
  std::string openMode;   // append | truncate
  bool hold = false;      // -H
  bool parsable = false;
  bool testOnly = false;
  std::string wrap;       // --wrap command
  std::string comment;
  std::string mailType;
  std::string mailUser;
  ContainerSpec container;
  friend bool operator==(const JobRequest&, const JobRequest&) = default;
};

// What sbatch would do: the request, the script text to run, and the script's arguments.
struct SbatchInvocation {
  JobRequest request;
  std::string scriptPath;   // empty with --wrap or when the script comes from stdin
  std::string script;       // the batch script (generated "#!/bin/sh\n<wrap>\n" for --wrap)
  std::vector<std::string> scriptArgs;
  // Options not part of the job (our CLI's own, e.g. --dry-run=client, -o yaml) are not here.
};

// A failed parse: the lines Slurm prints (each starts with "sbatch: error: " or is getopt's
// message) and the exit code it returns.
struct SbatchError {
  std::vector<std::string> lines;
  int exitCode = 1;
};

struct SbatchContext {
  EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
  // SBATCH_* input environment variables, as sbatch reads them (SBATCH_PARTITION...).
  std::map<std::string, std::string, std::less<>> env;
};

// Reads #SBATCH directives from the leading comment block of `script` (stops at the first
// command line, as Slurm does) and merges the command line (`argv` without the program name)
// over them: the command line wins. `readScript` is called with the script path found in argv
// when the caller has no script text yet.
struct SbatchParseResult {
  std::optional<SbatchInvocation> invocation;
  std::optional<SbatchError> error;
};
// argv: the arguments after "sbatch". scriptText: the script's content if the caller already
// read it (tests); otherwise nullopt and the result's scriptPath tells which file to read, and
// the caller calls again with the text.
SbatchParseResult parseSbatch(const std::vector<std::string>& argv,
                              const std::optional<std::string>& scriptText,
                              const SbatchContext& context);

// Only the #SBATCH lines of a script, in order ("--nodes=4" ...), split into words as Slurm
// does for one directive line.
std::vector<std::string> extractSbatchDirectives(std::string_view script);

}  // namespace kubeslurm::slurm

#include "kubeslurm/inpod/srun_options.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::inpod {

namespace {

enum class Arg { kNone, kRequired, kOptional };

// One entry of srun 22.05's option table, in the order slurm_option_table_create() builds it
// from common_options[] in src/common/slurm_opt.c (glibc lists ambiguous prefixes in this
// order). `key` is the option's getopt value: its short letter, or a name for LONG_OPT_*;
// aliases share it (--cpu-bind/--cpu_bind, --tasks-per-node/--ntasks-per-node), so a prefix of
// both is not ambiguous, as glibc compares the values.
struct OptionSpec {
  std::string_view name;
  Arg arg;
  std::string_view key;
};

// Taken from 22.05.8's common_options[]: the entries with a name and a setter for srun (x11
// included, as builds with X11 support have it).
constexpr auto kOptions = std::to_array<OptionSpec>({
    {"accel-bind", Arg::kRequired, "accel_bind"},
    {"account", Arg::kRequired, "A"},
    {"acctg-freq", Arg::kRequired, "acctg_freq"},
    {"bcast", Arg::kOptional, "bcast"},
    {"bcast-exclude", Arg::kRequired, "bcast_exclude"},
    {"begin", Arg::kRequired, "b"},
    {"bb", Arg::kRequired, "burst_buffer_spec"},
    {"bbf", Arg::kRequired, "burst_buffer_file"},
    {"cluster-constraint", Arg::kRequired, "cluster_constraint"},
    {"chdir", Arg::kRequired, "D"},
    {"cluster", Arg::kRequired, "cluster"},
    {"clusters", Arg::kRequired, "M"},
    {"comment", Arg::kRequired, "comment"},
    {"compress", Arg::kOptional, "compress"},
    {"container", Arg::kRequired, "container"},
    {"context", Arg::kRequired, "context"},
    {"contiguous", Arg::kNone, "contiguous"},
    {"constraint", Arg::kRequired, "C"},
    {"core-spec", Arg::kRequired, "S"},
    {"cores-per-socket", Arg::kRequired, "corespersocket"},
    {"cpu-bind", Arg::kRequired, "cpu_bind"},
    {"cpu_bind", Arg::kRequired, "cpu_bind"},
    {"cpu-freq", Arg::kRequired, "cpu_freq"},
    {"cpus-per-gpu", Arg::kRequired, "cpus_per_gpu"},
    {"cpus-per-task", Arg::kRequired, "c"},
    {"deadline", Arg::kRequired, "deadline"},
    {"debugger-test", Arg::kNone, "debugger_test"},
    {"delay-boot", Arg::kRequired, "delay_boot"},
    {"dependency", Arg::kRequired, "d"},
    {"disable-status", Arg::kNone, "X"},
    {"distribution", Arg::kRequired, "m"},
    {"epilog", Arg::kRequired, "epilog"},
    {"error", Arg::kRequired, "e"},
    {"exact", Arg::kNone, "exact"},
    {"exclude", Arg::kRequired, "x"},
    {"exclusive", Arg::kOptional, "exclusive"},
    {"export", Arg::kRequired, "export"},
    {"extra-node-info", Arg::kRequired, "B"},
    {"gid", Arg::kRequired, "gid"},
    {"gpu-bind", Arg::kRequired, "gpu_bind"},
    {"gpu-freq", Arg::kRequired, "gpu_freq"},
    {"gpus", Arg::kRequired, "G"},
    {"gpus-per-node", Arg::kRequired, "gpus_per_node"},
    {"gpus-per-socket", Arg::kRequired, "gpus_per_socket"},
    {"gpus-per-task", Arg::kRequired, "gpus_per_task"},
    {"gres", Arg::kRequired, "gres"},
    {"gres-flags", Arg::kRequired, "gres_flags"},
    {"help", Arg::kNone, "h"},
    {"het-group", Arg::kRequired, "het_group"},
    {"hint", Arg::kRequired, "hint"},
    {"hold", Arg::kNone, "H"},
    {"immediate", Arg::kOptional, "I"},
    {"input", Arg::kRequired, "i"},
    {"interactive", Arg::kNone, "interactive"},
    {"jobid", Arg::kRequired, "jobid"},
    {"job-name", Arg::kRequired, "J"},
    {"kill-on-bad-exit", Arg::kOptional, "K"},
    {"label", Arg::kNone, "l"},
    {"licenses", Arg::kRequired, "L"},
    {"mail-type", Arg::kRequired, "mail_type"},
    {"mail-user", Arg::kRequired, "mail_user"},
    {"threads", Arg::kRequired, "T"},
    {"mcs-label", Arg::kRequired, "mcs_label"},
    {"mem", Arg::kRequired, "mem"},
    {"mem-bind", Arg::kRequired, "mem_bind"},
    {"mem-per-cpu", Arg::kRequired, "mem_per_cpu"},
    {"mem-per-gpu", Arg::kRequired, "mem_per_gpu"},
    {"mincpus", Arg::kRequired, "mincpus"},
    {"mpi", Arg::kRequired, "mpi"},
    {"msg-timeout", Arg::kRequired, "msg_timeout"},
    {"multi-prog", Arg::kNone, "multi"},
    {"network", Arg::kRequired, "network"},
    {"nice", Arg::kOptional, "nice"},
    {"no-allocate", Arg::kNone, "Z"},
    {"no-kill", Arg::kOptional, "k"},
    {"nodefile", Arg::kRequired, "F"},
    {"nodelist", Arg::kRequired, "w"},
    {"nodes", Arg::kRequired, "N"},
    {"ntasks", Arg::kRequired, "n"},
    {"ntasks-per-core", Arg::kRequired, "ntaskspercore"},
    {"ntasks-per-gpu", Arg::kRequired, "ntaskspergpu"},
    {"ntasks-per-node", Arg::kRequired, "ntaskspernode"},
    {"ntasks-per-socket", Arg::kRequired, "ntaskspersocket"},
    {"ntasks-per-tres", Arg::kRequired, "ntaskspertres"},
    {"open-mode", Arg::kRequired, "open_mode"},
    {"output", Arg::kRequired, "o"},
    {"overcommit", Arg::kNone, "O"},
    {"overlap", Arg::kOptional, "overlap"},
    {"oversubscribe", Arg::kNone, "s"},
    {"pack-group", Arg::kRequired, "het_group"},
    {"partition", Arg::kRequired, "p"},
    {"power", Arg::kRequired, "power"},
    {"prefer", Arg::kRequired, "prefer"},
    {"preserve-env", Arg::kNone, "E"},
    {"priority", Arg::kRequired, "priority"},
    {"profile", Arg::kRequired, "profile"},
    {"prolog", Arg::kRequired, "prolog"},
    {"propagate", Arg::kOptional, "propagate"},
    {"pty", Arg::kNone, "pty"},
    {"qos", Arg::kRequired, "q"},
    {"quiet", Arg::kNone, "Q"},
    {"quit-on-interrupt", Arg::kNone, "quit_on_intr"},
    {"reboot", Arg::kNone, "reboot"},
    {"relative", Arg::kRequired, "r"},
    {"reservation", Arg::kRequired, "reservation"},
    {"resv-ports", Arg::kOptional, "resv_ports"},
    {"send-libs", Arg::kOptional, "send_libs"},
    {"signal", Arg::kRequired, "signal"},
    {"slurmd-debug", Arg::kRequired, "slurmd_debug"},
    {"sockets-per-node", Arg::kRequired, "socketspernode"},
    {"spread-job", Arg::kNone, "spread_job"},
    {"switches", Arg::kRequired, "switches"},
    {"task-epilog", Arg::kRequired, "task_epilog"},
    {"task-prolog", Arg::kRequired, "task_prolog"},
    {"tasks-per-node", Arg::kRequired, "ntaskspernode"},
    {"test-only", Arg::kNone, "test_only"},
    {"thread-spec", Arg::kRequired, "thread_spec"},
    {"threads-per-core", Arg::kRequired, "threadspercore"},
    {"time", Arg::kRequired, "t"},
    {"time-min", Arg::kRequired, "time_min"},
    {"tmp", Arg::kRequired, "tmp"},
    {"uid", Arg::kRequired, "uid"},
    {"unbuffered", Arg::kNone, "u"},
    {"use-min-nodes", Arg::kNone, "use_min_nodes"},
    {"verbose", Arg::kNone, "v"},
    {"version", Arg::kNone, "V"},
    {"usage", Arg::kNone, "usage"},
    {"wait", Arg::kRequired, "W"},
    {"wckey", Arg::kRequired, "wckey"},
    {"whole", Arg::kNone, "whole"},
    {"x11", Arg::kOptional, "x11"},
});

// salloc 22.05's table, as the srun one: the entries of common_options[] with a setter for
// salloc (its own -K is --kill-command; it has no step options such as --label or --pty).
constexpr auto kSallocOptions = std::to_array<OptionSpec>({
    {"account", Arg::kRequired, "A"},
    {"acctg-freq", Arg::kRequired, "acctg_freq"},
    {"begin", Arg::kRequired, "b"},
    {"bell", Arg::kNone, "bell"},
    {"bb", Arg::kRequired, "burst_buffer_spec"},
    {"bbf", Arg::kRequired, "burst_buffer_file"},
    {"cluster-constraint", Arg::kRequired, "cluster_constraint"},
    {"chdir", Arg::kRequired, "D"},
    {"cluster", Arg::kRequired, "cluster"},
    {"clusters", Arg::kRequired, "M"},
    {"comment", Arg::kRequired, "comment"},
    {"container", Arg::kRequired, "container"},
    {"context", Arg::kRequired, "context"},
    {"contiguous", Arg::kNone, "contiguous"},
    {"constraint", Arg::kRequired, "C"},
    {"core-spec", Arg::kRequired, "S"},
    {"cores-per-socket", Arg::kRequired, "corespersocket"},
    {"cpu-freq", Arg::kRequired, "cpu_freq"},
    {"cpus-per-gpu", Arg::kRequired, "cpus_per_gpu"},
    {"cpus-per-task", Arg::kRequired, "c"},
    {"deadline", Arg::kRequired, "deadline"},
    {"delay-boot", Arg::kRequired, "delay_boot"},
    {"dependency", Arg::kRequired, "d"},
    {"distribution", Arg::kRequired, "m"},
    {"exclude", Arg::kRequired, "x"},
    {"exclusive", Arg::kOptional, "exclusive"},
    {"extra-node-info", Arg::kRequired, "B"},
    {"get-user-env", Arg::kOptional, "get_user_env"},
    {"gid", Arg::kRequired, "gid"},
    {"gpu-bind", Arg::kRequired, "gpu_bind"},
    {"gpu-freq", Arg::kRequired, "gpu_freq"},
    {"gpus", Arg::kRequired, "G"},
    {"gpus-per-node", Arg::kRequired, "gpus_per_node"},
    {"gpus-per-socket", Arg::kRequired, "gpus_per_socket"},
    {"gpus-per-task", Arg::kRequired, "gpus_per_task"},
    {"gres", Arg::kRequired, "gres"},
    {"gres-flags", Arg::kRequired, "gres_flags"},
    {"help", Arg::kNone, "h"},
    {"hint", Arg::kRequired, "hint"},
    {"hold", Arg::kNone, "H"},
    {"immediate", Arg::kOptional, "I"},
    {"job-name", Arg::kRequired, "J"},
    {"kill-command", Arg::kOptional, "K"},
    {"licenses", Arg::kRequired, "L"},
    {"mail-type", Arg::kRequired, "mail_type"},
    {"mail-user", Arg::kRequired, "mail_user"},
    {"mcs-label", Arg::kRequired, "mcs_label"},
    {"mem", Arg::kRequired, "mem"},
    {"mem-bind", Arg::kRequired, "mem_bind"},
    {"mem-per-cpu", Arg::kRequired, "mem_per_cpu"},
    {"mem-per-gpu", Arg::kRequired, "mem_per_gpu"},
    {"mincpus", Arg::kRequired, "mincpus"},
    {"network", Arg::kRequired, "network"},
    {"nice", Arg::kOptional, "nice"},
    {"no-bell", Arg::kNone, "no_bell"},
    {"no-kill", Arg::kOptional, "k"},
    {"no-shell", Arg::kNone, "no_shell"},
    {"nodefile", Arg::kRequired, "F"},
    {"nodelist", Arg::kRequired, "w"},
    {"nodes", Arg::kRequired, "N"},
    {"ntasks", Arg::kRequired, "n"},
    {"ntasks-per-core", Arg::kRequired, "ntaskspercore"},
    {"ntasks-per-gpu", Arg::kRequired, "ntaskspergpu"},
    {"ntasks-per-node", Arg::kRequired, "ntaskspernode"},
    {"ntasks-per-socket", Arg::kRequired, "ntaskspersocket"},
    {"ntasks-per-tres", Arg::kRequired, "ntaskspertres"},
    {"overcommit", Arg::kNone, "O"},
    {"oversubscribe", Arg::kNone, "s"},
    {"partition", Arg::kRequired, "p"},
    {"power", Arg::kRequired, "power"},
    {"prefer", Arg::kRequired, "prefer"},
    {"priority", Arg::kRequired, "priority"},
    {"profile", Arg::kRequired, "profile"},
    {"qos", Arg::kRequired, "q"},
    {"quiet", Arg::kNone, "Q"},
    {"reboot", Arg::kNone, "reboot"},
    {"reservation", Arg::kRequired, "reservation"},
    {"signal", Arg::kRequired, "signal"},
    {"sockets-per-node", Arg::kRequired, "socketspernode"},
    {"spread-job", Arg::kNone, "spread_job"},
    {"switches", Arg::kRequired, "switches"},
    {"tasks-per-node", Arg::kRequired, "ntaskspernode"},
    {"thread-spec", Arg::kRequired, "thread_spec"},
    {"threads-per-core", Arg::kRequired, "threadspercore"},
    {"time", Arg::kRequired, "t"},
    {"time-min", Arg::kRequired, "time_min"},
    {"tmp", Arg::kRequired, "tmp"},
    {"uid", Arg::kRequired, "uid"},
    {"use-min-nodes", Arg::kNone, "use_min_nodes"},
    {"verbose", Arg::kNone, "v"},
    {"version", Arg::kNone, "V"},
    {"usage", Arg::kNone, "usage"},
    {"wait-all-nodes", Arg::kRequired, "wait_all_nodes"},
    {"wckey", Arg::kRequired, "wckey"},
    {"x11", Arg::kOptional, "x11"},
});

// Options that would change what a step does in ways kubeslurm cannot honour: refusing them
// beats running something else than asked.
const std::set<std::string_view>& unsupportedKeys() {
  static const std::set<std::string_view> kKeys = {"multi", "Z", "het_group", "bcast",      "r",
                                                   "F",     "o", "e",         "interactive"};
  return kKeys;
}

const OptionSpec* shortOption(std::span<const OptionSpec> table, char letter) {
  for (const OptionSpec& spec : table) {
    if (spec.key.size() == 1 && spec.key[0] == letter) return &spec;
  }
  return nullptr;
}

Status getoptError(std::string message) { return invalidArgument(std::move(message)); }
Status setterError(std::string message) {
  return {StatusCode::kOutOfRange, "error: " + std::move(message)};
}
Status laterError(std::string message) {
  return {StatusCode::kFailedPrecondition, std::move(message)};
}
Status unsupported(std::string_view program, std::string what) {
  return {StatusCode::kUnimplemented,
          "error: kubeslurm's " + std::string(program) + " does not support " + std::move(what)};
}

bool isBlank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

// C's (int) of a long: Slurm keeps these counts in ints.
std::int64_t asCInt(long value) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(value)));
}

// parse_int() in src/common/proc_args.c: the whole text is a number, not negative, and not
// zero when `positive`; srun exits 1 otherwise.
StatusOr<std::int64_t> parseInt(std::string_view option, const std::string& text, bool positive) {
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || value < 0 || (positive && value <= 0)) {
    return laterError("error: Invalid numeric value \"" + text + "\" for " + std::string(option) +
                      ".");
  }
  if (value == LONG_MAX) {
    return laterError("error: Numeric argument (" + std::to_string(value) + ") to big for " +
                      std::string(option) + ".");
  }
  return asCInt(value);
}

// _str_to_nodes(): a count with an optional k/K (x1024) and then m/M (x1048576) suffix; -1
// with the whole text left over when there are no digits.
std::int64_t nodesCount(const std::string& text, std::string& leftover) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str()) {
    leftover = text;
    return -1;
  }
  if (*end == 'k' || *end == 'K') {
    value *= 1024;
    ++end;
  }
  if (*end == 'm' || *end == 'M') {
    value *= 1024L * 1024L;
    ++end;
  }
  leftover = end;
  return asCInt(value);
}

// verify_node_count(): "N" or "min-max".
Status parseNodes(const std::string& text, step::StepRequest& request) {
  std::string leftover;
  std::int64_t min = 0;
  std::int64_t max = 0;
  if (const std::size_t dash = text.find('-'); dash != std::string::npos) {
    const std::string minText = text.substr(0, dash);
    min = nodesCount(minText, leftover);
    if (!isBlank(leftover)) return setterError("\"" + minText + "\" is not a valid node count");
    if (min < 0) min = 1;
    const std::string maxText = text.substr(dash + 1);
    max = nodesCount(maxText, leftover);
    if (!isBlank(leftover)) return setterError("\"" + maxText + "\" is not a valid node count");
  } else {
    min = max = nodesCount(text, leftover);
    if (!isBlank(leftover) || min < 0) {
      return setterError("\"" + text + "\" is not a valid node count");
    }
  }
  if (max != 0 && max < min) {
    return setterError("Maximum node count " + std::to_string(max) +
                       " is less than minimum node count " + std::to_string(min));
  }
  request.nodes = static_cast<std::uint32_t>(min);
  request.maxNodes = static_cast<std::uint32_t>(max);
  return Status::ok();
}

// How slurm_process_option() reads a flag from the environment: empty, "yes" or a non-zero
// number sets it, anything else clears it.
bool environmentFlag(const std::string& value) {
  if (value.empty() || equalsIgnoreCase(value, "yes")) return true;
  char* end = nullptr;
  const long number = std::strtol(value.c_str(), &end, 10);
  return number != 0 && *end == '\0';
}

class Parser {
 public:
  Parser(const std::map<std::string, std::string>& environment, bool salloc)
      : environment_(environment),
        salloc_(salloc),
        program_(salloc ? "salloc" : "srun"),
        table_(salloc ? std::span<const OptionSpec>(kSallocOptions)
                      : std::span<const OptionSpec>(kOptions)) {}

  // One option, from the environment (`fromEnvironment`) or the command line. `value` is null
  // for an absent optional argument and for a flag on the command line; a flag read from the
  // environment carries the variable's text (SLURM_DEBUG=2 sets the verbosity).
  Status apply(const OptionSpec& spec, const std::string* value, bool fromEnvironment) {
    const std::string_view key = spec.key;
    step::StepRequest& request = result_.request;
    if (!fromEnvironment && unsupportedKeys().contains(key)) {
      return unsupported(program_, "--" + std::string(spec.name));
    }
    // salloc's input variables are allocation options (SALLOC_PARTITION is its -p); srun's
    // shape a step inside the job they come from.
    if (!fromEnvironment || salloc_) {
      result_.options.emplace_back(std::string(spec.name),
                                   value != nullptr ? std::optional(*value) : std::nullopt);
    }
    if (salloc_ && (key == "K" || key == "bell" || key == "no_bell" || key == "no_shell")) {
      return applySalloc(key, value);
    }
    if (key == "test_only") {
      result_.testOnly = true;
    } else if (key == "jobid") {
      StatusOr<std::int64_t> number = parseInt("--jobid", *value, true);
      if (!number) return number.status();
      result_.jobId = *number;
    } else if (key == "N") {
      if (Status status = parseNodes(*value, request); !status.isOk()) return status;
      request.nodesFromEnvironment = fromEnvironment;
    } else if (key == "n") {
      StatusOr<std::int64_t> number = parseInt("--ntasks", *value, true);
      if (!number) return number.status();
      ntasks_ = *number;
    } else if (key == "ntaskspernode") {
      StatusOr<std::int64_t> number = parseInt("--ntasks-per-node", *value, true);
      if (!number) return number.status();
      request.ntasksPerNode = static_cast<std::uint32_t>(*number);
    } else if (key == "c") {
      StatusOr<std::int64_t> number = parseInt("--cpus-per-task", *value, true);
      if (!number) return number.status();
      if (cpusPerTask_ && *cpusPerTask_ < *number) {
        result_.warnings.push_back("srun: Job step's --cpus-per-task value exceeds that of job (" +
                                   std::to_string(*number) + " > " + std::to_string(*cpusPerTask_) +
                                   "). Job step may never run.");
      }
      cpusPerTask_ = *number;
    } else if (key == "w") {
      nodelist_ = *value;
    } else if (key == "x") {
      exclude_ = *value;
    } else if (key == "m") {
      const auto plane = lookup("SLURM_DIST_PLANESIZE");
      // verify_dist_type() refuses an empty specification; parseDistribution reads "" as
      // "not given".
      StatusOr<step::TaskDistribution> dist =
          value->empty() ? StatusOr<step::TaskDistribution>(
                               invalidArgument("Invalid --distribution specification"))
                         : step::parseDistribution(*value, plane);
      if (!dist) {
        std::string message = dist.status().message();
        std::size_t at = 0;
        while ((at = message.find('\n', at)) != std::string::npos) {
          message.insert(at + 1, "srun: error: ");
          at += 1;
        }
        return setterError(message);
      }
      request.distribution = *value;
      if (dist->nodeLevel == step::TaskDistribution::NodeLevel::kPlane &&
          value->find('=') == std::string::npos) {
        request.distribution = "plane=" + std::to_string(dist->planeSize);
      }
    } else if (key == "l") {
      result_.label = true;
    } else if (key == "K") {
      if (value == nullptr || value->empty()) {
        result_.killOnBadExit = true;
      } else {
        StatusOr<std::int64_t> number = parseInt("--kill-on-bad-exit", *value, false);
        if (!number) return number.status();
        result_.killOnBadExit = *number != 0;
      }
    } else if (key == "J") {
      // SLURM_JOB_NAME is srun's default name, which the tasks inherit anyway.
      if (!fromEnvironment) result_.jobName = *value;
    } else if (key == "D") {
      result_.chdir = *value;
    } else if (key == "i") {
      result_.input = *value;
    } else if (key == "pty") {
      result_.pty = true;
    } else if (key == "export") {
      result_.exportVars = slurm::splitExportTokens(*value);
    } else if (key == "h") {
      result_.help = true;
    } else if (key == "usage") {
      result_.usage = true;
    } else if (key == "V") {
      result_.version = true;
    } else if (key == "v") {
      if (value == nullptr) {
        ++result_.verbose;
      } else {
        StatusOr<std::int64_t> number = parseInt("--verbose", *value, false);
        if (!number) return number.status();
        result_.verbose = static_cast<int>(*number);
      }
    } else if (key == "Q") {
      result_.quiet = true;
    } else {
      if (key == "exclusive") exclusive_ = !fromEnvironment;
      if (key == "overlap") overlap_ = !fromEnvironment;
      if (key == "exact") exact_ = true;
      if (key == "whole") whole_ = true;
      if (!fromEnvironment) result_.ignored.emplace_back(spec.name);
    }
    return Status::ok();
  }

  SallocInvocation sallocOf(SrunInvocation options) const {
    return {.allocation = std::move(options),
            .noShell = noShell_,
            .killCommandSignal = killCommandSignal_,
            .bell = sallocBell_};
  }

  // salloc's own: salloc/opt.c and slurm_opt.c's salloc setters.
  Status applySalloc(std::string_view key, const std::string* value) {
    if (key == "bell") sallocBell_ = SallocInvocation::Bell::kAlways;
    if (key == "no_bell") sallocBell_ = SallocInvocation::Bell::kNever;
    if (key == "no_shell") noShell_ = true;
    if (key == "K") {
      // arg_set_kill_command: SIGTERM without a value.
      killCommandSignal_ = value == nullptr ? SIGTERM : slurm::signalNumber(*value);
      if (killCommandSignal_ == 0) return setterError("Invalid --kill-command specification");
    }
    return Status::ok();
  }

  // _opt_env(): the input variables, in the env_vars table's order.
  Status readEnvironment() {
    if (salloc_) return readVariables(kSallocVariables);
    return readVariables(kSrunVariables);
  }

  template <std::size_t N>
  Status readVariables(const std::array<std::pair<std::string_view, std::string_view>, N>& list) {
    for (const auto& [variable, key] : list) {
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& candidate : table_) {
        if (candidate.key == key) {
          spec = &candidate;
          break;
        }
      }
      if (spec == nullptr) continue;
      // srun reads each also for the first component of a heterogeneous job; salloc does not.
      for (const std::string_view suffix : {"", "_PACK_GROUP_0", "_HET_GROUP_0"}) {
        if (salloc_ && !suffix.empty()) break;
        const auto found = environment_.find(std::string(variable) + std::string(suffix));
        if (found == environment_.end()) continue;
        const std::string* value = &found->second;
        // An optional argument that is empty in the environment is an absent one.
        if (spec->arg == Arg::kOptional && value->empty()) value = nullptr;
        // A flag the variable does not set is cleared, which leaves our defaults as they are.
        if (spec->arg == Arg::kNone && !environmentFlag(*value)) continue;
        if (Status status = apply(*spec, value, true); !status.isOk()) return status;
      }
    }
    return Status::ok();
  }

  static constexpr auto kSrunVariables =
      std::to_array<std::pair<std::string_view, std::string_view>>({
          {"SRUN_CPUS_PER_TASK", "c"},
          {"SLURM_DISTRIBUTION", "m"},
          {"SLURM_EXACT", "exact"},
          {"SLURM_EXCLUSIVE", "exclusive"},
          {"SLURM_EXPORT_ENV", "export"},
          {"SRUN_EXPORT_ENV", "export"},
          {"SLURM_JOB_NAME", "J"},
          {"SLURM_JOB_NUM_NODES", "N"},
          {"SLURM_KILL_BAD_EXIT", "K"},
          {"SLURM_LABELIO", "l"},
          {"SLURM_NPROCS", "n"},
          {"SLURM_NTASKS", "n"},
          {"SLURM_NTASKS_PER_NODE", "ntaskspernode"},
          {"SLURM_OVERLAP", "overlap"},
          {"SLURM_REMOTE_CWD", "D"},
          {"SLURM_STDINMODE", "i"},
          {"SLURM_WORKING_DIR", "D"},
          {"SLURM_DEBUG", "v"},
      });
  // salloc/opt.c env_vars, in its order; those of options kubeslurm does not read (burst
  // buffers, power, switches ...) are read all the same, as the options are.
  static constexpr auto kSallocVariables =
      std::to_array<std::pair<std::string_view, std::string_view>>({
          {"SALLOC_ACCOUNT", "A"},
          {"SALLOC_ACCTG_FREQ", "acctg_freq"},
          {"SALLOC_BELL", "bell"},
          {"SALLOC_BURST_BUFFER", "burst_buffer_spec"},
          {"SALLOC_CLUSTER_CONSTRAINT", "cluster_constraint"},
          {"SALLOC_CLUSTERS", "M"},
          {"SLURM_CLUSTERS", "M"},
          {"SALLOC_CONTAINER", "container"},
          {"SALLOC_CONSTRAINT", "C"},
          {"SALLOC_CORE_SPEC", "S"},
          {"SALLOC_CPU_FREQ_REQ", "cpu_freq"},
          {"SALLOC_CPUS_PER_GPU", "cpus_per_gpu"},
          {"SALLOC_DEBUG", "v"},
          {"SALLOC_DELAY_BOOT", "delay_boot"},
          {"SALLOC_EXCLUSIVE", "exclusive"},
          {"SALLOC_GPUS", "G"},
          {"SALLOC_GPU_BIND", "gpu_bind"},
          {"SALLOC_GPU_FREQ", "gpu_freq"},
          {"SALLOC_GPUS_PER_NODE", "gpus_per_node"},
          {"SALLOC_GPUS_PER_SOCKET", "gpus_per_socket"},
          {"SALLOC_GPUS_PER_TASK", "gpus_per_task"},
          {"SALLOC_GRES", "gres"},
          {"SALLOC_GRES_FLAGS", "gres_flags"},
          {"SALLOC_IMMEDIATE", "I"},
          {"SALLOC_HINT", "hint"},
          {"SLURM_HINT", "hint"},
          {"SALLOC_KILL_CMD", "K"},
          {"SALLOC_MEM_BIND", "mem_bind"},
          {"SALLOC_MEM_PER_CPU", "mem_per_cpu"},
          {"SALLOC_MEM_PER_GPU", "mem_per_gpu"},
          {"SALLOC_MEM_PER_NODE", "mem"},
          {"SALLOC_NETWORK", "network"},
          {"SALLOC_NO_BELL", "no_bell"},
          {"SALLOC_NO_KILL", "k"},
          {"SALLOC_OVERCOMMIT", "O"},
          {"SALLOC_PARTITION", "p"},
          {"SALLOC_POWER", "power"},
          {"SALLOC_PROFILE", "profile"},
          {"SALLOC_QOS", "q"},
          {"SALLOC_REQ_SWITCH", "switches"},
          {"SALLOC_RESERVATION", "reservation"},
          {"SALLOC_SIGNAL", "signal"},
          {"SALLOC_SPREAD_JOB", "spread_job"},
          {"SALLOC_THREAD_SPEC", "thread_spec"},
          {"SALLOC_THREADS_PER_CORE", "threadspercore"},
          {"SALLOC_TIMELIMIT", "t"},
          {"SALLOC_USE_MIN_NODES", "use_min_nodes"},
          {"SALLOC_WAIT_ALL_NODES", "wait_all_nodes"},
          {"SALLOC_WCKEY", "wckey"},
      });

  // glibc getopt_long with srun's "+..." option string: stops at the first operand or "--".
  Status readCommandLine(const std::vector<std::string>& args) {
    std::size_t index = 0;
    while (index < args.size()) {
      const std::string& arg = args[index];
      if (arg == "--") {
        ++index;
        break;
      }
      if (arg.size() < 2 || arg[0] != '-') break;
      ++index;
      if (arg[1] == '-') {
        Status status = longOption(arg.substr(2), args, index);
        if (!status.isOk() || stopped()) return status;
        continue;
      }
      for (std::size_t at = 1; at < arg.size(); ++at) {
        const char letter = arg[at];
        const OptionSpec* spec = letter == ':' ? nullptr : shortOption(table_, letter);
        if (spec == nullptr) {
          return getoptError(std::string("invalid option -- '") + letter + "'");
        }
        std::optional<std::string> value;
        if (spec->arg != Arg::kNone) {
          if (at + 1 < arg.size()) {
            value = arg.substr(at + 1);
          } else if (spec->arg == Arg::kRequired) {
            if (index >= args.size()) {
              return getoptError(std::string("option requires an argument -- '") + letter + "'");
            }
            value = args[index++];
          }
          at = arg.size();
        }
        Status status = apply(*spec, value ? &*value : nullptr, false);
        if (!status.isOk() || stopped()) return status;
      }
    }
    operands_.assign(args.begin() + static_cast<std::ptrdiff_t>(index), args.end());
    return Status::ok();
  }

  // What srun checks once the options are read: _opt_args() and _opt_verify().
  StatusOr<SrunInvocation> finish() {
    if (stopped()) return result_;
    if (std::find(operands_.begin(), operands_.end(), ":") != operands_.end()) {
      return unsupported(program_, "heterogeneous steps (\" : \" between commands)");
    }
    // salloc without a command runs the user's shell.
    if (operands_.empty() && !result_.testOnly && !salloc_) {
      return laterError("fatal: No command given to execute.");
    }
    result_.command = operands_;

    std::vector<std::string> errors;
    if (result_.quiet && result_.verbose > 0) {
      errors.emplace_back("don't specify both --verbose (-v) and --quiet (-Q)");
    }
    if (exact_ && whole_) errors.emplace_back("--exact and --whole are mutually exclusive.");
    // opt.c _opt_verify: srun exits at once with this one.
    if (result_.pty && result_.input) {
      return laterError("error: --error/--input/--output are incompatible with --pty");
    }
    if (exclusive_ && overlap_) {
      errors.emplace_back("--exclusive and --overlap are mutually exclusive");
    }
    step::StepRequest& request = result_.request;
    for (auto [text, list] :
         {std::pair{&nodelist_, &request.nodelist}, std::pair{&exclude_, &request.exclude}}) {
      if (!text->has_value()) continue;
      if ((*text)->find('/') != std::string::npos) {
        return unsupported(program_, "node files (" + **text + ")");
      }
      StatusOr<std::vector<std::string>> hosts = slurm::expandHostlist(**text);
      if (!hosts) {
        // Our wording: srun's hostlist_create() logs the parser's diagnostic and srun then
        // fails in ways that depend on where the list is first used.
        const std::string& diagnostic = hosts.status().message();
        errors.push_back(diagnostic.empty() ? "Invalid hostlist: " + **text : diagnostic);
        continue;
      }
      *list = std::move(*hosts);
    }
    if (ntasks_) {
      if (*ntasks_ <= 0) {
        errors.push_back("invalid number of tasks (-n " + std::to_string(*ntasks_) + ")");
      } else {
        request.ntasks = static_cast<std::uint32_t>(*ntasks_);
      }
    }
    if (cpusPerTask_) {
      if (*cpusPerTask_ <= 0) {
        errors.push_back("invalid number of cpus per task (-c " + std::to_string(*cpusPerTask_) +
                         ")");
      } else {
        request.cpusPerTask = static_cast<std::uint32_t>(*cpusPerTask_);
      }
    }
    if (!errors.empty()) {
      std::string message;
      for (const std::string& line : errors) {
        message += message.empty() ? "error: " : "\n" + std::string(program_) + ": error: ";
        message += line;
      }
      return laterError(message);
    }
    return result_;
  }

 private:
  bool stopped() const { return result_.help || result_.usage || result_.version; }

  std::optional<std::string> lookup(const std::string& name) const {
    const auto found = environment_.find(name);
    if (found == environment_.end()) return std::nullopt;
    return found->second;
  }

  // glibc's process_long_option(): an exact name wins, else a unique prefix; prefixes of
  // options that differ in argument or value are ambiguous.
  Status longOption(const std::string& text, const std::vector<std::string>& args,
                    std::size_t& index) {
    const std::size_t eq = text.find('=');
    const std::string name = text.substr(0, eq);
    const OptionSpec* found = nullptr;
    for (const OptionSpec& spec : table_) {
      if (spec.name == name) {
        found = &spec;
        break;
      }
    }
    if (found == nullptr) {
      // glibc lists the first match and every later one that differs from it; an alias
      // of the first (same argument, same value) is not a possibility of its own.
      std::vector<const OptionSpec*> possibilities;
      for (const OptionSpec& spec : table_) {
        if (!spec.name.starts_with(name)) continue;
        if (possibilities.empty() || possibilities.front()->arg != spec.arg ||
            possibilities.front()->key != spec.key) {
          possibilities.push_back(&spec);
        }
      }
      if (possibilities.size() > 1) {
        std::string message = "option '--" + text + "' is ambiguous; possibilities:";
        for (const OptionSpec* spec : possibilities) {
          message += " '--" + std::string(spec->name) + "'";
        }
        return getoptError(message);
      }
      if (possibilities.empty()) return getoptError("unrecognized option '--" + text + "'");
      found = possibilities.front();
    }
    std::optional<std::string> value;
    if (eq != std::string::npos) {
      if (found->arg == Arg::kNone) {
        return getoptError("option '--" + std::string(found->name) + "' doesn't allow an argument");
      }
      value = text.substr(eq + 1);
    } else if (found->arg == Arg::kRequired) {
      if (index >= args.size()) {
        return getoptError("option '--" + std::string(found->name) + "' requires an argument");
      }
      value = args[index++];
    }
    return apply(*found, value ? &*value : nullptr, false);
  }

  const std::map<std::string, std::string>& environment_;
  const bool salloc_;
  const std::string_view program_;
  const std::span<const OptionSpec> table_;
  SrunInvocation result_;
  std::optional<std::int64_t> ntasks_;
  std::optional<std::int64_t> cpusPerTask_;
  std::optional<std::string> nodelist_;
  std::optional<std::string> exclude_;
  std::vector<std::string> operands_;
  bool exclusive_ = false;
  bool overlap_ = false;
  bool exact_ = false;
  bool whole_ = false;
  bool noShell_ = false;
  int killCommandSignal_ = 0;
  SallocInvocation::Bell sallocBell_ = SallocInvocation::Bell::kAfterDelay;
};

}  // namespace

StatusOr<SrunInvocation> parseSrunArguments(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& environment) {
  Parser parser(environment, false);
  if (Status status = parser.readEnvironment(); !status.isOk()) return status;
  if (Status status = parser.readCommandLine(args); !status.isOk()) return status;
  return parser.finish();
}

StatusOr<SallocInvocation> parseSallocArguments(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& environment) {
  Parser parser(environment, true);
  if (Status status = parser.readEnvironment(); !status.isOk()) return status;
  if (Status status = parser.readCommandLine(args); !status.isOk()) return status;
  StatusOr<SrunInvocation> options = parser.finish();
  if (!options) return options.status();
  return parser.sallocOf(std::move(options).value());
}

bool srunPrintsTryHelp(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument;
}

int srunExitStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 255;  // exit(-1) after slurm_process_option() fails
    default:
      return 1;
  }
}

}  // namespace kubeslurm::inpod

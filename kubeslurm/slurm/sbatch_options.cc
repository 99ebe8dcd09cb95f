#include "kubeslurm/slurm/sbatch_options.h"

#include <algorithm>
#include <array>
#include <climits>
#include <set>
#include <utility>
#include <variant>

#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"

namespace kubeslurm::slurm {
namespace {

// ---------------------------------------------------------------------------------------------
// The C library's number parsing, as Slurm calls it. Slurm validates many values with
// strtol()/strtoll()/strtoull() and then looks at what is left, so the same leading white space,
// sign and saturation rules decide what is accepted.

bool isCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
char toLowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool isWhitespaceOnly(std::string_view text) {
  return std::all_of(text.begin(), text.end(), isCSpace);
}

struct CNumber {
  long long value = 0;                   // saturated at LLONG_MIN/LLONG_MAX, as strtoll()
  unsigned long long unsignedValue = 0;  // as strtoull() would return
  std::size_t end = 0;  // index of the first character not consumed; 0 without digits
  bool digits = false;
  bool overflow = false;
};

CNumber parseCNumber(std::string_view text) {
  CNumber result;
  std::size_t i = 0;
  while (i < text.size() && isCSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  unsigned long long magnitude = 0;
  bool overflow = false;
  const std::size_t firstDigit = i;
  while (i < text.size() && isDigit(text[i])) {
    const auto digit = static_cast<unsigned long long>(text[i] - '0');
    if (magnitude > (ULLONG_MAX - digit) / 10) overflow = true;
    if (!overflow) magnitude = magnitude * 10 + digit;
    ++i;
  }
  if (i == firstDigit) return result;  // no digits: nothing consumed
  result.digits = true;
  result.end = i;
  const auto limit = static_cast<unsigned long long>(LLONG_MAX);
  if (negative) {
    if (overflow || magnitude > limit + 1) {
      result.value = LLONG_MIN;
      result.overflow = true;
    } else {
      result.value = magnitude == limit + 1 ? LLONG_MIN : -static_cast<long long>(magnitude);
    }
    result.unsignedValue = overflow ? ULLONG_MAX : (0ULL - magnitude);
  } else {
    if (overflow || magnitude > limit) {
      result.value = LLONG_MAX;
      result.overflow = true;
    } else {
      result.value = static_cast<long long>(magnitude);
    }
    result.unsignedValue = overflow ? ULLONG_MAX : magnitude;
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The option table: every long option sbatch 22.05 accepts (src/common/slurm_opt.c
// common_options[], filtered to sbatch, in that order, which is the order glibc lists
// ambiguous candidates in), then Pyxis's SPANK options, which Slurm appends after them.

enum class ArgKind { kNone, kRequired, kOptional };

enum class Opt {
  kUnsupported,  // a real sbatch option kubeslurm does not act on
  kAccount,
  kArray,
  kBegin,
  kChdir,
  kComment,
  kConstraint,
  kCpusPerTask,
  kMinCpus,
  kDeadline,
  kDependency,
  kError,
  kExclude,
  kExclusive,
  kExport,
  kGpus,
  kGpusPerNode,
  kGpusPerTask,
  kGres,
  kHelp,
  kHold,
  kContiguous,
  kInput,
  kJobName,
  kMailType,
  kMailUser,
  kMem,
  kMemPerCpu,
  kMemPerGpu,
  kNice,
  kNoKill,
  kNoRequeue,
  kNodeList,
  kNodes,
  kNtasks,
  kNtasksPerNode,
  kOpenMode,
  kOutput,
  kOversubscribe,
  kParsable,
  kPartition,
  kPriority,
  kQos,
  kQuiet,
  kRequeue,
  kSignal,
  kSwitches,
  kSwitchReq,   // SBATCH_REQ_SWITCH: the count alone
  kSwitchWait,  // SBATCH_WAIT4SWITCH: the time alone
  kTestOnly,
  kTime,
  kTimeMin,
  kUsage,
  kVerbose,
  kVersion,
  kWrap,
  kContainerImage,
  kContainerMounts,
  kContainerWorkdir,
  kContainerName,
  kContainerEnv,
  kSpankUnsupported,  // a Pyxis option kubeslurm does not act on
};

struct OptionDef {
  std::string_view name;  // long name; empty for environment-only options
  ArgKind arg;
  char shortName;  // 0 when there is none
  Opt id;
  bool early = false;  // Slurm's sbatch_early_pass: handled in pass 1 only
  // Two names that are the same option to getopt (same has_arg and val) are not ambiguous.
  std::string_view canonical = {};
};

bool isSpank(Opt id) { return id >= Opt::kContainerImage; }

const std::vector<OptionDef>& optionTable() {
  using enum ArgKind;
  static const std::vector<OptionDef> kTable = {
      {"account", kRequired, 'A', Opt::kAccount},
      {"acctg-freq", kRequired, 0, Opt::kUnsupported},
      {"array", kRequired, 'a', Opt::kArray},
      {"batch", kRequired, 0, Opt::kUnsupported},
      {"begin", kRequired, 'b', Opt::kBegin},
      {"bb", kRequired, 0, Opt::kUnsupported},
      {"bbf", kRequired, 0, Opt::kUnsupported},
      {"cluster-constraint", kRequired, 0, Opt::kUnsupported},
      {"chdir", kRequired, 'D', Opt::kChdir},
      {"cluster", kRequired, 0, Opt::kUnsupported},
      {"clusters", kRequired, 'M', Opt::kUnsupported},
      {"comment", kRequired, 0, Opt::kComment},
      {"container", kRequired, 0, Opt::kUnsupported},
      {"context", kRequired, 0, Opt::kUnsupported},
      {"contiguous", kNone, 0, Opt::kContiguous},
      {"constraint", kRequired, 'C', Opt::kConstraint},
      {"core-spec", kRequired, 'S', Opt::kUnsupported},
      {"cores-per-socket", kRequired, 0, Opt::kUnsupported},
      {"cpu-freq", kRequired, 0, Opt::kUnsupported},
      {"cpus-per-gpu", kRequired, 0, Opt::kUnsupported},
      {"cpus-per-task", kRequired, 'c', Opt::kCpusPerTask},
      {"deadline", kRequired, 0, Opt::kDeadline},
      {"delay-boot", kRequired, 0, Opt::kUnsupported},
      {"dependency", kRequired, 'd', Opt::kDependency},
      {"distribution", kRequired, 'm', Opt::kUnsupported},
      {"error", kRequired, 'e', Opt::kError},
      {"exclude", kRequired, 'x', Opt::kExclude},
      {"exclusive", kOptional, 0, Opt::kExclusive},
      {"export", kRequired, 0, Opt::kExport},
      {"export-file", kRequired, 0, Opt::kUnsupported},
      {"extra-node-info", kRequired, 'B', Opt::kUnsupported},
      {"get-user-env", kOptional, 0, Opt::kUnsupported},
      {"gid", kRequired, 0, Opt::kUnsupported},
      {"gpu-bind", kRequired, 0, Opt::kUnsupported},
      {"gpu-freq", kRequired, 0, Opt::kUnsupported},
      {"gpus", kRequired, 'G', Opt::kGpus},
      {"gpus-per-node", kRequired, 0, Opt::kGpusPerNode},
      {"gpus-per-socket", kRequired, 0, Opt::kUnsupported},
      {"gpus-per-task", kRequired, 0, Opt::kGpusPerTask},
      {"gres", kRequired, 0, Opt::kGres},
      {"gres-flags", kRequired, 0, Opt::kUnsupported},
      {"help", kNone, 'h', Opt::kHelp, true},
      {"hint", kRequired, 0, Opt::kUnsupported},
      {"hold", kNone, 'H', Opt::kHold},
      {"ignore-pbs", kNone, 0, Opt::kUnsupported},
      {"input", kRequired, 'i', Opt::kInput},
      {"job-name", kRequired, 'J', Opt::kJobName},
      {"kill-on-invalid-dep", kRequired, 0, Opt::kUnsupported},
      {"licenses", kRequired, 'L', Opt::kUnsupported},
      {"mail-type", kRequired, 0, Opt::kMailType},
      {"mail-user", kRequired, 0, Opt::kMailUser},
      {"mcs-label", kRequired, 0, Opt::kUnsupported},
      {"mem", kRequired, 0, Opt::kMem},
      {"mem-bind", kRequired, 0, Opt::kUnsupported},
      {"mem-per-cpu", kRequired, 0, Opt::kMemPerCpu},
      {"mem-per-gpu", kRequired, 0, Opt::kMemPerGpu},
      {"mincpus", kRequired, 0, Opt::kMinCpus},
      {"network", kRequired, 0, Opt::kUnsupported},
      {"nice", kOptional, 0, Opt::kNice},
      {"no-kill", kOptional, 'k', Opt::kNoKill},
      {"no-requeue", kNone, 0, Opt::kNoRequeue},
      {"nodefile", kRequired, 'F', Opt::kUnsupported},
      {"nodelist", kRequired, 'w', Opt::kNodeList},
      {"nodes", kRequired, 'N', Opt::kNodes},
      {"ntasks", kRequired, 'n', Opt::kNtasks},
      {"ntasks-per-core", kRequired, 0, Opt::kUnsupported},
      {"ntasks-per-gpu", kRequired, 0, Opt::kUnsupported},
      {"ntasks-per-node", kRequired, 0, Opt::kNtasksPerNode, false, "ntasks-per-node"},
      {"ntasks-per-socket", kRequired, 0, Opt::kUnsupported},
      {"ntasks-per-tres", kRequired, 0, Opt::kUnsupported},
      {"open-mode", kRequired, 0, Opt::kOpenMode},
      {"output", kRequired, 'o', Opt::kOutput},
      {"overcommit", kNone, 'O', Opt::kUnsupported},
      {"oversubscribe", kNone, 's', Opt::kOversubscribe},
      {"parsable", kNone, 0, Opt::kParsable},
      {"partition", kRequired, 'p', Opt::kPartition},
      {"power", kRequired, 0, Opt::kUnsupported},
      {"prefer", kRequired, 0, Opt::kUnsupported},
      {"priority", kRequired, 0, Opt::kPriority},
      {"profile", kRequired, 0, Opt::kUnsupported},
      {"propagate", kOptional, 0, Opt::kUnsupported},
      {"qos", kRequired, 'q', Opt::kQos},
      {"quiet", kNone, 'Q', Opt::kQuiet, true},
      {"reboot", kNone, 0, Opt::kUnsupported},
      {"requeue", kNone, 0, Opt::kRequeue},
      {"reservation", kRequired, 0, Opt::kUnsupported},
      {"signal", kRequired, 0, Opt::kSignal},
      {"sockets-per-node", kRequired, 0, Opt::kUnsupported},
      {"spread-job", kNone, 0, Opt::kUnsupported},
      {"switches", kRequired, 0, Opt::kSwitches},
      {"tasks-per-node", kRequired, 0, Opt::kNtasksPerNode, false, "ntasks-per-node"},
      {"test-only", kNone, 0, Opt::kTestOnly},
      {"thread-spec", kRequired, 0, Opt::kUnsupported},
      {"threads-per-core", kRequired, 0, Opt::kUnsupported},
      {"time", kRequired, 't', Opt::kTime},
      {"time-min", kRequired, 0, Opt::kTimeMin},
      {"tmp", kRequired, 0, Opt::kUnsupported},
      {"uid", kRequired, 0, Opt::kUnsupported},
      {"use-min-nodes", kNone, 0, Opt::kUnsupported},
      {"verbose", kNone, 'v', Opt::kVerbose, true},
      {"version", kNone, 'V', Opt::kVersion, true},
      {"usage", kNone, 0, Opt::kUsage, true},
      {"wait", kNone, 'W', Opt::kUnsupported},
      {"wait-all-nodes", kRequired, 0, Opt::kUnsupported},
      {"wckey", kRequired, 0, Opt::kUnsupported},
      {"wrap", kRequired, 0, Opt::kWrap, true},
      // Pyxis (NVIDIA/pyxis args.c spank_opts[]).
      {"container-image", kRequired, 0, Opt::kContainerImage},
      {"container-mounts", kRequired, 0, Opt::kContainerMounts},
      {"container-workdir", kRequired, 0, Opt::kContainerWorkdir},
      {"container-name", kRequired, 0, Opt::kContainerName},
      {"container-save", kRequired, 0, Opt::kSpankUnsupported},
      {"container-mount-home", kNone, 0, Opt::kSpankUnsupported},
      {"no-container-mount-home", kNone, 0, Opt::kSpankUnsupported},
      {"container-remap-root", kNone, 0, Opt::kSpankUnsupported},
      {"no-container-remap-root", kNone, 0, Opt::kSpankUnsupported},
      {"container-entrypoint", kNone, 0, Opt::kSpankUnsupported},
      {"no-container-entrypoint", kNone, 0, Opt::kSpankUnsupported},
      {"container-entrypoint-log", kNone, 0, Opt::kSpankUnsupported},
      {"container-writable", kNone, 0, Opt::kSpankUnsupported},
      {"container-readonly", kNone, 0, Opt::kSpankUnsupported},
      {"container-env", kRequired, 0, Opt::kContainerEnv},
      // Environment-only options (no long name, so getopt never matches them).
      {"", kRequired, 0, Opt::kSwitchReq},
      {"", kRequired, 0, Opt::kSwitchWait},
  };
  return kTable;
}

}  // namespace

std::vector<std::string_view> sbatchLongOptionNames() {
  std::vector<std::string_view> names;
  for (const OptionDef& def : optionTable()) {
    if (!def.name.empty()) names.push_back(def.name);
  }
  return names;
}

namespace {

const OptionDef* findOptionByName(std::string_view name) {
  for (const OptionDef& def : optionTable()) {
    if (!def.name.empty() && def.name == name) return &def;
  }
  return nullptr;
}

const OptionDef* findOptionById(Opt id) {
  for (const OptionDef& def : optionTable()) {
    if (def.id == id) return &def;
  }
  return nullptr;
}

const OptionDef* findShortOption(char c) {
  if (c == 0) return nullptr;
  for (const OptionDef& def : optionTable()) {
    if (def.shortName == c) return &def;
  }
  return nullptr;
}

// src/sbatch/opt.c env_vars[], in order; the value is handled as the named long option.
struct EnvOption {
  std::string_view variable;
  std::string_view option;  // long name, or "" with `id` for environment-only options
  Opt id = Opt::kUnsupported;
};

const std::vector<EnvOption>& envOptions() {
  static const std::vector<EnvOption> kEnv = {
      {"SBATCH_ACCOUNT", "account"},
      {"SBATCH_ARRAY_INX", "array"},
      {"SBATCH_ACCTG_FREQ", "acctg-freq"},
      {"SBATCH_BATCH", "batch"},
      {"SBATCH_BURST_BUFFER", "bb"},
      {"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"},
      {"SBATCH_CLUSTERS", "clusters"},
      {"SLURM_CLUSTERS", "clusters"},
      {"SBATCH_CONTAINER", "container"},
      {"SBATCH_CONSTRAINT", "constraint"},
      {"SBATCH_CORE_SPEC", "core-spec"},
      {"SBATCH_CPU_FREQ_REQ", "cpu-freq"},
      {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
      {"SBATCH_DEBUG", "verbose"},
      {"SBATCH_DELAY_BOOT", "delay-boot"},
      {"SBATCH_DISTRIBUTION", "distribution"},
      {"SBATCH_EXCLUSIVE", "exclusive"},
      {"SBATCH_EXPORT", "export"},
      {"SBATCH_GET_USER_ENV", "get-user-env"},
      {"SBATCH_GRES", "gres"},
      {"SBATCH_GRES_FLAGS", "gres-flags"},
      {"SBATCH_GPUS", "gpus"},
      {"SBATCH_GPU_BIND", "gpu-bind"},
      {"SBATCH_GPU_FREQ", "gpu-freq"},
      {"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
      {"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"},
      {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
      {"SLURM_HINT", "hint"},
      {"SBATCH_HINT", "hint"},
      {"SBATCH_JOB_NAME", "job-name"},
      {"SBATCH_MEM_BIND", "mem-bind"},
      {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
      {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
      {"SBATCH_MEM_PER_NODE", "mem"},
      {"SBATCH_NETWORK", "network"},
      {"SBATCH_NO_KILL", "no-kill"},
      {"SBATCH_NO_REQUEUE", "no-requeue"},
      {"SBATCH_OPEN_MODE", "open-mode"},
      {"SBATCH_OVERCOMMIT", "overcommit"},
      {"SBATCH_PARTITION", "partition"},
      {"SBATCH_POWER", "power"},
      {"SBATCH_PROFILE", "profile"},
      {"SBATCH_QOS", "qos"},
      {"SBATCH_REQ_SWITCH", "", Opt::kSwitchReq},
      {"SBATCH_REQUEUE", "requeue"},
      {"SBATCH_RESERVATION", "reservation"},
      {"SBATCH_SIGNAL", "signal"},
      {"SBATCH_SPREAD_JOB", "spread-job"},
      {"SBATCH_THREAD_SPEC", "thread-spec"},
      {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
      {"SBATCH_TIMELIMIT", "time"},
      {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
      {"SBATCH_WAIT", "wait"},
      {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
      {"SBATCH_WAIT4SWITCH", "", Opt::kSwitchWait},
      {"SBATCH_WCKEY", "wckey"},
      {"SBATCH_ERROR", "error"},
      {"SBATCH_INPUT", "input"},
      {"SBATCH_OUTPUT", "output"},
  };
  return kEnv;
}

constexpr std::string_view kExitErrorVariable = "SLURM_EXIT_ERROR";
constexpr std::string_view kTryHelp = "Try \"sbatch --help\" for more information";

// glibc's process_long_option() lookup: an exact name, else a unique abbreviation. Later
// candidates that differ from the first in has_arg or val make the abbreviation ambiguous.
struct LongMatch {
  const OptionDef* def = nullptr;
  std::vector<const OptionDef*> ambiguous;  // every candidate, in table order, when ambiguous
};

std::string_view canonicalName(const OptionDef& def) {
  return def.canonical.empty() ? def.name : def.canonical;
}

LongMatch matchLongOption(std::string_view name) {
  LongMatch match;
  if ((match.def = findOptionByName(name)) != nullptr) return match;
  for (const OptionDef& def : optionTable()) {
    if (def.name.empty() || !def.name.starts_with(name)) continue;
    if (match.def == nullptr) {
      match.def = &def;
    } else if (match.def->arg != def.arg || canonicalName(*match.def) != canonicalName(def)) {
      if (match.ambiguous.empty()) match.ambiguous.push_back(match.def);
      match.ambiguous.push_back(&def);
    }
  }
  return match;
}

// ---------------------------------------------------------------------------------------------
// getopt_long(), as glibc implements it for an option string starting with '+' (REQUIRE_ORDER:
// stop at the first operand). Diagnostics are glibc's, with "sbatch" as the program name.

struct GetoptEvent {
  enum class Kind { kOption, kError, kDone };
  Kind kind = Kind::kDone;
  const OptionDef* def = nullptr;
  std::optional<std::string> arg;
  std::string message;  // glibc's diagnostic, for kError
};

class Getopt {
 public:
  // Parses words[start...]; words[start - 1] plays argv[0] (never read).
  Getopt(const std::vector<std::string>& words, std::size_t start)
      : words_(words), optind_(start) {}

  GetoptEvent next() {
    if (inCluster()) return shortOption();
    if (optind_ >= words_.size()) return {};
    const std::string& word = words_[optind_];
    if (word == "--") {
      ++optind_;
      return {};
    }
    if (word.size() < 2 || word[0] != '-') return {};  // an operand: stop (REQUIRE_ORDER)
    if (word[1] == '-') return longOption(std::string_view(word).substr(2));
    clusterPos_ = 1;
    return shortOption();
  }

  // Index of the first word not consumed.
  std::size_t optind() const { return optind_; }

 private:
  bool inCluster() const { return clusterPos_ != 0; }

  static GetoptEvent error(std::string message) {
    GetoptEvent event;
    event.kind = GetoptEvent::Kind::kError;
    event.message = std::move(message);
    return event;
  }
  static GetoptEvent option(const OptionDef* def, std::optional<std::string> arg) {
    GetoptEvent event;
    event.kind = GetoptEvent::Kind::kOption;
    event.def = def;
    event.arg = std::move(arg);
    return event;
  }

  GetoptEvent longOption(std::string_view rest) {
    const std::size_t eq = rest.find('=');
    const std::string_view name = rest.substr(0, eq);
    const LongMatch match = matchLongOption(name);
    const OptionDef* found = match.def;
    if (!match.ambiguous.empty()) {
      ++optind_;
      std::string message =
          "sbatch: option '--" + std::string(rest) + "' is ambiguous; possibilities:";
      for (const OptionDef* def : match.ambiguous) {
        message += " '--" + std::string(def->name) + "'";
      }
      return error(std::move(message));
    }
    ++optind_;
    if (found == nullptr) {
      return error("sbatch: unrecognized option '--" + std::string(rest) + "'");
    }
    if (eq != std::string_view::npos) {
      if (found->arg == ArgKind::kNone) {
        return error("sbatch: option '--" + std::string(found->name) +
                     "' doesn't allow an argument");
      }
      return option(found, std::string(rest.substr(eq + 1)));
    }
    if (found->arg == ArgKind::kRequired) {
      if (optind_ < words_.size()) return option(found, words_[optind_++]);
      return error("sbatch: option '--" + std::string(found->name) + "' requires an argument");
    }
    return option(found, std::nullopt);
  }

  GetoptEvent shortOption() {
    const std::string& word = words_[optind_];
    const char c = word[clusterPos_++];
    const bool last = clusterPos_ >= word.size();
    if (last) {
      ++optind_;
      clusterPos_ = 0;
    }
    const OptionDef* def = findShortOption(c);
    if (def == nullptr) return error(std::string("sbatch: invalid option -- '") + c + "'");
    if (def->arg == ArgKind::kNone) return option(def, std::nullopt);
    if (!last) {
      std::string rest = word.substr(clusterPos_);
      ++optind_;
      clusterPos_ = 0;
      return option(def, std::move(rest));
    }
    if (def->arg == ArgKind::kOptional) return option(def, std::nullopt);
    if (optind_ < words_.size()) return option(def, words_[optind_++]);
    return error(std::string("sbatch: option requires an argument -- '") + c + "'");
  }

  const std::vector<std::string>& words_;
  std::size_t optind_;
  std::size_t clusterPos_ = 0;  // position inside a cluster of short options; 0 = none
};

// ---------------------------------------------------------------------------------------------
// #SBATCH directives (src/sbatch/opt.c _opt_batch_script() and get_argument()).

struct DirectiveScan {
  std::vector<std::string> words;
  std::optional<std::string> fatal;  // the text after "sbatch: fatal: "
  bool sawSlurmPrefix = false;       // a "#SLURM" line: Slurm asks to change it to #SBATCH
  bool hetjob = false;               // a "#SBATCH hetjob" separator was reached
};

// One word of a directive line, starting at `pos`. Returns nullopt when no word is left (end of
// line, a comment, or a word that copies no character, e.g. ""). Quotes group and are removed,
// a backslash makes the next character literal, an unquoted '#' ends the line.
struct WordResult {
  std::optional<std::string> word;
  std::size_t next = 0;
  std::optional<char> unmatchedQuote;
  bool unexpectedColon = false;
};

WordResult nextDirectiveWord(std::string_view line, std::size_t pos) {
  WordResult result;
  std::size_t i = pos;
  while (i < line.size() && isCSpace(line[i])) ++i;
  if (i < line.size() && line[i] == ':') {
    result.unexpectedColon = true;
    return result;
  }
  std::string word;
  bool any = false;
  bool escaped = false;
  char quote = 0;
  while (i < line.size() && (quote != 0 || !isCSpace(line[i])) && line[i] != '\n') {
    const char c = line[i];
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
      ++i;
      continue;
    } else if (quote != 0) {
      if (c == quote) {
        quote = 0;
        ++i;
        continue;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      ++i;
      continue;
    } else if (c == '#') {
      break;
    }
    word += c;
    any = true;
    ++i;
  }
  if (quote != 0) {
    result.unmatchedQuote = quote;
    return result;
  }
  result.next = i;
  if (any) result.word = std::move(word);
  return result;
}

bool isSeparatorWord(std::string_view text, std::string_view keyword) {
  return startsWithIgnoreCase(text, keyword) &&
         (text.size() == keyword.size() || isCSpace(text[keyword.size()]));
}

DirectiveScan scanDirectives(std::string_view script, std::string_view fileLabel) {
  DirectiveScan scan;
  constexpr std::string_view kSbatch = "#SBATCH";
  constexpr std::string_view kSlurm = "#SLURM";
  std::size_t start = 0;
  int lineNumber = 0;
  while (start < script.size()) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++lineNumber;
    std::string_view rest;
    if (line.starts_with(kSbatch)) {
      rest = line.substr(kSbatch.size());
    } else if (line.starts_with(kSlurm)) {
      rest = line.substr(kSlurm.size());
      scan.sawSlurmPrefix = true;
    } else {
      // A line with anything but white space before its first '#' is a command: Slurm stops.
      const auto* const first = std::find_if_not(line.begin(), line.end(), isCSpace);
      if (first != line.end() && *first != '#') break;
      continue;
    }
    std::size_t skip = 0;
    while (skip < rest.size() && isCSpace(rest[skip])) ++skip;
    rest = rest.substr(skip);
    if (isSeparatorWord(rest, "packjob") || isSeparatorWord(rest, "hetjob")) {
      scan.hetjob = true;
      break;
    }
    std::size_t pos = 0;
    while (true) {
      WordResult word = nextDirectiveWord(rest, pos);
      if (word.unexpectedColon || word.unmatchedQuote) {
        const std::string shown(rest.substr(pos));
        scan.fatal =
            std::string(fileLabel) + ": line " + std::to_string(lineNumber) + ": " +
            (word.unexpectedColon ? std::string("Unexpected `:`")
                                  : "Unmatched `" + std::string(1, *word.unmatchedQuote) + "`") +
            " in [" + shown + "]";
        return scan;
      }
      if (!word.word) break;
      scan.words.push_back(std::move(*word.word));
      pos = word.next;
    }
  }
  return scan;
}

// ---------------------------------------------------------------------------------------------
// Applying options: the slurm_opt.c arg_set_*() functions that matter to kubeslurm.

constexpr long long kNiceLimit = 2147483645;  // NICE_OFFSET - 3
constexpr std::uint32_t kNoVal = 0xfffffffeU;

enum class Source { kCommandLine, kScript, kEnv };

// A failed option: the lines to print and the exit code (255 for Slurm's exit(-1)).
struct Failure {
  std::vector<std::string> lines;
  int exitCode = 255;
};

// The option state sbatch builds up (Slurm's slurm_opt_t), before _opt_verify().
struct OptState {
  JobRequest req;
  bool nodesSet = false;
  long long minNodes = 1;  // Slurm's defaults: one node, no maximum
  long long maxNodes = 0;
  std::optional<std::string> gres;  // as given; "none" drops it
  std::string gpus;
  std::string gpusPerNode;
  std::string gpusPerTask;
  std::string chdir;
  std::optional<std::uint16_t> mailType;
  // Whether each memory option was last set from the environment (Slurm's set_by_env).
  std::array<std::optional<Source>, 3> memSource;  // --mem, --mem-per-cpu, --mem-per-gpu
  std::optional<long long> switchWaitSeconds;
  std::string dependencyText;
  bool jobNameSet = false;  // -J '' is a name too: Slurm keeps the empty string
};

std::string errorLine(std::string_view message) { return "sbatch: error: " + std::string(message); }

// Slurm's parse_int(): a positive int or exit(1).
std::optional<std::uint32_t> parsePositiveInt(std::string_view name, std::string_view value,
                                              Failure& failure) {
  const CNumber n = parseCNumber(value);
  if (!n.digits || n.end != value.size() || n.value <= 0 || n.value > INT_MAX) {
    failure = {{errorLine("Invalid numeric value \"" + std::string(value) + "\" for " +
                          std::string(name) + ".")},
               1};
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(n.value);
}

// Slurm's time_str2mins(): minutes, rounded up; 0 means no limit.
std::optional<TimeLimit> parseMinutes(std::string_view text) {
  StatusOr<TimeLimit> parsed = parseTimeLimit(text);
  if (!parsed.isOk()) return std::nullopt;
  if (parsed->isUnlimited()) return TimeLimit{};
  const std::int64_t seconds = *parsed->seconds;
  if (seconds < 0) return std::nullopt;
  const std::int64_t minutes = (seconds + 59) / 60;
  if (minutes == 0) return TimeLimit{};
  return TimeLimit{minutes * 60};
}

// Slurm's verify_node_count() with _str_to_nodes(): "4", "2-8", "1k"; a missing minimum is 1.
struct NodeCount {
  long long min = 0;
  long long max = 0;
};

std::optional<long long> strToNodes(std::string_view text, std::string_view& leftover) {
  const CNumber n = parseCNumber(text);
  if (!n.digits) {
    leftover = text;
    return -1;
  }
  // Slurm keeps the count in an int; anything wider is not a node count we can honour (and
  // checking first keeps the multiplications below in range).
  if (n.value > INT_MAX || n.value < INT_MIN) return std::nullopt;
  long long value = n.value;
  std::size_t end = n.end;
  if (end < text.size() && (text[end] == 'k' || text[end] == 'K')) {
    value *= 1024;
    ++end;
  }
  if (end < text.size() && (text[end] == 'm' || text[end] == 'M')) {
    value *= 1024LL * 1024;
    ++end;
  }
  leftover = text.substr(end);
  if (value > INT_MAX || value < INT_MIN) return std::nullopt;
  return value;
}

std::optional<NodeCount> parseNodeCount(std::string_view arg, Failure& failure) {
  auto invalid = [&](std::string_view shown) {
    failure = {{errorLine("\"" + std::string(shown) + "\" is not a valid node count")}, 255};
    return std::nullopt;
  };
  NodeCount count;
  std::string_view leftover;
  if (const std::size_t dash = arg.find('-'); dash != std::string_view::npos) {
    const std::string_view minText = arg.substr(0, dash);
    const std::optional<long long> min = strToNodes(minText, leftover);
    if (!min || !isWhitespaceOnly(leftover)) return invalid(minText);
    count.min = *min < 0 ? 1 : *min;
    const std::string_view maxText = arg.substr(dash + 1);
    const std::optional<long long> max = strToNodes(maxText, leftover);
    if (!max || !isWhitespaceOnly(leftover)) return invalid(maxText);
    count.max = *max;
  } else {
    const std::optional<long long> n = strToNodes(arg, leftover);
    if (!n || !isWhitespaceOnly(leftover) || *n < 0) return invalid(arg);
    count.min = count.max = *n;
  }
  if (count.max != 0 && count.max < count.min) {
    failure = {{errorLine("Maximum node count " + std::to_string(count.max) +
                          " is less than minimum node count " + std::to_string(count.min))},
               255};
    return std::nullopt;
  }
  return count;
}

std::string makeFullPath(std::string_view path, std::string_view cwd) {
  if (path.starts_with('/') || cwd.empty()) return std::string(path);
  return std::string(cwd) + "/" + std::string(path);
}

// Pyxis's --container-mounts entry check (args.c parse_mount_option/add_mount).
std::optional<std::string> checkMount(std::string_view entry) {
  const std::string bad = "pyxis: --container-mounts: invalid format: " + std::string(entry);
  const std::size_t colon = entry.find(':');
  const std::string_view src = entry.substr(0, colon);
  if (src.empty()) return bad;
  std::string_view dst = src;
  if (colon != std::string_view::npos) {
    const std::string_view rest = entry.substr(colon + 1);
    dst = rest.substr(0, rest.find(':'));
    if (dst.empty()) return bad;
  }
  const auto isPath = [](std::string_view p) { return p.starts_with('.') || p.starts_with('/'); };
  if (!isPath(src) && src != "tmpfs" && src != "umount") {
    return "pyxis: mount source must be a relative path, an absolute path, \"tmpfs\" or "
           "\"umount\"";
  }
  if (!isPath(dst)) return "pyxis: mount target must be a relative path or an absolute path";
  return std::nullopt;
}

// Pyxis options: a failure prints Pyxis's error, then Slurm's "Invalid --NAME argument: ARG".
std::optional<Failure> applySpank(OptState& s, const OptionDef& def, const std::string& arg) {
  auto fail = [&](const std::string& pyxisMessage) {
    return Failure{{errorLine(pyxisMessage),
                    errorLine("Invalid --" + std::string(def.name) + " argument: " + arg)},
                   255};
  };
  const std::string flag = "pyxis: --" + std::string(def.name);
  ContainerSpec& c = s.req.container;
  // Pyxis keeps state across Slurm's calls: a second, different value is an error, not an
  // override (args.c "specified multiple times").
  auto setOnce = [&](std::string& field) -> std::optional<Failure> {
    if (arg.empty()) return fail(flag + ": argument required");
    if (!field.empty() && field != arg) return fail(flag + " specified multiple times");
    field = arg;
    return std::nullopt;
  };
  switch (def.id) {
    case Opt::kContainerImage:
      return setOnce(c.image);
    case Opt::kContainerWorkdir:
      return setOnce(c.workdir);
    case Opt::kContainerName: {
      if (arg.empty()) return fail(flag + ": argument required");
      const std::size_t colon = arg.find(':');
      if (colon == 0) return fail(flag + ": empty name");
      if (colon != std::string::npos) {
        const std::string flags = arg.substr(colon + 1);
        if (!flags.empty() && flags != "auto" && flags != "create" && flags != "exec" &&
            flags != "no_exec") {
          return fail(flag + R"(: flag must be "auto", "create", "exec" or "no_exec")");
        }
      }
      return setOnce(c.name);
    }
    case Opt::kContainerMounts: {
      if (arg.empty()) return fail(flag + ": argument required");
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = arg.find(',', start);
        const std::string entry = arg.substr(start, comma - start);
        if (std::optional<std::string> problem = checkMount(entry)) return fail(*problem);
        if (std::find(c.mounts.begin(), c.mounts.end(), entry) == c.mounts.end()) {
          c.mounts.push_back(entry);
        }
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return std::nullopt;
    }
    case Opt::kContainerEnv: {
      if (arg.empty()) return fail(flag + ": argument required");
      std::size_t start = 0;
      while (true) {
        const std::size_t comma = arg.find(',', start);
        const std::string name = arg.substr(start, comma - start);
        if (name.empty()) {
          std::string message = flag;
          message += ": invalid format: ";
          message += arg;
          return fail(message);
        }
        if (std::find(c.env.begin(), c.env.end(), name) == c.env.end()) c.env.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

void noteIgnored(OptState& s, const OptionDef& def) {
  const std::string name = "--" + std::string(def.name);
  if (std::find(s.req.ignoredOptions.begin(), s.req.ignoredOptions.end(), name) ==
      s.req.ignoredOptions.end()) {
    s.req.ignoredOptions.push_back(name);
  }
}

std::optional<Failure> applyMemory(OptState& s, const OptionDef& def, std::string_view arg,
                                   Source source) {
  const std::optional<std::uint64_t> mb = parseMegabytes(arg);
  if (!mb) {
    return Failure{{errorLine("Invalid --" + std::string(def.name) + " specification")}, 255};
  }
  const std::size_t index = def.id == Opt::kMem ? 0 : def.id == Opt::kMemPerCpu ? 1 : 2;
  (def.id == Opt::kMem         ? s.req.memPerNodeMb
   : def.id == Opt::kMemPerCpu ? s.req.memPerCpuMb
                               : s.req.memPerGpuMb) = *mb;
  s.memSource[index] = source;
  return std::nullopt;
}

std::optional<Failure> applyTimeOption(std::optional<TimeLimit>& field, std::string_view name,
                                       std::string_view arg) {
  std::optional<TimeLimit> limit = parseMinutes(arg);
  if (!limit) return Failure{{errorLine("Invalid --" + std::string(name) + " specification")}, 255};
  field = *limit;
  return std::nullopt;
}

std::optional<Failure> applyDate(std::optional<EpochSeconds>& field, std::string_view name,
                                 std::string_view arg, const SbatchContext& context) {
  StatusOr<EpochSeconds> t = parseBeginTime(arg, context.now, context.utcOffsetSeconds);
  // Slurm's parse_time() returns 0 on failure, so a time at the epoch is refused too.
  if (t.isOk() && *t != 0) {
    field = *t;
    return std::nullopt;
  }
  Failure failure;
  // parse_time() prints its own line, without a prefix, before sbatch's error.
  if (!t.isOk() && t.status().message().starts_with("Invalid time specification")) {
    failure.lines.push_back(t.status().message());
  }
  failure.lines.push_back(errorLine("Invalid --" + std::string(name) + " specification"));
  return failure;
}

std::optional<Failure> applyCounts(OptState& s, Opt id, std::string_view arg) {
  Failure failure;
  switch (id) {
    case Opt::kNodes: {
      std::optional<NodeCount> count = parseNodeCount(arg, failure);
      if (!count) return failure;
      s.nodesSet = true;
      s.minNodes = count->min;
      s.maxNodes = count->max;
      return std::nullopt;
    }
    case Opt::kNtasks:
      if (auto n = parsePositiveInt("--ntasks", arg, failure)) {
        s.req.ntasks = *n;
        return std::nullopt;
      }
      return failure;
    case Opt::kNtasksPerNode:
      if (auto n = parsePositiveInt("--ntasks-per-node", arg, failure)) {
        s.req.ntasksPerNode = *n;
        return std::nullopt;
      }
      return failure;
    case Opt::kCpusPerTask:
      if (auto n = parsePositiveInt("--cpus-per-task", arg, failure)) {
        s.req.cpusPerTask = *n;
        return std::nullopt;
      }
      return failure;
    case Opt::kMinCpus:
      if (auto n = parsePositiveInt("--mincpus", arg, failure)) {
        s.req.minCpusPerNode = *n;
        return std::nullopt;
      }
      return failure;
    case Opt::kSwitches: {
      // "count[@max-time]": a bad time is no time (time_str2secs() gives NO_VAL), not an error.
      const std::size_t at = arg.find('@');
      if (at != std::string_view::npos) {
        StatusOr<TimeLimit> t = parseTimeLimit(arg.substr(at + 1));
        s.switchWaitSeconds =
            (t.isOk() && t->seconds) ? std::optional<long long>(*t->seconds) : std::nullopt;
      }
      auto n = parsePositiveInt("--switches", arg.substr(0, at), failure);
      if (!n) return failure;
      s.req.switches = *n;
      return std::nullopt;
    }
    case Opt::kSwitchReq:
      if (auto n = parsePositiveInt("--switches", arg, failure)) {
        s.req.switches = *n;
        return std::nullopt;
      }
      return failure;
    case Opt::kSwitchWait: {
      StatusOr<TimeLimit> t = parseTimeLimit(arg);
      s.switchWaitSeconds =
          (t.isOk() && t->seconds) ? std::optional<long long>(*t->seconds) : std::nullopt;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Failure> applyScheduling(OptState& s, Opt id, const std::optional<std::string>& arg,
                                       const SbatchContext& context) {
  const std::string value = arg.value_or("");
  switch (id) {
    case Opt::kTime:
      return applyTimeOption(s.req.timeLimit, "time", value);
    case Opt::kTimeMin:
      return applyTimeOption(s.req.timeMin, "time-min", value);
    case Opt::kBegin:
      return applyDate(s.req.begin, "begin", value, context);
    case Opt::kDeadline:
      return applyDate(s.req.deadline, "deadline", value, context);
    case Opt::kNice: {
      const long long nice = arg ? parseCNumber(*arg).value : 100;
      if (nice > kNiceLimit || nice < -kNiceLimit) {
        return Failure{{errorLine("Invalid --nice value, out of range (+/- 2147483645)")}, 255};
      }
      s.req.nice = static_cast<std::int32_t>(nice);
      return std::nullopt;
    }
    case Opt::kPriority: {
      if (equalsIgnoreCase(value, "TOP")) {
        s.req.priority = kPriorityTop;
        return std::nullopt;
      }
      const long long priority = parseCNumber(value).value;
      if (priority < 0) return Failure{{errorLine("Priority must be >= 0")}, 255};
      if (priority >= kNoVal) return Failure{{errorLine("Priority must be < 4294967294")}, 255};
      s.req.priority = static_cast<std::uint32_t>(priority);
      return std::nullopt;
    }
    case Opt::kExclusive:
      if (!arg || equalsIgnoreCase(*arg, "exclusive")) {
        s.req.shared = SharedMode::kExclusive;
      } else if (equalsIgnoreCase(*arg, "oversubscribe")) {
        s.req.shared = SharedMode::kOversubscribe;
      } else if (equalsIgnoreCase(*arg, "user")) {
        s.req.shared = SharedMode::kExclusiveUser;
      } else if (equalsIgnoreCase(*arg, "mcs")) {
        s.req.shared = SharedMode::kExclusiveMcs;
      } else {
        return Failure{{errorLine("Invalid --exclusive specification")}, 255};
      }
      return std::nullopt;
    case Opt::kSignal: {
      std::optional<SignalSpec> signal = parseSignal(value);
      if (!signal) return Failure{{errorLine("Invalid --signal specification")}, 255};
      s.req.signal = *signal;
      return std::nullopt;
    }
    default:
      return applyCounts(s, id, value);
  }
}

std::optional<Failure> applyText(OptState& s, const OptionDef& def,
                                 const std::optional<std::string>& arg) {
  const std::string value = arg.value_or("");
  JobRequest& r = s.req;
  switch (def.id) {
    case Opt::kAccount:
      r.account = value;
      break;
    case Opt::kPartition:
      r.partition = value;
      break;
    case Opt::kQos:
      r.qos = value;
      break;
    case Opt::kJobName:
      r.jobName = value;
      s.jobNameSet = true;
      break;
    case Opt::kComment:
      r.comment = value;
      break;
    case Opt::kConstraint:
      r.constraint = value;
      break;
    case Opt::kMailUser:
      r.mailUser = value;
      break;
    case Opt::kExport:
      r.exportEnv = value;
      break;
    case Opt::kNodeList:
      r.nodeList = value;
      break;
    case Opt::kExclude:
      r.excludeList = value;
      break;
    case Opt::kArray:
      r.arrayText = value;
      break;
    case Opt::kDependency:
      s.dependencyText = value;
      break;
    case Opt::kOutput:
      r.output = equalsIgnoreCase(value, "none") ? "/dev/null" : value;
      break;
    case Opt::kError:
      r.error = equalsIgnoreCase(value, "none") ? "/dev/null" : value;
      break;
    case Opt::kInput:
      r.input = equalsIgnoreCase(value, "none") ? "/dev/null" : value;
      break;
    case Opt::kGres:  // "help" and "list" never get here: the caller prints the list
      s.gres = value;
      break;
    case Opt::kGpus:
      s.gpus = value;
      break;
    case Opt::kGpusPerNode:
      s.gpusPerNode = value;
      break;
    case Opt::kGpusPerTask:
      s.gpusPerTask = value;
      break;
    case Opt::kOpenMode:
      if (!value.empty() && (value[0] == 'a' || value[0] == 'A')) {
        r.openMode = OpenMode::kAppend;
      } else if (!value.empty() && (value[0] == 't' || value[0] == 'T')) {
        r.openMode = OpenMode::kTruncate;
      } else {
        return Failure{{errorLine("Invalid --open-mode specification")}, 255};
      }
      break;
    case Opt::kMailType: {
      // Slurm ORs each --mail-type into what earlier ones set.
      const std::optional<std::uint16_t> mask = parseMailType(value);
      if (!mask) return Failure{{errorLine("Invalid --mail-type specification")}, 255};
      r.mailType = static_cast<std::uint16_t>(r.mailType.value_or(0) | *mask);
      break;
    }
    case Opt::kNoKill:
      if (arg && !equalsIgnoreCase(*arg, "set") && !equalsIgnoreCase(*arg, "off") &&
          !equalsIgnoreCase(*arg, "no")) {
        return Failure{{errorLine("Invalid --no-kill specification")}, 255};
      }
      noteIgnored(s, def);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// Flags and the options that only record a value.
std::optional<Failure> applyFlag(OptState& s, const OptionDef& def,
                                 const std::optional<std::string>& arg,
                                 const SbatchContext& context) {
  JobRequest& r = s.req;
  switch (def.id) {
    case Opt::kHold:
      r.hold = true;
      return std::nullopt;
    case Opt::kContiguous:
      r.contiguous = true;
      return std::nullopt;
    case Opt::kParsable:
      r.parsable = true;
      return std::nullopt;
    case Opt::kTestOnly:
      r.testOnly = true;
      return std::nullopt;
    case Opt::kRequeue:
      r.requeue = true;
      return std::nullopt;
    case Opt::kNoRequeue:
      r.requeue = false;
      return std::nullopt;
    case Opt::kOversubscribe:
      r.shared = SharedMode::kOversubscribe;
      return std::nullopt;
    case Opt::kChdir:
      s.chdir = makeFullPath(arg.value_or(""), context.cwd);
      return std::nullopt;
    case Opt::kWrap:
      r.wrap = arg.value_or("");
      return std::nullopt;
    case Opt::kHelp:
    case Opt::kUsage:
    case Opt::kVersion:
    case Opt::kVerbose:
    case Opt::kQuiet:
      return std::nullopt;
    case Opt::kUnsupported:
    case Opt::kSpankUnsupported:
      noteIgnored(s, def);
      return std::nullopt;
    default:
      return applyText(s, def, arg);
  }
}

std::optional<Failure> applyOption(OptState& s, const OptionDef& def,
                                   const std::optional<std::string>& arg, Source source,
                                   const SbatchContext& context) {
  switch (def.id) {
    case Opt::kMem:
    case Opt::kMemPerCpu:
    case Opt::kMemPerGpu:
      return applyMemory(s, def, arg.value_or(""), source);
    case Opt::kTime:
    case Opt::kTimeMin:
    case Opt::kBegin:
    case Opt::kDeadline:
    case Opt::kNice:
    case Opt::kPriority:
    case Opt::kExclusive:
    case Opt::kSignal:
    case Opt::kNodes:
    case Opt::kNtasks:
    case Opt::kNtasksPerNode:
    case Opt::kCpusPerTask:
    case Opt::kMinCpus:
    case Opt::kSwitches:
    case Opt::kSwitchReq:
    case Opt::kSwitchWait:
      return applyScheduling(s, def.id, arg, context);
    case Opt::kContainerImage:
    case Opt::kContainerMounts:
    case Opt::kContainerWorkdir:
    case Opt::kContainerName:
    case Opt::kContainerEnv:
      return applySpank(s, def, arg.value_or(""));
    default:
      return applyFlag(s, def, arg, context);
  }
}

// Resets an option to "not given", as Slurm's reset_func does when an environment variable turns
// a flag off (SBATCH_REQUEUE=0).
void resetFlag(OptState& s, Opt id) {
  switch (id) {
    case Opt::kHold:
      s.req.hold = false;
      break;
    case Opt::kParsable:
      s.req.parsable = false;
      break;
    case Opt::kTestOnly:
      s.req.testOnly = false;
      break;
    case Opt::kRequeue:
    case Opt::kNoRequeue:
      s.req.requeue.reset();
      break;
    case Opt::kOversubscribe:
      s.req.shared = SharedMode::kDefault;
      break;
    default:
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Help texts. kubeslurm's own words: sbatch's are not copied.

std::vector<std::string> usageLines() {
  return {
      "Usage: sbatch [-N nnodes] [-n ntasks] [-c ncpus] [-p partition] [-A account] [-q qos]",
      "              [-t time] [-J jobname] [-o file] [-e file] [-D path] [--gres=list]",
      "              [--gpus=n] [--gpus-per-node=n] [--mem=MB] [--array=indexes]",
      "              [--dependency=type:jobid] [--exclusive] [--hold] [--parsable]",
      "              [--wrap=command] executable [args...]",
  };
}

std::vector<std::string> helpLines() {
  std::vector<std::string> lines = {
      "Usage: sbatch [OPTIONS...] executable [args...]",
      "",
      "kubeslurm's sbatch: submits a batch script as a SlurmJob. Options as in Slurm 22.05:",
      "  -A, --account=name          charge the job to this account",
      "  -a, --array=indexes         job array index values (e.g. 0-7%2)",
      "      --begin=time            defer the job until this time",
      "  -c, --cpus-per-task=ncpus   CPUs per task",
      "  -D, --chdir=directory       working directory of the batch script",
      "      --comment=text          arbitrary comment",
      "  -C, --constraint=list       node features",
      "      --deadline=time         remove the job if it cannot finish by then",
      "  -d, --dependency=type:jobid[:jobid...]  afterok, afternotok, afterany, singleton...",
      "  -e, --error=file            stderr file pattern (%j %A %a %x %N %u)",
      "      --exclusive[=user|mcs]  do not share nodes",
      "      --export[=ALL|NONE|names]  environment variables to pass to the job",
      "  -G, --gpus=[type:]n         GPUs for the whole job",
      "      --gpus-per-node=[type:]n, --gpus-per-task=[type:]n",
      "      --gres=list             generic resources per node (gpu:8, gpu:a100:2)",
      "  -H, --hold                  submit held",
      "  -i, --input=file            stdin file",
      "  -J, --job-name=name         job name",
      "      --mail-type=type, --mail-user=user",
      "      --mem=MB, --mem-per-cpu=MB, --mem-per-gpu=MB  memory (K, M, G, T suffixes)",
      "  -N, --nodes=N[-M]           number of nodes",
      "  -n, --ntasks=n              number of tasks",
      "      --ntasks-per-node=n     tasks per node",
      "      --nice[=value], --priority=value",
      "  -o, --output=file           stdout file pattern (default slurm-%j.out)",
      "      --open-mode=append|truncate",
      "  -p, --partition=partition   partition",
      "      --parsable              print only the job id",
      "  -q, --qos=qos               quality of service",
      "      --requeue, --no-requeue",
      "      --signal=[{R|B}:]num[@time]  signal before the time limit",
      "      --switches=max[@max-time]  leaf switches (topology)",
      "  -t, --time=time             time limit (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S)",
      "      --time-min=time         minimum time limit",
      "      --test-only             validate only; no job is created",
      "  -w, --nodelist=hosts, -x, --exclude=hosts",
      "      --wrap=command          wrap a command in a /bin/sh script",
      "      --container-image, --container-mounts, --container-workdir,",
      "      --container-env, --container-name  (Pyxis)",
      "",
      "kubeslurm adds: --dry-run=client [-o yaml|json] to print the SlurmJob instead of",
      "creating it.",
  };
  return lines;
}

// ---------------------------------------------------------------------------------------------
// GPU requests: Slurm's client-side gres_job_state_validate() for the one generic resource a
// Kubernetes GPU node has.

constexpr std::string_view kInvalidGres = "Invalid generic resource (gres) specification";

struct GpuRecord {
  std::string type;
  std::uint64_t perJob = 0;
  std::uint64_t perNode = 0;
  std::uint64_t perTask = 0;
};

// The numbers slurmctld receives, which the checks both read and (as in Slurm) adjust.
struct JobCounts {
  std::uint32_t numTasks = kNoVal;
  std::uint32_t minNodes = kNoVal;
  std::uint32_t maxNodes = kNoVal;
  std::uint32_t ntasksPerNode = kNoVal;
  bool cpusPerTaskSet = false;
};

GpuRecord& recordFor(std::vector<GpuRecord>& records, const std::string& type) {
  for (GpuRecord& record : records) {
    if (record.type == type) return record;
  }
  records.push_back(GpuRecord{type});
  return records.back();
}

// _test_gres_cnt() for one record; returns Slurm's message on failure.
std::optional<std::string> testGpuCounts(const GpuRecord& g, JobCounts& c) {
  if (g.perJob != 0 &&
      ((g.perNode != 0 && g.perNode > g.perJob) || (g.perTask != 0 && g.perTask > g.perJob))) {
    return "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= --gpus-per-socket";
  }
  if (g.perNode != 0 && g.perTask != 0 && g.perTask > g.perNode) {
    return "Failed to ensure --gpus >= --gpus-per-task";
  }
  if (g.perJob != 0 && g.perNode != 0) {
    if (g.perJob % g.perNode != 0) {
      return "Failed to validate job spec, --gpus is not multiple of --gres=gpu/--gpus-per-node";
    }
    const std::uint64_t nodes = g.perJob / g.perNode;
    if ((c.minNodes != kNoVal && nodes < c.minNodes) || nodes > c.maxNodes) {
      return "Failed to validate job spec. Based on --gpu and --gres=gpu/--gpus-per-node "
             "required nodes (" +
             std::to_string(nodes) + ") doesn't fall between min_nodes (" +
             std::to_string(c.minNodes) + ") and max_nodes (" + std::to_string(c.maxNodes) +
             ") boundaries.";
    }
    c.minNodes = c.maxNodes = static_cast<std::uint32_t>(nodes);
  }
  if (g.perTask != 0) {
    if (g.perJob != 0) {
      if (g.perJob % g.perTask != 0) {
        return "Failed to validate job spec, --gpus not multiple of --gpus-per-task";
      }
      const std::uint64_t tasks = g.perJob / g.perTask;
      if (c.numTasks == kNoVal) {
        c.numTasks = static_cast<std::uint32_t>(tasks);
      } else if (c.numTasks != tasks) {
        return "Failed to validate job spec. Based on --gpus and --gpus-per-task number of "
               "requested tasks differ from -n/--ntasks.";
      }
    } else if (c.numTasks == kNoVal) {
      return "Failed to validate job spec. --gpus-per-task used without either --gpus or "
             "-n/--ntasks is not allowed.";
    }
  }
  if (g.perNode != 0 && g.perTask != 0) {
    if (g.perNode % g.perTask != 0) {
      return "Failed to validate job spec, --gres=gpu/--gpus-per-node not multiple of "
             "--gpus-per-task.";
    }
    const std::uint64_t perNode = g.perNode / g.perTask;
    if (c.ntasksPerNode == kNoVal || c.ntasksPerNode == 0) {
      c.ntasksPerNode = static_cast<std::uint32_t>(perNode);
    } else if (c.ntasksPerNode != perNode) {
      return "Failed to validate job spec. Based on --gres=gpu/--gpus-per-node and "
             "--gpus-per-task requested number of tasks per node differ from "
             "--ntasks-per-node.";
    }
  }
  if (g.perJob != 0 && c.minNodes != kNoVal && g.perJob < c.minNodes) {
    return "Failed to validate job spec, --gpus < -N";
  }
  if (g.perJob != 0 && c.maxNodes != kNoVal && g.perJob < c.maxNodes) {
    c.maxNodes = static_cast<std::uint32_t>(g.perJob);
  }
  return std::nullopt;
}

// Validates and records the GPU options; adjusts node and task counts as Slurm does.
std::optional<Failure> validateGpus(OptState& s, int errorExit) {
  auto invalid = [&](std::vector<std::string> lines) {
    lines.push_back(errorLine(kInvalidGres));
    return Failure{std::move(lines), errorExit};
  };
  const auto gpus = parseGresList(s.gpus, true);
  const auto perNode = parseGresList(s.gpusPerNode, true);
  const auto gres = s.gres ? parseGresList(*s.gres, false) : std::vector<GresRequest>{};
  const auto perTask = parseGresList(s.gpusPerTask, true);
  if (!gpus || !perNode || !gres || !perTask) return invalid({});
  JobRequest& r = s.req;
  r.gpus = *gpus;
  r.gpusPerNode = *perNode;
  r.gres = *gres;
  r.gpusPerTask = *perTask;

  JobCounts c;
  if (s.nodesSet) {
    c.minNodes = static_cast<std::uint32_t>(s.minNodes);
    if (s.maxNodes != 0) c.maxNodes = static_cast<std::uint32_t>(s.maxNodes);
  }
  if (r.ntasks) c.numTasks = *r.ntasks;
  if (r.ntasksPerNode) c.ntasksPerNode = *r.ntasksPerNode;
  c.cpusPerTaskSet = r.cpusPerTask.has_value();
  if (!s.gpusPerTask.empty() && c.numTasks == kNoVal && c.minNodes != kNoVal &&
      c.minNodes == c.maxNodes) {
    if (c.ntasksPerNode != kNoVal) {
      c.numTasks = c.minNodes * c.ntasksPerNode;
    } else if (!c.cpusPerTaskSet) {
      c.numTasks = c.minNodes;
    }
  }

  std::vector<GpuRecord> records;
  for (const GresRequest& g : r.gpus) recordFor(records, g.type).perJob = g.count;
  for (const GresRequest& g : r.gpusPerNode) recordFor(records, g.type).perNode = g.count;
  for (const GresRequest& g : r.gres) recordFor(records, g.type).perNode = g.count;
  for (const GresRequest& g : r.gpusPerTask) recordFor(records, g.type).perTask = g.count;
  const bool requestedGpu = !records.empty();
  if (r.memPerGpuMb) {
    if (!requestedGpu) {
      return invalid({errorLine("Requested mem_per_tres=gres:gpu:" +
                                std::to_string(*r.memPerGpuMb) + " but did not request any GPU.")});
    }
    recordFor(records, "");
  }
  for (const GpuRecord& record : records) {
    if (std::optional<std::string> problem = testGpuCounts(record, c)) {
      return invalid({errorLine(*problem)});
    }
  }
  const bool typed = std::any_of(records.begin(), records.end(),
                                 [](const GpuRecord& g) { return !g.type.empty(); });
  const auto untyped = std::find_if(records.begin(), records.end(),
                                    [](const GpuRecord& g) { return g.type.empty(); });
  if (typed && untyped != records.end() &&
      (untyped->perJob != 0 || untyped->perNode != 0 || untyped->perTask != 0)) {
    return Failure{{errorLine("Invalid GRES specification (with and without type identification)")},
                   errorExit};
  }

  // What gres_job_state_validate() wrote back into the job description.
  if (c.minNodes != kNoVal) {
    s.nodesSet = true;
    s.minNodes = c.minNodes;
    s.maxNodes = c.maxNodes == kNoVal ? 0 : c.maxNodes;
  }
  if (c.numTasks != kNoVal) r.ntasks = c.numTasks;
  if (c.ntasksPerNode != kNoVal) r.ntasksPerNode = c.ntasksPerNode;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The passes.

struct Parser {
  const std::vector<std::string>& argv;
  const SbatchContext& context;
  int errorExit = 1;  // Slurm's error_exit: SLURM_EXIT_ERROR or 1

  const std::string* env(std::string_view name) const {
    auto it = context.env.find(name);
    return it == context.env.end() ? nullptr : &it->second;
  }

  static SbatchParseResult exitWith(std::vector<std::string> err, int code) {
    SbatchParseResult result;
    result.exit = SbatchExit{{}, std::move(err), code};
    return result;
  }
  static SbatchParseResult exitWith(const Failure& failure) {
    return exitWith(failure.lines, failure.exitCode);
  }
  static SbatchParseResult printAndExit(std::vector<std::string> out) {
    SbatchParseResult result;
    result.exit = SbatchExit{std::move(out), {}, 0};
    return result;
  }

  static bool isGresHelp(const OptionDef& def, const std::optional<std::string>& arg) {
    return def.id == Opt::kGres && arg &&
           (equalsIgnoreCase(*arg, "help") || equalsIgnoreCase(*arg, "list"));
  }

  // Runs getopt over words[start...] and applies each option. `firstPass` is sbatch's
  // process_options_first_pass(): every option is validated (Slurm marks them "set by env",
  // which bypasses the early-pass filter), SPANK options are left for later, and --help,
  // --usage and --version act at once. Otherwise early options are skipped.
  std::optional<SbatchParseResult> runOptions(const std::vector<std::string>& words,
                                              std::size_t start, bool firstPass, Source source,
                                              OptState& state, std::size_t& optind) const {
    Getopt getopt(words, start);
    while (true) {
      GetoptEvent event = getopt.next();
      if (event.kind == GetoptEvent::Kind::kDone) break;
      if (event.kind == GetoptEvent::Kind::kError) {
        return exitWith({event.message, std::string(kTryHelp)}, 255);
      }
      const OptionDef& def = *event.def;
      if (isGresHelp(def, event.arg)) {
        return printAndExit({"Valid gres options are:", "gpu[[:type]:count]"});
      }
      if (firstPass) {
        if (isSpank(def.id)) continue;
        if (def.id == Opt::kHelp) return printAndExit(helpLines());
        if (def.id == Opt::kUsage) return printAndExit(usageLines());
        if (def.id == Opt::kVersion) return printAndExit({"slurm 22.05.8"});
      } else if (def.early) {
        continue;
      }
      if (std::optional<Failure> failure = applyOption(state, def, event.arg, source, context)) {
        return exitWith(*failure);
      }
    }
    optind = getopt.optind();
    return std::nullopt;
  }

  std::optional<SbatchParseResult> applyEnvironment(OptState& state) const {
    for (const EnvOption& e : envOptions()) {
      const std::string* value = env(e.variable);
      if (value == nullptr) continue;
      const OptionDef* def = e.option.empty() ? findOptionById(e.id) : findOptionByName(e.option);
      if (def == nullptr) continue;
      std::optional<std::string> arg = *value;
      if (def->arg == ArgKind::kNone) {
        // A flag from the environment is on for "", "yes" or a non-zero number, else off.
        const CNumber n = parseCNumber(*value);
        const bool on = value->empty() || equalsIgnoreCase(*value, "yes") ||
                        (n.digits && n.value != 0 && n.end == value->size());
        if (!on) {
          resetFlag(state, def->id);
          continue;
        }
        arg.reset();
      } else if (def->arg == ArgKind::kOptional && value->empty()) {
        arg.reset();
      }
      if (isGresHelp(*def, arg)) {
        return printAndExit({"Valid gres options are:", "gpu[[:type]:count]"});
      }
      if (std::optional<Failure> failure = applyOption(state, *def, arg, Source::kEnv, context)) {
        return exitWith(*failure);
      }
    }
    return std::nullopt;
  }

  std::optional<SbatchParseResult> applyDirectives(const DirectiveScan& scan,
                                                   OptState& state) const {
    std::vector<std::string> words;
    words.reserve(scan.words.size() + 1);
    words.emplace_back("sbatch");
    words.insert(words.end(), scan.words.begin(), scan.words.end());
    std::size_t optind = 1;
    if (auto exit = runOptions(words, 1, false, Source::kScript, state, optind)) return exit;
    if (optind < words.size()) {
      return exitWith({errorLine("Invalid directive found in batch script: " + words[optind])},
                      255);
    }
    return std::nullopt;
  }

  // Slurm's _opt_verify() and what slurm_opt_create_job_desc() checks after it.
  std::optional<SbatchParseResult> verify(OptState& s, std::vector<std::string>& warnings) const {
    std::optional<Failure> failure = verifyMemory(s);
    if (failure) return exitWith(*failure);
    JobRequest& r = s.req;
    const std::string& dir = s.chdir;
    if (r.input.empty()) r.input = "/dev/null";
    for (std::string* path : {&r.error, &r.input, &r.output}) {
      if (!path->empty()) *path = makeFullPath(*path, dir);
    }
    if (auto exit = verifyNodeList(s, warnings)) return exit;
    if (r.ntasksPerNode && !r.ntasks && (s.maxNodes == 0 || s.minNodes == s.maxNodes)) {
      r.ntasks = static_cast<std::uint32_t>(s.minNodes) * *r.ntasksPerNode;
    }
    if (s.maxNodes != 0 && s.minNodes > s.maxNodes) {
      // _opt_verify()'s "check for realistic arguments": -w named more hosts than -N's maximum.
      return exitWith({errorLine("invalid number of nodes (-N " + std::to_string(s.minNodes) + "-" +
                                 std::to_string(s.maxNodes) + ")")},
                      errorExit);
    }
    if (s.nodesSet && r.ntasks) {
      const long long ntasks = *r.ntasks;
      if (ntasks < s.maxNodes) s.maxNodes = ntasks;
      if (ntasks < s.minNodes) {
        warnings.push_back("sbatch: Warning: can't run " + std::to_string(ntasks) +
                           " processes on " + std::to_string(s.minNodes) +
                           " nodes, setting nnodes to " + std::to_string(ntasks));
        s.minNodes = s.maxNodes = ntasks;
      }
    }
    if (r.deadline && r.begin && *r.deadline < *r.begin) {
      return exitWith({errorLine("Incompatible begin and deadline time specification")}, errorExit);
    }
    if ((failure = validateGpus(s, errorExit))) return exitWith(*failure);
    if (s.nodesSet) {
      r.nodes = NodeRange{static_cast<std::uint32_t>(s.minNodes), std::nullopt};
      if (s.maxNodes != 0 && s.maxNodes != s.minNodes) {
        r.nodes->max = static_cast<std::uint32_t>(s.maxNodes);
      }
    }
    r.workDir = s.chdir;
    if (r.switches) r.switchesWaitSeconds = s.switchWaitSeconds;
    return std::nullopt;
  }

  // _validate_memory_options(): a fatal error when two kinds are given outside the
  // environment; otherwise the one given wins over what the environment set.
  static std::optional<Failure> verifyMemory(OptState& s) {
    int byCli = 0;
    int byEnv = 0;
    for (const std::optional<Source>& source : s.memSource) {
      if (source) ++(*source == Source::kEnv ? byEnv : byCli);
    }
    if (byCli > 1) {
      return Failure{
          {"sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."}, 1};
    }
    auto fromCli = [&](std::size_t i) { return s.memSource[i] && *s.memSource[i] != Source::kEnv; };
    if (fromCli(0)) {
      s.req.memPerCpuMb.reset();
      s.req.memPerGpuMb.reset();
    } else if (fromCli(1)) {
      s.req.memPerNodeMb.reset();
      s.req.memPerGpuMb.reset();
    } else if (fromCli(2)) {
      s.req.memPerNodeMb.reset();
      s.req.memPerCpuMb.reset();
    } else if (byEnv > 1) {
      return Failure{{"sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and "
                      "SLURM_MEM_PER_NODE are mutually exclusive."},
                     1};
    }
    return std::nullopt;
  }

  // -w: the list must parse, and its host count raises the minimum node count. A name with a
  // '/' is a file of host names, which this pure parser cannot read: it is passed on as given.
  // Slurm logs each range it rejects inside the list (hostlist_create()), then fails with
  // "memory allocation failure" when the list as a whole is bad.
  std::optional<SbatchParseResult> verifyNodeList(OptState& s,
                                                  std::vector<std::string>& warnings) const {
    if (s.req.nodeList.empty() || s.req.nodeList.find('/') != std::string::npos) {
      return std::nullopt;
    }
    std::vector<std::string> diagnostics;
    StatusOr<Hostlist> hosts = Hostlist::parse(s.req.nodeList, &diagnostics);
    std::vector<std::string> lines;
    lines.reserve(diagnostics.size() + 2);
    for (const std::string& diagnostic : diagnostics) lines.push_back(errorLine(diagnostic));
    if (!hosts.isOk()) {
      if (diagnostics.empty() && !hosts.status().message().empty()) {
        lines.push_back(errorLine(hosts.status().message()));
      }
      lines.push_back(errorLine("memory allocation failure"));
      return exitWith(std::move(lines), errorExit);
    }
    warnings.insert(warnings.end(), lines.begin(), lines.end());
    // hostlist_uniq() before counting. Past kMaxUniqueScan hosts the duplicates are not looked
    // for: a list that long names distinct nodes in practice, and expanding it costs seconds.
    constexpr std::int32_t kMaxUniqueScan = 1 << 14;
    long long count = std::max<std::int32_t>(hosts->count(), 0);
    if (count <= kMaxUniqueScan) {
      std::set<std::string, std::less<>> unique;
      hosts->forEachHost([&](std::string_view host) {
        unique.emplace(host);
        return true;
      });
      count = static_cast<long long>(unique.size());
    }
    s.minNodes = s.nodesSet ? std::max(count, s.minNodes) : count;
    s.nodesSet = true;
    return std::nullopt;
  }

  // What slurmctld rejects when the job is submitted ("Batch job submission failed: ...").
  std::optional<SbatchParseResult> validateSubmission(JobRequest& r, const OptState& s) const {
    auto rejected = [&](const Status& status, std::string_view fallback) {
      std::string message = status.message().empty() ? std::string(fallback) : status.message();
      if (!message.starts_with("Batch job submission failed")) {
        message = "Batch job submission failed: " + message;
      }
      return exitWith({errorLine(message)}, errorExit);
    };
    // slurmctld checks task ids against its MaxArraySize; sbatch only reads the syntax, so an id
    // past the cluster's limit is the operator's (webhook's) refusal, in the same words.
    if (!r.arrayText.empty()) {
      StatusOr<ArraySpec> array = parseArraySpec(r.arrayText, kMaxMaxArraySize);
      if (!array.isOk()) return rejected(array.status(), "Invalid job array specification");
      r.array = std::move(*array);
    }
    if (!s.dependencyText.empty()) {
      StatusOr<DependencySpec> dependency = parseDependency(s.dependencyText, kMaxMaxArraySize);
      if (!dependency.isOk()) return rejected(dependency.status(), "Job dependency problem");
      r.dependency = std::move(*dependency);
    }
    return std::nullopt;
  }

  // The script's sanity checks (src/sbatch/sbatch.c _get_script_buffer()).
  std::optional<SbatchParseResult> checkScript(std::string_view script) const {
    std::vector<std::string> lines;
    if (script.empty()) {
      lines = {"Batch script is empty!"};
    } else if (isWhitespaceOnly(script)) {
      lines = {"Batch script contains only whitespace!"};
    } else if (!script.starts_with("#!")) {
      lines = {"This does not look like a batch script.  The first",
               "line must start with #! followed by the path to an interpreter.",
               "For instance: #!/bin/sh"};
    } else if (script.find('\0') != std::string_view::npos) {
      lines = {"The Slurm controller does not allow scripts that",
               "contain a NULL character '\\0'."};
    } else if (script.find("\r\n") != std::string_view::npos) {
      lines = {"Batch script contains DOS line breaks (\\r\\n)",
               "instead of expected UNIX line breaks (\\n)."};
    }
    if (lines.empty()) return std::nullopt;
    for (std::string& line : lines) line = errorLine(line);
    return exitWith(std::move(lines), errorExit);
  }

  std::string resolveScript(std::string_view operand) const {
    // search_path(): "./x" and "/x" are kept; a plain name is found in the submission directory.
    if (operand.starts_with('.') || operand.starts_with('/')) return std::string(operand);
    return makeFullPath(operand, context.cwd);
  }

  std::variant<SbatchInvocation, SbatchParseResult> firstPass(
      const std::vector<std::string>& words, const std::optional<std::string>& scriptText,
      std::size_t& optind) const;
  SbatchParseResult run(const std::optional<std::string>& scriptText) const;
};

// Pass 1 (process_options_first_pass()): the command line alone, then the script. Returns the
// invocation with its script filled in, or why sbatch stops here.
std::variant<SbatchInvocation, SbatchParseResult> Parser::firstPass(
    const std::vector<std::string>& words, const std::optional<std::string>& scriptText,
    std::size_t& optind) const {
  OptState first;
  first.chdir = context.cwd;
  if (auto exit = runOptions(words, 1, true, Source::kCommandLine, first, optind)) return *exit;
  if (optind < words.size() && words[optind] == ":") {
    return exitWith({errorLine("heterogeneous jobs are not supported by kubeslurm")}, errorExit);
  }
  const bool hasScript = optind < words.size();
  SbatchInvocation invocation;
  invocation.request.wrap = first.req.wrap;
  if (!first.req.wrap.empty()) {
    if (hasScript) {
      return exitWith({errorLine("Script arguments not permitted with --wrap option")}, errorExit);
    }
    invocation.script =
        "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + first.req.wrap + "\n";
    return invocation;
  }
  if (hasScript) {
    if (words[optind].empty()) {
      return exitWith({errorLine("Unable to open file ")}, errorExit);  // open("") fails
    }
    invocation.scriptPath = resolveScript(words[optind]);
    invocation.scriptArgs.assign(words.begin() + static_cast<std::ptrdiff_t>(optind) + 1,
                                 words.end());
  } else {
    invocation.scriptFromStdin = true;
  }
  if (!scriptText) {
    SbatchParseResult result;
    result.scriptToRead =
        ScriptToRead{invocation.scriptPath, hasScript ? words[optind] : "", errorExit};
    return result;
  }
  if (auto exit = checkScript(*scriptText)) return *exit;
  invocation.script = *scriptText;
  return invocation;
}

SbatchParseResult Parser::run(const std::optional<std::string>& scriptText) const {
  std::vector<std::string> words;
  words.reserve(argv.size() + 1);
  words.emplace_back("sbatch");
  words.insert(words.end(), argv.begin(), argv.end());
  std::size_t optind = 1;
  auto first = firstPass(words, scriptText, optind);
  if (auto* stop = std::get_if<SbatchParseResult>(&first)) return std::move(*stop);
  SbatchInvocation invocation = std::get<SbatchInvocation>(std::move(first));

  // Pass 2 (process_options_second_pass()): directives, then the environment, then the
  // command line again.
  const std::string_view path = invocation.scriptPath;
  const std::string label =
      invocation.scriptPath.empty() ? "stdin" : std::string(path.substr(path.rfind('/') + 1));
  const DirectiveScan scan = scanDirectives(invocation.script, label);
  if (scan.sawSlurmPrefix) {
    invocation.warnings.push_back(
        errorLine("Change from #SLURM to #SBATCH in your script and verify the options are "
                  "valid in sbatch"));
  }
  auto withWarnings = [&](SbatchParseResult result) {
    if (result.exit) {
      result.exit->err.insert(result.exit->err.begin(), invocation.warnings.begin(),
                              invocation.warnings.end());
    }
    return result;
  };
  if (scan.fatal) return withWarnings(exitWith({"sbatch: fatal: " + *scan.fatal}, 1));
  if (scan.hetjob) {
    return withWarnings(
        exitWith({errorLine("heterogeneous jobs are not supported by kubeslurm")}, errorExit));
  }
  OptState state;
  state.chdir = context.cwd;
  if (auto exit = applyDirectives(scan, state)) return withWarnings(*exit);
  if (auto exit = applyEnvironment(state)) return withWarnings(*exit);
  const std::vector<std::string> options(words.begin(),
                                         words.begin() + static_cast<std::ptrdiff_t>(optind));
  std::size_t ignored = 0;
  if (auto exit = runOptions(options, 1, false, Source::kCommandLine, state, ignored)) {
    return withWarnings(*exit);
  }
  state.req.wrap = invocation.request.wrap;
  if (!state.jobNameSet) {
    // opt.c _opt_verify() and sbatch.c _fill_job_desc_from_opts().
    state.req.jobName = !state.req.wrap.empty()          ? "wrap"
                        : !invocation.scriptPath.empty() ? label
                                                         : "sbatch";
  }
  if (auto exit = verify(state, invocation.warnings)) return withWarnings(*exit);
  if (auto exit = validateSubmission(state.req, state)) return withWarnings(*exit);

  invocation.request = std::move(state.req);
  SbatchParseResult result;
  result.invocation = std::move(invocation);
  return result;
}

struct MailTypeName {
  std::string_view name;
  std::uint16_t bit;
};
// Slurm's MAIL_* bits, in the order print_mail_type() lists them.
constexpr std::array<MailTypeName, 11> kMailTypes = {{
    {"ARRAY_TASKS", 0x0100},
    {"INVALID_DEPEND", 0x0200},
    {"BEGIN", 0x0001},
    {"END", 0x0002},
    {"FAIL", 0x0004},
    {"REQUEUE", 0x0008},
    {"STAGE_OUT", 0x0080},
    {"TIME_LIMIT_50", 0x0040},
    {"TIME_LIMIT_80", 0x0020},
    {"TIME_LIMIT_90", 0x0010},
    {"TIME_LIMIT", 0x0400},
}};
constexpr std::uint16_t kMailAll = 0x0200 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0080;

// One "[gres:]name[:type][:count]" entry; nullopt when invalid, a zero count when Slurm skips it.
std::optional<GresRequest> parseGresEntry(std::string_view entry) {
  auto number = [](std::string_view text) -> std::optional<std::uint64_t> {
    const CNumber n = parseCNumber(text);
    const unsigned long long value = n.digits ? n.unsignedValue : 0;
    if (value == ULLONG_MAX) return std::nullopt;
    const std::string_view suffix = text.substr(n.end);
    static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 15> kSuffixes = {{
        {"", 1},
        {"k", 1024},
        {"kib", 1024},
        {"kb", 1000},
        {"m", 1024ULL * 1024},
        {"mib", 1024ULL * 1024},
        {"mb", 1000ULL * 1000},
        {"g", 1024ULL * 1024 * 1024},
        {"gib", 1024ULL * 1024 * 1024},
        {"gb", 1000ULL * 1000 * 1000},
        {"t", 1024ULL * 1024 * 1024 * 1024},
        {"tib", 1024ULL * 1024 * 1024 * 1024},
        {"tb", 1000ULL * 1000 * 1000 * 1000},
        {"p", 1024ULL * 1024 * 1024 * 1024 * 1024},
        {"pb", 1000ULL * 1000 * 1000 * 1000 * 1000},
    }};
    for (const auto& [name, multiplier] : kSuffixes) {
      if (equalsIgnoreCase(suffix, name)) return value * multiplier;
    }
    if (equalsIgnoreCase(suffix, "pib")) return value * (1024ULL * 1024 * 1024 * 1024 * 1024);
    return std::nullopt;
  };
  GresRequest gres;
  const std::size_t colon = entry.find(':');
  gres.name = std::string(entry.substr(0, colon));
  if (colon != std::string_view::npos) {
    const std::string_view rest = entry.substr(colon + 1);
    const std::size_t colon2 = rest.find(':');
    if (colon2 != std::string_view::npos) {
      const std::string_view type = rest.substr(0, colon2);
      const std::string_view count = rest.substr(colon2 + 1);
      if (type.empty() || count.empty()) return std::nullopt;
      const std::optional<std::uint64_t> n = number(count);
      if (!n) return std::nullopt;
      gres.type = std::string(type);
      gres.count = *n;
    } else if (rest.empty()) {
      return std::nullopt;
    } else if (const std::optional<std::uint64_t> n = number(rest)) {
      gres.count = *n;
    } else {
      gres.type = std::string(rest);
      gres.count = 1;
    }
  }
  if (gres.count != 0 && gres.name != "gpu") return std::nullopt;
  return gres;
}

}  // namespace

std::string formatGres(const GresRequest& gres) {
  std::string text = gres.name;
  if (!gres.type.empty()) text += ":" + gres.type;
  return text + ":" + std::to_string(gres.count);
}

std::string formatGresList(const std::vector<GresRequest>& gres) {
  std::string text;
  for (const GresRequest& g : gres) {
    if (!text.empty()) text += ",";
    text += formatGres(g);
  }
  return text;
}

std::string formatGpuList(const std::vector<GresRequest>& gpus) {
  std::string text;
  for (const GresRequest& g : gpus) {
    if (!text.empty()) text += ",";
    if (!g.type.empty()) text += g.type + ":";
    text += std::to_string(g.count);
  }
  return text;
}

std::optional<std::vector<GresRequest>> parseGresList(std::string_view text, bool gpusOnly) {
  std::vector<GresRequest> result;
  if (!gpusOnly && equalsIgnoreCase(text, "none")) return result;
  std::size_t start = 0;
  std::size_t entries = 0;
  while (start <= text.size()) {
    if (++entries > kMaxGresEntries) return std::nullopt;
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view entry = text.substr(start, comma - start);
    start = comma + 1;
    if (entry.empty()) continue;
    std::string full;
    if (gpusOnly) {
      full = "gpu:" + std::string(entry);
    } else {
      full = std::string(entry.starts_with("gres:") ? entry.substr(5) : entry);
      if (full.empty()) continue;
    }
    std::optional<GresRequest> gres = parseGresEntry(full);
    if (!gres) return std::nullopt;
    if (gres->count != 0) result.push_back(std::move(*gres));
  }
  return result;
}

std::string formatSignal(const SignalSpec& signal) {
  std::string text;
  if (signal.reservation) text += "R";
  if (signal.batchOnly) text += "B";
  if (!text.empty()) text += ":";
  const std::string_view name = signalName(signal.number);
  text += !name.empty() ? std::string(name) : std::to_string(signal.number);
  if (signal.seconds != 60) text += "@" + std::to_string(signal.seconds);
  return text;
}

std::optional<SignalSpec> parseSignal(std::string_view text) {
  SignalSpec spec;
  if (startsWithIgnoreCase(text, "R")) {
    spec.reservation = true;
    text.remove_prefix(1);
  }
  // sbatch alone also takes "B" (and "BR"), since get_signal_opts() runs as "sbatch".
  if (startsWithIgnoreCase(text, "B")) {
    spec.batchOnly = true;
    text.remove_prefix(1);
  }
  if (startsWithIgnoreCase(text, "R")) {
    spec.reservation = true;
    text.remove_prefix(1);
  }
  if (text.starts_with(':')) text.remove_prefix(1);
  const std::size_t at = text.find('@');
  // Slurm stores the number in 16 bits before it range-checks it.
  const long number = signalNumber(text.substr(0, at)) & 0xffff;
  if (number < 1) return std::nullopt;
  spec.number = static_cast<int>(number);
  if (at == std::string_view::npos) return spec;
  const std::string_view seconds = text.substr(at + 1);
  const CNumber n = parseCNumber(seconds);
  if (n.value < 0 || n.value > 0xffff || n.end != (n.digits ? seconds.size() : 0) ||
      (!n.digits && !seconds.empty())) {
    return std::nullopt;
  }
  spec.seconds = static_cast<std::uint32_t>(n.value);
  return spec;
}

std::optional<std::uint16_t> parseMailType(std::string_view text) {
  std::uint16_t mask = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view word = text.substr(start, comma - start);
    start = comma + 1;
    if (word.empty()) continue;
    if (equalsIgnoreCase(word, "NONE")) return std::uint16_t{0};
    if (equalsIgnoreCase(word, "ALL")) {
      mask |= kMailAll;
      continue;
    }
    for (const MailTypeName& type : kMailTypes) {
      if (equalsIgnoreCase(word, type.name)) mask |= type.bit;
    }
  }
  if (mask == 0) return std::nullopt;
  return mask;
}

std::string formatMailType(std::uint16_t mask) {
  if (mask == 0) return "NONE";
  std::string text;
  for (const MailTypeName& type : kMailTypes) {
    if ((mask & type.bit) == 0) continue;
    if (!text.empty()) text += ",";
    text += type.name;
  }
  return text;
}

std::string formatMegabytes(std::uint64_t megabytes) {
  constexpr std::uint64_t kTera = 1024ULL * 1024;
  if (megabytes != 0 && megabytes % kTera == 0) return std::to_string(megabytes / kTera) + "T";
  if (megabytes != 0 && megabytes % 1024 == 0) return std::to_string(megabytes / 1024) + "G";
  return std::to_string(megabytes) + "M";
}

std::optional<std::uint64_t> parseMegabytes(std::string_view text) {
  const CNumber n = parseCNumber(text);
  if (!n.digits || n.overflow || n.value < 0) return std::nullopt;
  const auto value = static_cast<std::uint64_t>(n.value);
  std::string_view suffix = text.substr(n.end);
  if (suffix.empty()) return value;
  // One unit letter, optionally followed by B.
  if (suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b')) suffix.remove_suffix(1);
  if (suffix.size() != 1) return std::nullopt;
  std::uint64_t multiplier = 0;
  switch (toLowerAscii(suffix[0])) {
    case 'k':
      return (value + 1023) / 1024;
    case 'm':
      return value;
    case 'g':
      multiplier = 1024;
      break;
    case 't':
      multiplier = 1024ULL * 1024;
      break;
    default:
      return std::nullopt;
  }
  if (value > UINT64_MAX / multiplier) return std::nullopt;
  return value * multiplier;
}

const std::vector<std::string_view>& sbatchInputEnvNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const EnvOption& e : envOptions()) names.push_back(e.variable);
    names.push_back(kExitErrorVariable);
    return names;
  }();
  return kNames;
}

SbatchParseResult parseSbatch(const std::vector<std::string>& argv,
                              const std::optional<std::string>& scriptText,
                              const SbatchContext& context) {
  Parser parser{argv, context};
  if (auto it = context.env.find(kExitErrorVariable); it != context.env.end()) {
    // _set_exit_code(): atoi(); zero is refused with a message and leaves the default.
    const CNumber n = parseCNumber(it->second);
    const int code = n.digits ? static_cast<int>(n.value) : 0;
    if (code != 0) parser.errorExit = code;
  }
  return parser.run(scriptText);
}

std::vector<std::string> extractSbatchDirectives(std::string_view script) {
  return scanDirectives(script, "script").words;
}

std::size_t sbatchOptionSpan(const std::vector<std::string>& argv, std::size_t i) {
  if (i >= argv.size()) return 0;
  const std::string& word = argv[i];
  if (word == "--" || word.size() < 2 || word[0] != '-') return 0;
  const bool hasNext = i + 1 < argv.size();
  if (word[1] == '-') {
    const std::string_view rest = std::string_view(word).substr(2);
    if (rest.find('=') != std::string_view::npos) return 1;
    const LongMatch match = matchLongOption(rest);
    return match.def != nullptr && match.ambiguous.empty() &&
                   match.def->arg == ArgKind::kRequired && hasNext
               ? 2
               : 1;
  }
  for (std::size_t pos = 1; pos < word.size(); ++pos) {
    const OptionDef* def = findShortOption(word[pos]);
    if (def == nullptr || def->arg == ArgKind::kNone) continue;
    if (pos + 1 < word.size() || def->arg == ArgKind::kOptional) return 1;
    return hasNext ? 2 : 1;
  }
  return 1;
}

// --export's tokens as find_quote_token() (src/common/env.c) splits them: on commas outside
// quotes, with the quotes around a whole token taken off.
std::vector<std::string> splitExportTokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string token;
  char quote = 0;
  auto flush = [&] {
    if (token.size() >= 2 && (token.front() == '\'' || token.front() == '"') &&
        token.back() == token.front()) {
      token = token.substr(1, token.size() - 2);
    }
    tokens.push_back(std::move(token));
    token.clear();
  };
  for (const char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      flush();
      continue;
    }
    token += c;
  }
  flush();
  return tokens;
}

std::map<std::string, std::string> shippedEnvironment(
    const JobRequest& request,
    const std::function<std::optional<std::string>(std::string_view)>& getenv) {
  std::map<std::string, std::string> shipped;
  // sbatch's _fill_job_desc_from_opts: no --export, or ALL, is the whole environment; NONE only
  // the SLURM_* variables; a list what env_merge_filter() takes from it.
  bool wholeEnvironment = request.exportEnv.empty() || equalsIgnoreCase(request.exportEnv, "ALL");
  if (!wholeEnvironment && !equalsIgnoreCase(request.exportEnv, "NONE")) {
    for (const std::string& token : splitExportTokens(request.exportEnv)) {
      if (equalsIgnoreCase(token, "ALL")) {
        wholeEnvironment = true;
      } else if (const std::size_t equals = token.find('='); equals != std::string::npos) {
        shipped[token.substr(0, equals)] = token.substr(equals + 1);
      } else if (std::optional<std::string> value = getenv ? getenv(token) : std::nullopt) {
        shipped[token] = std::move(*value);
      }
    }
  }
  for (const std::string& name : request.container.env) {
    if (shipped.contains(name) || !wholeEnvironment || !getenv) continue;
    if (std::optional<std::string> value = getenv(name)) shipped[name] = std::move(*value);
  }
  // The job's SLURM_* are its own (the operator sets them); a submitting job's are not shipped.
  std::erase_if(shipped, [](const auto& entry) { return entry.first.starts_with("SLURM_"); });
  return shipped;
}

}  // namespace kubeslurm::slurm

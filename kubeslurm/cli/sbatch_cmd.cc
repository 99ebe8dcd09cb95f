// `sbatch`: Slurm's option handling (kubeslurm/slurm/sbatch_options.h), then the SlurmJob that
// would be created.
//
// kubectl-style flags of our own, recognised among sbatch's options (before the script):
//   --dry-run[=client|server|none]   client: print the SlurmJob instead of creating it.
//   -o yaml|json, -oyaml, -o=json, --output=yaml|json, --output yaml
//                                    the format to print it in (yaml by default).
// -o is also sbatch's --output, so "-o yaml" and "-o json" mean the print format only together
// with --dry-run, as in `kubectl create --dry-run=client -o yaml`; any other -o value (and
// either one without --dry-run) stays sbatch's output file. A job that really wants its output
// in a file named "yaml" under --dry-run can say "-o ./yaml".
//
// Cluster flags (kube_access.h), also among the options before the script: --kubeconfig,
// --context, --namespace; and --submit-timeout=SECONDS (default 30): how long to wait for the
// operator's job id.
//
// Without --dry-run the SlurmJob is created and sbatch waits (polling GET) for the operator to
// write status.jobId, then prints "Submitted batch job N" ("N" with --parsable). A Valid=False
// condition seen meanwhile is slurmctld refusing the job: sbatch prints Slurm's error lines,
// deletes the SlurmJob (a refused Slurm job does not exist) and exits 1. With no id in time it
// names the SlurmJob, which stays queued, and exits 1.
//
// From the environment: the SBATCH_* input variables and SLURM_EXIT_ERROR, as sbatch reads them;
// PWD as the submission directory (sbatch's getcwd()); spec.user is the kubeconfig context's user,
// else USER; KUBESLURM_NAMESPACE for metadata.namespace when --namespace is not given (for
// --dry-run it is left out when unset, so the client's default namespace applies).
// Not shipped: the submitting shell's whole environment, which Slurm copies into the job for
// --export=ALL. spec.environment carries only what the user named (slurm::shippedEnvironment:
// --export's NAME and NAME=VALUE tokens, Pyxis's --container-env names).
#include <algorithm>
#include <chrono>
#include <istream>
#include <ostream>
#include <sstream>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "kubeslurm/api/meta_v1.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/allocation.h"
#include "kubeslurm/cli/commands.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/scheduler_access.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/sbatch_options.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {
namespace {

enum class DryRun { kNone, kClient, kServer };
enum class Format { kYaml, kJson };

constexpr int kDefaultSubmitTimeoutSeconds = 30;

struct OwnFlags {
  DryRun dryRun = DryRun::kNone;
  std::optional<Format> format;
  KubeFlags kube;
  SchedulerFlags scheduler;
  int submitTimeoutSeconds = kDefaultSubmitTimeoutSeconds;
  std::vector<std::string> sbatchArgs;  // everything else, in order
  std::optional<std::string> error;
};

std::optional<Format> parseFormat(std::string_view value) {
  if (value == "yaml") return Format::kYaml;
  if (value == "json") return Format::kJson;
  return std::nullopt;
}

// The value of an output-format flag at args[i] and how many words it spans, if it is one.
std::optional<std::pair<Format, std::size_t>> formatFlag(const std::vector<std::string>& args,
                                                         std::size_t i) {
  const std::string_view word = args[i];
  if (word == "-o" || word == "--output") {
    if (i + 1 < args.size()) {
      if (auto format = parseFormat(args[i + 1])) return std::make_pair(*format, std::size_t{2});
    }
    return std::nullopt;
  }
  for (std::string_view prefix : {"--output=", "-o=", "-o"}) {
    if (word.starts_with(prefix)) {
      if (auto format = parseFormat(word.substr(prefix.size()))) {
        return std::make_pair(*format, std::size_t{1});
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<DryRun> dryRunFlag(std::string_view word, std::optional<std::string>& error) {
  if (word == "--dry-run") return DryRun::kClient;  // kubectl's deprecated bare form
  if (!word.starts_with("--dry-run=")) return std::nullopt;
  const std::string_view value = word.substr(10);
  if (value == "client") return DryRun::kClient;
  if (value == "server") return DryRun::kServer;
  if (value == "none") return DryRun::kNone;
  error = "invalid --dry-run value \"" + std::string(value) +
          R"(": must be "none", "server", or "client")";
  return DryRun::kNone;
}

// Our cluster flags at args[i] ("--flag VALUE" or "--flag=VALUE"): how many words they span.
std::size_t clusterFlag(const std::vector<std::string>& args, std::size_t i, OwnFlags& flags) {
  const std::string_view word = args[i];
  for (std::string_view name : {"--kubeconfig", "--context", "--namespace", "--submit-timeout",
                                "--scheduler", "--scheduler-ca", "--scheduler-server-name"}) {
    std::optional<std::string> value;
    std::size_t span = 0;
    if (word == name) {
      if (i + 1 >= args.size()) {
        flags.error = "flag needs an argument: " + std::string(name);
        return 1;
      }
      value = args[i + 1];
      span = 2;
    } else if (word.size() > name.size() && word.starts_with(name) && word[name.size()] == '=') {
      value = std::string(word.substr(name.size() + 1));
      span = 1;
    } else {
      continue;
    }
    if (name == "--kubeconfig") flags.kube.kubeconfig = *value;
    if (name == "--context") flags.kube.context = *value;
    if (name == "--namespace") flags.kube.namespaceName = *value;
    if (name == "--scheduler") flags.scheduler.address = *value;
    if (name == "--scheduler-ca") flags.scheduler.caFile = *value;
    if (name == "--scheduler-server-name") flags.scheduler.serverName = *value;
    if (name == "--submit-timeout") {
      char* end = nullptr;
      const long seconds = std::strtol(value->c_str(), &end, 10);
      if (value->empty() || *end != '\0' || seconds <= 0 || seconds > 86400) {
        flags.error = "invalid --submit-timeout value \"" + *value + "\": seconds, 1 to 86400";
      }
      flags.submitTimeoutSeconds = static_cast<int>(seconds);
    }
    return span;
  }
  return 0;
}

// Splits our flags from sbatch's. Only the option words before the script are looked at, with
// sbatch's own getopt rules deciding which words are option values.
OwnFlags splitFlags(const std::vector<std::string>& args) {
  OwnFlags flags;
  std::vector<bool> own(args.size(), false);
  std::size_t end = 0;  // first word after the options
  bool dryRunSeen = false;
  while (end < args.size()) {
    std::optional<std::string> error;
    if (auto dryRun = dryRunFlag(args[end], error)) {
      flags.dryRun = *dryRun;
      dryRunSeen = true;
      if (error) flags.error = error;
      own[end++] = true;
      continue;
    }
    if (const std::size_t ours = clusterFlag(args, end, flags); ours > 0) {
      for (std::size_t k = 0; k < ours; ++k) own[end++] = true;
      continue;
    }
    const std::size_t span = slurm::sbatchOptionSpan(args, end);
    if (span == 0) break;
    end += span;
  }
  if (dryRunSeen) {
    std::size_t i = 0;
    while (i < end) {
      if (own[i]) {
        ++i;
        continue;
      }
      if (auto format = formatFlag(args, i)) {
        flags.format = format->first;
        for (std::size_t k = 0; k < format->second; ++k) own[i + k] = true;
        i += format->second;
        continue;
      }
      i += std::max<std::size_t>(slurm::sbatchOptionSpan(args, i), 1);
    }
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!own[i]) flags.sbatchArgs.push_back(args[i]);
  }
  return flags;
}

// YAML scalars that a reader would take for something other than a string get quotes.
bool needsQuotes(const std::string& text) {
  if (text.empty()) return true;
  static const std::vector<std::string_view> kWords = {"true", "false", "yes", "no",   "on",
                                                       "off",  "y",     "n",   "null", "~"};
  std::string lower;
  for (char c : text) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (std::find(kWords.begin(), kWords.end(), lower) != kWords.end()) return true;
  const char first = text.front();
  return (first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.';
}

// Whether `text` is well-formed UTF-8 (what a YAML block may hold).
bool isUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80           ? 1
                               : (lead >> 5) == 0x6  ? 2
                               : (lead >> 4) == 0xe  ? 3
                               : (lead >> 3) == 0x1e ? 4
                                                     : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    }
    i += length;
  }
  return true;
}

// A multi-line string reads best as a "|" block, which keeps exactly one final newline and
// cannot start with a blank; anything else is written double-quoted with escapes.
bool literalBlockSafe(const std::string& text) {
  if (text.size() < 2 || text.back() != '\n' || text[text.size() - 2] == '\n') return false;
  if (text.front() == ' ' || text.front() == '\t' || text.front() == '\n') return false;
  const bool plain = std::none_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f;
  });
  return plain && isUtf8(text);
}

void emitYaml(YAML::Emitter& out, const nlohmann::json& value) {
  if (value.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, item] : value.items()) {
      out << YAML::Key << key << YAML::Value;
      emitYaml(out, item);
    }
    out << YAML::EndMap;
  } else if (value.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : value) emitYaml(out, item);
    out << YAML::EndSeq;
  } else if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (literalBlockSafe(text)) {
      out << YAML::Literal << text;
    } else if (needsQuotes(text)) {
      out << YAML::DoubleQuoted << text;
    } else {
      out << text;
    }
  } else if (value.is_boolean()) {
    out << value.get<bool>();
  } else if (value.is_number_unsigned()) {
    out << value.get<std::uint64_t>();
  } else if (value.is_number_integer()) {
    out << value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    out << value.get<double>();
  } else {
    out << YAML::Null;
  }
}

void printLines(std::ostream& stream, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) stream << line << "\n";
}

slurm::SbatchContext makeContext(const CliIo& io) {
  slurm::SbatchContext context;
  context.now = io.now;
  context.utcOffsetSeconds = io.utcOffsetSeconds;
  if (io.getenv) {
    context.cwd = io.getenv("PWD").value_or("");
    for (std::string_view name : slurm::sbatchInputEnvNames()) {
      if (std::optional<std::string> value = io.getenv(name)) {
        context.env.emplace(std::string(name), std::move(*value));
      }
    }
  }
  return context;
}

std::optional<std::string> readScript(const slurm::ScriptToRead& script, CliIo& io) {
  if (script.path.empty()) {
    std::ostringstream text;
    text << io.in.rdbuf();
    return text.str();
  }
  if (!io.readFile) return std::nullopt;
  StatusOr<std::string> text = io.readFile(script.path);
  if (!text.isOk()) return std::nullopt;
  return std::move(*text);
}

int printJob(const slurm::SbatchInvocation& invocation, const OwnFlags& flags, CliIo& io) {
  const Format format = flags.format.value_or(Format::kYaml);
  std::string namespaceName = flags.kube.namespaceName;
  if (namespaceName.empty() && io.getenv) {
    namespaceName = io.getenv("KUBESLURM_NAMESPACE").value_or("");
  }
  std::string user = kubeconfigUser(flags.kube, io);
  if (user.empty() && io.getenv) user = io.getenv("USER").value_or("");
  const nlohmann::json object = api::encodeSlurmJob(
      api::slurmJobFromInvocation(invocation, std::move(namespaceName), std::move(user)));
  if (format == Format::kJson) {
    // Scripts are bytes; invalid UTF-8 is shown as U+FFFD rather than failing the dump.
    io.out << object.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  YAML::Emitter out;
  emitYaml(out, object);
  io.out << out.c_str() << "\n";
  return 0;
}

// sbatch's lines for a job slurmctld refused, from the operator's Valid=False message
// (reference "sbatch and squeue": --partition=nope).
void printRejection(const std::string& message, CliIo& io) {
  for (std::string_view prefix :
       {"invalid partition specified: ", "Invalid partition name specified: "}) {
    if (message.starts_with(prefix)) {
      io.err << "sbatch: error: invalid partition specified: " << message.substr(prefix.size())
             << "\n"
             << "sbatch: error: Batch job submission failed: Invalid partition name specified\n";
      return;
    }
  }
  io.err << "sbatch: error: Batch job submission failed: " << message << "\n";
}

// The SlurmJob of `invocation`, created in the session's namespace for its user (the kubeconfig
// context's, else $USER: the admission webhook stamps the authenticated one where it runs).
StatusOr<nlohmann::json> createJob(const ClusterSession& session,
                                   const slurm::SbatchInvocation& invocation, const CliIo& io) {
  std::string user = session.user;
  if (user.empty() && io.getenv) user = io.getenv("USER").value_or("");
  return session.writer->create(
      kube::resources::slurmJobs(), session.namespaceName,
      api::encodeSlurmJob(api::slurmJobFromInvocation(invocation, session.namespaceName, user)));
}

int submit(const slurm::SbatchInvocation& invocation, const OwnFlags& flags, CliIo& io,
           const SubmitEnvironment& environment) {
  auto session = environment.connect(flags.kube, io);
  if (!session.isOk()) {
    io.err << "sbatch: error: " << session.status().message() << "\n";
    return 1;
  }
  const std::string namespaceName = session->namespaceName;
  const kube::ResourceType type = kube::resources::slurmJobs();
  auto created = createJob(*session, invocation, io);
  if (!created.isOk()) {
    io.err << "sbatch: error: Batch job submission failed: " << created.status().message() << "\n";
    return 1;
  }
  const std::string name = (*created)["metadata"].value("name", "");
  const std::string key = namespaceName + "/" + name;

  // The operator numbers the job, then judges it in the same scheduling cycle: once the id is
  // there, a little longer is allowed for a Valid=False condition (or any sign the job was
  // looked at) before the submission counts as accepted. An array's own record is never planned
  // (its tasks are): what the operator refuses of it comes in the write that gives it its id,
  // so its id is the judgement, and waiting longer would only delay every sweep's sbatch.
  const bool judgedWithId = invocation.request.array.has_value();
  const auto interval = std::chrono::milliseconds(200);
  const int attempts = flags.submitTimeoutSeconds * 5;
  constexpr int kSettleAttempts = 10;
  std::optional<std::int64_t> jobId;
  int settle = 0;
  StatusOr<nlohmann::json> object = std::move(created);
  for (int attempt = 0; attempt <= attempts; ++attempt) {
    if (attempt > 0) object = session->reader->get(type, namespaceName, name);
    if (object.isOk()) {
      const nlohmann::json* valid = api::findCondition(api::conditionsOf(*object), "Valid");
      if (valid != nullptr && valid->value("status", "") == "False") {
        printRejection(valid->value("message", valid->value("reason", "invalid job")), io);
        // A refused Slurm job does not exist; the id it used up is not reused.
        Status removed = session->writer->remove(type, namespaceName, name, kube::DeleteOptions{});
        if (!removed.isOk() && removed.code() != StatusCode::kNotFound) {
          io.err << "sbatch: error: could not delete SlurmJob " << key << ": " << removed.message()
                 << "\n";
        }
        return 1;
      }
      auto decoded = api::decodeSlurmJob(*object);
      if (decoded.isOk() && decoded->status && decoded->status->jobId) {
        jobId = decoded->status->jobId;
        const api::SlurmJobStatus& status = *decoded->status;
        const bool judged = judgedWithId || valid != nullptr || status.state != "PENDING" ||
                            (!status.reason.empty() && status.reason != "None");
        if (judged || settle++ >= kSettleAttempts) break;
      }
    } else if (object.status().code() == StatusCode::kNotFound) {
      io.err << "sbatch: error: Batch job submission failed: SlurmJob " << key
             << " was deleted before it got a job id\n";
      return 1;
    }
    if (attempt < attempts) environment.sleep(interval);
  }
  if (!jobId) {
    io.err << "sbatch: error: Batch job submission failed: SlurmJob " << key
           << " has no job id after " << flags.submitTimeoutSeconds
           << " s: is the kubeslurm operator running? The SlurmJob stays queued; delete it "
              "with `kubectl delete slurmjob -n "
           << namespaceName << " " << name << "` to withdraw it\n";
    return 1;
  }
  if (invocation.request.parsable) {
    io.out << *jobId << "\n";
  } else {
    io.out << "Submitted batch job " << *jobId << "\n";
  }
  return 0;
}

// --test-only (reference "sbatch and squeue"): the operator plans the job against its last
// cycle and says when and where it would start, on stderr, rc=0; the job is not submitted, but
// its id is used up, as slurmctld's will-run test uses one. `program` names the command in its
// lines: srun --test-only asks the same question (srun_job.c create_srun_job -> allocate_test ->
// slurm_job_will_run) and, refused, says only slurm_perror's "allocation failure: ...".
int testOnly(const slurm::SbatchInvocation& invocation, const OwnFlags& flags, CliIo& io,
             const SubmitEnvironment& environment, std::string_view program = "sbatch") {
  const std::string error = std::string(program) + ": error: ";
  auto session = environment.connect(flags.kube, io);
  if (!session.isOk()) {
    io.err << error << session.status().message() << "\n";
    return 1;
  }
  std::string user = session->user;
  if (user.empty() && io.getenv) user = io.getenv("USER").value_or("");
  const api::SlurmJobObject job =
      api::slurmJobFromInvocation(invocation, session->namespaceName, user);
  if (!environment.queries) {
    io.err << error << "--test-only needs the operator's query API\n";
    return 1;
  }
  auto client = environment.queries(*session, flags.scheduler, io);
  if (!client.isOk()) {
    io.err << error << describeQueryFailure(client.status()) << "\n";
    return 1;
  }
  auto answer = (*client)->testOnly(session->namespaceName, api::encodeSlurmJob(job).dump());
  if (!answer.isOk()) {
    const Status& failure = answer.status();
    const bool refused = failure.code() == StatusCode::kInvalidArgument ||
                         failure.code() == StatusCode::kResourceExhausted ||
                         failure.code() == StatusCode::kFailedPrecondition;
    if (program == "sbatch" && failure.code() == StatusCode::kInvalidArgument) {
      printRejection(failure.message(), io);
    } else if (refused) {
      io.err << "allocation failure: " << failure.message() << "\n";
    } else {
      io.err << error << describeQueryFailure(failure) << "\n";
    }
    return 1;
  }
  io.err << program << ": Job " << answer->jobId << " to start at "
         << slurm::formatTimestamp(answer->startTime, io.utcOffsetSeconds) << " using "
         << answer->processors << " processors on nodes " << answer->nodes << " in partition "
         << answer->partition << "\n";
  return 0;
}

// The srun options that shape the job an allocation would be (src/common/slurm_opt.c: the ones
// srun and sbatch both set in the job description); the rest (-l, -K, --overlap, --mpi,
// --cpu-bind, ...) shape steps only.
bool allocationOption(std::string_view name) {
  static constexpr std::string_view kNames =
      "account acctg-freq begin chdir comment constraint container contiguous cores-per-socket "
      "cpus-per-gpu cpus-per-task deadline dependency distribution exclude exclusive gpus "
      "gpus-per-node gpus-per-socket gpus-per-task gres gres-flags hold job-name licenses "
      "mail-type mail-user mem mem-per-cpu mem-per-gpu mincpus network nice nodelist nodes "
      "ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node ntasks-per-socket overcommit "
      "oversubscribe partition priority qos reservation signal sockets-per-node switches "
      "threads-per-core time time-min tmp wckey";
  for (std::string_view rest = kNames; !rest.empty();) {
    const std::size_t space = std::min(rest.find(' '), rest.size());
    if (rest.substr(0, space) == name) return true;
    rest.remove_prefix(std::min(space + 1, rest.size()));
  }
  return false;
}

// Options Slurm has that change nothing here (--reservation, --licenses, ...).
void warnIgnored(const slurm::SbatchInvocation& invocation, std::string_view program, CliIo& io) {
  for (const std::string& option : invocation.request.ignoredOptions) {
    io.err << program << ": warning: " << option << " is accepted but has no effect in kubeslurm\n";
  }
}

// sbatch's lines for srun's (or salloc's) options name that program, as Slurm's shared option
// code does for each.
void printAs(std::ostream& stream, const std::vector<std::string>& lines,
             std::string_view program) {
  for (const std::string& line : lines) {
    if (line.starts_with("sbatch:")) {
      stream << program << ":" << line.substr(7) << "\n";
    } else {
      stream << line << "\n";
    }
  }
}

// sbatch's arguments for a job of srun's (or salloc's) allocation options. Slurm names such a
// job after its command (srun opt.c: the executable's base name), `unnamed` without one.
std::vector<std::string> allocationArgs(const SrunOptions& options,
                                        const std::vector<std::string>& command,
                                        const std::string& unnamed) {
  std::vector<std::string> args;
  bool named = false;
  for (const auto& [name, value] : options) {
    if (!allocationOption(name)) continue;
    named = named || name == "job-name";
    args.push_back("--" + name + (value ? "=" + *value : std::string()));
  }
  if (!named && !command.empty()) {
    const std::size_t slash = command.front().rfind('/');
    args.push_back("--job-name=" + (slash == std::string::npos
                                        ? command.front()
                                        : command.front().substr(slash + 1)));
  } else if (!named && !unnamed.empty()) {
    args.push_back("--job-name=" + unnamed);
  }
  return args;
}

}  // namespace

int runSrunTestOnly(const SrunOptions& options, const std::vector<std::string>& command,
                    CliIo& io) {
  return runSrunTestOnlyWith(
      options, command, io,
      SubmitEnvironment{kubeConnector(),
                        [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); },
                        grpcQueryConnector()});
}

int runSrunTestOnlyWith(const SrunOptions& options, const std::vector<std::string>& command,
                        CliIo& io, const SubmitEnvironment& environment) {
  std::vector<std::string> args = allocationArgs(options, command, "");
  std::string wrapped;
  for (const std::string& word : command) wrapped += (wrapped.empty() ? "" : " ") + word;
  args.emplace_back("--test-only");
  args.push_back("--wrap=" + (wrapped.empty() ? std::string("true") : wrapped));

  const OwnFlags flags = splitFlags(args);
  const slurm::SbatchContext context = makeContext(io);
  slurm::SbatchParseResult result = slurm::parseSbatch(flags.sbatchArgs, std::nullopt, context);
  if (result.exit) {
    printAs(io.out, result.exit->out, "srun");
    printAs(io.err, result.exit->err, "srun");
    return result.exit->exitCode;
  }
  slurm::SbatchInvocation& invocation = *result.invocation;
  invocation.request.environment = slurm::shippedEnvironment(invocation.request, io.getenv);
  printAs(io.err, invocation.warnings, "srun");
  warnIgnored(invocation, "srun", io);
  return testOnly(invocation, flags, io, environment, "srun");
}

std::map<std::string, std::string> jobVariablesOfPod(const nlohmann::json& pod) {
  std::map<std::string, std::string> variables;
  const auto member = [](const nlohmann::json& object, const char* key) -> const nlohmann::json* {
    if (!object.is_object()) return nullptr;
    const auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
  };
  const nlohmann::json* spec = member(pod, "spec");
  const nlohmann::json* containers = spec != nullptr ? member(*spec, "containers") : nullptr;
  if (containers == nullptr || !containers->is_array() || containers->empty()) return variables;
  const nlohmann::json* env = member(containers->front(), "env");
  if (env == nullptr || !env->is_array()) return variables;
  for (const nlohmann::json& var : *env) {
    const nlohmann::json* name = member(var, "name");
    const nlohmann::json* value = member(var, "value");
    if (name == nullptr || value == nullptr || !name->is_string() || !value->is_string()) continue;
    const auto& text = name->get_ref<const std::string&>();
    if (text.starts_with("SLURM")) variables[text] = value->get<std::string>();
  }
  return variables;
}

Status revokeAllocation(const LoginAllocation& allocation) {
  return allocation.session.writer
      ->patch(kube::resources::slurmJobs(), allocation.namespaceName, allocation.jobName,
              nlohmann::json{{"spec", {{"cancel", true}}}})
      .status();
}

StatusOr<LoginAllocation> joinAllocation(const std::string& job, std::int64_t jobId, CliIo& io) {
  const std::size_t slash = job.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == job.size()) {
    return invalidArgument(std::string(kAllocationVariable) + " is not <namespace>/<job>: " + job);
  }
  const OwnFlags flags = splitFlags({});
  auto session = kubeConnector()(flags.kube, io);
  if (!session.isOk()) return session.status();
  auto endpoint = schedulerEndpoint(*session, flags.scheduler, io);
  if (!endpoint.isOk()) return endpoint.status();
  LoginAllocation allocation;
  allocation.namespaceName = job.substr(0, slash);
  allocation.jobName = job.substr(slash + 1);
  allocation.jobId = jobId;
  allocation.endpoint = std::move(endpoint).value();
  allocation.session = std::move(session).value();
  return allocation;
}

StatusOr<LoginAllocation> runningJob(std::int64_t jobId, CliIo& io) {
  const OwnFlags flags = splitFlags({});
  auto session = kubeConnector()(flags.kube, io);
  if (!session.isOk()) return session.status();
  auto listed = kube::listAll(*session->reader, kube::resources::slurmJobs(),
                              session->namespaceName, kube::ListOptions{});
  if (!listed.isOk()) return listed.status();
  const std::vector<api::SlurmJobObject> jobs = decodeJobList(*listed);
  const auto found = std::ranges::find_if(jobs, [jobId](const api::SlurmJobObject& job) {
    return job.status && job.status->jobId == jobId;
  });
  if (found == jobs.end()) return notFound("Invalid job id specified");
  const std::string& state = found->status->state;
  if (state != "RUNNING") {
    return failedPrecondition(state == "PENDING" || state == "SUSPENDED"
                                  ? "Job " + std::to_string(jobId) + " is " + state +
                                        ": steps run only in a running job"
                                  : std::string("Job/step already completing or completed"));
  }
  auto allocation = joinAllocation(found->namespaceName + "/" + found->name, jobId, io);
  if (!allocation.isOk()) return allocation.status();
  auto pod = allocation->session.reader->get(kube::resources::pods(), found->namespaceName,
                                             podspec::rankPodName(found->name, 0));
  if (!pod.isOk()) return pod.status();
  allocation->environment = jobVariablesOfPod(*pod);
  allocation->environment["SLURM_JOB_ID"] = std::to_string(jobId);
  return allocation;
}

AllocationOutcome allocateInteractive(std::string_view program, const SrunOptions& options,
                                      const std::vector<std::string>& command, CliIo& io,
                                      const std::function<bool()>& interrupted) {
  return allocateInteractiveWith(
      program, options, command, io, interrupted,
      SubmitEnvironment{kubeConnector(),
                        [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); },
                        grpcQueryConnector()});
}

AllocationOutcome allocateInteractiveWith(std::string_view program, const SrunOptions& options,
                                          const std::vector<std::string>& command, CliIo& io,
                                          const std::function<bool()>& interrupted,
                                          const SubmitEnvironment& environment) {
  const std::string name(program);
  const std::string error = name + ": error: ";
  bool immediate = false;
  for (const auto& option : options) immediate = immediate || option.first == "immediate";
  std::vector<std::string> args = allocationArgs(options, command, "interactive");
  args.emplace_back("--wrap=true");  // sbatch's parser wants something to run; the job has none

  const OwnFlags flags = splitFlags(args);
  const slurm::SbatchContext context = makeContext(io);
  slurm::SbatchParseResult result = slurm::parseSbatch(flags.sbatchArgs, std::nullopt, context);
  if (result.exit) {
    printAs(io.out, result.exit->out, name);
    printAs(io.err, result.exit->err, name);
    return {std::nullopt, result.exit->exitCode};
  }
  slurm::SbatchInvocation& invocation = *result.invocation;
  invocation.script.clear();
  invocation.request.wrap.clear();
  invocation.request.interactive = true;
  invocation.request.environment = slurm::shippedEnvironment(invocation.request, io.getenv);
  printAs(io.err, invocation.warnings, name);
  warnIgnored(invocation, name, io);

  auto session = environment.connect(flags.kube, io);
  if (!session.isOk()) {
    io.err << error << session.status().message() << "\n";
    return {};
  }
  auto endpoint = schedulerEndpoint(*session, flags.scheduler, io);
  if (!endpoint.isOk()) {
    io.err << error << "steps from a login host go through the operator's query API: "
           << describeQueryFailure(endpoint.status()) << "\n";
    return {};
  }
  const std::string namespaceName = session->namespaceName;
  const kube::ResourceType type = kube::resources::slurmJobs();
  auto created = createJob(*session, invocation, io);
  if (!created.isOk()) {
    io.err << error << "Unable to allocate resources: " << created.status().message() << "\n";
    return {};
  }
  LoginAllocation allocation;
  allocation.namespaceName = namespaceName;
  allocation.jobName = (*created)["metadata"].value("name", "");
  allocation.endpoint = std::move(endpoint).value();
  allocation.session = std::move(session).value();
  const ClusterSession& cluster = allocation.session;
  // Cancelled as scancel cancels it: the job is numbered, or about to be, and keeps its record.
  const auto revoke = [&allocation] {
    (void)revokeAllocation(allocation);
    return AllocationOutcome{};
  };

  // Numbered, judged, then started: polled as sbatch polls for the id. Slurm's srun waits
  // without a limit; so does this, until the job starts, ends or the caller gives up.
  const auto interval = std::chrono::milliseconds(200);
  const int idAttempts = flags.submitTimeoutSeconds * 5;
  bool queuedSaid = false;
  StatusOr<nlohmann::json> object = std::move(created);
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) {
      environment.sleep(interval);
      object = cluster.reader->get(type, namespaceName, allocation.jobName);
    }
    if (!object.isOk()) {
      if (object.status().code() == StatusCode::kNotFound) {
        io.err << error << "Job allocation "
               << (allocation.jobId != 0 ? std::to_string(allocation.jobId) : allocation.jobName)
               << " has been revoked\n";
        return {};
      }
      continue;  // the API server answers again later
    }
    const nlohmann::json* valid = api::findCondition(api::conditionsOf(*object), "Valid");
    if (valid != nullptr && valid->value("status", "") == "False") {
      io.err << error << "Unable to allocate resources: "
             << valid->value("message", valid->value("reason", "invalid job")) << "\n";
      (void)cluster.writer->remove(type, namespaceName, allocation.jobName, kube::DeleteOptions{});
      return {};
    }
    auto decoded = api::decodeSlurmJob(*object);
    const api::SlurmJobStatus* status =
        decoded.isOk() && decoded->status ? &*decoded->status : nullptr;
    if (status == nullptr || !status->jobId) {
      if (interrupted && interrupted()) {
        io.err << name << ": Job allocation " << allocation.jobName << " has been revoked\n";
        return revoke();
      }
      if (attempt >= idAttempts) {
        io.err << error << "Unable to allocate resources: SlurmJob " << namespaceName << "/"
               << allocation.jobName << " has no job id after " << flags.submitTimeoutSeconds
               << " s: is the kubeslurm operator running?\n";
        (void)cluster.writer->remove(type, namespaceName, allocation.jobName,
                                     kube::DeleteOptions{});
        return {};
      }
      continue;
    }
    allocation.jobId = *status->jobId;
    const std::string id = std::to_string(allocation.jobId);
    if (status->state == "RUNNING") {
      auto pod = cluster.reader->get(kube::resources::pods(), namespaceName,
                                     podspec::rankPodName(allocation.jobName, 0));
      if (!pod.isOk()) {
        if (pod.status().code() == StatusCode::kNotFound) continue;  // not in our view yet
        io.err << error << "cannot read job " << id << "'s rank 0: " << pod.status().message()
               << "\n";
        return revoke();
      }
      allocation.environment = jobVariablesOfPod(*pod);
      allocation.environment["SLURM_JOB_ID"] = id;
      if (queuedSaid) io.err << name << ": job " << id << " has been allocated resources\n";
      return {std::move(allocation), 0};
    }
    if (status->state != "PENDING") {
      // Ended before it started: cancelled by someone, failed, or its time ran out.
      io.err << error << "Job allocation " << id << " has been revoked\n";
      return {};
    }
    const bool judged = valid != nullptr || (!status->reason.empty() && status->reason != "None");
    if (interrupted && interrupted()) {
      io.err << name << ": Job allocation " << id << " has been revoked\n";
      return revoke();
    }
    if (!judged) continue;
    if (immediate) {
      // --immediate: resources now or never (srun's "Unable to allocate resources").
      io.err << error << "Unable to allocate resources: Requested nodes are busy\n";
      return revoke();
    }
    if (!queuedSaid) {
      io.err << name << ": job " << id << " queued and waiting for resources\n";
      queuedSaid = true;
    }
  }
}

int runSbatch(const std::vector<std::string>& args, CliIo& io) {
  return runSbatchWith(
      args, io,
      SubmitEnvironment{kubeConnector(),
                        [](std::chrono::milliseconds wait) { std::this_thread::sleep_for(wait); },
                        grpcQueryConnector()});
}

int runSbatchWith(const std::vector<std::string>& args, CliIo& io,
                  const SubmitEnvironment& environment) {
  const OwnFlags flags = splitFlags(args);
  if (flags.error) {
    io.err << "sbatch: error: " << *flags.error << "\n";
    return 1;
  }
  const slurm::SbatchContext context = makeContext(io);
  slurm::SbatchParseResult result = slurm::parseSbatch(flags.sbatchArgs, std::nullopt, context);
  if (result.scriptToRead) {
    std::optional<std::string> text = readScript(*result.scriptToRead, io);
    if (!text) {
      io.err << "sbatch: error: Unable to open file " << result.scriptToRead->operand << "\n";
      return result.scriptToRead->errorExitCode;
    }
    result = slurm::parseSbatch(flags.sbatchArgs, text, context);
  }
  if (result.exit) {
    printLines(io.out, result.exit->out);
    printLines(io.err, result.exit->err);
    return result.exit->exitCode;
  }
  slurm::SbatchInvocation& invocation = *result.invocation;
  invocation.request.environment = slurm::shippedEnvironment(invocation.request, io.getenv);
  printLines(io.err, invocation.warnings);
  warnIgnored(invocation, "sbatch", io);
  if (flags.dryRun == DryRun::kClient) return printJob(invocation, flags, io);
  if (flags.dryRun == DryRun::kServer) {
    io.err << "sbatch: error: --dry-run=server is not supported: use --dry-run=client\n";
    return 1;
  }
  if (invocation.request.testOnly) return testOnly(invocation, flags, io, environment);
  return submit(invocation, flags, io, environment);
}

}  // namespace kubeslurm::cli

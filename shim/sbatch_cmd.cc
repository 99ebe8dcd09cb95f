// `sbatch`: Slurm's option handling (operator/slurm/sbatch_options.h), then the SlurmJob that
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
// From the environment: the SBATCH_* input variables and SLURM_EXIT_ERROR, as sbatch reads them;
// PWD as the submission directory (sbatch's getcwd()); USER for spec.user; KUBESLURM_NAMESPACE
// for metadata.namespace (left out when unset, so the client's default namespace applies).
// Not shipped: the submitting shell's environment, which Slurm copies into the job for
// --export=ALL; spec.export carries the option's text only.
#include <algorithm>
#include <istream>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "operator/api/slurmjob.h"
#include "operator/slurm/sbatch_options.h"
#include "shim/commands.h"

namespace kubeslurm::shim {
namespace {

enum class DryRun { kNone, kClient, kServer };
enum class Format { kYaml, kJson };

struct OwnFlags {
  DryRun dryRun = DryRun::kNone;
  std::optional<Format> format;
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

int printJob(const slurm::SbatchInvocation& invocation, Format format, CliIo& io) {
  std::string namespaceName;
  std::string user;
  if (io.getenv) {
    namespaceName = io.getenv("KUBESLURM_NAMESPACE").value_or("");
    user = io.getenv("USER").value_or("");
  }
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

}  // namespace

int runSbatch(const std::vector<std::string>& args, CliIo& io) {
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
  const slurm::SbatchInvocation& invocation = *result.invocation;
  printLines(io.err, invocation.warnings);
  for (const std::string& option : invocation.request.ignoredOptions) {
    io.err << "sbatch: warning: " << option << " is accepted but has no effect in kubeslurm\n";
  }
  if (flags.dryRun == DryRun::kClient) {
    return printJob(invocation, flags.format.value_or(Format::kYaml), io);
  }
  io.err << "sbatch: error: no cluster connection yet: use --dry-run=client\n";
  return 1;
}

}  // namespace kubeslurm::shim

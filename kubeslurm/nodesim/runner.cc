#include "kubeslurm/nodesim/runner.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

namespace kubeslurm::nodesim {

namespace {

std::vector<std::string> splitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (const char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// Splits a shell script into simple commands on ; && || | and newlines (outside quotes).
std::vector<std::vector<std::string>> splitCommands(std::string_view script) {
  std::vector<std::vector<std::string>> commands;
  std::size_t start = 0;
  char quote = 0;
  auto flush = [&](std::size_t end) {
    auto words = splitWords(script.substr(start, end - start));
    if (!words.empty()) commands.push_back(std::move(words));
  };
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ';' || c == '\n' || c == '|' || c == '&') {
      flush(i);
      while (i + 1 < script.size() && (script[i + 1] == '|' || script[i + 1] == '&')) ++i;
      start = i + 1;
    }
  }
  flush(script.size());
  return commands;
}

std::optional<double> parseNumber(std::string_view text) {
  double value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// GNU sleep's operand: NUMBER[smhd]; "infinity" -> +inf. nullopt when unparseable.
std::optional<double> sleepSeconds(std::string_view operand) {
  if (operand == "infinity" || operand == "inf") return HUGE_VAL;
  double scale = 1;
  if (!operand.empty()) {
    switch (operand.back()) {
      case 's':
        scale = 1;
        break;
      case 'm':
        scale = 60;
        break;
      case 'h':
        scale = 3600;
        break;
      case 'd':
        scale = 86400;
        break;
      default:
        break;
    }
    if (std::isalpha(static_cast<unsigned char>(operand.back()))) {
      operand.remove_suffix(1);
    }
  }
  auto number = parseNumber(operand);
  if (!number) return std::nullopt;
  return *number * scale;
}

std::optional<std::int32_t> parseExitCode(std::string_view text) {
  std::int64_t value = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  // The shell reports the status modulo 256, as waitpid() does.
  return static_cast<std::int32_t>(((value % 256) + 256) % 256);
}

bool isShell(std::string_view program) {
  const std::size_t slash = program.rfind('/');
  if (slash != std::string_view::npos) program = program.substr(slash + 1);
  return program == "sh" || program == "bash" || program == "dash" || program == "ash";
}

struct ScriptResult {
  bool recognised = false;
  double seconds = 0;
  std::int32_t exitCode = 0;
};

ScriptResult runScript(const std::vector<std::vector<std::string>>& commands) {
  ScriptResult result;
  for (const auto& words : commands) {
    const std::string& verb = words.front();
    if (verb == "sleep") {
      double total = 0;
      bool ok = words.size() > 1;
      for (std::size_t i = 1; i < words.size() && ok; ++i) {
        auto s = sleepSeconds(words[i]);
        ok = s.has_value();
        if (ok) total += *s;
      }
      if (!ok) continue;
      result.recognised = true;
      result.seconds += total;
      result.exitCode = 0;
    } else if (verb == "exit") {
      result.recognised = true;
      if (words.size() > 1) {
        if (auto code = parseExitCode(words[1])) result.exitCode = *code;
      }
      return result;
    } else if (verb == "true" || verb == ":") {
      result.recognised = true;
      result.exitCode = 0;
    } else if (verb == "false") {
      result.recognised = true;
      result.exitCode = 1;
    } else {
      // Anything else (echo, python, ...) takes no simulated time and succeeds.
      result.exitCode = 0;
    }
  }
  return result;
}

}  // namespace

namespace {
// '#!' and '#SBATCH' lines are comments to the shell that runs a batch script.
std::string withoutCommentLines(std::string_view script) {
  std::string kept;
  std::size_t at = 0;
  while (at < script.size()) {
    std::size_t end = script.find('\n', at);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(at, end - at);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') {
      kept.append(line);
      kept.push_back('\n');
    }
    at = end + 1;
  }
  return kept;
}
}  // namespace

RunPlan planFromCommand(const api::Pod& pod, const api::Container& container) {
  std::vector<std::string> argv = container.command;
  argv.insert(argv.end(), container.args.begin(), container.args.end());
  ScriptResult script;
  if (!argv.empty() && isShell(argv.front())) {
    for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
      const std::string& flag = argv[i];
      if (flag.size() >= 2 && flag[0] == '-' && flag.find('c') != std::string::npos) {
        script = runScript(splitCommands(argv[i + 1]));
        break;
      }
    }
  } else if (!argv.empty()) {
    script = runScript({argv});
  }
  // A kubeslurm rank 0 carries its batch script in the environment and its launcher execs it
  // (kubeslurm/podspec/rank_pods.h): the script, not the launcher, says how long the job runs.
  for (const api::EnvVar& var : container.env) {
    if (var.name == kBatchScriptVariable && !var.value.empty()) {
      script = runScript(splitCommands(withoutCommentLines(var.value)));
      break;
    }
  }

  RunPlan plan;
  if (script.recognised && std::isfinite(script.seconds)) {
    plan.runMs = static_cast<std::int64_t>(std::llround(script.seconds * 1000));
    plan.exitCode = script.exitCode;
  }
  const auto& annotations = pod.metadata.annotations;
  bool exitAnnotated = false;
  if (auto it = annotations.find(std::string(kAnnotationExitCode)); it != annotations.end()) {
    if (auto code = parseExitCode(it->second)) {
      plan.exitCode = *code;
      exitAnnotated = true;
    }
  }
  if (auto it = annotations.find(std::string(kAnnotationRunSeconds)); it != annotations.end()) {
    if (auto seconds = parseNumber(it->second)) {
      plan.runMs = static_cast<std::int64_t>(std::llround(*seconds * 1000));
    }
  } else if (exitAnnotated && !plan.runMs) {
    plan.runMs = 0;
  }
  return plan;
}

std::string hexId(std::string_view seed, std::size_t chars) {
  std::string out;
  std::uint64_t hash = 1469598103934665603ULL;
  for (const char c : seed) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  while (out.size() < chars) {
    hash = (hash ^ out.size()) * 1099511628211ULL;
    for (int shift = 60; shift >= 0; shift -= 4) {
      out += "0123456789abcdef"[(hash >> static_cast<unsigned>(shift)) & 0xFU];
    }
  }
  out.resize(chars);
  return out;
}

RunStatus SimulatedRunner::poll(const ContainerRef& ref, std::int64_t startedAtMs,
                                std::int64_t nowMs) {
  const RunPlan plan = planFromCommand(ref.pod, ref.container);
  RunStatus status;
  if (!plan.runMs) return status;
  const std::int64_t exitAt = startedAtMs + *plan.runMs;
  if (nowMs >= exitAt) {
    status.exited = true;
    status.exitCode = plan.exitCode;
    status.finishedAtMs = exitAt;
  } else {
    status.checkAtMs = exitAt;
  }
  return status;
}

RunStatus SimulatedRunner::stop(const ContainerRef& ref, std::int64_t startedAtMs,
                                std::int64_t killAtMs, std::int64_t nowMs) {
  // A container that would have ended on its own before now did so.
  RunStatus natural = poll(ref, startedAtMs, nowMs);
  if (natural.exited) return natural;
  const auto& annotations = ref.pod.metadata.annotations;
  const auto ignore = annotations.find(std::string(kAnnotationIgnoreSigterm));
  RunStatus status;
  if (ignore != annotations.end() && ignore->second == "true") {
    if (nowMs < killAtMs) {
      status.checkAtMs = killAtMs;
      if (natural.checkAtMs && *natural.checkAtMs < killAtMs) status.checkAtMs = natural.checkAtMs;
      return status;
    }
    status.exited = true;
    status.exitCode = kExitSigkill;
    status.finishedAtMs = killAtMs;
    return status;
  }
  status.exited = true;
  status.exitCode = kExitSigterm;
  status.finishedAtMs = nowMs;
  return status;
}

}  // namespace kubeslurm::nodesim

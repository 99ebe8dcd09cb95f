#include "kubeslurm/slurm/filename_pattern.h"

#include <cstddef>
#include <utility>

namespace kubeslurm::slurm {
namespace {

// Slurm's NO_VAL, which %a prints outside an array.
constexpr std::uint32_t kNoVal = 0xfffffffe;
// fname.c's MAX_WIDTH.
constexpr std::size_t kMaxWidth = 10;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// printf's "%0*u".
std::string zeroPadded(std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

std::uint64_t arrayJobIdOf(const FilenamePatternValues& values) {
  // Outside an array %A is the job id; an array task without its array id falls back too.
  if (!values.arrayTaskId.has_value()) return values.jobId;
  return values.arrayJobId.value_or(values.jobId);
}

// _batch_path_check: the expansion of one conversion letter, or nullopt if unknown.
std::optional<std::string> expandLetter(char letter, std::size_t width,
                                        const FilenamePatternValues& values) {
  switch (letter) {
    case 'a':
      return zeroPadded(values.arrayTaskId.value_or(kNoVal), width);
    case 'A':
      return zeroPadded(arrayJobIdOf(values), width);
    case 'J':
      if (values.stepId.has_value()) {
        return zeroPadded(values.jobId, width) + "." + std::to_string(*values.stepId);
      }
      return zeroPadded(values.jobId, width);
    case 'j':
      return zeroPadded(values.jobId, width);
    case 'n':
      return zeroPadded(values.nodeId, width);
    case 'N':
      return values.nodeName;
    case 's':
      if (values.stepId.has_value()) return zeroPadded(*values.stepId, width);
      return std::string("batch");
    case 't':
      return zeroPadded(values.taskId, width);
    case 'u':
      return values.userName;
    case 'x':
      return values.jobName;
    default:
      return std::nullopt;
  }
}

// remove_path_slashes: with any backslash the pattern is taken literally, escapes removed.
std::optional<std::string> unescapedLiteral(std::string_view pattern) {
  if (pattern.find('\\') == std::string_view::npos) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\') {
      out += pattern[i];
    } else if (i + 1 < pattern.size() && pattern[i + 1] == '\\') {
      out += '\\';
      ++i;
    }
  }
  return out;
}

// fname_single_task_io: a pattern that is only a number names one task's file.
std::optional<std::uint64_t> singleTask(std::string_view pattern) {
  if (pattern.empty() || pattern.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : pattern) {
    if (!isDigit(c)) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

void replaceAll(std::string& text, std::string_view token, std::string_view value) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = text.find(token); at != std::string::npos; at = text.find(token, from)) {
    out.append(text, from, at - from);
    out += value;
    from = at + token.size();
  }
  out.append(text, from);
  text = std::move(out);
}

}  // namespace

std::string expandFilenamePattern(std::string_view pattern, const FilenamePatternValues& values) {
  const std::size_t nul = pattern.find('\0');
  if (nul != std::string_view::npos) pattern = pattern.substr(0, nul);
  if (const std::optional<std::uint64_t> task = singleTask(pattern)) {
    if (*task != values.taskId) return "/dev/null";
  }
  if (std::optional<std::string> literal = unescapedLiteral(pattern)) return *literal;

  // A walk of _create_batch_fname: `pending` is where the not yet copied text starts.
  const auto at = [pattern](std::size_t i) { return i < pattern.size() ? pattern[i] : '\0'; };
  std::string name;
  std::size_t pending = 0;
  std::size_t p = 0;
  while (p < pattern.size()) {
    if (pattern[p] != '%') {
      ++p;
      continue;
    }
    if (at(p + 1) == '%') {
      name.append(pattern, pending, p + 1 - pending);  // up to and including one '%'
      p += 2;
      pending = p;
      continue;
    }
    ++p;
    std::size_t width = 0;
    if (isDigit(at(p))) {
      name.append(pattern, pending, p - 1 - pending);
      std::size_t digits = p;
      while (isDigit(at(digits))) {
        if (width <= kMaxWidth) width = width * 10 + static_cast<std::size_t>(at(digits) - '0');
        ++digits;
      }
      if (width > kMaxWidth) width = kMaxWidth;
      p = digits;
      // Slurm points the pending text at the width's last digit: it reappears below if the
      // letter turns out to be unknown or missing.
      pending = p - 1;
      if (p == pattern.size()) break;
    }
    // A '%' at the very end meets NUL here and stays as typed.
    if (std::optional<std::string> value = expandLetter(at(p), width, values)) {
      name.append(pattern, pending, p - 1 - pending);
      name += *value;
      ++p;
      pending = p;
    }
  }
  if (pending < p) name.append(pattern, pending, p - pending);
  return name;
}

std::string_view defaultOutputPattern(bool isArrayTask) {
  return isArrayTask ? "slurm-%A_%a.out" : "slurm-%J.out";
}

std::string formatScontrolStdioPath(std::optional<std::string_view> pattern,
                                    const FilenamePatternValues& values, std::string_view workDir) {
  const std::string taskId = std::to_string(values.arrayTaskId.value_or(kNoVal));
  if (!pattern.has_value()) {
    if (values.arrayTaskId.has_value()) {
      return std::string(workDir) + "/slurm-" + std::to_string(arrayJobIdOf(values)) + "_" +
             taskId + ".out";
    }
    return std::string(workDir) + "/slurm-" + std::to_string(values.jobId) + ".out";
  }
  std::string path(*pattern);
  replaceAll(path, "%A", std::to_string(arrayJobIdOf(values)));
  replaceAll(path, "%a", taskId);
  replaceAll(path, "%j", std::to_string(values.jobId));
  replaceAll(path, "%u", values.userName);
  replaceAll(path, "%x", values.jobName);
  if (!path.empty() && path.front() == '/') return path;
  return std::string(workDir) + "/" + path;
}

}  // namespace kubeslurm::slurm

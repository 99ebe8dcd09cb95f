#include "kubeslurm/slurm/array_spec.h"

#include <algorithm>
#include <limits>

namespace kubeslurm::slurm {
namespace {

constexpr std::size_t kDefaultBitstrLen = 64;  // SLURM_BITSTR_LEN unset
constexpr std::size_t kMaxBitstrLen = 4096;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// C's strtol(text, &end, 10) on a NUL-terminated view: leading white space, a sign, digits;
// saturates like strtol; with no digits returns 0 and sets `end` to 0 (strtol's end = start).
std::int64_t strtolLike(std::string_view text, std::size_t& end) {
  std::size_t i = 0;
  while (i < text.size() && isSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const std::size_t firstDigit = i;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t value = 0;
  bool saturated = false;
  for (; i < text.size() && isDigit(text[i]); ++i) {
    const int digit = text[i] - '0';
    if (!saturated && value > (kMax - digit) / 10) saturated = true;
    if (!saturated) value = value * 10 + digit;
  }
  if (i == firstDigit) {
    end = 0;
    return 0;
  }
  end = i;
  if (saturated) return negative ? std::numeric_limits<std::int64_t>::min() : kMax;
  return negative ? -value : value;
}

// C's atoi as glibc has it: (int) strtol, keeping the low 32 bits.
std::int32_t atoiLike(std::string_view text) {
  std::size_t end = 0;
  const std::int64_t value = strtolLike(text, end);
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(value)));
}

char at(std::string_view text, std::size_t i) { return i < text.size() ? text[i] : '\0'; }
// A token may end at its end or at a '%' (the throttle, read separately).
bool endsToken(std::string_view text, std::size_t i) {
  return at(text, i) == '\0' || at(text, i) == '%';
}

// What a parse may still mark: the ids its tokens name, counted with repeats, and the distinct
// tasks it may return.
struct MarkBudget {
  std::uint64_t named = 0;
  std::uint64_t tasks = 0;
};

// One comma-separated token, as _parse_array_tok: marks its ids, each below `max`, in `tasks`,
// which grows to the largest: a parse costs what its ids cost, not what MaxArraySize allows,
// and never more than the budget.
bool parseToken(std::string_view token, std::int64_t max, std::vector<bool>& tasks,
                MarkBudget& budget) {
  std::size_t pos = token.front() == '[' ? 1 : 0;
  std::size_t end = 0;
  const std::int64_t first = strtolLike(token.substr(pos), end);
  pos += end;
  if (at(token, pos) == ']') ++pos;
  if (first < 0) return false;
  std::int64_t last = first;
  std::int64_t step = 1;
  if (at(token, pos) == '-') {
    ++pos;
    last = strtolLike(token.substr(pos), end);
    pos += end;
    if (at(token, pos) == ']') ++pos;
    if (at(token, pos) == ':') {
      ++pos;
      step = strtolLike(token.substr(pos), end);
      pos += end;
      if (at(token, pos) == ']') ++pos;
      if (!endsToken(token, pos)) return false;
      if (step <= 0 || step >= max) return false;
    } else if (!endsToken(token, pos)) {
      return false;
    }
    if (last < first) return false;
  } else if (!endsToken(token, pos)) {
    return false;
  }
  if (last >= max) return false;
  // Counted before anything is marked: one token of a megabyte's worth costs nothing.
  const auto named = static_cast<std::uint64_t>((last - first) / step + 1);
  if (named > budget.named) return false;
  budget.named -= named;
  if (static_cast<std::size_t>(last) >= tasks.size())
    tasks.resize(static_cast<std::size_t>(last) + 1);
  for (std::int64_t id = first; id <= last; id += step) {
    auto bit = tasks[static_cast<std::size_t>(id)];
    if (bit) continue;
    if (budget.tasks == 0) return false;
    --budget.tasks;
    bit = true;
  }
  return true;
}

// bit_fmt: "0-3,5,7-9".
std::string formatRanges(const std::vector<std::uint32_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j != i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

// xlate_array_task_str's stride test: more than five tasks over more than ten ids, the
// second id not set, and every gap the same.
std::optional<std::uint32_t> regularStride(const std::vector<std::uint32_t>& ids) {
  if (ids.size() <= 5 || ids.back() - ids.front() <= 10 || ids[1] == ids[0] + 1) {
    return std::nullopt;
  }
  const std::uint32_t stride = ids[1] - ids[0];
  for (std::size_t i = 2; i < ids.size(); ++i) {
    if (ids[i] - ids[i - 1] != stride) return std::nullopt;
  }
  return stride;
}

}  // namespace

StatusOr<ArraySpec> parseArraySpec(std::string_view text, std::uint32_t maxArraySize) {
  return parseArraySpec(text, maxArraySize, kMaxMaxArraySize);
}

StatusOr<ArraySpec> parseArraySpec(std::string_view text, std::uint32_t maxArraySize,
                                   std::uint32_t maxTasks) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  const auto invalid = []() { return invalidArgument(std::string(kInvalidArrayMessage)); };
  if (maxArraySize == 0) return invalid();
  const auto max = static_cast<std::int64_t>(std::min(maxArraySize, kMaxMaxArraySize));
  std::vector<bool> tasks;
  MarkBudget budget{kMaxArrayIdsNamed, std::min(maxTasks, kMaxMaxArraySize)};
  // strtok: consecutive commas make no empty token.
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view token = text.substr(start, comma - start);
    if (!token.empty() && !parseToken(token, max, tasks, budget)) return invalid();
    start = comma + 1;
  }
  ArraySpec spec;
  for (std::size_t id = 0; id < tasks.size(); ++id) {
    if (tasks[id]) spec.taskIds.push_back(static_cast<std::uint32_t>(id));
  }
  if (spec.taskIds.empty()) return invalid();
  const std::size_t percent = text.find('%');
  if (percent != std::string_view::npos) {
    const std::int32_t throttle = atoiLike(text.substr(percent + 1));
    if (throttle > 0) spec.maxRunning = static_cast<std::uint32_t>(throttle);
  }
  return spec;
}

std::string formatArrayTasks(const std::vector<std::uint32_t>& taskIds,
                             std::optional<std::uint32_t> maxRunning) {
  return formatArrayTasks(taskIds, maxRunning, kDefaultBitstrLen);
}

std::string formatArrayTasks(const std::vector<std::uint32_t>& taskIds,
                             std::optional<std::uint32_t> maxRunning, std::size_t bitstrLen) {
  std::vector<std::uint32_t> ids = taskIds;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string out;
  if (const std::optional<std::uint32_t> stride = regularStride(ids)) {
    out = std::to_string(ids.front()) + "-" + std::to_string(ids.back()) + ":" +
          std::to_string(*stride);
  } else {
    out = formatRanges(ids);
    if (bitstrLen != 0) {
      // bit_fmt fills a buffer of bitstrLen bytes; when the text nearly fills it, the last
      // three characters that fit become "...".
      const std::size_t size = std::clamp<std::size_t>(bitstrLen, 4, kMaxBitstrLen);
      if (out.size() > size - 3) out = out.substr(0, size - 4) + "...";
    }
  }
  // A throttle of 0 is none (array_max_tasks is 0 then).
  if (maxRunning.has_value() && *maxRunning != 0) out += "%" + std::to_string(*maxRunning);
  return out;
}

std::int32_t arrayTaskStepEnv(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return 1;
  return atoiLike(text.substr(colon + 1));
}

}  // namespace kubeslurm::slurm

#include "kubeslurm/slurm/dependency.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

namespace kubeslurm::slurm {
namespace {

// depend_time is a C int of seconds in slurmctld.
constexpr std::int64_t kMaxDelayMinutes = std::numeric_limits<std::int32_t>::max() / 60;
// Job ids are uint32 in Slurm.
constexpr std::uint64_t kMaxJobId = std::numeric_limits<std::uint32_t>::max();
// Task ids NO_VAL (0xfffffffe) and INFINITE (0xffffffff) mean "no task" and "all tasks".
constexpr std::int64_t kMaxTaskId = 0xfffffffdLL;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
char toLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

struct TypeKeyword {
  std::string_view keyword;            // compared case-insensitively, ':' included
  std::optional<DependencyType> type;  // nullopt: a Slurm type we refuse
};

// update_job_dependency's order of tests. It compares only 11 characters of
// "afterburstbuffer:", which does not matter here as we refuse that type.
constexpr std::array<TypeKeyword, 7> kTypeKeywords = {{
    {"afternotok:", DependencyType::kAfterNotOk},
    {"aftercorr:", DependencyType::kAfterCorr},
    {"afterany:", DependencyType::kAfterAny},
    {"afterok:", DependencyType::kAfterOk},
    {"afterburstbuffer:", std::nullopt},
    {"after:", DependencyType::kAfter},
    {"expand:", std::nullopt},
}};

Status dependencyError() { return invalidArgument(std::string(kDependencyErrorMessage)); }

// What _find_dependency compares: type, job id and task. Kept in a set, as lists of
// thousands of tasks ("N_[0-999]") are ordinary.
using DependencyKey = std::tuple<int, std::uint64_t, std::int64_t>;

DependencyKey keyOf(DependencyType type, const DependencyTarget& target) {
  // A task id is never this low, so it stands for "no task".
  constexpr std::int64_t kNoTask = std::numeric_limits<std::int64_t>::min();
  if (type == DependencyType::kSingleton) return {static_cast<int>(type), 0, kNoTask};
  return {static_cast<int>(type), target.jobId, target.arrayTask.value_or(kNoTask)};
}

// Reads digits at `pos` into a saturating unsigned value; returns the digit count.
std::size_t readDigits(std::string_view text, std::size_t& pos, std::uint64_t& value) {
  const std::size_t start = pos;
  value = 0;
  for (; pos < text.size() && isDigit(text[pos]); ++pos) {
    const auto digit = static_cast<std::uint64_t>(text[pos] - '0');
    value = value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10
                ? std::numeric_limits<std::uint64_t>::max()
                : value * 10 + digit;
  }
  return pos - start;
}

// strtol's prefix: white space and a '+' are skipped; a '-' is refused (Slurm would wrap the
// negative number into an unsigned id).
bool readNumber(std::string_view text, std::size_t& pos, std::uint64_t& value) {
  while (pos < text.size() && isSpace(text[pos])) ++pos;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    if (text[pos] == '-') return false;
    ++pos;
  }
  return readDigits(text, pos, value) > 0;
}

// The task list inside "N_[...]": "1-3,7" or "0-12:4", each id below maxArraySize. `budget` is
// what the dependency may still name, repeats counted; each range is taken from it before any
// id is marked.
bool parseBracketTasks(std::string_view list, std::uint32_t maxArraySize,
                       std::vector<std::uint64_t>& tasks, std::uint64_t& budget) {
  // Grown to the largest id named: the bound is MaxArraySize, the cost what the list names.
  const std::uint64_t max = std::min(maxArraySize, kMaxMaxArraySize);
  std::vector<bool> set;
  const auto take = [&budget](std::uint64_t count) {
    if (count > budget) return false;
    budget -= count;
    return true;
  };
  const auto mark = [&set, max](std::uint64_t first, std::uint64_t last) {
    if (first > last || last >= max) return false;
    if (last >= set.size()) set.resize(static_cast<std::size_t>(last) + 1);
    for (std::uint64_t id = first; id <= last; ++id) set[static_cast<std::size_t>(id)] = true;
    return true;
  };
  std::size_t pos = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  if (list.find(':') != std::string_view::npos) {
    std::uint64_t step = 0;
    if (readDigits(list, pos, first) == 0 || pos >= list.size() || list[pos++] != '-' ||
        readDigits(list, pos, last) == 0 || pos >= list.size() || list[pos++] != ':' ||
        readDigits(list, pos, step) == 0 || pos != list.size() || step == 0 || first > last) {
      return false;
    }
    // bitfmt2int stops before `last` ("0-12:4" is 0,4,8): Slurm's behaviour, kept.
    const std::uint64_t span = last - first;
    if (!take(span / step + (span % step != 0 ? 1 : 0))) return false;
    for (std::uint64_t id = first; id < last; id += step) {
      if (!mark(id, id)) return false;
    }
  } else {
    while (true) {
      if (readDigits(list, pos, first) == 0) return false;
      last = first;
      if (pos < list.size() && list[pos] == '-') {
        ++pos;
        if (readDigits(list, pos, last) == 0) return false;
      }
      if (first > last || last >= max || !take(last - first + 1) || !mark(first, last)) {
        return false;
      }
      if (pos == list.size()) break;
      if (list[pos++] != ',') return false;
    }
  }
  for (std::size_t id = 0; id < set.size(); ++id) {
    if (set[id]) tasks.push_back(id);
  }
  return !tasks.empty();
}

// _xlate_array_dep: rewrites "after:123_[4-5]" as "after:123_4:123_5" before parsing.
std::optional<std::string> expandArrayBrackets(std::string_view text, std::uint32_t maxArraySize) {
  std::string out;
  std::uint64_t budget = kMaxDependencyTargets;
  // Start of the digit run just before, or npos. (Not an optional: GCC 12 warns falsely.)
  constexpr std::size_t kNone = std::string_view::npos;
  std::size_t runStart = kNone;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    out += c;
    if (isDigit(c)) {
      if (runStart == kNone) runStart = i;
      continue;
    }
    if (c != '_' || i + 1 >= text.size() || text[i + 1] != '[' || runStart == kNone) {
      runStart = kNone;
      continue;
    }
    std::size_t pos = runStart;
    std::uint64_t jobId = 0;
    readDigits(text, pos, jobId);
    const std::size_t close = text.find(']', i + 2);
    std::vector<std::uint64_t> tasks;
    if (jobId > kMaxJobId || close == std::string_view::npos ||
        !parseBracketTasks(text.substr(i + 2, close - i - 2), maxArraySize, tasks, budget)) {
      return std::nullopt;
    }
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      if (t != 0) out += ":" + std::to_string(jobId) + "_";
      out += std::to_string(tasks[t]);
    }
    i = close;
    runStart = kNone;
  }
  return out;
}

class DependencyParser {
 public:
  explicit DependencyParser(std::string_view text) : text_(text) {}

  StatusOr<DependencySpec> parse();

 private:
  char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  bool keywordAt(std::size_t pos, std::string_view keyword) const {
    for (std::size_t i = 0; i < keyword.size(); ++i) {
      if (toLower(at(pos + i)) != keyword[i]) return false;
    }
    return true;
  }
  // After a term: ',' or '?' (never both kinds), or the end.
  enum class After { kMore, kEnd, kError };
  After separatorAt(std::size_t& pos);
  bool parseTarget(std::size_t& pos, DependencyTarget& target) const;
  bool skipState(std::size_t& pos) const;
  // False once the dependency names more than kMaxDependencyTargets.
  bool add(DependencyTerm& term, const DependencyTarget& target);
  void push(DependencyTerm term);

  std::string_view text_;
  DependencySpec spec_;
  std::set<DependencyKey> seen_;
  std::size_t targets_ = 0;
  std::optional<char> separator_;
};

StatusOr<DependencySpec> DependencyParser::parse() {
  std::size_t pos = 0;
  while (true) {
    if (keywordAt(pos, "singleton")) {
      pos += 9;
      if (!skipState(pos)) return dependencyError();
      if (seen_.insert(keyOf(DependencyType::kSingleton, {})).second) {
        spec_.terms.push_back({DependencyType::kSingleton, {}});
      }
    } else if (text_.find(':', pos) == std::string_view::npos && isDigit(at(pos))) {
      // The old format: a bare job id means afterany. It is only recognised while no ':'
      // follows anywhere, so "5,afterok:3" is an error where "afterok:3,5" is not.
      DependencyTarget target;
      if (!parseTarget(pos, target) || (at(pos) != '\0' && at(pos) != ',')) {
        return dependencyError();
      }
      DependencyTerm term{DependencyType::kAfterAny, {}};
      if (!add(term, target)) return dependencyError();
      push(std::move(term));
    } else {
      const TypeKeyword* matched = nullptr;
      for (const TypeKeyword& keyword : kTypeKeywords) {
        if (keywordAt(pos, keyword.keyword)) {
          matched = &keyword;
          break;
        }
      }
      if (matched == nullptr || !matched->type) return dependencyError();
      pos += matched->keyword.size();
      DependencyTerm term{*matched->type, {}};
      std::uint32_t delay = 0;  // carried on from one id to the next, as in Slurm
      while (true) {
        DependencyTarget target;
        if (!parseTarget(pos, target)) return dependencyError();
        const char next = at(pos);
        if (next != '\0' && next != ',' && next != '?' && next != ':' && next != '+' &&
            next != '(') {
          return dependencyError();
        }
        if (next == '+') {
          ++pos;
          std::uint64_t minutes = 0;
          if (!readNumber(text_, pos, minutes) || minutes == 0 ||
              minutes > static_cast<std::uint64_t>(kMaxDelayMinutes)) {
            return dependencyError();
          }
          delay = static_cast<std::uint32_t>(minutes);
        }
        if (!skipState(pos)) return dependencyError();
        target.delayMinutes = delay;
        if (!add(term, target)) return dependencyError();
        if (at(pos) != ':') break;
        ++pos;
      }
      push(std::move(term));
    }
    switch (separatorAt(pos)) {
      case After::kMore:
        continue;
      case After::kEnd:
        return spec_;
      case After::kError:
        return dependencyError();
    }
  }
}

DependencyParser::After DependencyParser::separatorAt(std::size_t& pos) {
  const char c = at(pos);
  if (c == '\0') return After::kEnd;
  if (c != ',' && c != '?') return After::kError;
  if (separator_.has_value() && *separator_ != c) return After::kError;
  separator_ = c;
  spec_.anyOf = c == '?';
  ++pos;
  return After::kMore;
}

// "N", "N_T" or "N_*".
bool DependencyParser::parseTarget(std::size_t& pos, DependencyTarget& target) const {
  std::uint64_t jobId = 0;
  if (!readNumber(text_, pos, jobId) || jobId == 0 || jobId > kMaxJobId) return false;
  target.jobId = jobId;
  if (at(pos) != '_') return true;
  ++pos;
  if (at(pos) == '*') {
    ++pos;
    target.arrayTask = kAllArrayTasks;
    return true;
  }
  std::uint64_t task = 0;
  if (!readNumber(text_, pos, task) || task > static_cast<std::uint64_t>(kMaxTaskId)) {
    return false;
  }
  target.arrayTask = static_cast<std::int64_t>(task);
  return true;
}

// An optional "(state)" right after a dependency, as scontrol prints it; the state is
// dropped (Slurm only reads it to sync federation siblings).
bool DependencyParser::skipState(std::size_t& pos) const {
  if (at(pos) != '(') return true;
  const std::size_t close = text_.find(')', pos);
  if (close == std::string_view::npos) return false;
  pos = close + 1;
  return true;
}

// _add_dependency_to_list: the first of equal (type, id, task) wins.
bool DependencyParser::add(DependencyTerm& term, const DependencyTarget& target) {
  if (!seen_.insert(keyOf(term.type, target)).second) return true;
  if (++targets_ > kMaxDependencyTargets) return false;
  term.targets.push_back(target);
  return true;
}

void DependencyParser::push(DependencyTerm term) {
  if (!term.targets.empty()) spec_.terms.push_back(std::move(term));
}

std::string targetText(DependencyType type, const DependencyTarget& target) {
  if (type == DependencyType::kSingleton) return "singleton";
  std::string out = std::string(dependencyTypeName(type)) + ":" + std::to_string(target.jobId);
  if (target.arrayTask.has_value()) {
    out += *target.arrayTask == kAllArrayTasks ? "_*" : "_" + std::to_string(*target.arrayTask);
  }
  if (target.delayMinutes != 0) out += "+" + std::to_string(target.delayMinutes);
  return out;
}

std::string_view stateText(DependencyState state) {
  switch (state) {
    case DependencyState::kUnfulfilled:
      return "unfulfilled";
    case DependencyState::kFulfilled:
      return "fulfilled";
    case DependencyState::kFailed:
      return "failed";
  }
  return "unknown";
}

}  // namespace

std::string_view dependencyTypeName(DependencyType type) {
  switch (type) {
    case DependencyType::kAfter:
      return "after";
    case DependencyType::kAfterAny:
      return "afterany";
    case DependencyType::kAfterOk:
      return "afterok";
    case DependencyType::kAfterNotOk:
      return "afternotok";
    case DependencyType::kAfterCorr:
      return "aftercorr";
    case DependencyType::kSingleton:
      return "singleton";
  }
  return "unknown";
}

StatusOr<DependencySpec> parseDependency(std::string_view text) {
  return parseDependency(text, kDefaultMaxArraySize);
}

StatusOr<DependencySpec> parseDependency(std::string_view text, std::uint32_t maxArraySize) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) text = text.substr(0, nul);
  // update_job_dependency: no text, or "0", clears the dependency.
  if (text.empty() || text == "0") return DependencySpec{};
  if (text.find("_[") == std::string_view::npos) return DependencyParser(text).parse();
  const std::optional<std::string> expanded = expandArrayBrackets(text, maxArraySize);
  if (!expanded) return dependencyError();
  return DependencyParser(*expanded).parse();
}

DependencySpec flattenDependency(const DependencySpec& spec) {
  DependencySpec flat;
  flat.anyOf = spec.anyOf;
  std::set<DependencyKey> seen;
  for (const DependencyTerm& term : spec.terms) {
    if (term.type == DependencyType::kSingleton) {
      if (seen.insert(keyOf(term.type, {})).second) flat.terms.push_back({term.type, {}});
      continue;
    }
    for (const DependencyTarget& target : term.targets) {
      if (seen.insert(keyOf(term.type, target)).second) flat.terms.push_back({term.type, {target}});
    }
  }
  return flat;
}

namespace {

std::string formatEntries(const DependencySpec& spec, const std::vector<DependencyState>& states,
                          bool withState) {
  const DependencySpec flat = flattenDependency(spec);
  std::string out;
  for (std::size_t i = 0; i < flat.terms.size(); ++i) {
    const DependencyState state = i < states.size() ? states[i] : DependencyState::kUnfulfilled;
    // _depend_list2str hides what is already fulfilled.
    if (state == DependencyState::kFulfilled) continue;
    if (!out.empty()) out += spec.anyOf ? '?' : ',';
    const DependencyTerm& term = flat.terms[i];
    out += targetText(term.type, term.targets.empty() ? DependencyTarget{} : term.targets.front());
    if (withState) out += "(" + std::string(stateText(state)) + ")";
  }
  return out;
}

}  // namespace

std::string formatDependency(const DependencySpec& spec) { return formatEntries(spec, {}, false); }

std::string formatDependencyWithState(const DependencySpec& spec,
                                      const std::vector<DependencyState>& states) {
  return formatEntries(spec, states, true);
}

}  // namespace kubeslurm::slurm

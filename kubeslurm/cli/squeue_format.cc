#include "kubeslurm/cli/squeue_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/dependency.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::cli {
namespace {

using slurm::JobState;

constexpr std::size_t kFormatStringSize = 32;  // squeue's FORMAT_STRING_SIZE buffers

// One line of output: a job, an array task, or the collapsed pending tasks of an array.
// Nullable text is what Slurm holds as a NULL char* and printf shows as "(null)".
struct Row {
  const api::SlurmJobObject* job = nullptr;
  std::int64_t jobId = 0;
  std::optional<std::int64_t> arrayJobId;
  std::optional<std::int64_t> arrayTaskId;
  std::optional<std::string> arrayTaskStr;
  JobState state = JobState::kPending;
  std::string partition;
  std::string name;
  std::string user;
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::string reason;  // job_reason_string or state_desc, without parentheses
  std::string nodes;
  std::int64_t numNodes = 1;
  std::int64_t numCpus = 1;
  std::optional<std::int64_t> timeLimit;  // seconds; nullopt: UNLIMITED
  std::int64_t startTime = 0;
  std::int64_t endTime = 0;
  std::int64_t submitTime = 0;
  std::uint32_t priority = 0;
  std::optional<std::string> dependency;
  std::optional<std::string> tresPerNode;
  std::optional<std::string> workDir;
  std::optional<std::string> command;
  std::optional<std::string> comment;
  std::string reqNodes;
  std::string excNodes;
  // For a collapsed row: its tasks by task id, which -r prints one per line as squeue expands
  // the meta record's task bitmap (print.c _print_job_from_format).
  std::vector<Row> tasks;
};

// ---- printing, as print.c's _print_str ----

// `cut` is _print_str's cut_output: a right-justified value longer than the width is cut only
// when set; a left-justified one is always cut ("%.Ns").
void printStr(std::string& out, std::string_view text, int width, bool right, bool cut) {
  std::string piece;
  if (width < 0) {
    piece = std::string(text) + " ";
  } else if (width == 0) {
    piece = text;
  } else if (right) {
    piece = std::string(text.size() < static_cast<std::size_t>(width)
                            ? static_cast<std::size_t>(width) - text.size()
                            : 0,
                        ' ') +
            std::string(text);
    if (cut) piece.resize(static_cast<std::size_t>(width));
  } else {
    piece = text.substr(0, static_cast<std::size_t>(width));
  }
  if (width > 0 && piece.size() < static_cast<std::size_t>(width)) {
    piece.append(static_cast<std::size_t>(width) - piece.size(), ' ');
  }
  out += piece;
}

std::string nullable(const std::optional<std::string>& text) { return text.value_or("(null)"); }

// snprintf into squeue's 32-byte buffers.
std::string bounded(std::string text) {
  if (text.size() >= kFormatStringSize) text.resize(kFormatStringSize - 1);
  return text;
}

std::string sortedNodes(const std::string& nodes) {
  if (nodes.empty()) return nodes;
  auto list = slurm::Hostlist::parse(nodes);
  if (!list.isOk()) return nodes;
  list->sort();
  return list->ranged();
}

std::string timeText(std::int64_t t, const SqueueContext& context) {
  return t == 0 ? "N/A" : slurm::formatTimestamp(t, context.utcOffsetSeconds);
}

std::int64_t timeUsed(const Row& row, const SqueueContext& context) {
  if (row.startTime == 0 || row.state == JobState::kPending) return 0;
  const bool running = row.state == JobState::kRunning || row.state == JobState::kSuspended ||
                       row.state == JobState::kCompleting || row.state == JobState::kConfiguring;
  // The start time comes from the operator's clock, in whole seconds: a job that started a
  // moment ago may look started in the future here, which Slurm (one clock) never sees.
  if (running || row.endTime == 0) return std::max<std::int64_t>(context.now - row.startTime, 0);
  return row.endTime - row.startTime;
}

std::string secs(std::int64_t seconds) {
  return slurm::formatSqueueDuration(slurm::TimeLimit{seconds});
}

// The NODELIST(REASON) rule: a reason for pending and failed-like states, else the nodes.
bool showsReason(JobState state) {
  return state == JobState::kPending || state == JobState::kStageOut ||
         state == JobState::kTimeout || state == JobState::kOutOfMemory ||
         state == JobState::kDeadline || state == JobState::kFailed;
}

std::string priorityFraction(std::uint32_t priority) {
  std::array<char, 64> buffer{};
  const double fraction = static_cast<double>(priority) / static_cast<double>(0xffffffffU);
  (void)std::snprintf(buffer.data(), buffer.size(), "%16.14f", fraction);
  return buffer.data();
}

std::string jobIdText(const Row& row) {
  if (row.arrayTaskStr) {
    return bounded(std::to_string(*row.arrayJobId) + "_[" + *row.arrayTaskStr + "]");
  }
  if (row.arrayTaskId) {
    return bounded(std::to_string(*row.arrayJobId) + "_" + std::to_string(*row.arrayTaskId));
  }
  return std::to_string(row.jobId);
}

// A field: its header, how its value prints, and whether values are cut to the width.
struct Field {
  std::string_view header;
  std::function<std::string(const Row&, const SqueueContext&)> value;
  bool cut = true;
  bool headerCut = true;
};

using FieldTable = std::map<std::string, Field, std::less<>>;

// Fields by -o letter; -O names map onto the same entries.
const FieldTable& fieldTable() {
  static const FieldTable kFields = [] {
    FieldTable t;
    t["a"] = {"ACCOUNT", [](const Row& r, const SqueueContext&) { return nullable(r.account); }};
    t["A"] = {"JOBID", [](const Row& r, const SqueueContext&) { return std::to_string(r.jobId); }};
    t["b"] = {"TRES_PER_NODE",
              [](const Row& r, const SqueueContext&) { return r.tresPerNode.value_or("N/A"); }};
    t["B"] = {"EXEC_HOST", [](const Row& r, const SqueueContext&) -> std::string {
                if (r.nodes.empty()) return "n/a";
                auto list = slurm::Hostlist::parse(r.nodes);
                std::string first;
                if (list.isOk()) {
                  list->forEachHost([&first](std::string_view host) {
                    first = host;
                    return false;
                  });
                }
                return first.empty() ? "n/a" : first;
              }};
    t["C"] = {"CPUS", [](const Row& r, const SqueueContext&) { return std::to_string(r.numCpus); }};
    t["D"] = {"NODES",
              [](const Row& r, const SqueueContext&) { return std::to_string(r.numNodes); }};
    t["e"] = {"END_TIME", [](const Row& r, const SqueueContext& c) -> std::string {
                if (!r.timeLimit && r.endTime > c.now) return "NONE";
                return timeText(r.endTime, c);
              }};
    t["E"] = {"DEPENDENCY",
              [](const Row& r, const SqueueContext&) { return nullable(r.dependency); }};
    t["F"] = {"ARRAY_JOB_ID", [](const Row& r, const SqueueContext&) {
                return std::to_string(r.arrayJobId.value_or(r.jobId));
              }};
    t["i"] = {"JOBID", [](const Row& r, const SqueueContext&) { return jobIdText(r); }};
    t["j"] = {"NAME", [](const Row& r, const SqueueContext&) { return r.name; }};
    t["k"] = {"COMMENT", [](const Row& r, const SqueueContext&) { return nullable(r.comment); }};
    t["K"] = {"ARRAY_TASK_ID", [](const Row& r, const SqueueContext&) -> std::string {
                if (r.arrayTaskStr) return *r.arrayTaskStr;
                if (r.arrayTaskId) return std::to_string(*r.arrayTaskId);
                return "N/A";
              }};
    t["l"] = {"TIME_LIMIT",
              [](const Row& r, const SqueueContext&) -> std::string {
                return r.timeLimit ? secs(*r.timeLimit) : "UNLIMITED";
              },
              false};
    t["L"] = {"TIME_LEFT",
              [](const Row& r, const SqueueContext& c) -> std::string {
                return r.timeLimit ? secs(*r.timeLimit - timeUsed(r, c)) : "UNLIMITED";
              },
              false};
    t["M"] = {"TIME", [](const Row& r, const SqueueContext& c) { return secs(timeUsed(r, c)); },
              false};
    t["n"] = {"REQ_NODES", [](const Row& r, const SqueueContext&) { return r.reqNodes; }, false};
    t["N"] = {"NODELIST", [](const Row& r, const SqueueContext&) { return sortedNodes(r.nodes); },
              false, false};
    t["o"] = {"COMMAND", [](const Row& r, const SqueueContext&) { return nullable(r.command); }};
    t["p"] = {"PRIORITY",
              [](const Row& r, const SqueueContext&) { return priorityFraction(r.priority); }};
    t["P"] = {"PARTITION", [](const Row& r, const SqueueContext&) { return r.partition; }};
    t["q"] = {"QOS", [](const Row& r, const SqueueContext&) { return nullable(r.qos); }};
    t["Q"] = {"PRIORITY",
              [](const Row& r, const SqueueContext&) { return std::to_string(r.priority); }};
    t["r"] = {"REASON", [](const Row& r, const SqueueContext&) { return r.reason; }};
    t["R"] = {"NODELIST(REASON)",
              [](const Row& r, const SqueueContext&) -> std::string {
                if (showsReason(r.state)) return "(" + r.reason + ")";
                return sortedNodes(r.nodes);
              },
              false, false};
    t["S"] = {"START_TIME",
              [](const Row& r, const SqueueContext& c) { return timeText(r.startTime, c); }};
    t["t"] = {"ST", [](const Row& r, const SqueueContext&) {
                return std::string(slurm::jobStateShortName(r.state));
              }};
    t["T"] = {"STATE", [](const Row& r, const SqueueContext&) {
                return std::string(slurm::jobStateName(r.state));
              }};
    t["u"] = {"USER", [](const Row& r, const SqueueContext&) { return r.user; }};
    t["V"] = {"SUBMIT_TIME",
              [](const Row& r, const SqueueContext& c) { return timeText(r.submitTime, c); }};
    t["x"] = {"EXC_NODES", [](const Row& r, const SqueueContext&) { return r.excNodes; }, false};
    t["Y"] = {"SCHEDNODES",
              [](const Row& r, const SqueueContext& c) {
                const auto nodes = c.schedNodes.find(r.jobId);
                return nodes == c.schedNodes.end() ? std::string("(null)") : nodes->second;
              },
              false, false};
    t["Z"] = {"WORK_DIR", [](const Row& r, const SqueueContext&) { return nullable(r.workDir); }};
    return t;
  }();
  return kFields;
}

// -O names (opts.c parse_long_format, case-insensitive) for the fields above.
const std::map<std::string, std::string, std::less<>>& longFieldNames() {
  static const std::map<std::string, std::string, std::less<>> kNames = {
      {"account", "a"},      {"arrayjobid", "F"},    {"arraytaskid", "K"}, {"batchhost", "B"},
      {"command", "o"},      {"comment", "k"},       {"dependency", "E"},  {"endtime", "e"},
      {"jobarrayid", "i"},   {"jobid", "A"},         {"name", "j"},        {"nodelist", "N"},
      {"numcpus", "C"},      {"numnodes", "D"},      {"partition", "P"},   {"priority", "p"},
      {"prioritylong", "Q"}, {"qos", "q"},           {"reason", "r"},      {"reasonlist", "R"},
      {"reqnodes", "n"},     {"schednodes", "Y"},    {"starttime", "S"},   {"state", "T"},
      {"statecompact", "t"}, {"submittime", "V"},    {"timeleft", "L"},    {"timelimit", "l"},
      {"timeused", "M"},     {"tres-per-node", "b"}, {"username", "u"},    {"workdir", "Z"},
  };
  return kNames;
}

// One item of a parsed format: a field (or nullptr for a prefix or an unknown field, which
// print only their text), its width and justification, and the text printed after it.
struct FormatItem {
  const Field* field = nullptr;
  int width = 0;
  bool right = false;
  std::string suffix;
};

// -o: opts.c parse_format. Text before the first '%' is a prefix; each '%' token is
// [.][width]letter followed by literal text.
std::vector<FormatItem> parseShortFormat(const std::string& format, std::string& err) {
  std::vector<FormatItem> items;
  const std::size_t percent = format.find('%');
  if (percent != 0) items.push_back(FormatItem{nullptr, 0, false, format.substr(0, percent)});
  if (percent == std::string::npos) return items;
  std::size_t pos = percent;
  while (pos < format.size()) {
    while (pos < format.size() && format[pos] == '%') ++pos;  // strtok skips empty tokens
    if (pos >= format.size()) break;
    const std::size_t end = std::min(format.find('%', pos), format.size());
    const std::string token = format.substr(pos, end - pos);
    pos = end;
    std::size_t i = 0;
    FormatItem item;
    if (token[i] == '.') {
      item.right = true;
      ++i;
    }
    item.width = consumeFieldWidth(token, i);
    const std::string letter = i < token.size() ? token.substr(i, 1) : std::string();
    ++i;
    item.suffix = i < token.size() ? token.substr(i) : std::string();
    const auto it = fieldTable().find(letter);
    if (it != fieldTable().end()) {
      item.field = &it->second;
    } else {
      // Unknown (or not modelled) letters print their token back, as _print_com_invalid.
      item.suffix = "%" + token;
      err += "squeue: error: Invalid job format specification: " + letter + "\n";
    }
    items.push_back(std::move(item));
  }
  return items;
}

// -O: opts.c parse_long_format. "name[:[.]width[suffix]]", comma-separated; no ':' is width 20.
std::vector<FormatItem> parseLongFormat(const std::string& format, std::string& err) {
  std::vector<FormatItem> items;
  std::size_t pos = 0;
  while (pos < format.size()) {
    std::size_t end = format.find(',', pos);
    if (end == std::string::npos) end = format.size();
    std::string token = format.substr(pos, end - pos);
    pos = end + 1;
    if (token.empty()) continue;
    FormatItem item;
    const std::size_t colon = token.find(':');
    if (colon == std::string::npos) {
      item.width = 20;
    } else {
      std::size_t i = colon + 1;
      if (i < token.size() && token[i] == '.') {
        item.right = true;
        ++i;
      }
      const std::size_t digits = i;
      bool negative = false;
      if (i < token.size() && (token[i] == '-' || token[i] == '+')) negative = token[i++] == '-';
      item.width = consumeFieldWidth(token, i);
      if (negative) item.width = -item.width;
      if (i == digits) item.width = 0;
      item.suffix = token.substr(i);
      token.resize(colon);
    }
    const auto name = longFieldNames().find(lowercaseAscii(token));
    if (name != longFieldNames().end()) {
      item.field = &fieldTable().at(name->second);
    } else {
      err += "squeue: error: Invalid job format specification: " + token + "\n";
    }
    items.push_back(std::move(item));
  }
  return items;
}

void printLine(std::string& out, const std::vector<FormatItem>& items, const Row* row,
               const SqueueContext& context) {
  for (const FormatItem& item : items) {
    if (item.field != nullptr) {
      if (row == nullptr) {
        printStr(out, item.field->header, item.width, item.right, item.field->headerCut);
      } else {
        printStr(out, item.field->value(*row, context), item.width, item.right, item.field->cut);
      }
    }
    out += item.suffix;
  }
  out += "\n";
}

// ---- from SlurmJob objects to rows ----

std::optional<std::string> nonEmpty(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<std::string> tresPerNode(const slurm::JobRequest& request) {
  const std::vector<slurm::GresRequest>& gres =
      request.gres.empty() ? request.gpusPerNode : request.gres;
  if (gres.empty()) return std::nullopt;
  std::string out;
  for (const slurm::GresRequest& g : gres) {
    if (!out.empty()) out += ",";
    out += "gres:" + slurm::formatGres(g);
  }
  return out;
}

// Jobs by id, for dependency states.
struct JobIndex {
  std::map<std::int64_t, std::vector<const api::SlurmJobObject*>> byId;
  std::map<std::int64_t, std::vector<const api::SlurmJobObject*>> byArray;
};

bool finished(const api::SlurmJobObject& job) {
  return slurm::isFinished(api::jobStateOf(*job.status));
}

bool completed(const api::SlurmJobObject& job) {
  return api::jobStateOf(*job.status) == JobState::kCompleted;
}

slurm::DependencyState targetState(const slurm::DependencyTerm& term,
                                   const std::vector<const api::SlurmJobObject*>& targets) {
  using slurm::DependencyState;
  // A job slurmctld does not know satisfies the dependency at once (reference "Dependencies":
  // afterok:99999 is accepted and runs).
  if (targets.empty()) return DependencyState::kFulfilled;
  const bool allFinished = std::ranges::all_of(targets, [](auto* j) { return finished(*j); });
  const bool allCompleted = std::ranges::all_of(targets, [](auto* j) { return completed(*j); });
  const bool anyFailed =
      std::ranges::any_of(targets, [](auto* j) { return finished(*j) && !completed(*j); });
  switch (term.type) {
    case slurm::DependencyType::kAfter:
      return std::ranges::all_of(
                 targets, [](auto* j) { return api::jobStateOf(*j->status) != JobState::kPending; })
                 ? DependencyState::kFulfilled
                 : DependencyState::kUnfulfilled;
    case slurm::DependencyType::kAfterAny:
      return allFinished ? DependencyState::kFulfilled : DependencyState::kUnfulfilled;
    case slurm::DependencyType::kAfterOk:
      if (anyFailed) return DependencyState::kFailed;
      return allCompleted ? DependencyState::kFulfilled : DependencyState::kUnfulfilled;
    case slurm::DependencyType::kAfterNotOk:
      if (!allFinished) return DependencyState::kUnfulfilled;
      return anyFailed ? DependencyState::kFulfilled : DependencyState::kFailed;
    default:
      return DependencyState::kUnfulfilled;
  }
}

// squeue's %E: what slurmctld keeps of the dependency, each entry with its state, fulfilled
// ones left out; NULL once nothing is left (job_scheduler.c _depend_list2str).
std::optional<std::string> dependencyText(const api::SlurmJobObject& job, JobState state,
                                          const JobIndex& index) {
  if (!job.request.dependency || state != JobState::kPending) return std::nullopt;
  const slurm::DependencySpec flat = slurm::flattenDependency(*job.request.dependency);
  std::vector<slurm::DependencyState> states;
  for (const slurm::DependencyTerm& term : flat.terms) {
    if (term.type == slurm::DependencyType::kSingleton) {
      // Whether another job of the name and user runs is the operator's judgement: its reason.
      states.push_back(job.status->reason == "Dependency" ? slurm::DependencyState::kUnfulfilled
                                                          : slurm::DependencyState::kFulfilled);
      continue;
    }
    std::vector<const api::SlurmJobObject*> targets;
    if (!term.targets.empty()) {
      const slurm::DependencyTarget& target = term.targets.front();
      const auto id = static_cast<std::int64_t>(target.jobId);
      const auto tasks = index.byArray.find(id);
      if (target.arrayTask && *target.arrayTask != slurm::kAllArrayTasks) {
        if (tasks != index.byArray.end()) {
          for (const auto* task : tasks->second) {
            if (task->status->arrayTaskId == *target.arrayTask) targets.push_back(task);
          }
        }
      } else if (tasks != index.byArray.end()) {
        targets = tasks->second;
      } else if (const auto it = index.byId.find(id); it != index.byId.end()) {
        targets = it->second;
      }
    }
    states.push_back(targetState(term, targets));
  }
  std::string text = slurm::formatDependencyWithState(flat, states);
  if (text.empty()) return std::nullopt;
  return text;
}

Row rowOf(const api::SlurmJobObject& job, const SqueueContext& context, const JobIndex& index) {
  const api::SlurmJobStatus& status = *job.status;
  const slurm::JobRequest& request = job.request;
  Row row;
  row.job = &job;
  row.jobId = *status.jobId;
  if (status.arrayJobId && status.arrayTaskId) {
    row.arrayJobId = status.arrayJobId;
    row.arrayTaskId = status.arrayTaskId;
  }
  row.state = api::jobStateOf(status);
  row.partition = api::shownPartition(job, context.defaultPartition);
  row.name = request.jobName;
  row.user = job.user;
  row.account = nonEmpty(request.account);
  row.qos = nonEmpty(request.qos);
  row.reason = status.reason.empty() ? "None" : status.reason;
  if (!status.reasonDetail.empty()) row.reason += ", " + status.reasonDetail;
  row.nodes = status.nodeList;
  const std::int64_t requested = request.nodes ? request.nodes->min : 1;
  row.numNodes = row.state == JobState::kPending || status.nodeList.empty()
                     ? requested
                     : slurm::countHosts(row.nodes);
  const std::int64_t tasks =
      request.ntasks ? *request.ntasks
                     : (request.ntasksPerNode ? *request.ntasksPerNode : 1) * row.numNodes;
  row.numCpus = tasks * request.cpusPerTask.value_or(1);
  // A started job holds --mincpus CPUs on each node at least (pn_min_cpus, a floor on the
  // allocation), as scontrol's NumCPUs counts them.
  if (row.state != JobState::kPending && !status.nodeList.empty()) {
    row.numCpus = std::max<std::int64_t>(
        row.numCpus, row.numNodes * static_cast<std::int64_t>(request.minCpusPerNode.value_or(0)));
  }
  std::optional<slurm::TimeLimit> limit = request.timeLimit;
  if (!limit) {
    const auto it = context.partitionDefaultTime.find(
        api::timeLimitPartition(request, context.defaultPartition));
    limit = it != context.partitionDefaultTime.end() ? it->second : slurm::TimeLimit{};
  }
  if (auto minutes = slurm::timeLimitMinutes(*limit)) row.timeLimit = *minutes * 60;
  row.startTime = row.state == JobState::kPending ? status.estimatedStart.value_or(0)
                                                  : status.startTime.value_or(0);
  row.endTime = status.endTime.value_or(0);
  if (row.endTime == 0 && row.state == JobState::kRunning && row.startTime != 0 && row.timeLimit) {
    row.endTime = row.startTime + *row.timeLimit;
  }
  row.submitTime = status.submitTime.value_or(0);
  row.priority = static_cast<std::uint32_t>(std::clamp<std::int64_t>(
      status.priority.value_or(0), 0, std::numeric_limits<std::uint32_t>::max()));
  row.dependency = dependencyText(job, row.state, index);
  row.tresPerNode = tresPerNode(request);
  row.workDir = nonEmpty(request.workDir);
  row.command = nonEmpty(job.scriptPath);
  row.comment = nonEmpty(request.comment);
  row.reqNodes = request.nodeList;
  row.excNodes = request.excludeList;
  return row;
}

// ---- filters (print.c _filter_job) ----

bool matchesJobs(const Row& row, const std::vector<SqueueJobSelector>& jobs) {
  if (jobs.empty()) return true;
  return std::ranges::any_of(jobs, [&row](const SqueueJobSelector& s) {
    if (!s.taskId) return s.jobId == row.jobId || (row.arrayJobId && s.jobId == *row.arrayJobId);
    return row.arrayJobId && s.jobId == *row.arrayJobId && row.arrayTaskId == s.taskId;
  });
}

// Whether `host` is one of `list`'s hosts, by the name the list prints for it (what
// hostset_intersects compares): the range's prefix, then the number zero-padded to its width.
bool hostIn(const slurm::Hostlist& list, std::string_view host) {
  for (const slurm::HostRange& range : list.ranges()) {
    if (range.single) {
      if (range.prefix == host) return true;
      continue;
    }
    if (!host.starts_with(range.prefix)) continue;
    const std::string_view digits = host.substr(range.prefix.size());
    std::uint64_t number = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        number < range.lo || number > range.hi) {
      continue;
    }
    std::string text = std::to_string(number);
    if (range.width > 0 && text.size() < static_cast<std::size_t>(range.width)) {
      text.insert(0, static_cast<std::size_t>(range.width) - text.size(), '0');
    }
    if (text == digits) return true;
  }
  return false;
}

// The most hosts of one job's NODELIST looked at: a job spans a few hundred nodes at most.
constexpr std::int32_t kMaxJobHosts = 1 << 16;

// print.c _filter_job: "(params.nodes) && (job->nodes == NULL || !hostset_intersects(...))".
bool onNodes(const Row& row, const slurm::Hostlist& wanted) {
  if (row.nodes.empty()) return false;
  auto hosts = slurm::Hostlist::parse(row.nodes);
  if (!hosts.isOk()) return false;
  bool found = false;
  std::int32_t seen = 0;
  hosts->forEachHost([&](std::string_view host) {
    found = hostIn(wanted, host);
    return !found && ++seen < kMaxJobHosts;
  });
  return found;
}

bool keep(const Row& row, const SqueueOptions& options) {
  if (!matchesJobs(row, options.jobs)) return false;
  if (options.nodes && !onNodes(row, *options.nodes)) return false;
  if (!options.accounts.empty() && (!row.account || !listHas(options.accounts, *row.account, true)))
    return false;
  if (!options.qos.empty() && (!row.qos || !listHas(options.qos, *row.qos, true))) return false;
  if (options.allStates) {
  } else if (!options.states.empty()) {
    if (std::ranges::find(options.states, row.state) == options.states.end()) return false;
  } else if (row.state != JobState::kPending && row.state != JobState::kRunning &&
             row.state != JobState::kStageOut && row.state != JobState::kSuspended &&
             row.state != JobState::kCompleting) {
    return false;
  }
  if (!options.users.empty() && !listHas(options.users, row.user, false)) return false;
  if (!options.names.empty() && !listHas(options.names, row.name, true)) return false;
  // A pending job of several partitions (a,b) is listed under each (squeue's _filter_job
  // splits the job's partition list).
  if (!options.partitions.empty() &&
      std::ranges::none_of(splitCommaList(row.partition), [&](const std::string& name) {
        return listHas(options.partitions, name, false);
      })) {
    return false;
  }
  return true;
}

// print.c _combine_pending_array_tasks: the PENDING tasks of an array with the same name and
// partition become one row. Reasons that differ are joined with ',' (_merge_job_reason).
void combinePendingTasks(std::vector<Row>& rows,
                         const std::map<std::int64_t, std::optional<std::uint32_t>>& throttles) {
  std::vector<Row> out;
  std::vector<bool> used(rows.size(), false);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (used[i]) continue;
    Row& first = rows[i];
    if (first.state != JobState::kPending || !first.arrayTaskId) {
      out.push_back(std::move(first));
      continue;
    }
    std::vector<std::size_t> members = {i};
    for (std::size_t k = i + 1; k < rows.size(); ++k) {
      const Row& other = rows[k];
      if (used[k] || other.state != JobState::kPending || !other.arrayTaskId ||
          other.arrayJobId != first.arrayJobId || other.name != first.name ||
          other.partition != first.partition) {
        continue;
      }
      members.push_back(k);
    }
    if (members.size() < 2) {
      out.push_back(std::move(first));
      continue;
    }
    std::vector<std::uint32_t> taskIds;
    std::vector<Row> tasks;
    tasks.reserve(members.size());
    for (std::size_t m : members) tasks.push_back(rows[m]);
    Row combined = std::move(first);
    for (std::size_t m : members) {
      used[m] = true;
      taskIds.push_back(static_cast<std::uint32_t>(*rows[m].arrayTaskId));
      if (m != i && rows[m].reason != combined.reason &&
          combined.reason.find(rows[m].reason) == std::string::npos) {
        combined.reason += "," + rows[m].reason;
      }
    }
    std::ranges::sort(taskIds);
    const auto throttle = throttles.find(*combined.arrayJobId);
    combined.arrayTaskStr = slurm::formatArrayTasks(
        taskIds, throttle != throttles.end() ? throttle->second : std::nullopt);
    // The meta record that holds the tasks carries the array's own id; its pending tasks have
    // no ids of their own in Slurm.
    combined.jobId = *combined.arrayJobId;
    combined.arrayTaskId.reset();
    std::ranges::sort(tasks, {}, [](const Row& r) { return *r.arrayTaskId; });
    for (Row& task : tasks) task.jobId = combined.jobId;
    combined.tasks = std::move(tasks);
    out.push_back(std::move(combined));
  }
  rows = std::move(out);
}

// ---- sorting (sort.c) ----

using Compare = std::function<int(const Row&, const Row&)>;

// glibc's qsort is a merge sort that takes the left element unless the comparison is positive;
// squeue's start-time comparison is not a strict order (two unset times compare as 1), so the
// exact merge order decides the output, and it is reproduced here.
void mergeSort(std::vector<Row>& rows, const Compare& compare) {
  if (rows.size() < 2) return;
  const std::size_t half = rows.size() / 2;
  std::vector<Row> left(std::make_move_iterator(rows.begin()),
                        std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(half)));
  std::vector<Row> right(std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(half)),
                         std::make_move_iterator(rows.end()));
  mergeSort(left, compare);
  mergeSort(right, compare);
  std::size_t a = 0;
  std::size_t b = 0;
  std::size_t k = 0;
  while (a < left.size() && b < right.size()) {
    if (compare(left[a], right[b]) <= 0) {
      rows[k++] = std::move(left[a++]);
    } else {
      rows[k++] = std::move(right[b++]);
    }
  }
  while (a < left.size()) rows[k++] = std::move(left[a++]);
  while (b < right.size()) rows[k++] = std::move(right[b++]);
}

int diff(std::int64_t a, std::int64_t b) { return a > b ? 1 : (a < b ? -1 : 0); }
int diff(const std::string& a, const std::string& b) {
  const int c = a.compare(b);
  return c > 0 ? 1 : (c < 0 ? -1 : 0);
}

// sort.c _sort_job_by_time_start; `now` 0 for the first pass (its static is not set yet).
Compare startTimeOrder(std::int64_t now, bool reverse) {
  return [now, reverse](const Row& a, const Row& b) {
    if (a.startTime == 0) return 1;
    if (b.startTime == 0) return -1;
    const auto start = [now](const Row& r) {
      return r.state == JobState::kPending && r.startTime < now ? now : r.startTime;
    };
    const int d = diff(start(a), start(b));
    return reverse ? -d : d;
  };
}

std::optional<Compare> sortKey(char key, bool reverse, const SqueueContext& context) {
  const auto by = [reverse](auto get) -> Compare {
    return [get, reverse](const Row& a, const Row& b) {
      const int d = diff(get(a), get(b));
      return reverse ? -d : d;
    };
  };
  switch (key) {
    case 'C':
      return by([](const Row& r) { return r.numCpus; });
    case 'D':
      return by([](const Row& r) { return r.numNodes; });
    case 'e':
      return by([](const Row& r) { return r.endTime; });
    case 'i':
      return [reverse](const Row& a, const Row& b) {
        const auto major = [](const Row& r) { return r.arrayTaskId ? *r.arrayJobId : r.jobId; };
        int d = diff(major(a), major(b));
        if (d == 0) d = diff(a.arrayTaskId.value_or(0), b.arrayTaskId.value_or(0));
        return reverse ? -d : d;
      };
    case 'j':
      return by([](const Row& r) { return r.name; });
    case 'l':
      return by([](const Row& r) { return r.timeLimit.value_or(0xfffffffeLL * 60); });
    case 'M':
      return by([&context](const Row& r) { return timeUsed(r, context); });
    case 'N':
      return by([](const Row& r) { return r.nodes; });
    case 'p':
    case 'Q':
      return by([](const Row& r) { return static_cast<std::int64_t>(r.priority); });
    case 'P':
      return by([](const Row& r) { return r.partition; });
    case 'S':
      return startTimeOrder(context.now, reverse);
    case 't':
      return by([](const Row& r) { return std::string(slurm::jobStateShortName(r.state)); });
    case 'T':
      return by([](const Row& r) { return std::string(slurm::jobStateName(r.state)); });
    case 'u':
      return by([](const Row& r) { return r.user; });
    case 'V':
      return by([](const Row& r) { return r.submitTime; });
    default:
      return std::nullopt;
  }
}

// sort.c sort_job_list: keys applied from the last to the first, each a stable sort.
bool sortRows(std::vector<Row>& rows, const std::string& spec, const SqueueContext& context,
              std::string& err) {
  for (std::size_t n = spec.size(); n-- > 0;) {
    const char key = spec[n];
    if (key == ',' || key == '+' || key == '-') continue;
    const bool reverse = n > 0 && spec[n - 1] == '-';
    auto compare = sortKey(key, reverse, context);
    if (!compare) {
      err += std::string("squeue: error: Invalid sort specification: ") + key + "\n";
      return false;
    }
    mergeSort(rows, *compare);
  }
  return true;
}

std::string dateLine(const SqueueContext& context) {
  const auto local = static_cast<std::time_t>(context.now + context.utcOffsetSeconds);
  std::tm tm{};
  gmtime_r(&local, &tm);
  std::array<char, 32> buffer{};
  (void)std::strftime(buffer.data(), buffer.size(), "%a %b %d %T %Y", &tm);
  return std::string(buffer.data()) + "\n";
}

}  // namespace

std::string squeueDateLine(const SqueueOptions& options, const SqueueContext& context) {
  if (options.noHeader || (!options.longList && options.iterate <= 0)) return "";
  return dateLine(context);
}

namespace {

// The format a listing prints: -o, else -O, else --start's, -l's or squeue's default.
std::vector<FormatItem> printedFormat(const SqueueOptions& options, std::string& err) {
  if (options.format) return parseShortFormat(*options.format, err);
  if (options.formatLong) return parseLongFormat(*options.formatLong, err);
  if (options.start) return parseShortFormat("%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R", err);
  if (options.longList) {
    return parseLongFormat(
        "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,timeused:.10 ,"
        "timelimit:.9 ,numnodes:.6 ,reasonlist:0",
        err);
  }
  return parseLongFormat(
      "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,"
      "numnodes:.6 ,reasonlist:0",
      err);
}

}  // namespace

bool showsPlanFigures(const SqueueOptions& options) {
  // --start sorts by the start time unless -S says otherwise.
  const std::string sort = options.sort.value_or(options.start ? "S" : "");
  if (sort.find_first_of("pQS") != std::string::npos) return true;
  std::string ignored;
  const FieldTable& fields = fieldTable();
  for (const FormatItem& item : printedFormat(options, ignored)) {
    for (const char* letter : {"S", "p", "Q", "Y"}) {
      if (item.field == &fields.at(letter)) return true;
    }
  }
  return false;
}

CommandOutput formatSqueue(const std::vector<api::SlurmJobObject>& jobs,
                           const SqueueOptions& options, const SqueueContext& context) {
  // squeue.c main prints the date before it asks slurmctld, so even before an error.
  CommandOutput result{squeueDateLine(options, context), "", 0};
  std::vector<const api::SlurmJobObject*> accepted;
  JobIndex index;
  std::map<std::int64_t, std::optional<std::uint32_t>> throttles;
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->jobId) continue;
    if (isArrayParent(job)) {
      throttles[*job.status->jobId] = job.request.array->maxRunning;
      index.byId[*job.status->jobId].push_back(&job);
      continue;
    }
    accepted.push_back(&job);
    index.byId[*job.status->jobId].push_back(&job);
    if (job.status->arrayJobId && job.status->arrayTaskId) {
      index.byArray[*job.status->arrayJobId].push_back(&job);
    }
  }
  std::ranges::stable_sort(accepted,
                           [](auto* a, auto* b) { return *a->status->jobId < *b->status->jobId; });

  // squeue -j with one id asks slurmctld for that job only, which fails for an unknown id.
  if (options.jobs.size() == 1 && !index.byId.contains(options.jobs.front().jobId) &&
      !index.byArray.contains(options.jobs.front().jobId)) {
    result.err = "slurm_load_jobs error: Invalid job id specified\n";
    result.exitCode = 1;
    return result;
  }

  SqueueOptions effective = options;
  if (options.start) {
    if (!effective.sort) effective.sort = "S";
    if (effective.states.empty() && !effective.allStates) effective.states = {JobState::kPending};
  }
  const std::vector<FormatItem> items = printedFormat(options, result.err);

  if (!options.noHeader) printLine(result.out, items, nullptr, context);

  std::vector<Row> rows;
  for (const api::SlurmJobObject* job : accepted) {
    Row row = rowOf(*job, context, index);
    if (keep(row, effective)) rows.push_back(std::move(row));
  }
  // The tasks the operator has not made yet wait in the array's record, with the reason of its
  // tasks that wait (one reason, not "Priority,None", when they combine).
  const std::map<std::int64_t, UnmadeTasks> unmade = unmadeArrayTasks(jobs);
  for (const auto& [arrayId, entry] : unmade) {
    Row standIn = rowOf(entry.standIn, context, index);
    standIn.arrayJobId = arrayId;
    const std::int64_t array = arrayId;
    const auto waiting = std::ranges::find_if(rows, [array](const Row& r) {
      return r.arrayJobId == array && r.arrayTaskId && r.state == JobState::kPending;
    });
    if (waiting != rows.end()) standIn.reason = waiting->reason;
    for (const std::uint32_t task : entry.taskIds) {
      Row row = standIn;
      row.arrayTaskId = task;
      if (keep(row, effective)) rows.push_back(std::move(row));
    }
  }
  // Every pending task is still in slurmctld's meta record, so they combine even for -r, which
  // then prints them one per line.
  combinePendingTasks(rows, throttles);
  mergeSort(rows, startTimeOrder(0, true));
  if (!sortRows(rows, effective.sort.value_or("P,t,-p"), context, result.err)) {
    result.exitCode = 1;
    return result;
  }
  for (const Row& row : rows) {
    if (options.array && !row.tasks.empty()) {
      for (const Row& task : row.tasks) printLine(result.out, items, &task, context);
    } else {
      printLine(result.out, items, &row, context);
    }
  }
  return result;
}

namespace {

// squeue's options (opts.c parse_command_line), for getoptLong.
constexpr std::string_view kShortOptions = "A:ahi:j::lL:n:M:O:o:p:Pq:R:rs::S:t:u:U:vVw:";
constexpr std::array kLongOptions = {
    LongOptionSpec{"accounts", 1, 'A'},    LongOptionSpec{"all", 0, 'a'},
    LongOptionSpec{"array", 0, 'r'},       LongOptionSpec{"array-unique", 0, '\0'},
    LongOptionSpec{"Format", 1, 'O'},      LongOptionSpec{"format", 1, 'o'},
    LongOptionSpec{"federation", 0, '\0'}, LongOptionSpec{"help", 0, '\0'},
    LongOptionSpec{"hide", 0, '\0'},       LongOptionSpec{"iterate", 1, 'i'},
    LongOptionSpec{"jobs", 2, 'j'},        LongOptionSpec{"local", 0, '\0'},
    LongOptionSpec{"long", 0, 'l'},        LongOptionSpec{"licenses", 1, 'L'},
    LongOptionSpec{"cluster", 1, 'M'},     LongOptionSpec{"clusters", 1, 'M'},
    LongOptionSpec{"me", 0, '\0'},         LongOptionSpec{"name", 1, 'n'},
    LongOptionSpec{"noconvert", 0, '\0'},  LongOptionSpec{"node", 1, 'w'},
    LongOptionSpec{"nodes", 1, 'w'},       LongOptionSpec{"nodelist", 1, 'w'},
    LongOptionSpec{"noheader", 0, 'h'},    LongOptionSpec{"partitions", 1, 'p'},
    LongOptionSpec{"priority", 0, 'P'},    LongOptionSpec{"qos", 1, 'q'},
    LongOptionSpec{"reservation", 1, 'R'}, LongOptionSpec{"sib", 0, '\0'},
    LongOptionSpec{"sibling", 0, '\0'},    LongOptionSpec{"sort", 1, 'S'},
    LongOptionSpec{"start", 0, '\0'},      LongOptionSpec{"steps", 2, 's'},
    LongOptionSpec{"states", 1, 't'},      LongOptionSpec{"usage", 0, '\0'},
    LongOptionSpec{"user", 1, 'u'},        LongOptionSpec{"users", 1, 'u'},
    LongOptionSpec{"verbose", 0, 'v'},     LongOptionSpec{"version", 0, 'V'},
    LongOptionSpec{"json", 0, '\0'},       LongOptionSpec{"yaml", 0, '\0'},
};

std::vector<std::string> commaList(std::string_view text) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) items.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

constexpr std::string_view kTryHelp = "Try \"squeue --help\" for more information\n";

CommandOutput failure(std::string err) { return CommandOutput{"", std::move(err), 1}; }

// opts.c _parse_state's error: every state name job_state_string knows.
std::string invalidState(const std::string& state) {
  return "squeue: error: Invalid job state specified: " + state +
         "\nsqueue: error: Valid job states include: "
         "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,"
         "BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
         "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED\n\n";
}

// opts.c _build_job_list: "A" or "A_T", comma-separated; a non-positive id is fatal.
std::optional<std::string> addJobs(std::string_view text, std::vector<SqueueJobSelector>& jobs) {
  for (const std::string& item : commaList(text)) {
    SqueueJobSelector selector;
    char* end = nullptr;
    selector.jobId = std::strtol(item.c_str(), &end, 10);
    if (*end == '_') selector.taskId = std::strtol(end + 1, &end, 10);
    if (selector.jobId <= 0) return "squeue: error: Invalid job id: " + item + "\n";
    jobs.push_back(selector);
  }
  return std::nullopt;
}

// Applies one option; returns the exit when it stops squeue.
std::optional<CommandOutput> apply(SqueueParse& parse, char key, std::string_view longName,
                                   const std::optional<std::string>& value, bool& jobFlag) {
  SqueueOptions& o = parse.options;
  switch (key) {
    case 'A':
    case 'U':
      o.accounts = commaList(*value);
      return std::nullopt;
    case 'a':
    case 'v':
      return std::nullopt;
    case 'h':
      o.noHeader = true;
      return std::nullopt;
    case 'j':
      jobFlag = true;
      if (value) {
        if (auto err = addJobs(*value, o.jobs)) return failure(*err);
      }
      return std::nullopt;
    case 'l':
      o.longList = true;
      return std::nullopt;
    case 'n':
      o.names = commaList(*value);
      return std::nullopt;
    case 'O':
      if (o.format)
        return failure("squeue: error: -O (--Format) is incompatible with -o (--format)\n");
      o.formatLong = *value;
      return std::nullopt;
    case 'o':
      if (o.formatLong)
        return failure("squeue: error: -o (--format) is incompatible with -O (--Format)\n");
      o.format = *value;
      return std::nullopt;
    case 'p':
      o.partitions = commaList(*value);
      return std::nullopt;
    case 'q':
      o.qos = commaList(*value);
      return std::nullopt;
    case 'r':
      o.array = true;
      return std::nullopt;
    case 'S':
      o.sort = *value;
      return std::nullopt;
    case 't':
      o.states.clear();
      o.allStates = lowercaseAscii(*value) == "all";
      if (!o.allStates) {
        for (const std::string& name : commaList(*value)) {
          auto state = slurm::parseJobState(name);
          if (!state) return failure(invalidState(name));
          o.states.push_back(*state);
        }
      }
      return std::nullopt;
    case 'u':
      o.users = commaList(*value);
      o.me = false;
      return std::nullopt;
    case 'i': {
      // atoi(optarg), then "error("--iterate=%s\n", optarg); exit(1)" when not positive; the
      // message's own newline and log's make a blank line.
      const std::string& text = *value;
      char* end = nullptr;
      const long seconds = std::strtol(text.c_str(), &end, 10);
      if (seconds <= 0) return failure("squeue: error: --iterate=" + text + "\n\n");
      o.iterate = static_cast<int>(std::min<long>(seconds, std::numeric_limits<int>::max()));
      return std::nullopt;
    }
    case 'w': {
      // hostset_create logs what it cannot parse with error(), then opts.c its own line.
      std::vector<std::string> diagnostics;
      auto hosts = slurm::Hostlist::parse(*value, &diagnostics);
      if (!hosts.isOk()) {
        std::string err;
        for (const std::string& line : diagnostics) err += "squeue: error: " + line + "\n";
        return failure(err + "squeue: error: '" + *value + "' invalid entry for --nodelist\n");
      }
      o.nodes = std::move(hosts).value();
      return std::nullopt;
    }
    case 'V':
      return CommandOutput{"slurm-wlm 22.05.8\n", "", 0};
    default:
      break;
  }
  if (longName == "me") {
    // OPT_LONG_ME: the user list becomes the caller alone.
    o.me = true;
    o.users.clear();
    return std::nullopt;
  }
  if (longName == "start") {
    o.start = true;
    return std::nullopt;
  }
  if (longName == "help" || longName == "usage") {
    return CommandOutput{
        "Usage: squeue [-A account] [--job jobid] [-n name] [-o format] [-O fields]\n"
        "              [-p partitions] [--qos qos] [--sort fields] [--start]\n"
        "              [-t states] [-u user_name] [--me] [-w hostlist] [-i seconds]\n"
        "              [--usage] [-ahjlrV]\n"
        "kubeslurm: --namespace NS, --all-namespaces, --kubeconfig FILE, --context NAME\n",
        "", 0};
  }
  const std::string shown =
      longName.empty() ? "-" + std::string(1, key) : "--" + std::string(longName);
  return failure("squeue: error: " + shown + " is not supported by kubeslurm\n");
}

}  // namespace

SqueueParse parseSqueueArgs(const std::vector<std::string>& args) {
  SqueueParse parse;
  bool jobFlag = false;
  const GetoptResult got = getoptLong("squeue", args, kShortOptions, kLongOptions);
  // getopt_long hands squeue one option at a time: what comes before a bad word still acts.
  for (const ParsedOption& option : got.options) {
    if (auto exit = apply(parse, option.key, option.longName, option.value, jobFlag)) {
      parse.exit = std::move(exit);
      return parse;
    }
  }
  if (got.error) {
    parse.exit = failure(*got.error + "\n" + std::string(kTryHelp));
    return parse;
  }
  const std::vector<std::string>& operands = got.operands;
  std::size_t next = 0;
  if (next < operands.size() && jobFlag) {
    if (auto err = addJobs(operands[next++], parse.options.jobs)) {
      parse.exit = failure(*err);
      return parse;
    }
  }
  if (next < operands.size()) {
    parse.exit = CommandOutput{
        "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
        "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
        "              [--reservation reservation] [--sort fields] [--start]\n"
        "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
        "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
        "\t      [-ahjlrsv]\n",
        "squeue: error: Unrecognized option: " + operands[next] + "\n", 1};
  }
  return parse;
}

}  // namespace kubeslurm::cli

#include "kubeslurm/cli/sacct_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

#include "kubeslurm/accounting/slurmjob_records.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"
#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/print_fields.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::cli {
namespace {

using slurm::JobState;

enum class Kind { kStr, kNum, kDate, kSecs };

struct FieldDef {
  int width;
  std::string_view name;
  Kind kind;
};

// sacct.c's fields[], in its order: the field list matches the first name that starts with
// what was asked for, so the order decides "sta" (Start) and "a" (ALL, matched before it).
constexpr std::array kFields = {
    FieldDef{10, "Account", Kind::kStr},
    FieldDef{15, "AdminComment", Kind::kStr},
    FieldDef{10, "AllocCPUS", Kind::kNum},
    FieldDef{10, "AllocNodes", Kind::kStr},
    FieldDef{10, "AllocTRES", Kind::kStr},
    FieldDef{7, "AssocID", Kind::kNum},
    FieldDef{10, "AveCPU", Kind::kStr},
    FieldDef{10, "AveCPUFreq", Kind::kStr},
    FieldDef{14, "AveDiskRead", Kind::kStr},
    FieldDef{14, "AveDiskWrite", Kind::kStr},
    FieldDef{10, "AvePages", Kind::kStr},
    FieldDef{10, "AveRSS", Kind::kStr},
    FieldDef{10, "AveVMSize", Kind::kStr},
    FieldDef{16, "BlockID", Kind::kStr},
    FieldDef{10, "Cluster", Kind::kStr},
    FieldDef{14, "Comment", Kind::kStr},
    FieldDef{19, "Constraints", Kind::kStr},
    FieldDef{14, "ConsumedEnergy", Kind::kStr},
    FieldDef{17, "ConsumedEnergyRaw", Kind::kNum},
    FieldDef{19, "Container", Kind::kStr},
    FieldDef{10, "CPUTime", Kind::kSecs},
    FieldDef{10, "CPUTimeRAW", Kind::kNum},
    FieldDef{-10, "DBIndex", Kind::kNum},
    FieldDef{15, "DerivedExitCode", Kind::kStr},
    FieldDef{10, "Elapsed", Kind::kSecs},
    FieldDef{10, "ElapsedRaw", Kind::kNum},
    FieldDef{19, "Eligible", Kind::kDate},
    FieldDef{19, "End", Kind::kDate},
    FieldDef{8, "ExitCode", Kind::kStr},
    FieldDef{19, "Flags", Kind::kStr},
    FieldDef{6, "GID", Kind::kNum},
    FieldDef{9, "Group", Kind::kStr},
    FieldDef{-12, "JobID", Kind::kStr},
    FieldDef{-12, "JobIDRaw", Kind::kStr},
    FieldDef{10, "JobName", Kind::kStr},
    FieldDef{9, "Layout", Kind::kStr},
    FieldDef{12, "MaxDiskRead", Kind::kStr},
    FieldDef{15, "MaxDiskReadNode", Kind::kStr},
    FieldDef{15, "MaxDiskReadTask", Kind::kNum},
    FieldDef{12, "MaxDiskWrite", Kind::kStr},
    FieldDef{16, "MaxDiskWriteNode", Kind::kStr},
    FieldDef{16, "MaxDiskWriteTask", Kind::kNum},
    FieldDef{8, "MaxPages", Kind::kStr},
    FieldDef{12, "MaxPagesNode", Kind::kStr},
    FieldDef{14, "MaxPagesTask", Kind::kNum},
    FieldDef{10, "MaxRSS", Kind::kStr},
    FieldDef{10, "MaxRSSNode", Kind::kStr},
    FieldDef{10, "MaxRSSTask", Kind::kNum},
    FieldDef{10, "MaxVMSize", Kind::kStr},
    FieldDef{14, "MaxVMSizeNode", Kind::kStr},
    FieldDef{14, "MaxVMSizeTask", Kind::kNum},
    FieldDef{12, "McsLabel", Kind::kStr},
    FieldDef{10, "MinCPU", Kind::kStr},
    FieldDef{10, "MinCPUNode", Kind::kStr},
    FieldDef{10, "MinCPUTask", Kind::kNum},
    FieldDef{10, "NCPUS", Kind::kNum},
    FieldDef{8, "NNodes", Kind::kNum},
    FieldDef{15, "NodeList", Kind::kStr},
    FieldDef{8, "NTasks", Kind::kNum},
    FieldDef{10, "Partition", Kind::kStr},
    FieldDef{10, "Priority", Kind::kNum},
    FieldDef{10, "QOS", Kind::kStr},
    FieldDef{6, "QOSRAW", Kind::kNum},
    FieldDef{22, "Reason", Kind::kStr},
    FieldDef{10, "ReqCPUFreq", Kind::kStr},
    FieldDef{13, "ReqCPUFreqGov", Kind::kStr},
    FieldDef{13, "ReqCPUFreqMax", Kind::kStr},
    FieldDef{13, "ReqCPUFreqMin", Kind::kStr},
    FieldDef{8, "ReqCPUS", Kind::kNum},
    FieldDef{10, "ReqMem", Kind::kStr},
    FieldDef{8, "ReqNodes", Kind::kStr},
    FieldDef{10, "ReqTRES", Kind::kStr},
    FieldDef{20, "Reservation", Kind::kStr},
    FieldDef{8, "ReservationId", Kind::kNum},
    FieldDef{10, "Reserved", Kind::kSecs},
    FieldDef{10, "ResvCPU", Kind::kSecs},
    FieldDef{10, "ResvCPURAW", Kind::kNum},
    FieldDef{19, "Start", Kind::kDate},
    FieldDef{10, "State", Kind::kStr},
    FieldDef{19, "Submit", Kind::kDate},
    FieldDef{20, "SubmitLine", Kind::kStr},
    FieldDef{10, "Suspended", Kind::kSecs},
    FieldDef{15, "SystemComment", Kind::kStr},
    FieldDef{10, "SystemCPU", Kind::kStr},
    FieldDef{10, "Timelimit", Kind::kStr},
    FieldDef{10, "TimelimitRaw", Kind::kStr},
    FieldDef{10, "TotalCPU", Kind::kStr},
    FieldDef{14, "TRESUsageInAve", Kind::kStr},
    FieldDef{14, "TRESUsageInMax", Kind::kStr},
    FieldDef{18, "TRESUsageInMaxNode", Kind::kStr},
    FieldDef{18, "TRESUsageInMaxTask", Kind::kStr},
    FieldDef{14, "TRESUsageInMin", Kind::kStr},
    FieldDef{18, "TRESUsageInMinNode", Kind::kStr},
    FieldDef{18, "TRESUsageInMinTask", Kind::kStr},
    FieldDef{14, "TRESUsageInTot", Kind::kStr},
    FieldDef{15, "TRESUsageOutAve", Kind::kStr},
    FieldDef{15, "TRESUsageOutMax", Kind::kStr},
    FieldDef{19, "TRESUsageOutMaxNode", Kind::kStr},
    FieldDef{19, "TRESUsageOutMaxTask", Kind::kStr},
    FieldDef{15, "TRESUsageOutMin", Kind::kStr},
    FieldDef{19, "TRESUsageOutMinNode", Kind::kStr},
    FieldDef{19, "TRESUsageOutMinTask", Kind::kStr},
    FieldDef{15, "TRESUsageOutTot", Kind::kStr},
    FieldDef{6, "UID", Kind::kNum},
    FieldDef{9, "User", Kind::kStr},
    FieldDef{10, "UserCPU", Kind::kStr},
    FieldDef{10, "WCKey", Kind::kStr},
    FieldDef{10, "WCKeyID", Kind::kNum},
    FieldDef{20, "WorkDir", Kind::kStr},
};

constexpr std::string_view kDefaultFields =
    "jobid,jobname,partition,account,alloccpus,state,exitcode";
constexpr std::string_view kBriefFields = "jobid,state,exitcode";
constexpr std::string_view kLongFields =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,"
    "mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,"
    "reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,"
    "maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,"
    "reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,"
    "tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";

// ---- one line of output ----

struct Row {
  const accounting::JobRecord* record = nullptr;
  std::string step;  // "" for the job's line; "batch", or an srun step's id
  std::int64_t ntasks = 1;
  std::string jobIdText;
  std::int64_t jobIdRaw = 0;
  std::int64_t arrayJobId = 0;  // 0 for a job outside an array, as the database keeps it
  std::int64_t arrayTaskId = 0xfffffffe;
  std::string name;
  std::optional<std::string> partition;
  std::optional<std::string> account;
  std::string user;
  JobState state = JobState::kPending;
  std::string exitCode = "0:0";
  std::int64_t cpus = 1;
  std::int64_t allocNodes = 0;  // 0 until it started
  std::int64_t reqNodes = 1;
  bool interactive = false;  // srun or salloc from a login host: no batch step
  std::string nodeList;
  std::int64_t submit = 0;
  std::int64_t eligible = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;                          // 0 while it runs, as in the database
  std::optional<std::int64_t> timeLimitMinutes;  // nullopt: UNLIMITED
  std::optional<std::int64_t> priority;
  std::optional<std::string> qos;
  std::string reason = "None";
  std::optional<std::string> workDir;
  std::optional<std::string> reqTres;
  std::optional<std::string> allocTres;
};

std::string firstHost(const std::string& nodes) {
  auto list = slurm::Hostlist::parse(nodes);
  std::string first;
  if (list.isOk()) {
    list->forEachHost([&first](std::string_view host) {
      first = host;
      return false;
    });
  }
  return first;
}

std::optional<std::string> nonEmpty(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return text;
}

Row rowOf(const accounting::JobRecord& record) {
  Row row;
  row.record = &record;
  row.jobIdRaw = record.jobId;
  row.jobIdText = std::to_string(record.jobId);
  if (!record.arrayTasks.empty()) {
    // The meta record of an array whose tasks are not split off yet: "A_[0-7]".
    row.arrayJobId = record.jobId;
    row.jobIdText += "_[" + record.arrayTasks + "]";
  } else if (record.arrayJobId && record.arrayTaskId) {
    row.arrayJobId = *record.arrayJobId;
    row.arrayTaskId = *record.arrayTaskId;
    row.jobIdText = std::to_string(row.arrayJobId) + "_" + std::to_string(row.arrayTaskId);
  }
  row.name = record.name;
  row.partition = nonEmpty(record.partition);
  row.account = nonEmpty(record.account);
  row.user = record.user;
  row.state = slurm::parseJobState(record.state).value_or(JobState::kPending);
  if (!record.exitCode.empty()) row.exitCode = record.exitCode;
  row.reqNodes = record.reqNodes;
  row.interactive = record.interactive;
  row.allocNodes = record.nodes;
  row.cpus = record.cpus;
  // The database keeps "None assigned" for a job that never got nodes.
  row.nodeList = record.nodes > 0 ? record.nodeList : "None assigned";
  row.submit = record.submitTime.value_or(0);
  row.eligible = record.eligibleTime.value_or(0);
  row.start = record.startTime.value_or(0);
  row.end = record.endTime.value_or(0);
  row.timeLimitMinutes = record.timeLimitMinutes;
  row.priority = record.priority;
  row.qos = nonEmpty(record.qos);
  if (!record.reason.empty()) row.reason = record.reason;
  row.workDir = nonEmpty(record.workDir);
  row.reqTres = record.reqTres;
  if (record.nodes > 0) row.allocTres = record.allocTres;
  return row;
}

// The batch step: rank 0 ran the script on the first node, with that node's share of the CPUs;
// it ends as the job did.
Row batchStepOf(const Row& job) {
  Row step = job;
  step.step = "batch";
  step.jobIdText += ".batch";
  step.name = "batch";
  step.cpus = (job.cpus + job.allocNodes - 1) / std::max<std::int64_t>(job.allocNodes, 1);
  step.allocNodes = 1;
  step.nodeList = firstHost(job.nodeList);
  return step;
}

// The steps srun ran in the batch script, as rank 0 reported them (status.steps).
std::vector<Row> srunStepsOf(const Row& job) {
  std::vector<Row> steps;
  if (job.record == nullptr) return steps;
  for (const accounting::StepRecord& s : job.record->steps) {
    Row step = job;
    step.step = s.stepId;
    step.jobIdText += "." + step.step;
    step.name = s.name;
    step.cpus = s.cpus;
    step.ntasks = s.tasks;
    step.allocNodes = s.nodes;
    step.nodeList = s.nodeList;
    step.start = s.startTime.value_or(job.start);
    step.end = s.endTime.value_or(job.end);
    step.state = slurm::parseJobState(s.state).value_or(JobState::kFailed);
    step.exitCode = s.exitCode.empty() ? "0:0" : s.exitCode;
    steps.push_back(std::move(step));
  }
  return steps;
}

// ---- field values (print.c print_fields) ----

struct Value {
  std::optional<std::string> text;  // nullopt: what Slurm holds as NULL or NO_VAL
};

Value num(std::int64_t n) { return Value{std::to_string(n)}; }

std::int64_t elapsed(const Row& row, const SacctContext& context) {
  if (row.start == 0) return 0;
  const std::int64_t until = row.end != 0 ? row.end : context.now;
  return std::max<std::int64_t>(until - row.start, 0);
}

std::string stateText(const Row& row) {
  std::string text(slurm::jobStateName(row.state));
  // print.c shows who cancelled a job ("CANCELLED by UID"). kubeslurm has no uids and does not
  // record who set spec.cancel; 0 is what slurmctld records for a cancel by root or itself.
  if (row.state == JobState::kCancelled && row.step.empty()) text += " by 0";
  return text;
}

Value valueOf(std::string_view field, const Row& row, const SacctContext& context) {
  const bool step = !row.step.empty();
  if (field == "Account") return Value{row.account};
  if (field == "AllocCPUS" || field == "NCPUS") return num(row.cpus);
  if (field == "AllocNodes") return num(row.allocNodes);
  if (field == "AllocTRES") return Value{row.allocTres};
  if (field == "Cluster") return Value{context.clusterName};
  if (field == "CPUTime") return num(elapsed(row, context) * row.cpus);
  if (field == "CPUTimeRAW") return num(elapsed(row, context) * row.cpus);
  if (field == "DerivedExitCode") return Value{step ? std::string() : "0:0"};
  if (field == "Elapsed" || field == "ElapsedRaw") return num(elapsed(row, context));
  if (field == "Eligible") return num(step ? row.start : row.eligible);
  if (field == "End") return num(row.end);
  if (field == "ExitCode") return Value{row.exitCode};
  if (field == "JobID") return Value{row.jobIdText};
  if (field == "JobIDRaw") {
    return Value{std::to_string(row.jobIdRaw) + (step ? "." + row.step : std::string())};
  }
  if (field == "JobName") return Value{row.name};
  if (field == "McsLabel") return Value{"n/a"};
  if (field == "NNodes") return num(row.allocNodes > 0 ? row.allocNodes : row.reqNodes);
  if (field == "NodeList") return Value{row.nodeList};
  if (field == "NTasks" && step) return num(row.ntasks);
  if (field == "Partition" && !step) return Value{row.partition};
  if (field == "Priority" && !step && row.priority) return num(*row.priority);
  if (field == "QOS" && !step) return Value{row.qos};
  if (field == "Reason" && !step) return Value{row.reason};
  if (field == "ReqCPUS") return num(row.cpus);
  if (field == "ReqNodes") return num(step ? 1 : row.reqNodes);
  if (field == "ReqTRES" && !step) return Value{row.reqTres};
  if (field == "Reserved" && !step) {
    if (row.eligible == 0) return num(0);
    return num(
        std::max<std::int64_t>((row.start != 0 ? row.start : context.now) - row.eligible, 0));
  }
  if (field == "Start") return num(row.start);
  if (field == "State") return Value{stateText(row)};
  if (field == "Submit") return num(step ? row.start : row.submit);
  if (field == "Suspended") return num(0);
  if (field == "Timelimit" && !step) {
    if (!row.timeLimitMinutes) return Value{"UNLIMITED"};
    return Value{slurm::formatPaddedDuration(slurm::TimeLimit{*row.timeLimitMinutes * 60})};
  }
  if (field == "TimelimitRaw" && !step) {
    if (!row.timeLimitMinutes) return Value{"UNLIMITED"};
    return Value{std::to_string(*row.timeLimitMinutes)};
  }
  if (field == "User" && !step) return Value{row.user};
  if (field == "WorkDir" && !step) return Value{row.workDir};
  // Everything else needs step statistics, uids, wckeys or other records kubeslurm does not
  // keep: NULL, which prints blank.
  return Value{};
}

// ---- printing (print_fields.c) ----

class Printer {
 public:
  Printer(const SacctParse& parse, const SacctContext& context)
      : parse_(parse),
        context_(context),
        fields_(parse.options.parsable, parse.options.delimiter.value_or("|")) {}

  void header(std::string& out) const {
    std::vector<PrintColumn> columns;
    columns.reserve(parse_.fields.size());
    for (const int index : parse_.fields) {
      columns.push_back({kFields.at(static_cast<std::size_t>(index)).name, widthOf(index)});
    }
    fields_.header(out, columns);
  }

  void line(std::string& out, const Row& row) const {
    const std::size_t count = parse_.fields.size();
    for (std::size_t i = 0; i < count; ++i) {
      const int index = parse_.fields[i];
      const FieldDef& def = kFields.at(static_cast<std::size_t>(index));
      std::optional<std::string> text = valueOf(def.name, row, context_).text;
      Overflow overflow = Overflow::kKeep;
      if (def.kind == Kind::kStr) {
        overflow = Overflow::kMark;
      } else if (def.kind == Kind::kDate) {
        overflow = Overflow::kCut;  // slurm_make_time_str writes into a buffer of the width
        if (text) {
          const std::int64_t t = std::stoll(*text);
          text = t == 0 ? std::string("Unknown")
                        : slurm::formatTimestamp(t, context_.utcOffsetSeconds);
          // ...which -p prints too.
          const auto width = static_cast<std::size_t>(std::abs(widthOf(index)));
          if (text->size() > width) text->resize(width);
        }
      } else if (text && def.kind == Kind::kSecs) {
        text = slurm::formatPaddedDuration(slurm::TimeLimit{std::stoll(*text)});
      }
      fields_.cell(out, widthOf(index), overflow, text, i + 1 == count);
    }
    out += "\n";
  }

 private:
  int widthOf(int index) const {
    const auto it = parse_.widths.find(index);
    return it != parse_.widths.end() ? it->second
                                     : kFields.at(static_cast<std::size_t>(index)).width;
  }

  const SacctParse& parse_;
  const SacctContext& context_;
  FieldPrinter fields_;
};

// ---- which jobs (the database query) ----

bool matchesJob(const Row& row, const SacctJobSelector& s) {
  if (s.taskId) return row.arrayJobId == s.jobId && row.arrayTaskId == *s.taskId;
  // The database matches an array's id against every task (as_mysql_jobacct_process.c).
  return row.jobIdRaw == s.jobId || (row.arrayJobId != 0 && row.arrayJobId == s.jobId);
}

// _state_time_string: each state selects jobs that were in it during [S, E].
bool inStateWindow(const Row& row, JobState state, std::int64_t s, std::int64_t e) {
  switch (state) {
    case JobState::kPending:
      return row.eligible != 0 &&
             ((row.start != 0 && s < row.start) ||
              (row.start == 0 && row.end != 0 && s < row.end) ||
              (row.start == 0 && row.end == 0 && row.state == JobState::kPending)) &&
             e > row.eligible;
    case JobState::kRunning:
      return row.start != 0 && (s < row.end || (row.end == 0 && row.state == JobState::kRunning)) &&
             e > row.start;
    case JobState::kSuspended:
      return row.state == JobState::kSuspended;
    default:
      return row.state == state && row.end != 0 && row.end >= s && row.end <= e;
  }
}

bool keep(const Row& row, const SacctOptions& o, const SacctContext& c, bool allUsers,
          std::int64_t s, std::int64_t e) {
  if (!o.jobs.empty() &&
      !std::ranges::any_of(o.jobs, [&row](const auto& sel) { return matchesJob(row, sel); })) {
    return false;
  }
  if (!allUsers) {
    const std::vector<std::string> users = o.users.empty() ? std::vector{c.user} : o.users;
    if (!listHas(users, row.user, false)) return false;
  }
  if (!o.accounts.empty() && (!row.account || !listHas(o.accounts, *row.account, true))) {
    return false;
  }
  if (!o.partitions.empty() && (!row.partition || !listHas(o.partitions, *row.partition, false))) {
    return false;
  }
  if (!o.names.empty() && !listHas(o.names, row.name, false)) return false;
  if (!o.qos.empty() && (!row.qos || !listHas(o.qos, *row.qos, true))) return false;
  if (!o.states.empty()) {
    return std::ranges::any_of(o.states,
                               [&](JobState state) { return inStateWindow(row, state, s, e); });
  }
  if (!o.jobs.empty()) return row.submit < e && (row.end >= s || row.end == 0);
  return row.eligible != 0 && row.eligible < e && (row.end >= s || row.end == 0);
}

// The array's record standing for the tasks that have no record of their own yet: PENDING, with
// those task ids; nullopt when there are none or the array has ended (a task deleted by hand is
// not made again).
std::optional<accounting::JobRecord> unmadeTasksRecord(const accounting::JobRecord& array,
                                                       const std::set<std::int64_t>& made) {
  if (accounting::runPhase(array.state) == 2) return std::nullopt;
  auto spec = slurm::parseArraySpec(array.arrayTasks, slurm::kMaxMaxArraySize);
  if (!spec.isOk()) return std::nullopt;
  std::vector<std::uint32_t> unmade;
  for (const std::uint32_t task : spec->taskIds) {
    if (!made.contains(task)) unmade.push_back(task);
  }
  if (unmade.empty()) return std::nullopt;
  accounting::JobRecord waiting = array;
  waiting.arrayTasks = slurm::formatArrayTasks(unmade, std::nullopt, 0);
  waiting.state = std::string(slurm::jobStateName(slurm::JobState::kPending));
  waiting.startTime.reset();
  waiting.endTime.reset();
  waiting.exitCode = "0:0";
  return waiting;
}

std::int64_t localMidnight(const SacctContext& context) {
  const std::int64_t local = context.now + context.utcOffsetSeconds;
  return local - (((local % 86400) + 86400) % 86400) - context.utcOffsetSeconds;
}

}  // namespace

std::vector<accounting::JobRecord> liveJobRecords(const std::vector<api::SlurmJobObject>& jobs,
                                                  const SacctContext& context) {
  const accounting::RecordContext recordContext{context.clusterName, context.defaultPartition,
                                                context.partitionDefaultTime,
                                                context.partitionMemory, context.nodeMemoryMb};
  std::vector<accounting::JobRecord> records;
  for (const api::SlurmJobObject& job : jobs) {
    if (auto record = accounting::recordOfSlurmJob(job, isArrayParent(job), recordContext)) {
      records.push_back(std::move(*record));
    }
  }
  return records;
}

CommandOutput formatSacct(const std::vector<api::SlurmJobObject>& jobs, const SacctParse& parse,
                          const SacctContext& context) {
  return formatSacct(liveJobRecords(jobs, context), parse, context);
}

CommandOutput formatSacct(const std::vector<accounting::JobRecord>& records,
                          const SacctParse& parse, const SacctContext& context) {
  const SacctOptions& o = parse.options;
  CommandOutput result;
  const Printer printer(parse, context);
  if (!o.noHeader) printer.header(result.out);

  // slurmdb_job_cond_def_start_end.
  std::optional<std::int64_t> s = o.start;
  std::optional<std::int64_t> e = o.end;
  if (!o.states.empty()) {
    if (!s && o.jobs.empty()) s = context.now;
    if (s && *s != 0 && !e) e = s;
  } else if (o.jobs.empty() && !s) {
    s = localMidnight(context);
  }
  if (!e) e = context.now;
  const std::int64_t start = s.value_or(0);
  std::int64_t end = *e;
  if (end == start || end == context.now) ++end;
  // options.c: -j (and no -u) or root means every user.
  const bool allUsers = o.allUsers || (o.users.empty() && !o.jobs.empty());

  // Arrays whose tasks exist are shown by their tasks; a requeued job by its last run unless
  // --duplicates asks for each (slurmdbd keeps a record per run, sacct shows the newest).
  // Tasks the operator has not made yet still wait in the array's record, as in Slurm's meta
  // record, while the array has not ended.
  std::map<std::int64_t, std::set<std::int64_t>> tasksOf;
  std::map<std::int64_t, std::int64_t> lastAttempt;
  for (const accounting::JobRecord& record : records) {
    if (record.arrayJobId && record.arrayTaskId) {
      tasksOf[*record.arrayJobId].insert(*record.arrayTaskId);
    }
    std::int64_t& last = lastAttempt[record.jobId];
    last = std::max(last, record.attempt);
  }
  std::vector<Row> rows;
  for (const accounting::JobRecord& record : records) {
    if (!o.duplicates && record.attempt != lastAttempt[record.jobId]) continue;
    const auto tasks = tasksOf.find(record.jobId);
    if (!record.arrayTasks.empty() && tasks != tasksOf.end()) {
      std::optional<accounting::JobRecord> waiting = unmadeTasksRecord(record, tasks->second);
      if (!waiting) continue;
      Row row = rowOf(*waiting);
      if (keep(row, o, context, allUsers, start, end)) rows.push_back(std::move(row));
      continue;
    }
    Row row = rowOf(record);
    if (keep(row, o, context, allUsers, start, end)) rows.push_back(std::move(row));
  }
  // options.c _sort_desc_submit_time (ascending, despite its name).
  std::ranges::stable_sort(rows, [](const Row& a, const Row& b) {
    return std::tie(a.submit, a.arrayJobId, a.arrayTaskId, a.jobIdRaw) <
           std::tie(b.submit, b.arrayJobId, b.arrayTaskId, b.jobIdRaw);
  });
  for (const Row& row : rows) {
    const bool jobLine =
        std::ranges::none_of(o.jobs,
                             [](const SacctJobSelector& sel) { return sel.step.has_value(); }) ||
        std::ranges::any_of(o.jobs, [&row](const SacctJobSelector& sel) {
          return !sel.step && matchesJob(row, sel);
        });
    if (jobLine) printer.line(result.out, row);
    if (o.allocations || row.start == 0 || row.allocNodes == 0) continue;
    std::vector<Row> steps = srunStepsOf(row);
    // An interactive allocation ran no script (Slurm's batch_flag 0): its steps are srun's.
    if (!row.interactive) steps.insert(steps.begin(), batchStepOf(row));
    for (const Row& step : steps) {
      const bool stepLine =
          o.jobs.empty() || std::ranges::any_of(o.jobs, [&](const SacctJobSelector& sel) {
            return matchesJob(row, sel) && (!sel.step || *sel.step == step.step);
          });
      if (stepLine) printer.line(result.out, step);
    }
  }
  return result;
}

namespace {

constexpr auto kSacctLongOptions = std::to_array<LongOptionSpec>({
    {"allusers", 0, 'a'},
    {"accounts", 1, 'A'},
    {"allocations", 0, 'X'},
    {"brief", 0, 'b'},
    {"batch-script", 0, 'B'},
    {"completion", 0, 'c'},
    {"constraints", 1, 'C'},
    {"delimiter", 1, '\x01'},
    {"duplicates", 0, 'D'},
    {"federation", 0, '\x02'},
    {"helpformat", 0, 'e'},
    {"help-fields", 0, 'e'},
    {"endtime", 1, 'E'},
    {"env-vars", 0, '\x03'},
    {"file", 1, 'f'},
    {"flags", 1, 'F'},
    {"gid", 1, 'g'},
    {"group", 1, 'g'},
    {"help", 0, 'h'},
    {"local", 0, '\x04'},
    {"name", 1, '\x05'},
    {"nnodes", 1, 'i'},
    {"ncpus", 1, 'I'},
    {"jobs", 1, 'j'},
    {"timelimit-min", 1, 'k'},
    {"timelimit-max", 1, 'K'},
    {"long", 0, 'l'},
    {"allclusters", 0, 'L'},
    {"cluster", 1, 'M'},
    {"clusters", 1, 'M'},
    {"nodelist", 1, 'N'},
    {"noconvert", 0, '\x06'},
    {"units", 1, '\x07'},
    {"noheader", 0, 'n'},
    {"fields", 1, 'o'},
    {"format", 1, 'o'},
    {"parsable", 0, 'p'},
    {"parsable2", 0, 'P'},
    {"qos", 1, 'q'},
    {"partition", 1, 'r'},
    {"reason", 1, 'R'},
    {"state", 1, 's'},
    {"starttime", 1, 'S'},
    {"truncate", 0, 'T'},
    {"uid", 1, 'u'},
    {"usage", 0, 'U'},
    {"user", 1, 'u'},
    {"verbose", 0, 'v'},
    {"version", 0, 'V'},
    {"wckeys", 1, 'W'},
    {"whole-hetjob", 2, '\x08'},
    {"associations", 1, 'x'},
    {"json", 0, '\x09'},
    {"yaml", 0, '\x0a'},
    {"use-local-uid", 0, '\x0b'},
});

CommandOutput failure(std::string err) { return CommandOutput{"", std::move(err), 1}; }

std::string error(const std::string& text) { return "sacct: error: " + text + "\n"; }
std::string fatal(const std::string& text) { return "sacct: fatal: " + text + "\n"; }

// options.c _supported_state: the states slurmdbd accounts.
bool accountedState(JobState state) {
  switch (state) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleted:
    case JobState::kCancelled:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kPreempted:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory:
    case JobState::kRequeued:
    case JobState::kResizing:
    case JobState::kRevoked:
      return true;
    default:
      return false;
  }
}

// slurm_addto_step_list: "N", "N_T", "N.S", comma-separated.
std::optional<std::string> addJobs(const std::string& text, std::vector<SacctJobSelector>& jobs) {
  for (const std::string& item : splitCommaList(text)) {
    SacctJobSelector selector;
    char* end = nullptr;
    selector.jobId = std::strtoll(item.c_str(), &end, 10);
    // Only an item without a leading number is refused; "5x" is job 5 and "0" is accepted
    // (checked against /usr/bin/sacct 22.05.8).
    if (end == item.c_str()) return "Bad job/step specified: " + item;
    if (*end == '_') selector.taskId = std::strtoll(end + 1, &end, 10);
    if (*end == '.') selector.step = std::string(end + 1);
    jobs.push_back(selector);
  }
  return std::nullopt;
}

std::optional<CommandOutput> parseTime(const std::string& text, const SacctContext& context,
                                       std::optional<slurm::EpochSeconds>& field) {
  auto t = slurm::parsePastTime(text, context.now, context.utcOffsetSeconds);
  if (t.isOk()) {
    field = *t;
    return std::nullopt;
  }
  // parse_time prints its own diagnostic and sacct exits 1.
  std::string err(t.status().message());
  return failure(err.empty() ? std::string() : err + "\n");
}

// The field list loop of parse_command_line.
std::optional<CommandOutput> resolveFields(const std::string& list, SacctParse& parse) {
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) break;
    std::string token = list.substr(pos, comma - pos);
    pos = comma + 1;
    std::size_t skip = 0;
    while (skip < token.size() && std::isspace(static_cast<unsigned char>(token[skip])) != 0) {
      ++skip;
    }
    token.erase(0, skip);
    // An empty item ends the list: Slurm's loop cuts the string there and finds no more commas.
    if (token.empty()) break;
    std::optional<int> width;
    if (const std::size_t percent = token.find('%'); percent != std::string::npos) {
      // atoi: digits after '%', anything else ends the number (0 when there is none).
      width = static_cast<int>(std::clamp<long>(
          std::strtol(token.c_str() + percent + 1, nullptr, 10), -kMaxFieldWidth, kMaxFieldWidth));
      token.resize(percent);
    }
    if (startsWithIgnoreCase("ALL", token)) {
      for (std::size_t i = 0; i < kFields.size(); ++i) {
        if (width) parse.widths[static_cast<int>(i)] = *width;
        parse.fields.push_back(static_cast<int>(i));
      }
      continue;
    }
    const auto* const it = std::ranges::find_if(
        kFields, [&token](const FieldDef& f) { return startsWithIgnoreCase(f.name, token); });
    if (it == kFields.end()) {
      if (equalsIgnoreCase(token, "AllocGRES")) {
        return failure(fatal("AllocGRES has been removed, please use AllocTRES"));
      }
      if (equalsIgnoreCase(token, "ReqGRES")) {
        return failure(fatal("ReqGRES has been removed, please use ReqTRES"));
      }
      return failure(error("Invalid field requested: \"" + token + "\""));
    }
    const int index = static_cast<int>(it - kFields.begin());
    // Slurm sets the width on its one field table, so the last width given wins everywhere.
    if (width) parse.widths[index] = *width;
    parse.fields.push_back(index);
  }
  return std::nullopt;
}

constexpr std::string_view kUsage = "Usage: sacct [options]\n\tUse --help for help\n";

}  // namespace

SacctParse parseSacctArgs(const std::vector<std::string>& args, const SacctContext& context) {
  SacctParse parse;
  SacctOptions& o = parse.options;
  const GetoptResult got =
      getoptLong("sacct", args, "aA:bBcC:DeE:f:F:g:hi:I:j:k:K:lLM:nN:o:pPq:r:s:S:Ttu:UvVW:x:X",
                 kSacctLongOptions);
  if (got.error) {
    parse.exit = failure(*got.error + "\n");
    return parse;
  }
  bool brief = false;
  bool longOutput = false;
  int help = 0;
  for (const ParsedOption& option : got.options) {
    const std::string value = option.value.value_or("");
    switch (option.key) {
      case 'a':
        o.allUsers = true;
        break;
      case 'A':
        for (std::string& a : splitCommaList(value)) o.accounts.push_back(std::move(a));
        break;
      case 'b':
        brief = true;
        break;
      case '\x01':
        o.delimiter = value;
        break;
      case 'e':
        help = 2;
        break;
      case 'E':
        if (auto exit = parseTime(value, context, o.end)) {
          parse.exit = std::move(exit);
          return parse;
        }
        break;
      case 'h':
        help = 1;
        break;
      case 'j':
        if (auto bad = addJobs(value, o.jobs)) {
          parse.exit = failure(fatal(*bad));
          return parse;
        }
        break;
      case 'l':
        longOutput = true;
        break;
      case 'n':
        o.noHeader = true;
        break;
      case '\x05':
        for (std::string& n : splitCommaList(value)) o.names.push_back(std::move(n));
        break;
      case 'o':
        o.fieldList += value + ",";
        o.formatGiven = true;
        break;
      case 'p':
        o.parsable = 1;
        break;
      case 'P':
        o.parsable = 2;
        break;
      case 'q':
        for (std::string& q : splitCommaList(value)) o.qos.push_back(std::move(q));
        break;
      case 'r':
        for (std::string& p : splitCommaList(value)) o.partitions.push_back(std::move(p));
        break;
      case 's':
        for (const std::string& name : splitCommaList(value)) {
          const auto state = slurm::parseJobState(name);
          if (!state) {
            parse.exit = failure(fatal("unrecognized job state value '" + name + "'"));
            return parse;
          }
          if (!accountedState(*state)) {
            parse.exit = failure(fatal("job state " + name + " is not supported / accounted"));
            return parse;
          }
          if (std::ranges::find(o.states, *state) == o.states.end()) o.states.push_back(*state);
        }
        break;
      case 'S':
        if (auto exit = parseTime(value, context, o.start)) {
          parse.exit = std::move(exit);
          return parse;
        }
        break;
      case 'U':
        help = 3;
        break;
      case 'u':
        if (value == "-1") {
          o.allUsers = true;
          break;
        }
        o.allUsers = false;
        for (std::string& u : splitCommaList(value)) o.users.push_back(std::move(u));
        break;
      case 'V':
        parse.exit = CommandOutput{"slurm 22.05.8\n", "", 0};
        return parse;
      case 't':
      case 'X':
        o.allocations = true;
        break;
      case 'D':
        o.duplicates = true;
        break;
      case 'v':
      case 'T':
      case '\x06':
        break;
      default: {
        const std::string shown = option.longName.empty() ? "-" + std::string(1, option.key)
                                                          : "--" + std::string(option.longName);
        parse.exit = failure(error(shown + " is not supported by kubeslurm"));
        return parse;
      }
    }
  }
  if (longOutput && o.formatGiven) {
    parse.exit = failure(
        fatal("Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and "
              "retry."));
    return parse;
  }
  if (o.start && o.end && *o.start > *o.end) {
    parse.exit =
        failure(error("Start time (" + slurm::formatTimestamp(*o.start, context.utcOffsetSeconds) +
                      ") requested is after end time (" +
                      slurm::formatTimestamp(*o.end, context.utcOffsetSeconds) + ")."));
    return parse;
  }
  if (help == 1 || help == 3) {
    parse.exit = CommandOutput{
        help == 3 ? std::string(kUsage)
                  : std::string(kUsage) +
                        "kubeslurm: --namespace NS, --kubeconfig FILE, --context NAME\n",
        "", 0};
    return parse;
  }
  if (help == 2) {
    std::string out;
    for (std::size_t i = 0; i < kFields.size(); ++i) {
      if ((i & 3U) != 0) {
        out += " ";
      } else if (i != 0) {
        out += "\n";
      }
      std::string name(kFields.at(i).name);
      name.resize(std::max<std::size_t>(name.size(), 19), ' ');
      out += name;
    }
    parse.exit = CommandOutput{out + "\n", "", 0};
    return parse;
  }
  if (brief) o.fieldList += std::string(kBriefFields) + ",";
  if (longOutput) o.fieldList += std::string(kLongFields) + ",";
  if (o.fieldList.empty()) {
    o.fieldList = std::string(context.envFormat.value_or(std::string(kDefaultFields))) + ",";
  }
  if (auto exit = resolveFields(o.fieldList, parse)) {
    parse.exit = std::move(exit);
    return parse;
  }
  if (!got.operands.empty()) {
    std::string err = error("Unknown arguments:");
    for (const std::string& operand : got.operands) err += error(" " + operand);
    parse.exit = failure(err);
  }
  return parse;
}

}  // namespace kubeslurm::cli

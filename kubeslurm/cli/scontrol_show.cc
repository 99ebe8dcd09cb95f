#include "kubeslurm/cli/scontrol_show.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "kubeslurm/cli/job_objects.h"
#include "kubeslurm/cli/squeue_format.h"
#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/filename_pattern.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::cli {
namespace {

constexpr std::uint64_t kNoUid = 4294967294ULL;  // NO_VAL: no Unix ids in a cluster

// Fields joined as slurm_sprint_*: "\n   " between lines, or " " with -o; "\n\n" or "\n" after.
class Record {
 public:
  explicit Record(bool oneLiner) : oneLiner_(oneLiner) {}
  Record& line(const std::string& text) {
    if (!text_.empty()) text_ += oneLiner_ ? " " : "\n   ";
    text_ += text;
    return *this;
  }
  std::string finish() const { return text_ + (oneLiner_ ? "\n" : "\n\n"); }

 private:
  bool oneLiner_;
  std::string text_;
};

std::string orNull(const std::string& text) { return text.empty() ? "(null)" : text; }

std::string timeText(std::optional<slurm::EpochSeconds> t, const ShowContext& c) {
  return t && *t != 0 ? slurm::formatTimestamp(*t, c.utcOffsetSeconds) : "Unknown";
}

std::string gresList(const std::vector<slurm::GresRequest>& gres, std::string_view prefix) {
  std::string out;
  for (const slurm::GresRequest& g : gres) {
    if (!out.empty()) out += ",";
    out += std::string(prefix) + slurm::formatGres(g);
  }
  return out;
}

// slurm_protocol_defs.c job_share_string(): --exclusive is JOB_SHARED_NONE ("NO"),
// --oversubscribe JOB_SHARED_OK ("YES"), --exclusive=user and =mcs "USER" and "MCS"; a job that
// asked for neither keeps NO_VAL16, printed "OK".
std::string_view overSubscribeName(slurm::SharedMode mode) {
  switch (mode) {
    case slurm::SharedMode::kExclusive:
      return "NO";
    case slurm::SharedMode::kOversubscribe:
      return "YES";
    case slurm::SharedMode::kExclusiveUser:
      return "USER";
    case slurm::SharedMode::kExclusiveMcs:
      return "MCS";
    case slurm::SharedMode::kDefault:
      break;
  }
  return "OK";
}

// What the job's record holds, with an array's pending tasks folded into one.
struct JobRecord {
  const api::SlurmJobObject* job = nullptr;
  std::int64_t jobId = 0;
  std::optional<std::int64_t> arrayJobId;
  std::string arrayTask;  // "0" or "2-7%2"
  std::optional<std::uint32_t> throttle;

  // The record of an array's pending tasks ("2-7%2"): the array's meta record, not one task's.
  bool foldsTasks() const {
    return arrayJobId && arrayTask.find_first_not_of("0123456789") != std::string::npos;
  }
};

struct JobsView {
  std::map<std::string, std::string> dependencies;  // squeue's %E by squeue's job id text
  std::string defaultPartition;
  std::map<std::string, slurm::TimeLimit> partitionDefaultTime;
  std::map<std::string, api::PartitionMemory> partitionMemory;
  const NodeMemoryLookup* nodeMemoryMb = nullptr;
};

std::string jobText(const JobRecord& r, const JobsView& view, const ShowContext& c) {
  const api::SlurmJobObject& job = *r.job;
  const slurm::JobRequest& q = job.request;
  const api::SlurmJobStatus& s = *job.status;
  const slurm::JobState state = api::jobStateOf(s);
  const bool pending = state == slurm::JobState::kPending;
  Record out(c.oneLiner);

  std::string first = "JobId=" + std::to_string(r.jobId) + " ";
  if (r.arrayJobId) {
    first += "ArrayJobId=" + std::to_string(*r.arrayJobId) + " ArrayTaskId=" + r.arrayTask + " ";
    if (r.throttle) first += "ArrayTaskThrottle=" + std::to_string(*r.throttle) + " ";
  }
  out.line(first + "JobName=" + q.jobName);
  out.line("UserId=" + job.user + "(" + std::to_string(kNoUid) + ") GroupId=" + job.namespaceName +
           "(" + std::to_string(kNoUid) + ") MCS_label=N/A");
  out.line("Priority=" + std::to_string(std::max<std::int64_t>(s.priority.value_or(0), 0)) +
           " Nice=" + std::to_string(q.nice.value_or(0)) + " Account=" + orNull(q.account) +
           " QOS=" + orNull(q.qos));

  std::string reason = s.reason.empty() ? "None" : s.reason;
  if (!s.reasonDetail.empty()) reason += ", " + s.reasonDetail;
  // job_info.c prints state_desc with its white space turned into '_'.
  for (char& ch : reason) {
    if (std::isspace(static_cast<unsigned char>(ch)) != 0) ch = '_';
  }
  std::string idText = std::to_string(r.jobId);
  if (r.arrayJobId && !r.foldsTasks()) {
    idText = std::to_string(*r.arrayJobId) + "_" + r.arrayTask;
  }
  const auto dep = view.dependencies.find(idText);
  out.line("JobState=" + std::string(slurm::jobStateName(state)) + " Reason=" + reason +
           " Dependency=" + (dep == view.dependencies.end() ? "(null)" : dep->second));

  const std::int64_t restarts = s.restarts.value_or(0);
  // batch_flag: 0 for an allocation without a script (srun or salloc from a login host), 2 once
  // a batch job was requeued.
  const char* batchFlag = q.interactive ? "0" : restarts > 0 ? "2" : "1";
  out.line("Requeue=" + std::string(q.requeue.value_or(true) ? "1" : "0") +
           " Restarts=" + std::to_string(restarts) + " BatchFlag=" + batchFlag +
           " Reboot=0 ExitCode=" + (s.exitCode.empty() ? "0:0" : s.exitCode));

  const std::string partition = api::shownPartition(job, view.defaultPartition);
  slurm::TimeLimit limit;
  if (q.timeLimit) {
    limit = *q.timeLimit;
  } else if (auto it =
                 view.partitionDefaultTime.find(api::timeLimitPartition(q, view.defaultPartition));
             it != view.partitionDefaultTime.end()) {
    limit = it->second;
  }
  const std::optional<std::int64_t> limitMinutes = slurm::timeLimitMinutes(limit);
  std::int64_t runTime = 0;
  if (!pending && s.startTime) {
    const bool running = state == slurm::JobState::kRunning || !s.endTime;
    runTime = std::max<std::int64_t>((running ? c.now : *s.endTime) - *s.startTime, 0);
  }
  const std::string timeLimitText =
      limitMinutes ? slurm::formatPaddedDuration(slurm::TimeLimit{*limitMinutes * 60})
                   : "UNLIMITED";
  const std::optional<std::int64_t> minMinutes =
      q.timeMin ? slurm::timeLimitMinutes(*q.timeMin) : std::nullopt;
  out.line("RunTime=" + slurm::formatPaddedDuration(slurm::TimeLimit{runTime}) +
           " TimeLimit=" + timeLimitText + " TimeMin=" +
           (minMinutes ? slurm::formatPaddedDuration(slurm::TimeLimit{*minMinutes * 60}) : "N/A"));

  std::optional<slurm::EpochSeconds> eligible = s.submitTime;
  if (q.begin && (!eligible || *q.begin > *eligible)) eligible = q.begin;
  // Held or waiting on a dependency: slurmctld has not made the job eligible yet.
  const bool waiting = pending && (s.reason == "Dependency" || s.reason == "JobHeldUser" ||
                                   s.reason == "JobHeldAdmin" || s.reason == "BeginTime" ||
                                   s.reason == "DependencyNeverSatisfied");
  out.line("SubmitTime=" + timeText(s.submitTime, c) +
           " EligibleTime=" + (waiting ? std::string("Unknown") : timeText(eligible, c)));
  out.line("AccrueTime=" + (waiting ? std::string("Unknown") : timeText(eligible, c)));

  std::optional<slurm::EpochSeconds> start = pending ? s.estimatedStart : s.startTime;
  std::optional<slurm::EpochSeconds> end = s.endTime;
  if (!end && start && limitMinutes && !pending) end = *start + *limitMinutes * 60;
  if (!end && pending && start && limitMinutes) end = *start + *limitMinutes * 60;
  std::string endText = timeText(end, c);
  if (!limitMinutes && !s.endTime) endText = "Unknown";
  out.line("StartTime=" + timeText(start, c) + " EndTime=" + endText +
           " Deadline=" + (q.deadline ? timeText(q.deadline, c) : "N/A"));
  const std::optional<slurm::EpochSeconds> lastEval = pending ? s.submitTime : s.startTime;
  out.line("SuspendTime=None SecsPreSuspend=0 LastSchedEval=" + timeText(lastEval, c) +
           " Scheduler=Main");
  out.line("Partition=" + orNull(partition) + " AllocNode:Sid=(null):0");
  out.line("ReqNodeList=" + orNull(q.nodeList) + " ExcNodeList=" + orNull(q.excludeList));
  std::string nodeList = s.nodeList;
  if (!nodeList.empty()) {
    auto hosts = slurm::Hostlist::parse(nodeList);
    if (hosts.isOk()) {
      hosts->sort();
      nodeList = hosts->ranged();
    }
  }
  // A pending job's node list is empty, not NULL (slurmctld 22.05, held or not: the slurmctld
  // differential test).
  out.line("NodeList=" + (pending ? std::string() : orNull(nodeList)));
  if (!pending && !nodeList.empty()) {
    auto hosts = slurm::expandHostlist(nodeList);
    if (hosts.isOk() && !hosts->empty()) out.line("BatchHost=" + hosts->front());
  }

  const std::int64_t minNodes = q.nodes ? q.nodes->min : 1;
  const std::int64_t numNodes =
      pending || s.nodeList.empty() ? minNodes : slurm::countHosts(s.nodeList);
  // A pending job's NumNodes is pack_job's estimate (job_mgr.c, before any node count is
  // guessed): with --ntasks-per-node, its tasks over that, rounded down, and at least what -N
  // asked. TRES keeps the request's own minimum (details->min_nodes).
  std::int64_t shownNodes = numNodes;
  if (pending && q.ntasks && q.ntasksPerNode && *q.ntasksPerNode > 0) {
    shownNodes = std::max<std::int64_t>(minNodes, *q.ntasks / *q.ntasksPerNode);
  }
  // job_info.c _sprint_range: a pending job that asked for nodes prints min-max, where -N 4 asked
  // for at most 4 too ("4-4"); one that did not, or --nodes=0 (no maximum), prints its count.
  std::string nodesText = std::to_string(shownNodes);
  const std::uint32_t maxNodes = q.nodes ? q.nodes->max.value_or(q.nodes->min) : 0;
  if (pending && q.nodes && maxNodes > 0) {
    nodesText = std::to_string(shownNodes) + "-" + std::to_string(maxNodes);
  }
  const std::int64_t tasks =
      q.ntasks ? *q.ntasks : (q.ntasksPerNode ? *q.ntasksPerNode : 1) * numNodes;
  const std::int64_t cpusPerTask = q.cpusPerTask.value_or(1);
  // A node range with no task count asks slurmctld for one task's CPUs (min_cpus), however
  // many tasks its minimum of nodes implies: -N 2-4 is NumTasks=2 NumCPUs=1.
  const bool openRange =
      pending && maxNodes > (q.nodes ? q.nodes->min : 0) && !q.ntasks && !q.ntasksPerNode;
  // --mincpus CPUs on each node are what a started job holds (pn_min_cpus is a floor on the
  // allocation); a pending one's record shows only what its tasks ask.
  const std::int64_t minCpusPerNode = q.minCpusPerNode.value_or(0);
  const std::int64_t cpus = openRange ? cpusPerTask
                            : pending ? tasks * cpusPerTask
                                      : std::max(tasks * cpusPerTask, numNodes * minCpusPerNode);
  out.line("NumNodes=" + nodesText + " NumCPUs=" + std::to_string(cpus) +
           " NumTasks=" + std::to_string(tasks) + " CPUs/Task=" + std::to_string(cpusPerTask) +
           " ReqB:S:C:T=0:0:*:*");

  // The job's GPUs: per job, else per node times nodes, else per task times tasks. Given
  // together, these options must agree (sbatch refuses them otherwise), so one of them says it.
  std::int64_t gpus = 0;
  const auto& perNode = q.gres.empty() ? q.gpusPerNode : q.gres;
  if (!q.gpus.empty()) {
    for (const slurm::GresRequest& g : q.gpus) gpus += static_cast<std::int64_t>(g.count);
  } else if (!perNode.empty()) {
    for (const slurm::GresRequest& g : perNode) {
      gpus += static_cast<std::int64_t>(g.count) * numNodes;
    }
  } else {
    for (const slurm::GresRequest& g : q.gpusPerTask) {
      gpus += static_cast<std::int64_t>(g.count) * tasks;
    }
  }
  // Memory as slurmctld records it (api::recordedMemory) from the job's first partition while
  // pending, the one it runs in after.
  const std::string memoryPartition =
      pending ? api::timeLimitPartition(q, view.defaultPartition) : partition;
  const auto found = view.partitionMemory.find(memoryPartition);
  const api::PartitionMemory defaults =
      found == view.partitionMemory.end() ? api::PartitionMemory{} : found->second;
  api::RecordedMemory memory =
      api::recordedMemory(q, defaults, !pending, numNodes, cpus, gpus, std::nullopt);
  // All of each node's memory: only then are the nodes asked for.
  if (!memory.tresMb && view.nodeMemoryMb != nullptr && *view.nodeMemoryMb) {
    memory = api::recordedMemory(q, defaults, !pending, numNodes, cpus, gpus,
                                 (*view.nodeMemoryMb)(memoryPartition));
  }
  const std::optional<std::uint64_t>& memoryMb = memory.tresMb;
  std::string tres = "cpu=" + std::to_string(cpus);
  if (memoryMb) tres += ",mem=" + slurm::formatMegabytes(*memoryMb);
  tres += ",node=" + std::to_string(numNodes) + ",billing=" + std::to_string(cpus);
  if (gpus > 0) tres += ",gres/gpu=" + std::to_string(gpus);
  // --nodes=0 asks for nothing: slurmctld keeps no TRES.
  out.line("TRES=" + (numNodes == 0 && cpus == 0 ? std::string("(null)") : tres));
  out.line("Socks/Node=* NtasksPerN:B:S:C=" + std::to_string(q.ntasksPerNode.value_or(0)) +
           ":0:*:* CoreSpec=*");
  out.line("MinCPUsNode=" +
           std::to_string(std::max(cpusPerTask * q.ntasksPerNode.value_or(1), minCpusPerNode)) +
           " " +
           (memory.perCpuMb > 0    ? "MinMemoryCPU=" + slurm::formatMegabytes(memory.perCpuMb)
            : memory.perNodeMb > 0 ? "MinMemoryNode=" + slurm::formatMegabytes(memory.perNodeMb)
                                   : std::string("MinMemoryNode=0")) +
           " MinTmpDiskNode=0");
  // slurmctld's build_feature_list rewrites commas, "a common error", to '&' in the record.
  std::string features = q.constraint;
  std::replace(features.begin(), features.end(), ',', '&');
  out.line("Features=" + orNull(features) + " DelayBoot=00:00:00");
  out.line("OverSubscribe=" + std::string(overSubscribeName(q.shared)) +
           " Contiguous=" + (q.contiguous ? "1" : "0") + " Licenses=(null) Network=(null)");
  out.line("Command=" + orNull(job.scriptPath));
  std::string workDir = "WorkDir=" + orNull(q.workDir);
  out.line(workDir);
  if (!q.comment.empty()) out.line("Comment=" + q.comment + " ");

  slurm::FilenamePatternValues values;
  values.jobId = static_cast<std::uint64_t>(r.jobId);
  if (s.arrayJobId) values.arrayJobId = static_cast<std::uint64_t>(*s.arrayJobId);
  // The meta record's task id is NO_VAL: %a expands to 4294967294 there (job_mgr.c keeps
  // array_task_id NO_VAL on the record of the pending tasks).
  if (s.arrayTaskId && !r.foldsTasks()) {
    values.arrayTaskId = static_cast<std::uint32_t>(*s.arrayTaskId);
  }
  values.jobName = q.jobName;
  values.userName = job.user;
  auto path = [&](const std::string& pattern) {
    return slurm::formatScontrolStdioPath(
        pattern.empty() ? std::nullopt : std::optional<std::string_view>(pattern), values,
        q.workDir);
  };
  const std::string stdOut = path(q.output);
  out.line("StdErr=" + (q.error.empty() ? stdOut : path(q.error)));
  out.line("StdIn=" + (q.input.empty() ? std::string("/dev/null") : path(q.input)));
  out.line("StdOut=" + stdOut);
  out.line("Power=");
  if (q.memPerGpuMb && *q.memPerGpuMb > 0) {
    out.line("MemPerTres=gres:gpu:" + std::to_string(*q.memPerGpuMb));
  }
  if (!q.gpus.empty()) out.line("TresPerJob=" + gresList(q.gpus, "gres:"));
  // Both --gpus-per-node and --gres, in that order, when both were given.
  std::vector<slurm::GresRequest> tresPerNode = q.gpusPerNode;
  tresPerNode.insert(tresPerNode.end(), q.gres.begin(), q.gres.end());
  if (!tresPerNode.empty()) out.line("TresPerNode=" + gresList(tresPerNode, "gres:"));
  if (!q.gpusPerTask.empty()) out.line("TresPerTask=" + gresList(q.gpusPerTask, "gres:"));
  return out.finish();
}

// Parses "N" or "N_T".
std::optional<std::pair<std::int64_t, std::optional<std::int64_t>>> parseJobId(
    const std::string& text) {
  const std::size_t underscore = text.find('_');
  auto number = [](std::string_view digits) -> std::optional<std::int64_t> {
    if (digits.empty() || digits.size() > 10 ||
        digits.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    return std::stoll(std::string(digits));
  };
  auto id = number(std::string_view(text).substr(0, underscore));
  if (!id) return std::nullopt;
  if (underscore == std::string::npos) return std::make_pair(*id, std::optional<std::int64_t>());
  auto task = number(std::string_view(text).substr(underscore + 1));
  if (!task) return std::nullopt;
  return std::make_pair(*id, std::optional<std::int64_t>(*task));
}

std::string cfgTres(const NodeFacts& n) {
  std::string tres = "cpu=" + std::to_string(n.cpus) +
                     ",mem=" + slurm::formatMegabytes(static_cast<std::uint64_t>(n.memoryMb)) +
                     ",billing=" + std::to_string(n.cpus);
  if (n.gpus > 0) tres += ",gres/gpu=" + std::to_string(n.gpus);
  return tres;
}

std::string allocTres(const NodeFacts& n) {
  std::vector<std::string> parts;
  if (n.allocCpus > 0) parts.push_back("cpu=" + std::to_string(n.allocCpus));
  if (n.allocMemoryMb > 0) {
    parts.push_back("mem=" + slurm::formatMegabytes(static_cast<std::uint64_t>(n.allocMemoryMb)));
  }
  if (n.allocGpus > 0) parts.push_back("gres/gpu=" + std::to_string(n.allocGpus));
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace

CommandOutput formatShowJobs(const std::vector<api::SlurmJobObject>& jobs,
                             const std::vector<api::Partition>& partitions,
                             const std::optional<std::string>& id, const ShowContext& context,
                             const NodeMemoryLookup& nodeMemoryMb) {
  CommandOutput result;
  std::optional<std::pair<std::int64_t, std::optional<std::int64_t>>> wanted;
  if (id) {
    wanted = parseJobId(*id);
    if (!wanted) {
      // scontrol's own check before asking slurmctld.
      result.err = "Invalid job id specified\n";
      result.exitCode = 1;
      return result;
    }
  }
  JobsView view;
  view.nodeMemoryMb = &nodeMemoryMb;
  for (const api::Partition* p : orderedPartitions(partitions)) {
    view.partitionDefaultTime[p->metadata.name] = api::partitionDefaultTime(p->spec);
    view.partitionMemory[p->metadata.name] = api::partitionMemory(p->spec);
    if (p->spec.isDefault && view.defaultPartition.empty())
      view.defaultPartition = p->metadata.name;
  }
  if (view.defaultPartition.empty() && partitions.size() == 1) {
    view.defaultPartition = partitions.front().metadata.name;
  }
  // Dependency= is squeue's %E: one judgement of what is left of a dependency.
  SqueueOptions squeue;
  squeue.format = "%i\x1f%E";
  squeue.noHeader = true;
  squeue.array = true;
  squeue.allStates = true;
  SqueueContext squeueContext;
  squeueContext.now = context.now;
  squeueContext.defaultPartition = view.defaultPartition;
  const std::string deps = formatSqueue(jobs, squeue, squeueContext).out;
  for (std::size_t pos = 0; pos < deps.size();) {
    const std::size_t end = deps.find('\n', pos);
    const std::string lineText = deps.substr(pos, end - pos);
    pos = end == std::string::npos ? deps.size() : end + 1;
    const std::size_t sep = lineText.find('\x1f');
    if (sep == std::string::npos) continue;
    const std::string value = lineText.substr(sep + 1);
    if (value != "(null)") view.dependencies[lineText.substr(0, sep)] = value;
  }

  std::map<std::int64_t, std::optional<std::uint32_t>> throttles;
  std::vector<const api::SlurmJobObject*> candidates;
  for (const api::SlurmJobObject& job : jobs) {
    if (!job.status || !job.status->jobId) continue;
    if (isArrayParent(job)) {
      throttles[*job.status->jobId] = job.request.array->maxRunning;
      continue;
    }
    candidates.push_back(&job);
  }
  std::ranges::stable_sort(candidates,
                           [](auto* a, auto* b) { return *a->status->jobId < *b->status->jobId; });

  std::vector<JobRecord> records;
  std::map<std::int64_t, std::vector<const api::SlurmJobObject*>> pendingTasks;
  for (const api::SlurmJobObject* job : candidates) {
    const api::SlurmJobStatus& s = *job->status;
    const bool task = s.arrayJobId && s.arrayTaskId;
    if (wanted) {
      const bool matches =
          wanted->second
              ? task && *s.arrayJobId == wanted->first && *s.arrayTaskId == *wanted->second
              : *s.jobId == wanted->first || (task && *s.arrayJobId == wanted->first);
      if (!matches) continue;
    }
    if (task && api::jobStateOf(s) == slurm::JobState::kPending &&
        !wanted.value_or(std::make_pair(0, std::nullopt)).second) {
      pendingTasks[*s.arrayJobId].push_back(job);
      continue;
    }
    JobRecord record;
    record.job = job;
    record.jobId = *s.jobId;
    if (task) {
      record.arrayJobId = s.arrayJobId;
      record.arrayTask = std::to_string(*s.arrayTaskId);
      const auto t = throttles.find(*s.arrayJobId);
      if (t != throttles.end()) record.throttle = t->second;
    }
    records.push_back(record);
  }
  // The tasks the operator has not made yet wait in the array's record (unmadeArrayTasks): one
  // of them asked for by A_T is its own record, the others join the pending tasks'.
  const std::map<std::int64_t, UnmadeTasks> unmade = unmadeArrayTasks(jobs);
  std::map<std::int64_t, std::vector<std::uint32_t>> unmadeIds;
  for (const auto& [arrayId, entry] : unmade) {
    if (wanted && wanted->first != arrayId) continue;
    if (wanted && wanted->second) {
      if (std::ranges::find(entry.taskIds, *wanted->second) == entry.taskIds.end()) continue;
      JobRecord record;
      record.job = &entry.standIn;
      record.jobId = arrayId;
      record.arrayJobId = arrayId;
      record.arrayTask = std::to_string(*wanted->second);
      const auto t = throttles.find(arrayId);
      if (t != throttles.end()) record.throttle = t->second;
      records.push_back(record);
      continue;
    }
    unmadeIds[arrayId] = entry.taskIds;
    pendingTasks.try_emplace(arrayId);
  }
  // The meta record of an array's pending tasks has the array's id and comes first of it.
  for (auto& entry : pendingTasks) {
    // A named copy, not a structured binding: clang 14 cannot capture those in a lambda.
    const std::int64_t arrayId = entry.first;
    auto& tasks = entry.second;
    std::vector<std::uint32_t> ids;
    ids.reserve(tasks.size());
    for (const auto* t : tasks) ids.push_back(static_cast<std::uint32_t>(*t->status->arrayTaskId));
    const auto notMade = unmadeIds.find(arrayId);
    if (notMade != unmadeIds.end()) {
      ids.insert(ids.end(), notMade->second.begin(), notMade->second.end());
    }
    std::ranges::sort(ids);
    JobRecord record;
    record.job = tasks.empty() ? &unmade.at(arrayId).standIn : tasks.front();
    record.jobId = arrayId;
    record.arrayJobId = arrayId;
    const auto t = throttles.find(arrayId);
    if (t != throttles.end()) record.throttle = t->second;
    record.arrayTask = ids.size() == 1 ? std::to_string(ids.front())
                                       : slurm::formatArrayTasks(ids, record.throttle);
    const std::int64_t array = arrayId;
    auto at = std::ranges::find_if(
        records, [array](const JobRecord& r) { return r.arrayJobId == array || r.jobId >= array; });
    records.insert(at, record);
  }
  if (records.empty()) {
    if (wanted) {
      result.err = "slurm_load_jobs error: Invalid job id specified\n";
      result.exitCode = 1;
    } else {
      result.out = "No jobs in the system\n";
    }
    return result;
  }
  for (const JobRecord& r : records) result.out += jobText(r, view, context);
  return result;
}

CommandOutput formatShowPartitions(const std::vector<api::Partition>& partitions,
                                   const std::vector<api::Node>& nodes,
                                   const std::vector<NodeFacts>& facts,
                                   const std::optional<std::string>& name,
                                   const ShowContext& context) {
  CommandOutput result;
  for (const api::Partition* p : orderedPartitions(partitions)) {
    if (name && p->metadata.name != *name) continue;
    const api::PartitionSpec& spec = p->spec;
    const std::vector<std::string> members = partitionNodeNames(spec, nodes);
    std::int64_t cpus = 0;
    std::int64_t memoryMb = 0;
    std::int64_t gpus = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (std::ranges::find(members, nodes[i].metadata.name) == members.end()) continue;
      cpus += facts[i].cpus;
      memoryMb += facts[i].memoryMb;
      gpus += facts[i].gpus;
    }
    Record out(context.oneLiner);
    out.line("PartitionName=" + p->metadata.name);
    std::string accounts;
    for (const std::string& a : spec.allowedAccounts) accounts += (accounts.empty() ? "" : ",") + a;
    out.line("AllowGroups=ALL AllowAccounts=" + (accounts.empty() ? "ALL" : accounts) +
             " AllowQos=ALL");
    out.line(std::string("AllocNodes=ALL Default=") + (spec.isDefault ? "YES" : "NO") + " QoS=N/A");
    auto minutesText = [](const slurm::TimeLimit& limit) {
      const auto minutes = slurm::timeLimitMinutes(limit);
      return minutes ? slurm::formatPaddedDuration(slurm::TimeLimit{*minutes * 60})
                     : std::string("UNLIMITED");
    };
    out.line("DefaultTime=" + (spec.defaultTime ? minutesText(spec.defaultTime->limit) : "NONE") +
             " DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO");
    out.line(
        "MaxNodes=" + (spec.maxNodesPerJob ? std::to_string(*spec.maxNodesPerJob) : "UNLIMITED") +
        " MaxTime=" + minutesText(api::partitionMaxTime(spec)) + " MinNodes=" +
        std::to_string(spec.minNodesPerJob.value_or(0)) + " LLN=NO MaxCPUsPerNode=UNLIMITED");
    out.line("Nodes=" + orNull(slurm::compressHostlist(members)));
    out.line("PriorityJobFactor=" + std::to_string(spec.priorityJobFactor.value_or(1)) +
             " PriorityTier=" + std::to_string(spec.priorityTier.value_or(1)) +
             " RootOnly=NO ReqResv=NO OverSubscribe=NO");
    std::string preempt = spec.preemptMode.empty() ? "OFF" : spec.preemptMode;
    for (char& ch : preempt) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.line("OverTimeLimit=NONE PreemptMode=" + preempt);
    std::string state = spec.state.empty() ? "UP" : spec.state;
    for (char& ch : state) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.line("State=" + state + " TotalCPUs=" + std::to_string(cpus) +
             " TotalNodes=" + std::to_string(members.size()) + " SelectTypeParameters=NONE");
    // partition_info.c: the per-GPU default under JobDefaults=; of the per-node and per-CPU
    // forms, the node form when it was given (it wins), a CPU form given as 0 is UNLIMITED.
    const api::PartitionMemory memory = api::partitionMemory(spec);
    out.line("JobDefaults=" + (memory.defPerGpu > 0
                                   ? "DefMemPerGPU=" + std::to_string(memory.defPerGpu)
                                   : std::string("(null)")));
    auto memoryText = [](const std::string& setting, std::uint64_t perNode, std::uint64_t perCpu,
                         bool cpuForm) {
      if (perCpu > 0) return setting + "PerCPU=" + std::to_string(perCpu);
      if (cpuForm) return setting + "PerCPU=UNLIMITED";
      return setting + "PerNode=" + (perNode > 0 ? std::to_string(perNode) : "UNLIMITED");
    };
    out.line(memoryText("DefMem", memory.defPerNode, memory.defPerCpu,
                        !spec.defMemPerNode && spec.defMemPerCpu) +
             " " +
             memoryText("MaxMem", memory.maxPerNode, memory.maxPerCpu,
                        !spec.maxMemPerNode && spec.maxMemPerCpu));
    std::string tres = "cpu=" + std::to_string(cpus) +
                       ",mem=" + slurm::formatMegabytes(static_cast<std::uint64_t>(memoryMb)) +
                       ",node=" + std::to_string(members.size()) +
                       ",billing=" + std::to_string(cpus);
    if (gpus > 0) tres += ",gres/gpu=" + std::to_string(gpus);
    out.line("TRES=" + tres);
    result.out += out.finish();
  }
  if (result.out.empty()) {
    result.out = name ? "Partition " + *name + " not found\n" : "No partitions in the system\n";
    result.exitCode = name ? 1 : 0;
  }
  return result;
}

CommandOutput formatShowNodes(const std::vector<api::Partition>& partitions,
                              const std::vector<api::Node>& nodes,
                              const std::vector<NodeFacts>& facts,
                              const std::optional<std::string>& name, const ShowContext& context) {
  CommandOutput result;
  std::optional<std::set<std::string>> wanted;
  if (name) {
    auto hosts = slurm::expandHostlist(*name);
    wanted.emplace();
    if (hosts.isOk()) wanted->insert(hosts->begin(), hosts->end());
  }
  const std::vector<const api::Partition*> ordered = orderedPartitions(partitions);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const api::Node& node = nodes[i];
    const NodeFacts& n = facts[i];
    if (wanted && wanted->count(n.name) == 0) continue;
    Record out(context.oneLiner);
    std::string first = "NodeName=" + n.name + " ";
    if (auto arch = node.metadata.labels.find("kubernetes.io/arch");
        arch != node.metadata.labels.end()) {
      first += "Arch=" + arch->second + " ";
    }
    out.line(first + "CoresPerSocket=1 ");
    out.line("CPUAlloc=" + std::to_string(n.allocCpus) + " CPUEfctv=" + std::to_string(n.cpus) +
             " CPUTot=" + std::to_string(n.cpus) + " CPULoad=N/A");
    out.line("AvailableFeatures=" + orNull(n.features));
    out.line("ActiveFeatures=" + orNull(n.features));
    out.line("Gres=" + (n.gpus > 0 ? "gpu:" + std::to_string(n.gpus) : std::string("(null)")));
    std::string address;
    for (const auto& [type, value] : node.addresses) {
      if (type == "InternalIP" && address.empty()) address = value;
    }
    out.line((address.empty() ? "" : "NodeAddr=" + address + " ") + "NodeHostName=" + n.name + " ");
    if (auto os = node.metadata.labels.find("kubernetes.io/os"); os != node.metadata.labels.end()) {
      out.line("OS=" + os->second + " ");
    }
    out.line("RealMemory=" + std::to_string(n.memoryMb) +
             " AllocMem=" + std::to_string(n.allocMemoryMb) +
             " FreeMem=N/A Sockets=" + std::to_string(n.cpus) + " Boards=1");
    out.line("State=" + nodeStateScontrol(n) +
             " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A");
    std::string member;
    for (const api::Partition* p : ordered) {
      const std::vector<std::string> names = partitionNodeNames(p->spec, nodes);
      if (std::ranges::find(names, n.name) != names.end()) {
        member += (member.empty() ? "" : ",") + p->metadata.name;
      }
    }
    if (!member.empty()) out.line("Partitions=" + member + " ");
    const std::string boot =
        n.bootTime ? slurm::formatTimestamp(*n.bootTime, context.utcOffsetSeconds) : "None";
    std::string bootLine = "BootTime=" + boot;
    bootLine += " SlurmdStartTime=" + boot;
    out.line(bootLine);
    out.line("LastBusyTime=" +
             (n.base == NodeBaseState::kIdle
                  ? std::string("Unknown")
                  : slurm::formatTimestamp(context.now, context.utcOffsetSeconds)));
    out.line("CfgTRES=" + cfgTres(n));
    out.line("AllocTRES=" + allocTres(n));
    out.line("CapWatts=n/a");
    out.line("CurrentWatts=0 AveWatts=0");
    out.line("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
    if (!n.reason.empty()) {
      std::string reason = "Reason=" + n.reason;
      if (n.reasonTime) {
        reason += " [" + n.reasonUser + "@" +
                  slurm::formatTimestamp(*n.reasonTime, context.utcOffsetSeconds) + "]";
      }
      out.line(reason);
    }
    result.out += out.finish();
  }
  if (result.out.empty()) {
    result.out = name ? "Node " + *name + " not found\n" : "No nodes in the system\n";
    result.exitCode = name ? 1 : 0;
  }
  return result;
}

}  // namespace kubeslurm::cli

#include "kubeslurm/accounting/slurmjob_records.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::accounting {
namespace {

// convert_num_unit with CONVERT_NUM_UNIT_EXACT: a megabyte count in the largest unit that
// divides it ("2048000" -> "2000G").
std::string memoryText(std::uint64_t megabytes) {
  constexpr std::string_view kUnits = "MGTP";
  std::size_t unit = 0;
  while (megabytes != 0 && megabytes % 1024 == 0 && unit + 1 < kUnits.size()) {
    megabytes /= 1024;
    ++unit;
  }
  return std::to_string(megabytes) + kUnits[unit];
}

// GPUs of the whole job, by type ("" for the untyped total), from the one option that asked.
std::map<std::string, std::uint64_t> gpuCounts(const slurm::JobRequest& request, std::int64_t nodes,
                                               std::int64_t tasks) {
  std::map<std::string, std::uint64_t> counts;
  const auto add = [&counts](const std::vector<slurm::GresRequest>& list, std::int64_t times) {
    for (const slurm::GresRequest& g : list) {
      const std::uint64_t n = g.count * static_cast<std::uint64_t>(times);
      counts[""] += n;
      if (!g.type.empty()) counts[g.type] += n;
    }
  };
  add(request.gres, nodes);
  add(request.gpus, 1);
  add(request.gpusPerNode, nodes);
  add(request.gpusPerTask, tasks);
  return counts;
}

// A job is eligible (time_eligible set) once nothing but resources holds it back; slurmctld
// leaves it 0 while a dependency, a hold or a begin time does.
bool ineligibleReason(const std::string& reason) {
  return reason == "Dependency" || reason == "DependencyNeverSatisfied" ||
         reason == "JobHeldUser" || reason == "JobHeldAdmin" || reason == "BeginTime";
}

std::optional<std::int64_t> positive(std::int64_t t) {
  if (t == 0) return std::nullopt;
  return t;
}

}  // namespace

std::string tresText(const slurm::JobRequest& request, std::int64_t cpus, std::int64_t nodes,
                     std::int64_t tasks, const std::string& partition, bool started,
                     const RecordContext& context) {
  std::map<std::string, std::string> items;
  items["billing"] = std::to_string(cpus);
  items["cpu"] = std::to_string(cpus);
  items["node"] = std::to_string(nodes);
  const auto defaults = context.partitionMemory.find(partition);
  const auto nodeMemory = context.nodeMemoryMb.find(partition);
  const std::map<std::string, std::uint64_t> gpus = gpuCounts(request, nodes, tasks);
  const auto allGpus = gpus.find("");
  const api::RecordedMemory memory = api::recordedMemory(
      request,
      defaults == context.partitionMemory.end() ? api::PartitionMemory{} : defaults->second,
      started, nodes, cpus, allGpus == gpus.end() ? 0 : static_cast<std::int64_t>(allGpus->second),
      nodeMemory == context.nodeMemoryMb.end() ? std::nullopt
                                               : std::optional<std::uint64_t>(nodeMemory->second));
  if (memory.tresMb && *memory.tresMb > 0) items["mem"] = memoryText(*memory.tresMb);
  for (const auto& [type, count] : gpus) {
    if (count == 0) continue;
    items[type.empty() ? "gres/gpu" : "gres/gpu:" + type] = std::to_string(count);
  }
  std::string out;
  for (const auto& [name, value] : items) {
    if (!out.empty()) out += ",";
    out += name;
    out += "=";
    out += value;
  }
  return out;
}

std::optional<JobRecord> recordOfSlurmJob(const api::SlurmJobObject& job, bool arrayParent,
                                          const RecordContext& context) {
  if (!job.status || !job.status->jobId) return std::nullopt;
  const api::SlurmJobStatus& status = *job.status;
  const slurm::JobRequest& request = job.request;
  JobRecord r;
  r.cluster = context.cluster;
  r.jobId = *status.jobId;
  r.attempt = status.restarts.value_or(0);
  if (arrayParent && request.array) {
    r.arrayJobId = r.jobId;
    r.arrayTasks = slurm::formatArrayTasks(request.array->taskIds, std::nullopt, 0);
  } else if (status.arrayJobId && status.arrayTaskId) {
    r.arrayJobId = status.arrayJobId;
    r.arrayTaskId = status.arrayTaskId;
  }
  r.name = request.jobName;
  r.user = job.user;
  r.namespaceName = job.namespaceName;
  r.account = request.account;
  r.partition = api::shownPartition(job, context.defaultPartition);
  r.qos = request.qos;
  const slurm::JobState state = api::jobStateOf(status);
  r.state = slurm::jobStateName(state);
  r.exitCode = status.exitCode.empty() ? "0:0" : status.exitCode;
  r.reason = status.reason;
  r.priority = status.priority;
  r.workDir = request.workDir;

  r.reqNodes = request.nodes ? request.nodes->min : 1;
  r.interactive = request.interactive;
  const bool started = state != slurm::JobState::kPending && status.startTime.has_value();
  r.nodes = started && !status.nodeList.empty() ? slurm::countHosts(status.nodeList) : 0;
  if (r.nodes > 0) r.nodeList = status.nodeList;
  const std::int64_t nodes = r.nodes > 0 ? r.nodes : r.reqNodes;
  const std::int64_t tasks =
      request.ntasks ? *request.ntasks
                     : static_cast<std::int64_t>(request.ntasksPerNode.value_or(1)) * nodes;
  r.cpus = tasks * request.cpusPerTask.value_or(1);
  const std::map<std::string, std::uint64_t> gpus = gpuCounts(request, nodes, tasks);
  if (const auto it = gpus.find(""); it != gpus.end())
    r.gpus = static_cast<std::int64_t>(it->second);
  for (const auto& [type, count] : gpus) {
    if (!type.empty()) {
      r.gpuType = type;
      break;
    }
  }
  // Memory by the first partition the job named while it waits, the one it runs in after.
  const std::string requested = api::timeLimitPartition(request, context.defaultPartition);
  r.reqTres = tresText(request, r.cpus, r.reqNodes, tasks, requested, false, context);
  if (r.nodes > 0) {
    r.allocTres = tresText(request, r.cpus, r.nodes, tasks, r.partition, true, context);
  }

  r.submitTime = status.submitTime;
  std::int64_t eligible = state == slurm::JobState::kPending && ineligibleReason(status.reason)
                              ? 0
                              : status.submitTime.value_or(0);
  if (request.begin && eligible != 0) eligible = std::max(eligible, *request.begin);
  r.eligibleTime = positive(eligible);
  const bool finished = slurm::isFinished(state);
  if (finished) r.endTime = status.endTime;
  // slurmctld sets the start of a job cancelled while pending to its end (job_signal).
  r.startTime = status.startTime ? status.startTime : (finished ? r.endTime : std::nullopt);
  std::optional<slurm::TimeLimit> limit = request.timeLimit;
  if (!limit) {
    const auto it = context.partitionDefaultTime.find(
        api::timeLimitPartition(request, context.defaultPartition));
    limit = it != context.partitionDefaultTime.end() ? it->second : slurm::TimeLimit{};
  }
  r.timeLimitMinutes = slurm::timeLimitMinutes(*limit);

  for (const api::JobStepStatus& s : status.steps) {
    StepRecord step;
    step.stepId = std::to_string(s.stepId);
    step.name = s.name;
    step.startTime = s.startTime;
    step.endTime = s.endTime;
    step.state = s.state;
    step.exitCode = s.exitCode;
    step.tasks = s.tasks;
    step.cpus = s.cpus;
    step.nodes = s.nodes;
    step.nodeList = s.nodeList;
    r.steps.push_back(std::move(step));
  }
  return r;
}

}  // namespace kubeslurm::accounting

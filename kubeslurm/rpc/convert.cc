#include "kubeslurm/rpc/convert.h"

#include <optional>

#include <grpcpp/support/status.h>

namespace kubeslurm::rpc {

namespace {

void toProto(const PriorityFactors& factors, v1alpha1::PriorityFactors& p) {
  p.set_age(factors.age);
  p.set_fairshare(factors.fairshare);
  p.set_job_size(factors.jobSize);
  p.set_partition(factors.partition);
  p.set_qos(factors.qos);
  p.set_tres_gpu(factors.tresGpu);
  p.set_nice(factors.nice);
  p.set_priority(factors.priority);
}

PriorityFactors fromProto(const v1alpha1::PriorityFactors& p) {
  return {p.age(), p.fairshare(), p.job_size(), p.partition(),
          p.qos(), p.tres_gpu(),  p.nice(),     p.priority()};
}

}  // namespace

void toProto(const PendingJob& job, v1alpha1::PendingJob& out) {
  out.set_job_id(job.jobId);
  out.set_namespace_(job.namespaceName);
  out.set_name(job.name);
  out.set_partition(job.partition);
  out.set_user(job.user);
  out.set_account(job.account);
  out.set_qos(job.qos);
  out.set_reason(job.reason);
  toProto(job.priority, *out.mutable_priority());
  for (const PartitionPriority& each : job.partitionPriorities) {
    v1alpha1::PartitionPriority& row = *out.add_partition_priorities();
    row.set_partition(each.partition);
    toProto(each.priority, *row.mutable_priority());
  }
  out.set_estimated_start(job.estimatedStart);
  out.set_estimated_nodes(job.estimatedNodes);
  out.set_array_job_id(job.arrayJobId);
  out.set_array_task_id(job.arrayTaskId);
}

PendingJob fromProto(const v1alpha1::PendingJob& job) {
  PendingJob out;
  out.jobId = job.job_id();
  out.namespaceName = job.namespace_();
  out.name = job.name();
  out.partition = job.partition();
  out.user = job.user();
  out.account = job.account();
  out.qos = job.qos();
  out.reason = job.reason();
  out.priority = fromProto(job.priority());
  for (const v1alpha1::PartitionPriority& row : job.partition_priorities()) {
    out.partitionPriorities.push_back({row.partition(), fromProto(row.priority())});
  }
  out.estimatedStart = job.estimated_start();
  out.estimatedNodes = job.estimated_nodes();
  out.arrayJobId = job.array_job_id();
  out.arrayTaskId = job.array_task_id();
  return out;
}

void toProto(const PriorityWeights& weights, v1alpha1::PriorityWeights& out) {
  out.set_age(weights.age);
  out.set_fairshare(weights.fairshare);
  out.set_job_size(weights.jobSize);
  out.set_partition(weights.partition);
  out.set_qos(weights.qos);
  out.set_tres(weights.tres);
}

PriorityWeights fromProto(const v1alpha1::PriorityWeights& weights) {
  return {weights.age(),       weights.fairshare(), weights.job_size(),
          weights.partition(), weights.qos(),       weights.tres()};
}

void toProto(const FairShareRow& row, v1alpha1::FairShareRow& out) {
  out.set_account(row.account);
  out.set_user(row.user);
  out.set_parent(row.parent);
  out.set_depth(row.depth);
  out.set_raw_shares(row.rawShares);
  out.set_norm_shares(row.normShares);
  out.set_raw_usage(row.rawUsage);
  out.set_effective_usage(row.effectiveUsage);
  out.set_fair_share(row.fairShare);
}

FairShareRow fromProto(const v1alpha1::FairShareRow& row) {
  return {row.account(),    row.user(),        row.parent(),    row.depth(),
          row.raw_shares(), row.norm_shares(), row.raw_usage(), row.effective_usage(),
          row.fair_share()};
}

void toProto(const Statistics& s, std::int64_t planTime, v1alpha1::GetStatisticsResponse& out) {
  out.set_plan_time(planTime);
  out.set_server_start(s.serverStart);
  out.set_cycles(s.cycles);
  out.set_last_cycle_seconds(s.lastCycleSeconds);
  out.set_mean_cycle_seconds(s.meanCycleSeconds);
  out.set_max_cycle_seconds(s.maxCycleSeconds);
  out.set_jobs_considered(s.jobsConsidered);
  out.set_jobs_started(s.jobsStarted);
  out.set_jobs_backfilled(s.jobsBackfilled);
  out.set_backfill_depth(s.backfillDepth);
  out.set_total_jobs_started(s.totalJobsStarted);
  out.set_total_jobs_backfilled(s.totalJobsBackfilled);
  for (const auto& [state, count] : s.jobsByState) (*out.mutable_jobs_by_state())[state] = count;
}

Statistics fromProto(const v1alpha1::GetStatisticsResponse& r) {
  Statistics s;
  s.serverStart = r.server_start();
  s.cycles = r.cycles();
  s.lastCycleSeconds = r.last_cycle_seconds();
  s.meanCycleSeconds = r.mean_cycle_seconds();
  s.maxCycleSeconds = r.max_cycle_seconds();
  s.jobsConsidered = r.jobs_considered();
  s.jobsStarted = r.jobs_started();
  s.jobsBackfilled = r.jobs_backfilled();
  s.backfillDepth = r.backfill_depth();
  s.totalJobsStarted = r.total_jobs_started();
  s.totalJobsBackfilled = r.total_jobs_backfilled();
  for (const auto& [state, count] : r.jobs_by_state()) s.jobsByState[state] = count;
  return s;
}

// Both follow the canonical codes (google.rpc.Code): the same names with the same numbers.
static_assert(static_cast<int>(StatusCode::kUnauthenticated) ==
              static_cast<int>(grpc::StatusCode::UNAUTHENTICATED));
static_assert(static_cast<int>(StatusCode::kResourceExhausted) ==
              static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED));
static_assert(static_cast<int>(StatusCode::kDataLoss) ==
              static_cast<int>(grpc::StatusCode::DATA_LOSS));

namespace {

// proto3 `optional int64` fields and std::optional: set when present, read when set.
template <typename Set>
void setIf(const std::optional<std::int64_t>& value, Set set) {
  if (value) set(*value);
}
std::optional<std::int64_t> optionalOf(bool has, std::int64_t value) {
  return has ? std::optional<std::int64_t>(value) : std::nullopt;
}

}  // namespace

void toProto(const accounting::JobRecord& r, v1alpha1::JobRecord& out) {
  out.set_cluster(r.cluster);
  out.set_job_id(r.jobId);
  out.set_attempt(r.attempt);
  setIf(r.arrayJobId, [&](std::int64_t v) { out.set_array_job_id(v); });
  setIf(r.arrayTaskId, [&](std::int64_t v) { out.set_array_task_id(v); });
  out.set_array_tasks(r.arrayTasks);
  out.set_name(r.name);
  out.set_user(r.user);
  out.set_namespace_(r.namespaceName);
  out.set_account(r.account);
  out.set_partition(r.partition);
  out.set_qos(r.qos);
  setIf(r.submitTime, [&](std::int64_t v) { out.set_submit_time(v); });
  setIf(r.eligibleTime, [&](std::int64_t v) { out.set_eligible_time(v); });
  setIf(r.startTime, [&](std::int64_t v) { out.set_start_time(v); });
  setIf(r.endTime, [&](std::int64_t v) { out.set_end_time(v); });
  out.set_state(r.state);
  out.set_exit_code(r.exitCode);
  out.set_reason(r.reason);
  setIf(r.priority, [&](std::int64_t v) { out.set_priority(v); });
  setIf(r.timeLimitMinutes, [&](std::int64_t v) { out.set_time_limit_minutes(v); });
  out.set_work_dir(r.workDir);
  out.set_req_tres(r.reqTres);
  out.set_alloc_tres(r.allocTres);
  out.set_gpu_type(r.gpuType);
  out.set_req_nodes(r.reqNodes);
  out.set_interactive(r.interactive);
  out.set_nodes(r.nodes);
  out.set_cpus(r.cpus);
  out.set_gpus(r.gpus);
  out.set_node_list(r.nodeList);
  for (const accounting::StepRecord& s : r.steps) {
    v1alpha1::StepRecord& step = *out.add_steps();
    step.set_step_id(s.stepId);
    step.set_name(s.name);
    setIf(s.startTime, [&](std::int64_t v) { step.set_start_time(v); });
    setIf(s.endTime, [&](std::int64_t v) { step.set_end_time(v); });
    step.set_state(s.state);
    step.set_exit_code(s.exitCode);
    step.set_tasks(s.tasks);
    step.set_cpus(s.cpus);
    step.set_nodes(s.nodes);
    step.set_node_list(s.nodeList);
  }
}

accounting::JobRecord fromProto(const v1alpha1::JobRecord& in) {
  accounting::JobRecord r;
  r.cluster = in.cluster();
  r.jobId = in.job_id();
  r.attempt = in.attempt();
  r.arrayJobId = optionalOf(in.has_array_job_id(), in.array_job_id());
  r.arrayTaskId = optionalOf(in.has_array_task_id(), in.array_task_id());
  r.arrayTasks = in.array_tasks();
  r.name = in.name();
  r.user = in.user();
  r.namespaceName = in.namespace_();
  r.account = in.account();
  r.partition = in.partition();
  r.qos = in.qos();
  r.submitTime = optionalOf(in.has_submit_time(), in.submit_time());
  r.eligibleTime = optionalOf(in.has_eligible_time(), in.eligible_time());
  r.startTime = optionalOf(in.has_start_time(), in.start_time());
  r.endTime = optionalOf(in.has_end_time(), in.end_time());
  r.state = in.state();
  r.exitCode = in.exit_code();
  r.reason = in.reason();
  r.priority = optionalOf(in.has_priority(), in.priority());
  r.timeLimitMinutes = optionalOf(in.has_time_limit_minutes(), in.time_limit_minutes());
  r.workDir = in.work_dir();
  r.reqTres = in.req_tres();
  r.allocTres = in.alloc_tres();
  r.gpuType = in.gpu_type();
  r.reqNodes = in.req_nodes();
  r.interactive = in.interactive();
  r.nodes = in.nodes();
  r.cpus = in.cpus();
  r.gpus = in.gpus();
  r.nodeList = in.node_list();
  for (const v1alpha1::StepRecord& step : in.steps()) {
    accounting::StepRecord s;
    s.stepId = step.step_id();
    s.name = step.name();
    s.startTime = optionalOf(step.has_start_time(), step.start_time());
    s.endTime = optionalOf(step.has_end_time(), step.end_time());
    s.state = step.state();
    s.exitCode = step.exit_code();
    s.tasks = step.tasks();
    s.cpus = step.cpus();
    s.nodes = step.nodes();
    s.nodeList = step.node_list();
    r.steps.push_back(std::move(s));
  }
  return r;
}

grpc::Status toGrpc(const Status& status) {
  if (status.isOk()) return grpc::Status::OK;
  return {static_cast<grpc::StatusCode>(status.code()), status.message()};
}

Status fromGrpc(const grpc::Status& status) {
  if (status.ok()) return Status::ok();
  const int code = status.error_code();
  if (code < 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
    return {StatusCode::kUnknown, status.error_message()};
  }
  return {static_cast<StatusCode>(code), status.error_message()};
}

}  // namespace kubeslurm::rpc

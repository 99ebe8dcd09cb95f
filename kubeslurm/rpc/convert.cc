#include "kubeslurm/rpc/convert.h"

#include <grpcpp/support/status.h>

namespace kubeslurm::rpc {

void toProto(const PendingJob& job, v1alpha1::PendingJob& out) {
  out.set_job_id(job.jobId);
  out.set_namespace_(job.namespaceName);
  out.set_name(job.name);
  out.set_partition(job.partition);
  out.set_user(job.user);
  out.set_account(job.account);
  out.set_qos(job.qos);
  out.set_reason(job.reason);
  v1alpha1::PriorityFactors& p = *out.mutable_priority();
  p.set_age(job.priority.age);
  p.set_fairshare(job.priority.fairshare);
  p.set_job_size(job.priority.jobSize);
  p.set_partition(job.priority.partition);
  p.set_qos(job.priority.qos);
  p.set_tres_gpu(job.priority.tresGpu);
  p.set_nice(job.priority.nice);
  p.set_priority(job.priority.priority);
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
  const v1alpha1::PriorityFactors& p = job.priority();
  out.priority = {p.age(), p.fairshare(), p.job_size(), p.partition(),
                  p.qos(), p.tres_gpu(),  p.nice(),     p.priority()};
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

#include "operator/rpc/convert.h"

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

grpc::Status toGrpc(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kUnauthenticated:
      code = grpc::StatusCode::UNAUTHENTICATED;
      break;
    case StatusCode::kPermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case StatusCode::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case StatusCode::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case StatusCode::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case StatusCode::kDeadlineExceeded:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
    case StatusCode::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
    default:
      break;
  }
  return {code, status.message()};
}

Status fromGrpc(const grpc::Status& status) {
  StatusCode code = StatusCode::kUnknown;
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return Status::ok();
    case grpc::StatusCode::UNAUTHENTICATED:
      code = StatusCode::kUnauthenticated;
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
      code = StatusCode::kPermissionDenied;
      break;
    case grpc::StatusCode::UNAVAILABLE:
      code = StatusCode::kUnavailable;
      break;
    case grpc::StatusCode::INVALID_ARGUMENT:
      code = StatusCode::kInvalidArgument;
      break;
    case grpc::StatusCode::NOT_FOUND:
      code = StatusCode::kNotFound;
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      code = StatusCode::kDeadlineExceeded;
      break;
    case grpc::StatusCode::INTERNAL:
      code = StatusCode::kInternal;
      break;
    default:
      break;
  }
  return {code, status.error_message()};
}

}  // namespace kubeslurm::rpc

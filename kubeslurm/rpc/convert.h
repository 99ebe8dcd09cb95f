// QueryState values to scheduler.proto messages and back; private to kubeslurm/rpc.
#pragma once

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/rpc/query_state.h"
#include "kubeslurm/rpc/scheduler.pb.h"

namespace grpc {
class Status;
}

namespace kubeslurm::rpc {

void toProto(const PendingJob& job, v1alpha1::PendingJob& out);
PendingJob fromProto(const v1alpha1::PendingJob& job);
void toProto(const PriorityWeights& weights, v1alpha1::PriorityWeights& out);
PriorityWeights fromProto(const v1alpha1::PriorityWeights& weights);
void toProto(const FairShareRow& row, v1alpha1::FairShareRow& out);
FairShareRow fromProto(const v1alpha1::FairShareRow& row);
void toProto(const Statistics& statistics, std::int64_t planTime,
             v1alpha1::GetStatisticsResponse& out);
Statistics fromProto(const v1alpha1::GetStatisticsResponse& response);
void toProto(const accounting::JobRecord& r, v1alpha1::JobRecord& out);
accounting::JobRecord fromProto(const v1alpha1::JobRecord& in);

grpc::Status toGrpc(const Status& status);
Status fromGrpc(const grpc::Status& status);

}  // namespace kubeslurm::rpc

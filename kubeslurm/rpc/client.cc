#include "kubeslurm/rpc/client.h"

#include <grpcpp/grpcpp.h>

#include "kubeslurm/rpc/convert.h"
#include "kubeslurm/rpc/scheduler.grpc.pb.h"

namespace kubeslurm::rpc {

std::shared_ptr<grpc::Channel> openOperatorChannel(const ClientOptions& options,
                                                   bool ownConnection) {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = options.caPem;
  grpc::ChannelArguments arguments;
  if (ownConnection) arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (!options.serverNameOverride.empty()) {
    arguments.SetSslTargetNameOverride(options.serverNameOverride);
  }
  return grpc::CreateCustomChannel(options.address, grpc::SslCredentials(tls), arguments);
}

namespace {

class GrpcQueryClient final : public QueryClient {
 public:
  explicit GrpcQueryClient(const ClientOptions& options) : options_(options) {
    channel_ = openOperatorChannel(options);
    stub_ = v1alpha1::Scheduler::NewStub(channel_);
  }

  StatusOr<PendingJobsAnswer> listPendingJobs(const std::string& namespaceName) override {
    v1alpha1::ListPendingJobsRequest request;
    request.set_namespace_(namespaceName);
    v1alpha1::ListPendingJobsResponse response;
    grpc::ClientContext context;
    prepare(context);
    if (Status s = fromGrpc(stub_->ListPendingJobs(&context, request, &response)); !s.isOk()) {
      return s;
    }
    PendingJobsAnswer answer;
    answer.planTime = response.plan_time();
    answer.weights = fromProto(response.weights());
    for (const auto& job : response.jobs()) answer.jobs.push_back(fromProto(job));
    return answer;
  }

  StatusOr<FairShareAnswer> fairShare() override {
    v1alpha1::GetFairShareResponse response;
    grpc::ClientContext context;
    prepare(context);
    if (Status s = fromGrpc(stub_->GetFairShare(&context, {}, &response)); !s.isOk()) return s;
    FairShareAnswer answer;
    answer.planTime = response.plan_time();
    answer.fairTree = response.fair_tree();
    for (const auto& row : response.rows()) answer.rows.push_back(fromProto(row));
    return answer;
  }

  StatusOr<StatisticsAnswer> statistics() override {
    v1alpha1::GetStatisticsResponse response;
    grpc::ClientContext context;
    prepare(context);
    if (Status s = fromGrpc(stub_->GetStatistics(&context, {}, &response)); !s.isOk()) return s;
    return StatisticsAnswer{response.plan_time(), fromProto(response)};
  }

  StatusOr<TestOnlyAnswer> testOnly(const std::string& namespaceName,
                                    const std::string& slurmJobJson) override {
    v1alpha1::TestOnlyRequest request;
    request.set_namespace_(namespaceName);
    request.set_slurm_job_json(slurmJobJson);
    v1alpha1::TestOnlyResponse response;
    grpc::ClientContext context;
    prepare(context);
    if (Status s = fromGrpc(stub_->TestOnly(&context, request, &response)); !s.isOk()) return s;
    return TestOnlyAnswer{response.job_id(), response.start_time(), response.processors(),
                          response.nodes(), response.partition()};
  }

  StatusOr<std::vector<accounting::JobRecord>> listJobRecords(
      const JobRecordQuery& query) override {
    v1alpha1::ListJobRecordsRequest request;
    request.set_namespace_(query.namespaceName);
    if (query.from) request.set_from(*query.from);
    for (const std::string& user : query.users) request.add_users(user);
    for (std::int64_t id : query.jobIds) request.add_job_ids(id);
    request.set_page_size(query.pageSize);
    std::vector<accounting::JobRecord> records;
    while (true) {
      v1alpha1::ListJobRecordsResponse response;
      grpc::ClientContext context;
      prepare(context);
      if (Status s = fromGrpc(stub_->ListJobRecords(&context, request, &response)); !s.isOk()) {
        return s;
      }
      for (const auto& record : response.records()) records.push_back(fromProto(record));
      if (!response.more() || response.records().empty()) return records;
      request.set_after_job_id(records.back().jobId);
      request.set_after_attempt(records.back().attempt);
    }
  }

 private:
  void prepare(grpc::ClientContext& context) const {
    context.set_deadline(std::chrono::system_clock::now() + options_.timeout);
    if (!options_.bearerToken.empty()) {
      context.AddMetadata("authorization", "Bearer " + options_.bearerToken);
    }
  }

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1alpha1::Scheduler::Stub> stub_;
};

}  // namespace

std::unique_ptr<QueryClient> connectQueryClient(const ClientOptions& options) {
  return std::make_unique<GrpcQueryClient>(options);
}

}  // namespace kubeslurm::rpc

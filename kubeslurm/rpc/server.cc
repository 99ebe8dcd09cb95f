#include "kubeslurm/rpc/server.h"

#include <mutex>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "kubeslurm/rpc/convert.h"
#include "kubeslurm/rpc/scheduler.grpc.pb.h"

namespace kubeslurm::rpc {

using access::Authorizer;
using access::Identity;
using access::Permission;
namespace {

constexpr std::string_view kBearer = "Bearer ";

// The permission each call needs: what the same user would need to read the underlying objects
// with kubectl, so RBAC written for kubectl governs the query API too.
Permission jobsPermission(const std::string& namespaceName) {
  return {"list", "kubeslurm.io", "slurmjobs", namespaceName};
}
Permission accountsPermission() { return {"list", "kubeslurm.io", "accounts", ""}; }
// A what-if submission needs what the submission itself would.
Permission submitPermission(const std::string& namespaceName) {
  return {"create", "kubeslurm.io", "slurmjobs", namespaceName};
}

class SchedulerService final : public v1alpha1::Scheduler::Service {
 public:
  SchedulerService(StateSource state, TestOnlyHandler testOnly, Authorizer& authorizer)
      : state_(std::move(state)), testOnly_(std::move(testOnly)), authorizer_(authorizer) {}

  grpc::Status ListPendingJobs(grpc::ServerContext* context,
                               const v1alpha1::ListPendingJobsRequest* request,
                               v1alpha1::ListPendingJobsResponse* response) override {
    auto state = admit(*context, jobsPermission(request->namespace_()));
    if (!state.isOk()) return toGrpc(state.status());
    response->set_plan_time((*state)->planTime);
    toProto((*state)->weights, *response->mutable_weights());
    for (const PendingJob& job : (*state)->pending) {
      if (!request->namespace_().empty() && job.namespaceName != request->namespace_()) continue;
      toProto(job, *response->add_jobs());
    }
    return grpc::Status::OK;
  }

  grpc::Status GetFairShare(grpc::ServerContext* context, const v1alpha1::GetFairShareRequest*,
                            v1alpha1::GetFairShareResponse* response) override {
    auto state = admit(*context, accountsPermission());
    if (!state.isOk()) return toGrpc(state.status());
    response->set_plan_time((*state)->planTime);
    response->set_fair_tree((*state)->fairTree);
    for (const FairShareRow& row : (*state)->fairShare) toProto(row, *response->add_rows());
    return grpc::Status::OK;
  }

  grpc::Status GetStatistics(grpc::ServerContext* context, const v1alpha1::GetStatisticsRequest*,
                             v1alpha1::GetStatisticsResponse* response) override {
    auto state = admit(*context, accountsPermission());
    if (!state.isOk()) return toGrpc(state.status());
    toProto((*state)->statistics, (*state)->planTime, *response);
    return grpc::Status::OK;
  }

  grpc::Status TestOnly(grpc::ServerContext* context, const v1alpha1::TestOnlyRequest* request,
                        v1alpha1::TestOnlyResponse* response) override {
    if (request->namespace_().empty()) {
      return toGrpc(invalidArgument("a namespace is required"));
    }
    auto state = admit(*context, submitPermission(request->namespace_()));
    if (!state.isOk()) return toGrpc(state.status());
    auto answer = testOnly_(request->namespace_(), request->slurm_job_json());
    if (!answer.isOk()) return toGrpc(answer.status());
    response->set_job_id(answer->jobId);
    response->set_start_time(answer->startTime);
    response->set_processors(answer->processors);
    response->set_nodes(answer->nodes);
    response->set_partition(answer->partition);
    return grpc::Status::OK;
  }

 private:
  // Authentication, then authorization, then the state: a caller without rights learns nothing,
  // not even whether this replica leads.
  StatusOr<std::shared_ptr<const QueryState>> admit(const grpc::ServerContext& context,
                                                    const Permission& permission) {
    std::string token;
    const auto& metadata = context.client_metadata();
    if (auto it = metadata.find("authorization"); it != metadata.end()) {
      const std::string_view value(it->second.data(), it->second.size());
      if (value.starts_with(kBearer)) token = std::string(value.substr(kBearer.size()));
    }
    if (token.empty()) {
      return Status(StatusCode::kUnauthenticated,
                    "a Kubernetes bearer token is required (authorization: Bearer TOKEN)");
    }
    auto caller = authorizer_.authenticate(token);
    if (!caller.isOk()) return caller.status();
    if (Status allowed = authorizer_.authorize(*caller, permission); !allowed.isOk()) {
      return allowed;
    }
    std::shared_ptr<const QueryState> state = state_();
    if (!state || state->planTime == 0) {
      return Status(StatusCode::kUnavailable,
                    "this operator replica has no scheduler state (not the leader, or no "
                    "cycle has run yet)");
    }
    return state;
  }

  StateSource state_;
  TestOnlyHandler testOnly_;
  Authorizer& authorizer_;
};

class GrpcQueryServer final : public QueryServer {
 public:
  GrpcQueryServer(std::unique_ptr<SchedulerService> service, std::unique_ptr<grpc::Server> server,
                  int port)
      : service_(std::move(service)), server_(std::move(server)), port_(port) {}
  ~GrpcQueryServer() override { stop(); }
  GrpcQueryServer(const GrpcQueryServer&) = delete;
  GrpcQueryServer& operator=(const GrpcQueryServer&) = delete;

  int port() const override { return port_; }
  void stop() override {
    const std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    // Calls in flight get a second to finish; they only read an immutable state.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
  }

 private:
  std::unique_ptr<SchedulerService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::mutex mutex_;
  bool stopped_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<QueryServer>> startQueryServer(const ServerOptions& options,
                                                        StateSource state, TestOnlyHandler testOnly,
                                                        access::Authorizer& authorizer) {
  if (options.certificatePem.empty() || options.privateKeyPem.empty()) {
    return invalidArgument("the query API serves TLS only: a certificate and key are required");
  }
  grpc::SslServerCredentialsOptions tls;
  tls.pem_key_cert_pairs.push_back({options.privateKeyPem, options.certificatePem});
  auto service =
      std::make_unique<SchedulerService>(std::move(state), std::move(testOnly), authorizer);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.address, grpc::SslServerCredentials(tls), &port);
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    return invalidArgument("cannot serve gRPC on " + options.address +
                           " (address in use, or the certificate or key is unusable)");
  }
  return std::unique_ptr<QueryServer>(
      std::make_unique<GrpcQueryServer>(std::move(service), std::move(server), port));
}

}  // namespace kubeslurm::rpc

#include "kubeslurm/rpc/step_proxy.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/rpc/convert.h"
#include "kubeslurm/step/step.grpc.pb.h"

namespace kubeslurm::rpc {

namespace v1 = kubeslurm::step::v1;

namespace {

bool dnsName(std::string_view name, std::size_t maxLength, bool dots) {
  if (name.empty() || name.size() > maxLength) return false;
  const auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) return false;
  return std::ranges::all_of(
      name, [&](char c) { return alphanumeric(c) || c == '-' || (dots && c == '.'); });
}

}  // namespace

StatusOr<StepCall> parseStepCall(std::string_view job, std::string_view rank) {
  const std::size_t slash = job.find('/');
  StepCall call;
  if (slash == std::string_view::npos || !dnsName(job.substr(0, slash), 63, false) ||
      !dnsName(job.substr(slash + 1), 253, true)) {
    return invalidArgument(std::string(kStepJobMetadata) + ": <namespace>/<job> is required");
  }
  call.namespaceName = std::string(job.substr(0, slash));
  call.jobName = std::string(job.substr(slash + 1));
  if (!rank.empty()) {
    const auto parsed = parseInteger<std::uint32_t>(rank);
    if (!parsed) {
      return invalidArgument(std::string(kStepRankMetadata) +
                             ": not a rank: " + std::string(rank.substr(0, 32)));
    }
    call.rank = *parsed;
  }
  return call;
}

access::Permission attachPermission(const std::string& namespaceName) {
  return {"attach", "kubeslurm.io", "slurmjobs", namespaceName};
}

namespace {

std::string metadataValue(const grpc::ServerContext& context, std::string_view key) {
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (found == metadata.end()) return {};
  return {found->second.data(), found->second.size()};
}

// One caller's calls in flight, counted for as long as each lives: a Launch for its step, a
// unary call while it waits for the agent (up to the unary timeout).
class CallCount {
 public:
  CallCount(std::mutex& mutex, std::map<std::string, int>& counts, std::string caller, int limit)
      : mutex_(mutex), counts_(counts), caller_(std::move(caller)) {
    const std::lock_guard lock(mutex_);
    int& count = counts_[caller_];
    taken_ = count < limit;
    if (taken_) ++count;
  }
  ~CallCount() {
    const std::lock_guard lock(mutex_);
    if (!taken_) return;
    if (--counts_[caller_] <= 0) counts_.erase(caller_);
  }
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;
  bool taken() const { return taken_; }

 private:
  std::mutex& mutex_;
  std::map<std::string, int>& counts_;
  std::string caller_;
  bool taken_ = false;
};

// Cancels the agent's stream once the caller's is gone. A blocking Read from the agent does not
// see the caller leave while the tasks are silent, so this watches beside it.
class CancelWhenCallerLeaves {
 public:
  CancelWhenCallerLeaves(grpc::ServerContext& caller, grpc::ClientContext& agent)
      : thread_([this, &caller, &agent] {
          std::unique_lock lock(mutex_);
          while (!done_) {
            if (caller.IsCancelled()) {
              agent.TryCancel();
              return;
            }
            wake_.wait_for(lock, std::chrono::milliseconds(100));
          }
        }) {}
  ~CancelWhenCallerLeaves() {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  CancelWhenCallerLeaves(const CancelWhenCallerLeaves&) = delete;
  CancelWhenCallerLeaves& operator=(const CancelWhenCallerLeaves&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Carries a Launch's (or an Attach's) later messages from the caller to the agent on a thread of
// its own, until the caller half-closes. Once the agent has ended the stream, srun (or sattach)
// half-closes when it has read the tasks' ends; a caller that does not within a few seconds has
// its call cancelled, so no thread waits on it for ever.
template <typename Request>
class ForwardInput {
 public:
  ForwardInput(grpc::ServerReaderWriter<v1::TaskEvent, Request>& caller,
               grpc::ClientReaderWriter<Request, v1::TaskEvent>& agent, bool agentOpen)
      : thread_([this, &caller, &agent, agentOpen] {
          bool open = agentOpen;
          Request message;
          while (caller.Read(&message)) {
            if (open) open = agent.Write(message);
          }
          if (open) (void)agent.WritesDone();
          const std::lock_guard lock(mutex_);
          done_ = true;
          ended_.notify_all();
        }) {}
  ~ForwardInput() {
    if (thread_.joinable()) thread_.join();
  }
  ForwardInput(const ForwardInput&) = delete;
  ForwardInput& operator=(const ForwardInput&) = delete;

  void finish(grpc::ServerContext& context) {
    {
      std::unique_lock lock(mutex_);
      if (!ended_.wait_for(lock, std::chrono::seconds(5), [this] { return done_; })) {
        context.TryCancel();
      }
    }
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  std::thread thread_;
};

class StepProxyService final : public v1::StepAgent::Service {
 public:
  StepProxyService(StepRouter router, CallerAuthentication authenticate,
                   access::Authorizer& authorizer, StepProxyOptions options)
      : router_(std::move(router)),
        authenticate_(std::move(authenticate)),
        authorizer_(authorizer),
        options_(options) {}

  grpc::Status Launch(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::TaskEvent, v1::LaunchRequest>* caller) override {
    return forwardStream(
        *context, *caller,
        [](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
          return stub.Launch(&upstream);
        },
        "a step needs a command", "srun went away; the tasks were killed");
  }

  grpc::Status Attach(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::TaskEvent, v1::AttachRequest>* caller) override {
    return forwardStream(
        *context, *caller,
        [](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
          return stub.Attach(&upstream);
        },
        "an attach names a step", "sattach went away");
  }

  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::SignalReply* reply) override {
    return unary(*context, [&](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
      return stub.Signal(&upstream, *request, reply);
    });
  }

  grpc::Status NextStepId(grpc::ServerContext* context, const v1::NextStepIdRequest* request,
                          v1::NextStepIdReply* reply) override {
    return unary(*context, [&](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
      return stub.NextStepId(&upstream, *request, reply);
    });
  }

  grpc::Status RecordStep(grpc::ServerContext* context, const v1::StepRecord* request,
                          v1::RecordStepReply* reply) override {
    return unary(*context, [&](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
      return stub.RecordStep(&upstream, *request, reply);
    });
  }

  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* reply) override {
    return unary(*context, [&](v1::StepAgent::Stub& stub, grpc::ClientContext& upstream) {
      return stub.Release(&upstream, *request, reply);
    });
  }

 private:
  struct Routed {
    std::string caller;  // the authenticated user name
    StepTarget target;
  };

  // A stream call (Launch: srun; Attach: sattach) forwarded to the rank it names: the caller's
  // first message opens the agent's stream (`open`), its later ones (stdin, window sizes) and its
  // half-close go on to the agent as they come, and the agent's events come back. Flow control
  // holds both sides back, not a buffer. `noFirstMessage` and `callerGone` are the call's
  // refusal when the caller sent nothing, and its status when the caller went away.
  template <typename Request, typename Open>
  grpc::Status forwardStream(grpc::ServerContext& context,
                             grpc::ServerReaderWriter<v1::TaskEvent, Request>& caller, Open open,
                             std::string_view noFirstMessage, std::string_view callerGone) {
    auto routed = route(context);
    if (!routed.isOk()) return toGrpc(routed.status());
    const CallCount counted = count(routed->caller);
    if (!counted.taken()) return tooManyCalls();
    Request request;
    if (!caller.Read(&request)) {
      return {grpc::StatusCode::INVALID_ARGUMENT, std::string(noFirstMessage)};
    }
    const std::shared_ptr<grpc::Channel> channel = agentChannel(context, routed->target.address);
    if (!channel) return {grpc::StatusCode::UNAVAILABLE, "Communication connection failure"};
    grpc::ClientContext upstream;
    prepare(upstream, context, routed->target.token, std::nullopt);
    auto stub = v1::StepAgent::NewStub(channel);
    auto agent = open(*stub, upstream);
    ForwardInput input(caller, *agent, agent->Write(request));
    relayEvents(*agent, caller, context, upstream);
    input.finish(context);
    grpc::Status status = agent->Finish();
    if (context.IsCancelled()) return {grpc::StatusCode::CANCELLED, std::string(callerGone)};
    return status;
  }

  // Authentication, the job and rank the call names, then whether this caller may run steps
  // there: a caller who may not learns nothing of the job, not even whether it exists.
  StatusOr<Routed> route(const grpc::ServerContext& context) {
    auto caller = authenticate_(context);
    if (!caller.isOk()) return caller.status();
    auto call = parseStepCall(metadataValue(context, kStepJobMetadata),
                              metadataValue(context, kStepRankMetadata));
    if (!call.isOk()) return call.status();
    const std::string& namespaceName = call->namespaceName;
    auto target = router_(namespaceName, call->jobName, call->rank);
    const bool owner =
        target.isOk() && !target->submitter.empty() && target->submitter == caller->user;
    if (!owner) {
      if (Status allowed = authorizer_.authorize(*caller, attachPermission(namespaceName));
          !allowed.isOk()) {
        return Status(StatusCode::kPermissionDenied,
                      "Access/permission denied: only the job's submitter (or RBAC's attach on "
                      "slurmjobs in namespace " +
                          namespaceName + ") may run steps in it");
      }
    }
    if (!target.isOk()) return target.status();
    if (!target->reachable.isOk()) return target->reachable;
    return Routed{caller->user, std::move(target).value()};
  }

  // The rank's agent once it answers. One that does not within the unary timeout fails the call,
  // as srun's own connection to an agent would (a stream itself has no deadline: a step runs as
  // long as it runs). Null then.
  std::shared_ptr<grpc::Channel> agentChannel(const grpc::ServerContext& caller,
                                              const std::string& address) const {
    std::shared_ptr<grpc::Channel> channel = channelTo(address);
    const auto deadline =
        std::min(caller.deadline(), std::chrono::system_clock::now() + options_.unaryTimeout);
    return channel->WaitForConnected(deadline) ? channel : nullptr;
  }

  // The agent's events on to the caller until either side ends; a caller that goes away (its
  // writes fail, or it cancels while the tasks are silent) cancels the agent's stream.
  template <typename AgentStream, typename CallerStream>
  static void relayEvents(AgentStream& agent, CallerStream& caller, grpc::ServerContext& context,
                          grpc::ClientContext& upstream) {
    const CancelWhenCallerLeaves watch(context, upstream);
    v1::TaskEvent event;
    while (agent.Read(&event)) {
      if (!caller.Write(event)) {
        upstream.TryCancel();
        break;
      }
    }
  }

  // The caller's deadline (or `fallback` from now), and the job's token in place of theirs.
  static void prepare(grpc::ClientContext& upstream, const grpc::ServerContext& caller,
                      const std::string& token, std::optional<std::chrono::milliseconds> fallback) {
    upstream.AddMetadata("authorization", "Bearer " + token);
    // A rank whose agent is starting (its pod just began) is waited for, within the deadline.
    upstream.set_wait_for_ready(true);
    auto deadline = caller.deadline();
    if (fallback) deadline = std::min(deadline, std::chrono::system_clock::now() + *fallback);
    if (deadline != std::chrono::system_clock::time_point::max()) upstream.set_deadline(deadline);
  }

  // Each holds one of the query server's threads: one caller may hold only so many.
  CallCount count(const std::string& caller) {
    return {callsMutex_, calls_, caller, options_.maxStreamsPerCaller};
  }
  grpc::Status tooManyCalls() const {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED, "Resource temporarily unavailable: at most " +
                                                      std::to_string(options_.maxStreamsPerCaller) +
                                                      " step calls at once per user"};
  }

  template <typename Call>
  grpc::Status unary(grpc::ServerContext& context, Call&& call) {
    auto routed = route(context);
    if (!routed.isOk()) return toGrpc(routed.status());
    const CallCount counted = count(routed->caller);
    if (!counted.taken()) return tooManyCalls();
    grpc::ClientContext upstream;
    prepare(upstream, context, routed->target.token, options_.unaryTimeout);
    auto stub = v1::StepAgent::NewStub(channelTo(routed->target.address));
    return call(*stub, upstream);
  }

  // A channel per call, closed with it: a pod IP is reused by the next pod (and its job's agent),
  // and a channel kept to the address of an agent that went away reconnects only on its backoff,
  // which had grown past a minute when the next job's step came. Plain HTTP/2 inside the cluster
  // network, as srun inside a job speaks it.
  static std::shared_ptr<grpc::Channel> channelTo(const std::string& address) {
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }

  StepRouter router_;
  CallerAuthentication authenticate_;
  access::Authorizer& authorizer_;
  StepProxyOptions options_;
  std::mutex callsMutex_;
  std::map<std::string, int> calls_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeStepProxyService(StepRouter router,
                                                    CallerAuthentication authenticate,
                                                    access::Authorizer& authorizer,
                                                    StepProxyOptions options) {
  return std::make_unique<StepProxyService>(std::move(router), std::move(authenticate), authorizer,
                                            options);
}

}  // namespace kubeslurm::rpc

// The operator's step proxy: how `srun` and `salloc` on a login host reach the step agents of a
// job's rank pods. A login host is outside the pod network, and the job's step token (which the
// agents ask for) never leaves the cluster; so the operator serves the agents' own service
// (kubeslurm/step/step.proto, StepAgent) on its query API's TLS port and forwards each call to
// the rank it names, with the job's token.
//
// A call carries, besides the caller's Kubernetes bearer token ("authorization: Bearer ..."):
//   kubeslurm-job:  <namespace>/<SlurmJob name>
//   kubeslurm-rank: <rank>            (0 when absent)
// It is let through when the API server authenticates the token and the caller is the job's
// submitter (spec.submitter, which the admission webhook stamps from the authenticated identity;
// never spec.user, which the client writes) or RBAC lets them `attach` slurmjobs in the job's
// namespace (the chart's slurm-admin role: Slurm lets root and SlurmUser run steps in any job).
// Anyone else learns nothing: a job they may not attach to and a job that does not exist get the
// same refusal.
//
// Bounds: a step's output streams hold a server thread each for their life (the query server's
// thread quota), a unary call holds one while the agent answers (an agent that never does: up to
// the unary timeout), and one caller may hold at most `maxStreamsPerCaller` calls at once. Flow
// control is gRPC's: the proxy reads the next event from the agent only once the caller took the
// last one, so a slow terminal slows the tasks' pipes, and no buffer grows; srun's stdin goes the
// other way on a second thread of the call, held back the same way by a task that does not read
// it, and a caller that has not half-closed 5 s after the tasks ended has its call cancelled. A
// caller that goes away cancels the agent's stream, which kills the step after --kill-wait, as
// the agents do for srun inside a job. Besides its server thread, a Launch has two of its own
// (the input and the watch on the caller), so the server's thread quota bounds them too.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kubeslurm/access/access_review.h"
#include "kubeslurm/base/status.h"

namespace grpc {
class ServerContext;
class Service;
}  // namespace grpc

namespace kubeslurm::rpc {

inline constexpr std::string_view kStepJobMetadata = "kubeslurm-job";
inline constexpr std::string_view kStepRankMetadata = "kubeslurm-rank";

// Where one rank of a job serves steps, as the operator's caches know it.
struct StepTarget {
  // The full Kubernetes user name of the job's submitter (spec.submitter); "" when the job has
  // none (made without the admission webhook): then only RBAC's `attach` lets a caller in.
  std::string submitter;
  // Why the rank cannot be reached now (kFailedPrecondition, in Slurm's words: the job does not
  // run, the rank does not exist or has no address yet), told only to a caller let in; when ok,
  // the address and token below.
  Status reachable;
  std::string address;  // "ip:port" of the rank's agent
  std::string token;    // the job's step token
};

// The target of (namespace, job, rank); kNotFound "Invalid job id specified" when there is no
// such job.
using StepRouter = std::function<StatusOr<StepTarget>(
    const std::string& namespaceName, const std::string& jobName, std::uint32_t rank)>;

// Who a call comes from (the query server's peer rate, then TokenReview).
using CallerAuthentication =
    std::function<StatusOr<access::Identity>(const grpc::ServerContext& context)>;

struct StepProxyOptions {
  // Calls in flight per user, a step's output streams (one per rank) and the unary calls beside
  // them: the widest step one user's login host may run, and how many of the query server's
  // threads one user may hold.
  int maxStreamsPerCaller = 128;
  // How long a unary call (step id, signal, record, release) may take at the agent, and how long
  // a launch waits for the agent to answer at all.
  std::chrono::milliseconds unaryTimeout{std::chrono::seconds(30)};
};

// The job and rank a call's metadata names: `job` "<namespace>/<name>" (a DNS label and a DNS
// subdomain, as the API server allows them), `rank` a decimal rank ("" is 0). Error:
// kInvalidArgument, naming the metadata key at fault.
struct StepCall {
  std::string namespaceName;
  std::string jobName;
  std::uint32_t rank = 0;
};
StatusOr<StepCall> parseStepCall(std::string_view job, std::string_view rank);

// The permission that lets a caller run steps in jobs that are not theirs.
access::Permission attachPermission(const std::string& namespaceName);

std::unique_ptr<grpc::Service> makeStepProxyService(StepRouter router,
                                                    CallerAuthentication authenticate,
                                                    access::Authorizer& authorizer,
                                                    StepProxyOptions options = {});

}  // namespace kubeslurm::rpc

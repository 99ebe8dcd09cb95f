#include "kubeslurm/cli/login_steps.h"

#include <iostream>
#include <map>
#include <utility>

#include <grpcpp/grpcpp.h>

#include "kubeslurm/cli/allocation.h"
#include "kubeslurm/inpod/entry.h"
#include "kubeslurm/inpod/srun_options.h"
#include "kubeslurm/rpc/step_proxy.h"
#include "kubeslurm/step/step.grpc.pb.h"

namespace kubeslurm::cli {

namespace {

namespace v1 = kubeslurm::step::v1;

// Every call to the job's ranks goes to the operator's step proxy on one TLS channel, with the
// caller's token and the job and rank it is for.
inpod::StepTransport proxyTransport(const LoginAllocation& allocation) {
  auto channel = rpc::openOperatorChannel(allocation.endpoint);
  const std::string job = allocation.namespaceName + "/" + allocation.jobName;
  const std::string token = allocation.endpoint.bearerToken;
  inpod::StepTransport transport;
  transport.connect = [channel](std::uint32_t /*rank*/) { return channel; };
  transport.authorize = [job, token](grpc::ClientContext& context, std::uint32_t rank) {
    context.AddMetadata("authorization", "Bearer " + token);
    context.AddMetadata(std::string(rpc::kStepJobMetadata), job);
    context.AddMetadata(std::string(rpc::kStepRankMetadata), std::to_string(rank));
  };
  return transport;
}

// Ends the allocation with `exitCode`: rank 0's holder exits with it, and the job with that.
// When rank 0 cannot be told (the operator or the pod is gone), the job is cancelled instead,
// so that no allocation outlives its srun.
void release(const LoginAllocation& allocation, int exitCode, std::string_view program) {
  const inpod::StepTransport transport = proxyTransport(allocation);
  grpc::ClientContext context;
  transport.authorize(context, 0);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::ReleaseRequest request;
  request.set_exit_code(exitCode);
  v1::ReleaseReply reply;
  const grpc::Status released =
      v1::StepAgent::NewStub(transport.connect(0))->Release(&context, request, &reply);
  if (released.ok()) return;
  std::cerr << program << ": error: Unable to release job allocation " << allocation.jobId << ": "
            << released.error_message() << "; cancelling it\n";
  if (Status revoked = revokeAllocation(allocation); !revoked.isOk()) {
    std::cerr << program << ": error: Unable to clean up job allocation " << allocation.jobId
              << ": " << revoked.message() << "\n";
  }
}

}  // namespace

int runLoginSrun(const std::vector<std::string>& args, CliIo& io) {
  // Before any thread: a Ctrl-C while the job waits revokes it, one during the step is srun's.
  inpod::blockSrunSignals();
  std::map<std::string, std::string> environment = inpod::processEnvironment();
  const auto parsed = inpod::parseSrunArguments(args, environment);
  // What srun answers without an allocation (errors, --help, --version) it answers as ever.
  if (!parsed.isOk() || parsed->help || parsed->usage || parsed->version) {
    return inpod::srunMain(args);
  }
  for (const std::string& line : parsed->warnings) io.err << line << "\n";
  AllocationOutcome outcome = allocateInteractive("srun", parsed->options, parsed->command, io,
                                                  inpod::takePendingInterrupt);
  if (!outcome.allocation) return outcome.exitCode;
  const LoginAllocation& allocation = *outcome.allocation;
  for (const auto& [name, value] : allocation.environment) environment[name] = value;
  const int code = inpod::srunThrough(args, std::move(environment), proxyTransport(allocation));
  release(allocation, code, "srun");
  return code;
}

}  // namespace kubeslurm::cli

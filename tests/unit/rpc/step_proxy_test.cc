// The step proxy (kubeslurm/rpc/step_proxy.h) on the query server, over TLS on 127.0.0.1, in
// front of a real step agent (kubeslurm/inpod/agent.h): who may run steps in a job, that a
// refused caller learns nothing of it, that the job's token stays behind the proxy, that a step
// runs and a caller who leaves takes its tasks with it, and what bounds a caller.
#include "kubeslurm/rpc/step_proxy.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/inpod/agent.h"
#include "kubeslurm/rpc/client.h"
#include "kubeslurm/rpc/server.h"
#include "kubeslurm/step/step.grpc.pb.h"
#include "tests/unit/rpc/test_certificate.h"

namespace kubeslurm::rpc {
namespace {

namespace fs = std::filesystem;
namespace v1 = kubeslurm::step::v1;
using access::Identity;
using access::Permission;
using namespace std::chrono_literals;

constexpr std::string_view kJobToken = "the-jobs-own-step-token";

// Three users: Alice submitted the job, Bob is another tenant, and the admin holds RBAC's
// `attach` on slurmjobs (the chart's slurm-admin role).
class Tenants final : public access::Authorizer {
 public:
  StatusOr<Identity> authenticate(const std::string& token) override {
    if (token == "alice-token") return Identity{"oidc:alice", "u-1", {}, {}};
    if (token == "bob-token") return Identity{"oidc:bob", "u-2", {}, {}};
    if (token == "admin-token") return Identity{"oidc:admin", "u-3", {"slurm-admins"}, {}};
    return Status(StatusCode::kUnauthenticated, "invalid token");
  }
  Status authorize(const Identity& caller, const Permission& permission) override {
    if (caller.user == "oidc:admin" && permission.verb == "attach" &&
        permission.resource == "slurmjobs") {
      return Status::ok();
    }
    return {StatusCode::kPermissionDenied, caller.user + " may not " + permission.verb};
  }
};

class StepProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tls_.make("kubeslurm-step-proxy-"); }
  static void TearDownTestSuite() { tls_.remove(); }

  void TearDown() override {
    if (server) server->stop();
    if (agent) agent->stop();
  }

  // The agent of rank 0 of team-a/train; `released` hears a Release when given (an allocation).
  void startAgent(std::function<void(int)> released = {}) {
    auto started =
        inpod::startAgent(inpod::AgentOptions{.listenAddress = "127.0.0.1:0",
                                              .token = std::string(kJobToken),
                                              .killWait = std::chrono::milliseconds(500)},
                          std::move(released));
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    agent = std::move(started).value();
  }

  void startProxy(std::string submitter = "oidc:alice", StepProxyOptions proxy = {}) {
    ServerOptions options;
    options.address = "127.0.0.1:0";
    options.certificatePem = tls_.certificatePem();
    options.privateKeyPem = tls_.privateKeyPem();
    options.stepProxy = proxy;
    const int agentPort = agent->port();
    StepRouter router = [submitter, agentPort](const std::string& ns, const std::string& job,
                                               std::uint32_t rank) -> StatusOr<StepTarget> {
      if (ns != "team-a" || job != "train") return notFound("Invalid job id specified");
      if (rank != 0) {
        return StepTarget{submitter,
                          failedPrecondition("Job 7 has no rank " + std::to_string(rank)), "", ""};
      }
      return StepTarget{submitter, Status::ok(), "127.0.0.1:" + std::to_string(agentPort),
                        std::string(kJobToken)};
    };
    auto state = std::make_shared<QueryState>();
    auto started = startQueryServer(
        options, [state] { return state; },
        [](const Identity&, const std::string&, const nlohmann::json&) {
          return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{});
        },
        tenants, nullptr, std::move(router));
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    server = std::move(started).value();
  }

  std::unique_ptr<v1::StepAgent::Stub> stub() const {
    ClientOptions options;
    options.address = "127.0.0.1:" + std::to_string(server->port());
    options.caPem = tls_.certificatePem();
    options.serverNameOverride = "localhost";
    return v1::StepAgent::NewStub(openOperatorChannel(options));
  }

  static void call(grpc::ClientContext& context, const std::string& token,
                   const std::string& job = "team-a/train", const std::string& rank = "0") {
    context.AddMetadata("authorization", "Bearer " + token);
    if (!job.empty()) context.AddMetadata(std::string(kStepJobMetadata), job);
    if (!rank.empty()) context.AddMetadata(std::string(kStepRankMetadata), rank);
    context.set_deadline(std::chrono::system_clock::now() + 10s);
  }

  grpc::Status nextStepId(const std::string& token, const std::string& job = "team-a/train",
                          std::uint32_t* id = nullptr) const {
    grpc::ClientContext context;
    call(context, token, job);
    v1::NextStepIdReply reply;
    const grpc::Status status = stub()->NextStepId(&context, v1::NextStepIdRequest{}, &reply);
    if (id != nullptr) *id = reply.step_id();
    return status;
  }

  static inline testing::TestCertificate tls_;
  Tenants tenants;
  std::unique_ptr<inpod::Agent> agent;
  std::unique_ptr<QueryServer> server;
};

v1::LaunchRequest launchOf(std::vector<std::string> argv) {
  v1::LaunchRequest request;
  request.set_step_id(0);
  for (const std::string& arg : argv) request.add_argv(arg);
  request.add_tasks()->set_task_id(0);
  (*request.mutable_environment())["PATH"] = "/usr/bin:/bin";
  return request;
}

using LaunchStream = grpc::ClientReaderWriter<v1::LaunchRequest, v1::TaskEvent>;

// The next event of a launch that is not the agent's "started" (`attached`) one.
bool readOutput(LaunchStream& stream, v1::TaskEvent& event) {
  while (stream.Read(&event)) {
    if (!event.has_attached()) return true;
  }
  return false;
}

// A launch as a caller without input makes it: the request, then a half-close.
std::unique_ptr<LaunchStream> launch(v1::StepAgent::Stub& stub, grpc::ClientContext& context,
                                     const v1::LaunchRequest& request) {
  auto stream = stub.Launch(&context);
  if (stream->Write(request)) (void)stream->WritesDone();
  return stream;
}

TEST_F(StepProxyTest, TheSubmitterRunsAStepOnItsJobThroughTheProxy) {
  startAgent();
  startProxy();
  std::uint32_t id = 99;
  ASSERT_TRUE(nextStepId("alice-token", "team-a/train", &id).ok());
  EXPECT_EQ(id, 0U);
  grpc::ClientContext context;
  call(context, "alice-token");
  auto reader = launch(*stub(), context, launchOf({"/bin/echo", "hello from rank 0"}));
  std::string out;
  int exitCode = -1;
  v1::TaskEvent event;
  while (reader->Read(&event)) {
    if (event.has_exit()) exitCode = event.exit().exit_code();
    if (event.event_case() == v1::TaskEvent::kStdout) out += event.stdout();
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(out, "hello from rank 0\n");
  EXPECT_EQ(exitCode, 0);
}

// srun's stdin and --pty's window sizes travel the proxy as later messages of the launch; the
// caller's half-close closes the task's stdin.
TEST_F(StepProxyTest, InputReachesTheTaskThroughTheProxy) {
  startAgent();
  startProxy();
  grpc::ClientContext context;
  call(context, "alice-token");
  v1::LaunchRequest request = launchOf({"/bin/sh", "-c", "cat; echo end"});
  request.mutable_tasks(0)->set_reads_input(true);
  auto stream = stub()->Launch(&context);
  ASSERT_TRUE(stream->Write(request));
  v1::LaunchRequest input;
  input.set_input("typed at the login host\n");
  ASSERT_TRUE(stream->Write(input));
  ASSERT_TRUE(stream->WritesDone());
  std::string out;
  int exitCode = -1;
  v1::TaskEvent event;
  while (stream->Read(&event)) {
    if (event.has_exit()) exitCode = event.exit().exit_code();
    if (event.event_case() == v1::TaskEvent::kStdout) out += event.stdout();
  }
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(out, "typed at the login host\nend\n");
  EXPECT_EQ(exitCode, 0);
}

// sattach's stdin takes the same way to a running step's task, and its end closes the task's.
TEST_F(StepProxyTest, AnAttachersInputReachesTheTaskThroughTheProxy) {
  startAgent();
  startProxy();
  grpc::ClientContext launching;
  call(launching, "alice-token");
  v1::LaunchRequest request = launchOf({"/bin/sh", "-c", "cat; echo end"});
  request.mutable_tasks(0)->set_reads_input(true);
  auto launch = stub()->Launch(&launching);
  ASSERT_TRUE(launch->Write(request));
  v1::TaskEvent event;
  ASSERT_TRUE(launch->Read(&event) && event.has_attached());

  grpc::ClientContext attaching;
  call(attaching, "alice-token");
  auto attach = stub()->Attach(&attaching);
  v1::AttachRequest first;
  first.set_step_id(request.step_id());
  first.set_writes_input(true);
  ASSERT_TRUE(attach->Write(first));
  ASSERT_TRUE(attach->Read(&event) && event.has_attached());
  v1::AttachRequest typed;
  typed.set_input("typed into sattach\n");
  ASSERT_TRUE(attach->Write(typed));
  v1::AttachRequest ended;
  ended.set_input_ended(true);
  ASSERT_TRUE(attach->Write(ended));
  ASSERT_TRUE(attach->WritesDone());

  std::string out;
  while (launch->Read(&event)) {
    if (event.event_case() == v1::TaskEvent::kStdout) out += event.stdout();
    if (event.has_exit()) (void)launch->WritesDone();
  }
  EXPECT_TRUE(launch->Finish().ok());
  EXPECT_EQ(out, "typed into sattach\nend\n");
  while (attach->Read(&event)) {
  }
  EXPECT_TRUE(attach->Finish().ok());
}

// Another tenant is refused whether or not the job exists, with the same words: what a refused
// caller sees says nothing about other tenants' jobs.
TEST_F(StepProxyTest, AnotherTenantIsRefusedAndLearnsNothing) {
  startAgent();
  startProxy();
  const grpc::Status existing = nextStepId("bob-token");
  const grpc::Status missing = nextStepId("bob-token", "team-a/nope");
  EXPECT_EQ(existing.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(existing.error_message(), missing.error_message());
  EXPECT_NE(existing.error_message().find("Access/permission denied"), std::string::npos);
  EXPECT_EQ(nextStepId("forged").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // Who may attach to the namespace's jobs hears, in Slurm's words, that there is no such job.
  const grpc::Status gone = nextStepId("admin-token", "team-a/nope");
  EXPECT_EQ(gone.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(gone.error_message(), "Invalid job id specified");
}

// RBAC's attach lets an administrator in, and is all that lets anyone into a job that has no
// authenticated submitter (made without the admission webhook): spec.user is the client's word.
TEST_F(StepProxyTest, AttachLetsAdministratorsInAndIsNeededWithoutASubmitter) {
  startAgent();
  startProxy(/*submitter=*/"");
  EXPECT_EQ(nextStepId("alice-token").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(nextStepId("admin-token").ok());
}

// The metadata is the caller's to write: a job is a namespace and a name the API server would
// allow, a rank a number.
TEST(StepCall, NamesANamespaceAJobAndARank) {
  const auto call = parseStepCall("team-a/train-x7k2p", "3");
  ASSERT_TRUE(call.isOk());
  EXPECT_EQ(call->namespaceName, "team-a");
  EXPECT_EQ(call->jobName, "train-x7k2p");
  EXPECT_EQ(call->rank, 3U);
  EXPECT_EQ(parseStepCall("team-a/train", "")->rank, 0U);
  for (const char* job : {"", "team-a", "/train", "team-a/", "team-a/../x", "Team-A/train",
                          "team-a/train/0", "team-a/-train"}) {
    EXPECT_EQ(parseStepCall(job, "0").status().code(), StatusCode::kInvalidArgument) << job;
  }
  EXPECT_EQ(parseStepCall(std::string(64, 'a') + "/train", "0").status().code(),
            StatusCode::kInvalidArgument);
  for (const char* rank : {"-1", "x", "4294967296", " 1"}) {
    EXPECT_EQ(parseStepCall("team-a/train", rank).status().code(), StatusCode::kInvalidArgument)
        << rank;
  }
}

TEST_F(StepProxyTest, ACallNamesItsJobAndRank) {
  startAgent();
  startProxy();
  grpc::ClientContext noJob;
  call(noJob, "alice-token", "", "0");
  v1::NextStepIdReply reply;
  EXPECT_EQ(stub()->NextStepId(&noJob, v1::NextStepIdRequest{}, &reply).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext badRank;
  call(badRank, "alice-token", "team-a/train", "-1");
  EXPECT_EQ(stub()->NextStepId(&badRank, v1::NextStepIdRequest{}, &reply).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext noRank;
  call(noRank, "alice-token", "team-a/train", "3");
  EXPECT_EQ(stub()->NextStepId(&noRank, v1::NextStepIdRequest{}, &reply).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// Release reaches an allocation's rank 0 with the exit code; a batch job's rank 0 refuses it.
TEST_F(StepProxyTest, ReleaseEndsAnAllocationAndNothingElse) {
  std::atomic<int> released{-1};
  startAgent([&released](int code) { released = code; });
  startProxy();
  grpc::ClientContext context;
  call(context, "alice-token");
  v1::ReleaseRequest request;
  request.set_exit_code(7);
  v1::ReleaseReply reply;
  ASSERT_TRUE(stub()->Release(&context, request, &reply).ok());
  EXPECT_EQ(released.load(), 7);

  server->stop();
  agent->stop();
  startAgent();
  startProxy();
  grpc::ClientContext batch;
  call(batch, "alice-token");
  EXPECT_EQ(stub()->Release(&batch, request, &reply).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// A login host that goes away (srun killed, laptop closed) takes its step with it: the proxy
// cancels the agent's stream, and the agent kills the tasks after --kill-wait.
TEST_F(StepProxyTest, ACallerWhoLeavesTakesItsTasksWithIt) {
  startAgent();
  startProxy();
  const fs::path pidFile = tls_.dir() / "task.pid";
  fs::remove(pidFile);
  grpc::ClientContext context;
  call(context, "alice-token");
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  auto reader =
      launch(*stub(), context,
             launchOf({"/bin/sh", "-c",
                       "echo $$ > " + pidFile.string() + "; echo started; exec sleep 30"}));
  v1::TaskEvent event;
  ASSERT_TRUE(readOutput(*reader, event));
  ASSERT_EQ(event.stdout(), "started\n");
  const pid_t task = std::stoi(testing::TestCertificate::read(pidFile));
  ASSERT_EQ(::kill(task, 0), 0);
  context.TryCancel();
  (void)reader->Finish();
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(50ms);
    gone = ::kill(task, 0) != 0;
  }
  EXPECT_TRUE(gone) << "the task outlived its caller";
}

// A step wider than the server's 16 streams per connection runs all its ranks at once when each
// rank has a connection of its own (what a login host's srun opens): its output streams last as
// long as the step, so a 17th rank on a shared connection would wait for the step to end.
TEST_F(StepProxyTest, EveryRankOfAWideStepRunsAtOnce) {
  startAgent();
  startProxy();
  constexpr std::size_t kRanks = 20;
  ClientOptions options;
  options.address = "127.0.0.1:" + std::to_string(server->port());
  options.caPem = tls_.certificatePem();
  options.serverNameOverride = "localhost";
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<v1::StepAgent::Stub>> stubs;
  std::vector<std::unique_ptr<LaunchStream>> readers;
  for (std::size_t i = 0; i < kRanks; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    call(*contexts.back(), "alice-token");
    stubs.push_back(v1::StepAgent::NewStub(openOperatorChannel(options, /*ownConnection=*/true)));
    readers.push_back(launch(*stubs.back(), *contexts.back(),
                             launchOf({"/bin/sh", "-c", "echo up; exec sleep 30"})));
  }
  for (std::size_t i = 0; i < kRanks; ++i) {
    v1::TaskEvent event;
    ASSERT_TRUE(readOutput(*readers[i], event)) << "rank " << i << " never started";
    EXPECT_EQ(event.stdout(), "up\n");
  }
  for (std::size_t i = 0; i < kRanks; ++i) {
    contexts[i]->TryCancel();
    (void)readers[i]->Finish();
  }
}

TEST_F(StepProxyTest, OneCallerHoldsABoundedNumberOfStreams) {
  startAgent();
  startProxy("oidc:alice", StepProxyOptions{.maxStreamsPerCaller = 1});
  grpc::ClientContext first;
  call(first, "alice-token");
  auto running = launch(*stub(), first, launchOf({"/bin/sh", "-c", "echo up; exec sleep 30"}));
  v1::TaskEvent event;
  ASSERT_TRUE(readOutput(*running, event));
  grpc::ClientContext second;
  call(second, "alice-token");
  auto refused = launch(*stub(), second, launchOf({"/bin/true"}));
  while (refused->Read(&event)) {
  }
  EXPECT_EQ(refused->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // A unary call holds a server thread too (up to the unary timeout when the agent stalls), so
  // it counts against the same bound: a user cannot pile them up past it.
  EXPECT_EQ(nextStepId("alice-token").error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Another user is not held back by Alice's streams.
  EXPECT_TRUE(nextStepId("admin-token").ok());
  first.TryCancel();
  (void)running->Finish();
}

}  // namespace
}  // namespace kubeslurm::rpc

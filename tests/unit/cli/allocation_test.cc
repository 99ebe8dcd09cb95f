// An interactive allocation from a login host (kubeslurm/cli/allocation.h): the SlurmJob srun
// (or salloc) submits for it, and how they wait for it as Slurm's do (src/api/allocate.c,
// src/srun/libsrun/allocate.c): the messages, --immediate, a Ctrl-C while it waits, a refusal.
#include "kubeslurm/cli/allocation.h"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

// The operator's side, as the CLI sees it through GETs: a job id and a reason first, then after
// `startAfter` reads the job runs and its rank 0 exists with the job's variables.
// The API server's answer to every GET of pods, when `podError` is set (RBAC without `get pods`).
class PodsRefused final : public kube::Reader {
 public:
  explicit PodsRefused(kube::Reader& inner) : inner_(inner) {}
  std::optional<Status> podError;
  StatusOr<nlohmann::json> get(const kube::ResourceType& type, std::string_view ns,
                               std::string_view name) override {
    if (podError && type.plural == kube::resources::pods().plural) return *podError;
    return inner_.get(type, ns, name);
  }
  StatusOr<nlohmann::json> list(const kube::ResourceType& type, std::string_view ns,
                                const kube::ListOptions& options) override {
    return inner_.list(type, ns, options);
  }

 private:
  kube::Reader& inner_;
};

struct Operator {
  FakeCluster cluster;
  PodsRefused reader{cluster};
  int startAfter = 3;
  json valid;  // a Valid condition to report, when not null

  Operator() {
    cluster.onGet = [this](json& object, int /*gets*/) {
      if (object.value("kind", "") != "SlurmJob") return;
      const int reads = ++jobReads;
      object["status"]["jobId"] = 7;
      object["status"]["state"] = reads > startAfter ? "RUNNING" : "PENDING";
      object["status"]["reason"] = reads > startAfter ? "None" : "Resources";
      if (!valid.is_null()) object["status"]["conditions"] = json::array({valid});
      if (reads > startAfter && cluster.objects["pods"].empty()) {
        const std::string name = object["metadata"].value("name", "");
        cluster.objects["pods"].push_back(
            {{"kind", "Pod"},
             {"metadata", {{"name", name + "-0"}, {"namespace", "team-a"}}},
             {"spec",
              {{"containers",
                json::array(
                    {{{"name", "rank"},
                      {"env",
                       json::array(
                           {{{"name", "SLURM_JOB_NODELIST"}, {"value", "hostname-x-[0-1]"}},
                            {{"name", "SLURM_CPUS_ON_NODE"}, {"value", "8"}},
                            {{"name", "KUBESLURM_STEP_TOKEN"}, {"valueFrom", json::object()}},
                            {{"name", "HOME"}, {"value", "/root"}}})}}})}}}});
      }
    };
  }
  int jobReads = 0;
};

struct Attempt {
  AllocationOutcome outcome;
  std::string err;
  json submitted;
};

Attempt allocate(Operator& op, const SrunOptions& options, std::function<bool()> interrupted = {}) {
  FakeCli cli;
  cli.env = {{"PWD", "/home/alice"},
             {"USER", "alice"},
             {"KUBESLURM_SCHEDULER", "kubeslurm.example:9443"},
             {"KUBESLURM_SCHEDULER_CA", "/etc/kubeslurm/ca.crt"}};
  cli.files["/etc/kubeslurm/ca.crt"] = "-----BEGIN CERTIFICATE-----\n";
  Connector connect = [&op](const KubeFlags& flags, const CliIo& io) {
    auto session = op.cluster.connector("team-a", "alice")(flags, io);
    if (session.isOk()) {
      session->bearerToken = "alice-token";
      session->reader = &op.reader;
    }
    return session;
  };
  SubmitEnvironment environment{connect, [](std::chrono::milliseconds) {}, {}};
  Attempt run;
  run.outcome = allocateInteractiveWith("srun", options, {"/bin/hostname"}, cli.io(), interrupted,
                                        environment);
  run.err = cli.err();
  if (!op.cluster.objects["slurmjobs"].empty()) run.submitted = op.cluster.objects["slurmjobs"][0];
  return run;
}

// srun's allocation is a job of its allocation options without a script, named after the
// command; it waits as allocate.c does and comes back with the job's variables from rank 0.
TEST(Allocation, IsAJobWithoutAScriptWaitedForAsSrunWaits) {
  Operator op;
  const Attempt run = allocate(op, {{"nodes", "2"}, {"label", std::nullopt}, {"time", "10"}});
  ASSERT_TRUE(run.outcome.allocation.has_value()) << run.err;
  const json& spec = run.submitted["spec"];
  EXPECT_EQ(spec.value("interactive", false), true);
  EXPECT_FALSE(spec.contains("script"));
  EXPECT_EQ(spec.value("jobName", ""), "hostname");
  EXPECT_EQ(spec.value("nodes", json()).dump(), "2");
  EXPECT_EQ(run.err,
            "srun: job 7 queued and waiting for resources\n"
            "srun: job 7 has been allocated resources\n");
  const LoginAllocation& allocation = *run.outcome.allocation;
  EXPECT_EQ(allocation.jobId, 7);
  EXPECT_EQ(allocation.namespaceName, "team-a");
  EXPECT_EQ(allocation.endpoint.address, "kubeslurm.example:9443");
  EXPECT_EQ(allocation.endpoint.bearerToken, "alice-token");
  // Only the job's literal SLURM_* variables: never a secret reference, never anything else.
  EXPECT_EQ(allocation.environment,
            (std::map<std::string, std::string>{{"SLURM_CPUS_ON_NODE", "8"},
                                                {"SLURM_JOB_ID", "7"},
                                                {"SLURM_JOB_NODELIST", "hostname-x-[0-1]"}}));
}

TEST(Allocation, StartingAtOnceSaysNothing) {
  Operator op;
  op.startAfter = 0;
  const Attempt run = allocate(op, {{"nodes", "1"}});
  ASSERT_TRUE(run.outcome.allocation.has_value()) << run.err;
  EXPECT_EQ(run.err, "");
}

// A Ctrl-C while the job waits: srun's _safe_signal_while_allocating ("Job allocation N has
// been revoked") and slurm_complete_job, here spec.cancel as scancel sets it.
TEST(Allocation, AnInterruptWhileItWaitsRevokesIt) {
  Operator op;
  op.startAfter = 1000;
  int polls = 0;
  const Attempt run = allocate(op, {{"nodes", "2"}}, [&polls] { return ++polls > 2; });
  EXPECT_FALSE(run.outcome.allocation.has_value());
  EXPECT_EQ(run.outcome.exitCode, 1);
  EXPECT_EQ(run.err,
            "srun: job 7 queued and waiting for resources\n"
            "srun: Job allocation 7 has been revoked\n");
  ASSERT_EQ(op.cluster.patches.size(), 1U);
  EXPECT_EQ(op.cluster.patches[0].body.dump(), R"({"spec":{"cancel":true}})");
}

TEST(Allocation, ImmediateGivesUpRatherThanWait) {
  Operator op;
  op.startAfter = 1000;
  const Attempt run = allocate(op, {{"nodes", "2"}, {"immediate", std::nullopt}});
  EXPECT_FALSE(run.outcome.allocation.has_value());
  EXPECT_EQ(run.err, "srun: error: Unable to allocate resources: Requested nodes are busy\n");
  ASSERT_EQ(op.cluster.patches.size(), 1U);
}

// A started job whose rank 0 cannot be read (RBAC without `get pods`) is no allocation the login
// side can use: srun says why and cancels it rather than leave it holding nodes.
TEST(Allocation, ARankZeroThatCannotBeReadCancelsTheJob) {
  Operator op;
  op.startAfter = 0;
  op.reader.podError = Status(StatusCode::kPermissionDenied, "pods \"hostname-0\" is forbidden");
  const Attempt run = allocate(op, {{"nodes", "1"}});
  EXPECT_FALSE(run.outcome.allocation.has_value());
  EXPECT_EQ(run.err, "srun: error: cannot read job 7's rank 0: pods \"hostname-0\" is forbidden\n");
  ASSERT_EQ(op.cluster.patches.size(), 1U);
  EXPECT_EQ(op.cluster.patches[0].body.dump(), R"({"spec":{"cancel":true}})");
}

// What the operator refuses srun says in Slurm's words, and the job is gone.
TEST(Allocation, ARefusalIsSrunsErrorAndLeavesNoJob) {
  Operator op;
  op.valid = {{"type", "Valid"},
              {"status", "False"},
              {"message", "Requested node configuration is not available"}};
  const Attempt run = allocate(op, {{"nodes", "64"}});
  EXPECT_FALSE(run.outcome.allocation.has_value());
  EXPECT_EQ(run.err,
            "srun: error: Unable to allocate resources: Requested node configuration is not "
            "available\n");
  EXPECT_EQ(op.cluster.deleted.size(), 1U);
}

}  // namespace
}  // namespace kubeslurm::cli

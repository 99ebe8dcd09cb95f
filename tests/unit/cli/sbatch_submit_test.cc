// `sbatch` without --dry-run against an in-memory API server that plays the operator: the
// SlurmJob it creates, the wait for status.jobId, Slurm's lines for an accepted and a refused
// job (reference "sbatch and squeue"), and the timeout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;
using ::testing::HasSubstr;

constexpr std::string_view kScript =
    "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --job-name=x\nhostname\n";

struct SubmitRun {
  int code = 0;
  std::string out;
  std::string err;
  int sleeps = 0;
};

SubmitRun sbatch(FakeCluster& fake, const std::vector<std::string>& args,
                 std::string clusterUser = "admin", std::map<std::string, std::string> env = {}) {
  FakeCli cli;
  cli.env = std::move(env);
  cli.env.emplace("PWD", "/home/alice/jobs");
  cli.env.emplace("USER", "alice");
  cli.files["/home/alice/jobs/x.sbatch"] = std::string(kScript);
  SubmitRun run;
  run.code = runSbatchWith(args, cli.io(),
                           SubmitEnvironment{fake.connector("default", std::move(clusterUser)),
                                             [&run](std::chrono::milliseconds) { ++run.sleeps; }});
  run.out = cli.out();
  run.err = cli.err();
  return run;
}

// The operator: on the `at`-th GET the job gets its id, a reason and maybe a condition.
void operatorAssigns(FakeCluster& fake, int at, std::int64_t id, const std::string& reason,
                     const json& conditions = json()) {
  fake.onGet = [=](json& object, int count) {
    if (count < at) return;
    object["status"]["jobId"] = id;
    object["status"]["state"] = "PENDING";
    object["status"]["reason"] = reason;
    if (!conditions.is_null()) object["status"]["conditions"] = conditions;
  };
}

TEST(SbatchSubmit, PrintsTheOperatorsJobId) {
  FakeCluster fake;
  operatorAssigns(fake, 3, 42, "Priority");
  const SubmitRun run = sbatch(fake, {"x.sbatch"});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.out, "Submitted batch job 42\n");
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(run.sleeps, 3);
  ASSERT_EQ(fake.objects["slurmjobs"].size(), 1U);
  const json& created = fake.objects["slurmjobs"][0];
  EXPECT_EQ(created["metadata"]["generateName"], "x-");
  EXPECT_EQ(created["metadata"]["namespace"], "default");
  EXPECT_EQ(created["spec"]["user"], "admin");  // the kubeconfig's user
  EXPECT_EQ(created["spec"]["nodes"], 2);
}

// Reference "sbatch and squeue": sbatch --parsable prints the id alone.
TEST(SbatchSubmit, Parsable) {
  FakeCluster fake;
  operatorAssigns(fake, 1, 2, "Resources");
  const SubmitRun run = sbatch(fake, {"--parsable", "x.sbatch"});
  EXPECT_EQ(run.out, "2\n");
  EXPECT_EQ(run.code, 0);
}

TEST(SbatchSubmit, UserFallsBackToUserVariable) {
  FakeCluster fake;
  operatorAssigns(fake, 1, 5, "Priority");
  EXPECT_EQ(sbatch(fake, {"x.sbatch"}, "").code, 0);
  EXPECT_EQ(fake.objects["slurmjobs"][0]["spec"]["user"], "alice");
}

// Our flags count only before the script; after it they are the script's arguments.
TEST(SbatchSubmit, ClusterFlagsBeforeTheScript) {
  FakeCluster fake;
  operatorAssigns(fake, 1, 5, "Priority");
  const SubmitRun run =
      sbatch(fake, {"--namespace", "team", "--context=c2", "x.sbatch", "--namespace", "arg"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(fake.lastFlags.namespaceName, "team");
  EXPECT_EQ(fake.lastFlags.context, "c2");
  const json& created = fake.objects["slurmjobs"][0];
  EXPECT_EQ(created["metadata"]["namespace"], "team");
  EXPECT_EQ(created["spec"]["scriptArgs"], json::array({"--namespace", "arg"}));
}

// Reference "sbatch and squeue": --partition=nope gives two error lines and rc=1; the
// operator's Valid=False message is turned back into them, and the SlurmJob is deleted.
TEST(SbatchSubmit, RefusedJobPrintsSlurmsErrors) {
  for (const std::string message :
       {"Invalid partition name specified: nope", "invalid partition specified: nope"}) {
    FakeCluster fake;
    operatorAssigns(fake, 2, 44, "InvalidPartition",
                    json::array({{{"type", "Valid"},
                                  {"status", "False"},
                                  {"reason", "InvalidPartition"},
                                  {"message", message}}}));
    const SubmitRun run = sbatch(fake, {"--partition=nope", "x.sbatch"});
    EXPECT_EQ(run.code, 1);
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err,
              "sbatch: error: invalid partition specified: nope\n"
              "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
    EXPECT_EQ(fake.deleted, std::vector<std::string>{"default/x-x7k2p"});
  }
}

// The condition may come a moment after the id (the same scheduling cycle): sbatch waits for
// the job to be judged before it reports success.
TEST(SbatchSubmit, WaitsForTheJudgementAfterTheId) {
  FakeCluster fake;
  fake.onGet = [](json& object, int count) {
    object["status"]["jobId"] = 45;
    object["status"]["state"] = "PENDING";
    object["status"]["reason"] = "None";
    if (count >= 3) {
      object["status"]["conditions"] =
          json::array({{{"type", "Valid"},
                        {"status", "False"},
                        {"message", "Requested node configuration is not available"}}});
    }
  };
  const SubmitRun run = sbatch(fake, {"x.sbatch"});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.err,
            "sbatch: error: Batch job submission failed: Requested node configuration is not "
            "available\n");

  // Never judged: accepted after the settle polls.
  FakeCluster quiet;
  operatorAssigns(quiet, 1, 46, "None");
  const SubmitRun accepted = sbatch(quiet, {"x.sbatch"});
  EXPECT_EQ(accepted.out, "Submitted batch job 46\n");
  EXPECT_EQ(accepted.sleeps, 11);
}

// An array's record is never planned, so nothing judges it after its id: sbatch returns with
// the id (the sweep benchmark's sbatch spent two seconds here). What the operator refuses of an
// array comes in that same write, and is still reported.
TEST(SbatchSubmit, AnArraysIdIsItsJudgement) {
  FakeCluster fake;
  operatorAssigns(fake, 2, 47, "None");
  const SubmitRun run = sbatch(fake, {"--array=0-9999%8", "x.sbatch"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "Submitted batch job 47\n");
  EXPECT_EQ(run.sleeps, 2);

  FakeCluster refused;
  operatorAssigns(refused, 1, 48, "None",
                  json::array({{{"type", "Valid"},
                                {"status", "False"},
                                {"reason", "InvalidSpec"},
                                {"message", "Invalid job array specification"}}}));
  const SubmitRun invalid = sbatch(refused, {"--array=0-99999", "x.sbatch"});
  EXPECT_EQ(invalid.code, 1);
  EXPECT_EQ(invalid.err,
            "sbatch: error: Batch job submission failed: Invalid job array specification\n");
}

TEST(SbatchSubmit, NoIdInTime) {
  FakeCluster fake;
  const SubmitRun run = sbatch(fake, {"--submit-timeout=2", "x.sbatch"});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "sbatch: error: Batch job submission failed: SlurmJob default/x-x7k2p has no job id "
            "after 2 s: is the kubeslurm operator running? The SlurmJob stays queued; delete it "
            "with `kubectl delete slurmjob -n default x-x7k2p` to withdraw it\n");
  EXPECT_EQ(run.sleeps, 10);
  EXPECT_TRUE(fake.deleted.empty());
  EXPECT_THAT(sbatch(fake, {"--submit-timeout=0", "x.sbatch"}).err,
              HasSubstr("invalid --submit-timeout value \"0\""));
}

TEST(SbatchSubmit, ConnectionErrors) {
  FakeCluster fake;
  SubmitRun run;
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  CliIo io{in, out, err,
           [](std::string_view name) -> std::optional<std::string> {
             if (name == "PWD") return "/home/alice/jobs";
             return std::nullopt;
           },
           [](const std::string&) -> StatusOr<std::string> { return std::string(kScript); }};
  const Connector refuse = [](const KubeFlags&, const CliIo&) -> StatusOr<ClusterSession> {
    return Status(StatusCode::kUnavailable, "connection refused");
  };
  EXPECT_EQ(runSbatchWith({"x.sbatch"}, io, SubmitEnvironment{refuse, {}}), 1);
  EXPECT_EQ(err.str(), "sbatch: error: connection refused\n");
}

}  // namespace
}  // namespace kubeslurm::cli

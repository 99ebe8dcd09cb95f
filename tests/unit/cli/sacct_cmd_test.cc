// `sacct` against an in-memory API server: the caller as the default user, the namespace,
// $SACCT_FORMAT, the default partition, and API errors.
#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

json slurmJob(const std::string& ns, std::int64_t id, const std::string& user,
              const std::string& state, const std::string& partition = "") {
  api::SlurmJobObject job;
  job.name = "j" + std::to_string(id);
  job.namespaceName = ns;
  job.user = user;
  job.request.jobName = "train";
  job.request.partition = partition;
  job.script = "#!/bin/sh\ntrue\n";
  job.status.emplace();
  job.status->jobId = id;
  job.status->state = state;
  job.status->submitTime = FakeCli::kNow - 600;
  if (state != "PENDING") {
    job.status->startTime = FakeCli::kNow - 300;
    job.status->nodeList = "gpu-001";
  }
  if (state == "COMPLETED") job.status->endTime = FakeCli::kNow - 60;
  return api::encodeSlurmJob(job);
}

FakeCluster cluster() {
  FakeCluster fake;
  fake.objects["slurmjobs"] = {slurmJob("default", 7, "admin", "COMPLETED"),
                               slurmJob("default", 8, "alice", "RUNNING", "debug"),
                               slurmJob("team", 9, "admin", "PENDING"),
                               // Not accepted yet: no job id.
                               json{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                    {"kind", "SlurmJob"},
                                    {"metadata", {{"name", "new"}, {"namespace", "default"}}},
                                    {"spec", {{"jobName", "new"}, {"user", "admin"}}}}};
  fake.objects["partitions"] = {
      json{{"metadata", {{"name", "batch"}}}, {"spec", {{"default", true}}}}};
  return fake;
}

int run(FakeCluster& fake, FakeCli& cli, const std::vector<std::string>& args) {
  return runSacctWith(args, cli.io(), fake.connector());
}

// options.c: sacct shows the caller's jobs (the session's user, "admin" here) by default.
TEST(SacctCmd, CallersJobsInTheNamespace) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {}), 0);
  EXPECT_EQ(cli.out(),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "7                 train      batch                     1  COMPLETED      0:0 \n"
            "7.batch           batch                                1  COMPLETED      0:0 \n");
  EXPECT_EQ(cli.err(), "");

  FakeCli all;
  EXPECT_EQ(run(fake, all, {"-a", "-X", "-n", "-P", "-o", "jobid,user,partition"}), 0);
  EXPECT_EQ(all.out(), "7|admin|batch\n8|alice|debug\n");

  FakeCli team;
  EXPECT_EQ(run(fake, team, {"--namespace=team", "-X", "-n", "-P", "-o", "jobid,state"}), 0);
  EXPECT_EQ(team.out(), "9|PENDING\n");
  EXPECT_EQ(fake.lastFlags.namespaceName, "team");
}

TEST(SacctCmd, SacctFormatEnvironment) {
  FakeCluster fake = cluster();
  FakeCli cli;
  cli.env["SACCT_FORMAT"] = "jobid,state";
  EXPECT_EQ(run(fake, cli, {"-X", "-P"}), 0);
  EXPECT_EQ(cli.out(), "JobID|State\n7|COMPLETED\n");
}

TEST(SacctCmd, BadFieldStopsBeforeConnecting) {
  FakeCluster fake = cluster();
  fake.listError = Status{StatusCode::kUnavailable, "connection refused"};
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-o", "Restarts"}), 1);
  EXPECT_EQ(cli.err(), "sacct: error: Invalid field requested: \"Restarts\"\n");
}

TEST(SacctCmd, ListErrorIsReported) {
  FakeCluster fake = cluster();
  fake.listError = Status{StatusCode::kUnavailable, "connection refused"};
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {}), 1);
  EXPECT_EQ(cli.out(), "");
  EXPECT_EQ(cli.err(), "sacct: error: connection refused\n");
}

}  // namespace
}  // namespace kubeslurm::cli

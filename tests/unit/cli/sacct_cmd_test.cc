// `sacct` against an in-memory API server: the caller as the default user, the namespace,
// $SACCT_FORMAT, the default partition, and API errors.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/rpc/client.h"
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

// The operator's accounting store as sacct sees it: the records it holds, and what each client
// made from the connector was asked.
struct StoreState {
  StatusOr<std::vector<accounting::JobRecord>> answer = std::vector<accounting::JobRecord>{};
  std::vector<rpc::JobRecordQuery> asked;
};
class StoredRecords final : public testing::NoQueries {
 public:
  explicit StoredRecords(std::shared_ptr<StoreState> state) : state_(std::move(state)) {}
  StatusOr<std::vector<accounting::JobRecord>> listJobRecords(
      const rpc::JobRecordQuery& query) override {
    state_->asked.push_back(query);
    return state_->answer;
  }

 private:
  std::shared_ptr<StoreState> state_;
};

accounting::JobRecord storedRecord(std::int64_t id, const std::string& state, std::int64_t end) {
  accounting::JobRecord r;
  r.cluster = "kubeslurm";
  r.jobId = id;
  r.name = "old";
  r.user = "admin";
  r.namespaceName = "default";
  r.partition = "batch";
  r.state = state;
  r.exitCode = "0:0";
  r.submitTime = end - 3600;
  r.eligibleTime = end - 3600;
  r.startTime = end - 1800;
  r.endTime = end;
  r.reqNodes = 1;
  r.nodes = 1;
  r.cpus = 1;
  r.nodeList = "gpu-002";
  return r;
}

// Issue 21: sacct a month back finds jobs whose SlurmJobs retention deleted, in the operator's
// store; a live job's record replaces the store's older record of the same run; a store the
// operator does not keep is no error, one that fails is said and the live jobs still print.
TEST(SacctCmd, RecordsOutliveTheirSlurmJobsThroughTheQueryApi) {
  const std::int64_t monthAgo = FakeCli::kNow - 30 * 86400;
  auto store = std::make_shared<StoreState>();
  store->answer = std::vector<accounting::JobRecord>{
      storedRecord(3, "COMPLETED", monthAgo + 86400),  // its SlurmJob is long gone
      storedRecord(7, "RUNNING", 0)};                  // live: the object has it COMPLETED
  store->answer->back().endTime.reset();
  const QueryConnector queries = [&](const ClusterSession&, const SchedulerFlags&,
                                     const CliIo&) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
    return std::unique_ptr<rpc::QueryClient>(std::make_unique<StoredRecords>(store));
  };
  FakeCluster fake = cluster();
  FakeCli cli;
  const std::vector<std::string> args = {"-S", "now-30days",         "-X", "-n", "-P",
                                         "-o", "jobid,state,jobname"};
  EXPECT_EQ(runSacctWith(args, cli.io(), fake.connector(), queries), 0);
  EXPECT_EQ(cli.out(), "3|COMPLETED|old\n7|COMPLETED|train\n");
  EXPECT_EQ(cli.err(), "");
  ASSERT_EQ(store->asked.size(), 1U);
  EXPECT_EQ(store->asked[0].namespaceName, "default");
  EXPECT_EQ(store->asked[0].from, monthAgo - 86400);
  EXPECT_EQ(store->asked[0].users, std::vector<std::string>{"admin"});

  // -j asks by id, for every user, from the epoch.
  FakeCli byId;
  EXPECT_EQ(runSacctWith({"-j", "3", "-X", "-n", "-P", "-o", "jobid,user"}, byId.io(),
                         fake.connector(), queries),
            0);
  EXPECT_EQ(byId.out(), "3|admin\n");
  EXPECT_EQ(store->asked[1].jobIds, std::vector<std::int64_t>{3});
  EXPECT_EQ(store->asked[1].from, std::nullopt);
  EXPECT_TRUE(store->asked[1].users.empty());

  // No store kept: the live jobs, quietly.
  store->answer = Status(StatusCode::kFailedPrecondition, "this operator keeps no job records");
  FakeCli noStore;
  EXPECT_EQ(runSacctWith(args, noStore.io(), fake.connector(), queries), 0);
  EXPECT_EQ(noStore.out(), "7|COMPLETED|train\n");
  EXPECT_EQ(noStore.err(), "");

  // A store that fails: the live jobs, and why the rest is missing.
  store->answer = Status(StatusCode::kUnavailable, "database is locked");
  FakeCli failing;
  EXPECT_EQ(runSacctWith(args, failing.io(), fake.connector(), queries), 0);
  EXPECT_EQ(failing.out(), "7|COMPLETED|train\n");
  EXPECT_NE(
      failing.err().find("sacct: error: job records that outlive the SlurmJobs are not shown"),
      std::string::npos);
}

}  // namespace
}  // namespace kubeslurm::cli

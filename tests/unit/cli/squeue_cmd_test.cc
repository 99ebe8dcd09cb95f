// `squeue` against an in-memory API server: the namespace flags, the default partition from
// the Partition objects, the unknown-id error (reference "sbatch and squeue") and API errors.
#include "kubeslurm/cli/squeue_cmd.h"

#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/rpc/client.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

json slurmJob(const std::string& ns, std::int64_t id, const std::string& name,
              const std::string& state, const std::string& partition = "") {
  api::SlurmJobObject job;
  job.name = name + "-abcde";
  job.namespaceName = ns;
  job.user = "alice";
  job.request.jobName = name;
  job.request.partition = partition;
  job.request.nodes = slurm::NodeRange{2, std::nullopt};
  job.script = "#!/bin/sh\ntrue\n";
  job.status.emplace();
  job.status->jobId = id;
  job.status->state = state;
  job.status->reason = state == "PENDING" ? "Priority" : "None";
  if (state == "RUNNING") {
    job.status->nodeList = "gpu-[001-002]";
    job.status->startTime = FakeCli::kNow - 75;
  }
  return api::encodeSlurmJob(job);
}

FakeCluster cluster() {
  FakeCluster fake;
  fake.objects["slurmjobs"] = {slurmJob("default", 7, "train-a", "RUNNING"),
                               slurmJob("default", 8, "train-b", "PENDING", "debug"),
                               slurmJob("team", 9, "other", "PENDING")};
  fake.objects["partitions"] = {
      json{{"metadata", {{"name", "batch"}}}, {"spec", {{"default", true}}}},
      json{{"metadata", {{"name", "debug"}}}, {"spec", {{"maxTime", "1:00:00"}}}}};
  return fake;
}

int run(FakeCluster& fake, FakeCli& cli, const std::vector<std::string>& args) {
  return runSqueueWith(args, cli.io(), fake.connector());
}

// The partition is squeue's first sort key (sort.c default "P,t,-p").
TEST(SqueueCmd, ListsTheNamespaceWithTheDefaultPartition) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {}), 0);
  EXPECT_EQ(cli.out(),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "                 7     batch  train-a    alice  R       1:15      2 gpu-[001-002]\n"
            "                 8     debug  train-b    alice PD       0:00      2 (Priority)\n");
  EXPECT_EQ(cli.err(), "");
}

TEST(SqueueCmd, NamespaceFlags) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-h", "--namespace=team", "-o", "%i %j"}), 0);
  EXPECT_EQ(cli.out(), "9 other\n");
  EXPECT_EQ(fake.lastFlags.namespaceName, "team");

  FakeCli all;
  EXPECT_EQ(run(fake, all, {"--all-namespaces", "-h", "-o", "%i", "-S", "i"}), 0);
  EXPECT_EQ(all.out(), "7\n8\n9\n");
  // squeue's own -n (job names) is left alone.
  FakeCli names;
  EXPECT_EQ(run(fake, names, {"-h", "-n", "train-a", "-o", "%i"}), 0);
  EXPECT_EQ(names.out(), "7\n");
}

// Reference "sbatch and squeue": squeue -j 99999 -> "slurm_load_jobs error: Invalid job id
// specified", rc=1.
TEST(SqueueCmd, UnknownJob) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-j", "99999"}), 1);
  EXPECT_EQ(cli.out(), "");
  EXPECT_EQ(cli.err(), "slurm_load_jobs error: Invalid job id specified\n");
}

TEST(SqueueCmd, ApiErrors) {
  FakeCluster fake = cluster();
  fake.listError = Status(StatusCode::kUnavailable, "connection refused");
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {}), 1);
  EXPECT_EQ(cli.err(),
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
            "squeue: error: connection refused\n");
  FakeCli noValue;
  EXPECT_EQ(run(fake, noValue, {"--namespace"}), 1);
  EXPECT_EQ(noValue.err(), "squeue: error: flag needs an argument: --namespace\n");
}

TEST(SqueueCmd, KubeFlagsAreTakenOutOfTheArguments) {
  std::vector<std::string> args = {"--kubeconfig", "/k",          "-u", "bob",
                                   "--context=c1", "--namespace", "ns", "--all-namespaces",
                                   "--",           "--context"};
  auto flags = takeKubeFlags(args, /*allowAllNamespaces=*/false);
  ASSERT_TRUE(flags.isOk());
  EXPECT_EQ(flags->kubeconfig, "/k");
  EXPECT_EQ(flags->context, "c1");
  EXPECT_EQ(flags->namespaceName, "ns");
  EXPECT_FALSE(flags->allNamespaces);
  EXPECT_EQ(args, (std::vector<std::string>{"-u", "bob", "--all-namespaces", "--", "--context"}));
}

// --me: the Slurm user sbatch writes into spec.user, the kubeconfig user (the connector's
// "admin" here), else $USER.
TEST(SqueueCmd, MeIsTheSubmittingUser) {
  FakeCluster fake = cluster();
  json mine = slurmJob("default", 10, "mine", "PENDING");
  mine["spec"]["user"] = "admin";
  fake.objects["slurmjobs"].push_back(mine);
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-h", "--me", "-o", "%i %u"}), 0);
  EXPECT_EQ(cli.out(), "10 admin\n");

  FakeCli noUser;
  noUser.env["USER"] = "alice";
  EXPECT_EQ(runSqueueWith({"-h", "--me", "-o", "%i", "-S", "i"}, noUser.io(),
                          fake.connector("default", "")),
            0);
  EXPECT_EQ(noUser.out(), "7\n8\n");
}

// -i: squeue.c main's loop: the date, the listing, a blank line, then sleep(N) and again. The
// sleep and the number of listings are the environment's, so the loop ends here.
TEST(SqueueCmd, IterateReprintsWithTheDate) {
  FakeCluster fake = cluster();
  FakeCli cli;
  std::vector<std::chrono::seconds> sleeps;
  SqueueEnvironment environment;
  environment.connect = fake.connector();
  environment.sleep = [&sleeps](std::chrono::seconds pause) {
    sleeps.push_back(pause);
    return true;
  };
  environment.maxIterations = 3;
  EXPECT_EQ(runSqueueIn({"-i", "30", "-o", "%i %M", "-t", "R"}, cli.io(), environment), 0);
  EXPECT_EQ(sleeps, (std::vector<std::chrono::seconds>{std::chrono::seconds(30),
                                                       std::chrono::seconds(30)}));
  // Without a clock the time moves on by what was slept: TIME grows with it.
  EXPECT_EQ(cli.out(),
            "Sat Nov 21 04:30:00 2026\nJOBID TIME\n7 1:15\n\n"
            "Sat Nov 21 04:30:30 2026\nJOBID TIME\n7 1:45\n\n"
            "Sat Nov 21 04:31:00 2026\nJOBID TIME\n7 2:15\n\n");
  EXPECT_EQ(cli.err(), "");

  // A clock gives each later listing its time and zone; a sleep that returns false (a stop)
  // ends the loop after the listing it follows. -h drops the date.
  FakeCli clocked;
  environment.maxIterations = 0;
  int listings = 0;
  environment.sleep = [&listings](std::chrono::seconds) { return ++listings < 2; };
  environment.clock = [] {
    return std::pair<std::int64_t, std::int32_t>(FakeCli::kNow + 3600, 3600);
  };
  EXPECT_EQ(runSqueueIn({"--iterate=5", "-h", "-o", "%i %M", "-t", "R"}, clocked.io(), environment),
            0);
  EXPECT_EQ(clocked.out(), "7 1:15\n\n7 1:01:15\n\n");
}

// A listing that fails makes the exit code 1, and the loop goes on (squeue.c: error_code = 1).
TEST(SqueueCmd, IterateKeepsGoingAfterAnError) {
  FakeCluster fake = cluster();
  fake.listError = Status(StatusCode::kUnavailable, "connection refused");
  FakeCli cli;
  SqueueEnvironment environment;
  environment.connect = fake.connector();
  environment.sleep = [&fake](std::chrono::seconds) {
    fake.listError.reset();
    return true;
  };
  environment.maxIterations = 2;
  EXPECT_EQ(runSqueueIn({"-i", "1", "-h", "-o", "%i", "-t", "R"}, cli.io(), environment), 1);
  EXPECT_EQ(cli.out(), "\n7\n\n");
  EXPECT_EQ(cli.err(),
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
            "squeue: error: connection refused\n");
}

// The operator's query API as squeue sees it: the last plan's pending jobs.
class PendingQueries final : public testing::NoQueries {
 public:
  explicit PendingQueries(rpc::PendingJobsAnswer a) : answer_(std::move(a)) {}
  StatusOr<rpc::PendingJobsAnswer> listPendingJobs(const std::string&) override { return answer_; }

 private:
  rpc::PendingJobsAnswer answer_;
};

// A pending job's priority and estimated start move every cycle, and the operator writes them
// into its status only when its reason changes: squeue takes them live from the query API when
// it shows or sorts by them, as slurmctld answers from memory. A running job keeps its status.
TEST(SqueueCmd, PriorityAndStartOfPendingJobsComeLiveFromTheQueryApi) {
  rpc::PendingJobsAnswer answer;
  for (const std::int64_t id : {7, 8}) {  // 7 ran since that plan: its status stands
    rpc::PendingJob job;
    job.jobId = id;
    job.priority.priority = 4242;
    job.estimatedStart = FakeCli::kNow + 3600;
    job.estimatedNodes = "gpu-[003-004]";
    answer.jobs.push_back(job);
  }
  int asked = 0;
  const QueryConnector queries = [&](const ClusterSession&, const SchedulerFlags&,
                                     const CliIo&) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
    ++asked;
    return std::unique_ptr<rpc::QueryClient>(std::make_unique<PendingQueries>(answer));
  };
  FakeCluster fake = cluster();
  FakeCli live;
  EXPECT_EQ(runSqueueWith({"-h", "-o", "%i %Q %S %Y"}, live.io(), fake.connector(), queries), 0);
  EXPECT_EQ(live.out(),
            "7 0 2026-11-21T04:28:45 (null)\n8 4242 2026-11-21T05:30:00 gpu-[003-004]\n");
  EXPECT_EQ(asked, 1);

  // Without the query API: the status's figures (none recorded here).
  FakeCli offline;
  EXPECT_EQ(run(fake, offline, {"-h", "-o", "%i %Q %S"}), 0);
  EXPECT_EQ(offline.out(), "7 0 2026-11-21T04:28:45\n8 0 N/A\n");

  // A listing that shows none of them does not ask.
  FakeCli plain;
  EXPECT_EQ(runSqueueWith({"-h", "-o", "%i %T"}, plain.io(), fake.connector(), queries), 0);
  EXPECT_EQ(asked, 1);
  FakeCli sorted;
  EXPECT_EQ(runSqueueWith({"-h", "-o", "%i", "-S", "-p"}, sorted.io(), fake.connector(), queries),
            0);
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace kubeslurm::cli

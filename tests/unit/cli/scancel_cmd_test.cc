// `scancel` against an in-memory API server: which objects get {"spec":{"cancel":true}}, and
// the messages and exit codes of Slurm 22.05's src/scancel/{opt.c,scancel.c} with the codes
// slurmctld's job_str_signal answers (src/slurmctld/job_mgr.c).
#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

json slurmJob(std::int64_t id, const std::string& name, const std::string& state,
              const std::string& user = "alice", const std::string& partition = "batch") {
  api::SlurmJobObject job;
  job.name = "j" + std::to_string(id);
  job.namespaceName = "default";
  job.user = user;
  job.request.jobName = name;
  job.request.partition = partition;
  job.script = "#!/bin/sh\ntrue\n";
  job.status.emplace();
  job.status->jobId = id;
  job.status->state = state;
  if (state == "RUNNING") job.status->nodeList = "gpu-[001-002]";
  return api::encodeSlurmJob(job);
}

json arrayParent(std::int64_t id, const std::string& state) {
  json j = slurmJob(id, "arr", state);
  j["metadata"]["name"] = "arr";
  j["spec"]["array"] = "0-2";
  return j;
}

json arrayTask(std::int64_t id, std::int64_t arrayId, std::int64_t taskId,
               const std::string& state) {
  json j = arrayParent(arrayId, state);
  j["metadata"]["name"] = "arr-" + std::to_string(taskId);
  j["metadata"]["labels"]["kubeslurm.io/array-task"] = std::to_string(taskId);
  j["status"]["jobId"] = id;
  j["status"]["arrayJobId"] = arrayId;
  j["status"]["arrayTaskId"] = taskId;
  return j;
}

FakeCluster cluster() {
  FakeCluster fake;
  fake.objects["slurmjobs"] = {
      slurmJob(2, "x", "RUNNING"),        slurmJob(3, "x", "COMPLETED"),
      slurmJob(4, "y", "PENDING", "bob"), slurmJob(10, "y", "PENDING", "alice", "debug"),
      arrayParent(5, "RUNNING"),          arrayTask(6, 5, 0, "COMPLETED"),
      arrayTask(7, 5, 1, "RUNNING"),      arrayTask(8, 5, 2, "PENDING"),
  };
  return fake;
}

int run(FakeCluster& fake, FakeCli& cli, const std::vector<std::string>& args) {
  return runScancelWith(args, cli.io(), fake.connector("default", "alice"));
}

std::vector<std::string> patched(const FakeCluster& fake) {
  std::vector<std::string> names;
  for (const auto& p : fake.patches) {
    EXPECT_EQ(p.body, (json{{"spec", {{"cancel", true}}}}));
    names.push_back(p.object);
  }
  return names;
}

using Names = std::vector<std::string>;

TEST(ScancelCmd, CancelsAJob) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"2"}), 0);
  EXPECT_EQ(patched(fake), Names{"default/j2"});
  EXPECT_EQ(cli.out(), "");
  EXPECT_EQ(cli.err(), "");
}

// Reference "sbatch and squeue": `scancel 99999` is silent, rc=0. scancel.c _cancel_job_id
// keeps quiet about ESLURM_INVALID_JOB_ID and ESLURM_ALREADY_DONE unless -v, and a kill
// ignores them.
TEST(ScancelCmd, UnknownAndFinishedJobsAreSilent) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"99999", "3"}), 0);
  EXPECT_TRUE(fake.patches.empty());
  EXPECT_EQ(cli.err(), "");

  FakeCli verbose;
  EXPECT_EQ(run(fake, verbose, {"-v", "99999", "3"}), 0);
  EXPECT_EQ(verbose.err(),
            "scancel: Terminating job 99999\n"
            "scancel: error: Kill job error on job id 99999: Invalid job id specified\n"
            "scancel: Terminating job 3\n"
            "scancel: error: Kill job error on job id 3: Job/step already completing or "
            "completed\n");
  EXPECT_TRUE(fake.patches.empty());
}

// An array id is the whole array (its own object, which the operator propagates to the
// tasks); "A_T" and "A_[...]" name tasks, each on its object; "5,2" is two ids (opt.c).
TEST(ScancelCmd, ArraysAndTasks) {
  FakeCluster whole = cluster();
  FakeCli cli;
  EXPECT_EQ(run(whole, cli, {"5"}), 0);
  EXPECT_EQ(patched(whole), Names{"default/arr"});

  FakeCluster star = cluster();
  EXPECT_EQ(run(star, cli, {"5_*"}), 0);
  EXPECT_EQ(patched(star), Names{"default/arr"});

  FakeCluster one = cluster();
  EXPECT_EQ(run(one, cli, {"5_2"}), 0);
  EXPECT_EQ(patched(one), Names{"default/arr-2"});

  // Task 0 is done: the rest of the list is still cancelled, quietly.
  FakeCluster range = cluster();
  EXPECT_EQ(run(range, cli, {"5_[0-2]"}), 0);
  EXPECT_EQ(patched(range), (Names{"default/arr-1", "default/arr-2"}));

  FakeCluster list = cluster();
  EXPECT_EQ(run(list, cli, {"5_1,2"}), 0);
  EXPECT_EQ(patched(list), (Names{"default/arr-1", "default/j2"}));
  EXPECT_EQ(cli.err(), "");
}

// A task the operator has not made yet is in the array's record, as in Slurm's meta record:
// scancel A_T tells the array to make it cancelled (spec.cancelTasks, kept with what it held),
// one patch per array for every such task the ids name; made tasks are cancelled on their
// objects.
TEST(ScancelCmd, TasksNotYetMadeAreCancelledThroughTheArray) {
  FakeCluster fake;
  json array = arrayParent(5, "RUNNING");
  array["spec"]["array"] = "0-9";
  array["spec"]["cancelTasks"] = "9";
  fake.objects["slurmjobs"] = {array, arrayTask(6, 5, 0, "RUNNING"), arrayTask(7, 5, 1, "PENDING")};
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"5_[1-3]", "5_7"}), 0);
  ASSERT_EQ(fake.patches.size(), 2U);
  EXPECT_EQ(fake.patches[0].object, "default/arr-1");
  EXPECT_EQ(fake.patches[1].object, "default/arr");
  EXPECT_EQ(fake.patches[1].body, (json{{"spec", {{"cancelTasks", "2-3,7,9"}}}}));
  EXPECT_EQ(cli.err(), "");
  // A task the array does not have is no job, as before.
  FakeCli unknown;
  EXPECT_EQ(run(fake, unknown, {"-v", "5_12"}), 0);
  EXPECT_NE(unknown.err().find("Invalid job id specified"), std::string::npos);
  EXPECT_EQ(fake.patches.size(), 2U);
}

// opt.c _opt_verify and _xlate_job_step_ids.
TEST(ScancelCmd, ArgumentErrors) {
  FakeCluster fake = cluster();
  FakeCli none;
  EXPECT_EQ(run(fake, none, {}), 1);
  EXPECT_EQ(none.err(), "scancel: error: No job identification provided\n");
  FakeCli bad;
  EXPECT_EQ(run(fake, bad, {"abc"}), 1);
  EXPECT_EQ(bad.err(), "scancel: error: Invalid job id abc\n");
  FakeCli trailing;
  EXPECT_EQ(run(fake, trailing, {"5x"}), 1);
  EXPECT_EQ(trailing.err(), "scancel: error: Invalid job id 5x\n");
  FakeCli state;
  EXPECT_EQ(run(fake, state, {"-t", "bogus"}), 1);
  EXPECT_EQ(state.err(),
            "Invalid job state specified: bogus\nValid job states are PENDING, RUNNING, and "
            "SUSPENDED\n");
  FakeCli signal;
  EXPECT_EQ(run(fake, signal, {"--signal=NOPE", "2"}), 1);
  EXPECT_EQ(signal.err(), "Unknown job signal: NOPE\n");
  FakeCli option;
  EXPECT_EQ(run(fake, option, {"-z"}), 1);
  EXPECT_EQ(option.err(),
            "scancel: invalid option -- 'z'\nTry \"scancel --help\" for more information\n");
  EXPECT_TRUE(fake.patches.empty());
}

// The operator can end a job (SIGTERM, then SIGKILL) but not deliver other signals.
TEST(ScancelCmd, OnlyEndingSignals) {
  FakeCluster fake = cluster();
  FakeCli usr1;
  EXPECT_EQ(run(fake, usr1, {"-s", "USR1", "2"}), 1);
  EXPECT_EQ(usr1.err(),
            "scancel: error: --signal=USR1 is not supported by kubeslurm: it can only end a job "
            "(KILL, TERM, INT)\n");
  EXPECT_TRUE(fake.patches.empty());
  FakeCli term;
  EXPECT_EQ(run(fake, term, {"--signal=SIGTERM", "-v", "2"}), 0);
  EXPECT_EQ(term.err(), "scancel: Signal 15 to job 2\n");
  EXPECT_EQ(patched(fake), Names{"default/j2"});
}

// With -s (or a filter) scancel loads the jobs and verifies the ids first: a finished or
// unknown id is an error then (scancel.c _verify_job_ids), quiet with -Q but still rc=1.
TEST(ScancelCmd, VerifiedIds) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-s", "KILL", "3", "2"}), 1);
  EXPECT_EQ(cli.err(), "scancel: error: Kill job error on job id 3: Invalid job id specified\n");
  EXPECT_EQ(patched(fake), Names{"default/j2"});
  FakeCluster quiet = cluster();
  FakeCli q;
  EXPECT_EQ(run(quiet, q, {"-Q", "-p", "batch", "99999"}), 1);
  EXPECT_EQ(q.err(), "");
  EXPECT_TRUE(quiet.patches.empty());
}

// scancel.c _filter_job_records: only active jobs, every filter must match, and ids AND
// filters; pending jobs go first.
TEST(ScancelCmd, Filters) {
  FakeCluster byUser = cluster();
  FakeCli cli;
  EXPECT_EQ(run(byUser, cli, {"-u", "alice", "-t", "PD"}), 0);
  // In job id order, as slurmctld's job list.
  EXPECT_EQ(patched(byUser), (Names{"default/arr-2", "default/j10"}));

  FakeCluster byName = cluster();
  EXPECT_EQ(run(byName, cli, {"--name=y", "-p", "batch"}), 0);
  EXPECT_EQ(patched(byName), Names{"default/j4"});

  FakeCluster idsAndFilter = cluster();
  EXPECT_EQ(run(idsAndFilter, cli, {"-t", "running", "2", "4"}), 0);
  EXPECT_EQ(patched(idsAndFilter), Names{"default/j2"});

  FakeCluster me = cluster();
  EXPECT_EQ(run(me, cli, {"--me", "-w", "gpu-002"}), 0);
  EXPECT_EQ(patched(me), (Names{"default/j2", "default/arr-1"}));

  FakeCluster nothing = cluster();
  FakeCli verbose;
  EXPECT_EQ(run(nothing, verbose, {"-v", "-u", "carol"}), 0);
  EXPECT_EQ(verbose.err(),
            "scancel: error: No active jobs match ALL job filters, including: user_name=carol \n");
  EXPECT_TRUE(nothing.patches.empty());
  EXPECT_EQ(cli.err(), "");
}

// A job that named no partition runs in the default one; -p names it by that partition.
TEST(ScancelCmd, PartitionFilterSeesTheDefaultPartition) {
  FakeCluster fake;
  fake.objects["slurmjobs"] = {slurmJob(20, "z", "PENDING", "alice", ""),
                               slurmJob(21, "z", "PENDING", "alice", "debug")};
  fake.objects["partitions"] = {json{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                     {"kind", "Partition"},
                                     {"metadata", {{"name", "batch"}}},
                                     {"spec", {{"nodes", "gpu-[001-002]"}, {"default", true}}}},
                                json{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                     {"kind", "Partition"},
                                     {"metadata", {{"name", "debug"}}},
                                     {"spec", {{"nodes", "gpu-001"}}}}};
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-p", "batch"}), 0) << cli.err();
  EXPECT_EQ(patched(fake), Names{"default/j20"});
}

// kubeslurm records no steps: "N.S" is refused rather than ending the whole job.
TEST(ScancelCmd, StepsAreRefused) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"2.0"}), 1);
  EXPECT_EQ(cli.err(),
            "scancel: error: Kill job error on job step id 2.0: kubeslurm does not track job "
            "steps; cancel the job instead\n");
  EXPECT_TRUE(fake.patches.empty());
}

// -i asks before each job (scancel.c _confirmation); no answer declines.
TEST(ScancelCmd, InteractiveWithoutAnswerDeclines) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"-i", "2"}), 0);
  EXPECT_EQ(cli.out(), "Cancel job_id=2 name=x partition=batch [y/n]? ");
  EXPECT_TRUE(fake.patches.empty());
}

TEST(ScancelCmd, ApiErrorIsReported) {
  FakeCluster fake = cluster();
  fake.patchError = Status{StatusCode::kPermissionDenied, "slurmjobs \"j2\" is forbidden"};
  FakeCli cli;
  EXPECT_EQ(run(fake, cli, {"2"}), 1);
  EXPECT_EQ(cli.err(),
            "scancel: error: Kill job error on job id 2: slurmjobs \"j2\" is forbidden\n");
}

}  // namespace
}  // namespace kubeslurm::cli

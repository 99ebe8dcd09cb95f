// scontrol's cluster commands against an in-memory API server: lazy connection, show through
// the session's namespace, hold/release/update as merge patches of the SlurmJob's spec, and
// slurmctld's refusals as scontrol prints them (src/scontrol/update_job.c: "<error> for job
// <id>"; slurm_errno.c texts).
#include <algorithm>

#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

json job(const std::string& ns, std::int64_t id, const std::string& state) {
  api::SlurmJobObject j;
  j.name = "job" + std::to_string(id);
  j.namespaceName = ns;
  j.user = "alice";
  j.request.jobName = "train";
  j.request.timeLimit = slurm::TimeLimit{3600};
  j.status.emplace();
  j.status->jobId = id;
  j.status->state = state;
  j.status->reason = state == "PENDING" ? "Priority" : "None";
  if (state == "RUNNING") {
    j.status->nodeList = "gpu-node-001";
    j.status->startTime = FakeCli::kNow - 60;
  }
  return api::encodeSlurmJob(j);
}

FakeCluster cluster() {
  FakeCluster fake;
  fake.objects["slurmjobs"] = {job("default", 5, "PENDING"), job("default", 6, "RUNNING"),
                               job("default", 7, "COMPLETED"), job("team", 8, "PENDING")};
  fake.objects["partitions"] = {json{{"metadata", {{"name", "batch"}}},
                                     {"spec", {{"default", true}, {"nodes", "gpu-node-001"}}}}};
  fake.objects["nodes"] = {testing::nodeJson("gpu-node-001")};
  fake.objects["pods"] = {testing::podJson("default", "job6-0", "gpu-node-001", 8)};
  return fake;
}

struct Result {
  int rc;
  std::string out;
  std::string err;
};

Result scontrol(FakeCluster& fake, const std::vector<std::string>& args, int* connects = nullptr) {
  FakeCli cli;
  const Connector base = fake.connector();
  const Connector counting = [&](const KubeFlags& flags, const CliIo& io) {
    if (connects != nullptr) ++*connects;
    return base(flags, io);
  };
  const int rc = runScontrolWith(args, cli.io(), counting);
  return {rc, cli.out(), cli.err()};
}

TEST(ScontrolCluster, OfflineCommandsDoNotConnect) {
  FakeCluster fake = cluster();
  int connects = 0;
  const Result run = scontrol(fake, {"show", "hostnames", "a[1-2]"}, &connects);
  EXPECT_EQ(run.out, "a1\na2\n");
  EXPECT_EQ(connects, 0);
}

TEST(ScontrolCluster, ShowJobInTheSessionNamespace) {
  FakeCluster fake = cluster();
  const Result run = scontrol(fake, {"show", "job", "5"});
  EXPECT_EQ(run.rc, 0);
  EXPECT_EQ(run.out.rfind("JobId=5 JobName=train\n   UserId=alice(", 0), 0U);
  EXPECT_NE(run.out.find("   Partition=batch AllocNode"), std::string::npos);
  // Job 8 is in another namespace: slurmctld would not know it here.
  const Result other = scontrol(fake, {"show", "job", "8"});
  EXPECT_EQ(other.rc, 1);
  EXPECT_EQ(other.err, "slurm_load_jobs error: Invalid job id specified\n");
  const Result team = scontrol(fake, {"--namespace=team", "-o", "show", "job", "8"});
  EXPECT_EQ(team.rc, 0);
  EXPECT_EQ(std::count(team.out.begin(), team.out.end(), '\n'), 1);
}

TEST(ScontrolCluster, ShowNodeAndPartition) {
  FakeCluster fake = cluster();
  const Result node = scontrol(fake, {"show", "node", "gpu-node-001"});
  EXPECT_EQ(node.rc, 0);
  EXPECT_NE(node.out.find("   State=ALLOCATED "), std::string::npos) << node.out;
  const Result part = scontrol(fake, {"show", "part"});
  EXPECT_EQ(part.rc, 0);
  EXPECT_EQ(part.out.rfind("PartitionName=batch\n", 0), 0U);
  const Result missing = scontrol(fake, {"show", "partition", "nope"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_EQ(missing.out, "Partition nope not found\n");
}

TEST(ScontrolCluster, HoldAndRelease) {
  FakeCluster fake = cluster();
  EXPECT_EQ(scontrol(fake, {"hold", "5"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].object, "default/job5");
  EXPECT_EQ(fake.patches[0].body, (json{{"spec", {{"hold", true}}}}));
  EXPECT_EQ(scontrol(fake, {"release", "5"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 2U);
  EXPECT_EQ(fake.patches[1].body, (json{{"spec", {{"hold", false}}}}));
}

// slurmctld: a job that started can no longer be held (ESLURM_JOB_NOT_PENDING), a finished one
// ESLURM_ALREADY_DONE, an unknown one ESLURM_INVALID_JOB_ID; each "for job <id>", rc 1.
TEST(ScontrolCluster, HoldRefusals) {
  FakeCluster fake = cluster();
  const Result run = scontrol(fake, {"hold", "6,7", "99"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err,
            "Job is no longer pending execution for job 6\n"
            "Job has already finished for job 7\n"
            "Invalid job id specified for job 99\n");
  EXPECT_TRUE(fake.patches.empty());
}

TEST(ScontrolCluster, UpdateTimeLimitAndOtherFields) {
  FakeCluster fake = cluster();
  EXPECT_EQ(scontrol(fake, {"update", "JobId=6", "TimeLimit=2:00:00"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].object, "default/job6");
  EXPECT_EQ(fake.patches[0].body, (json{{"spec", {{"timeLimit", "2:00:00"}}}}));
  EXPECT_EQ(scontrol(fake, {"update", "jobid=5", "Nice=10", "Comment=x", "part=batch",
                            "Dependency=afterok:6"})
                .rc,
            0);
  ASSERT_EQ(fake.patches.size(), 2U);
  EXPECT_EQ(fake.patches[1].body, (json{{"spec",
                                         {{"nice", 10},
                                          {"comment", "x"},
                                          {"partition", "batch"},
                                          {"dependency", "afterok:6"}}}}));
  // The partition of a running job is fixed.
  const Result running = scontrol(fake, {"update", "JobId=6", "Partition=batch"});
  EXPECT_EQ(running.rc, 1);
  EXPECT_EQ(running.err, "Job is no longer pending execution for job 6\n");
  EXPECT_EQ(fake.patches.size(), 2U);
}

// update_job.c's own messages.
TEST(ScontrolCluster, UpdateErrors) {
  FakeCluster fake = cluster();
  EXPECT_EQ(scontrol(fake, {"update", "JobId=5", "Shared=yes"}).err,
            "Update of this parameter is not supported: Shared=yes\nRequest aborted\n");
  EXPECT_EQ(scontrol(fake, {"update", "JobId=5"}).err, "No changes specified\n");
  EXPECT_EQ(scontrol(fake, {"update", "JobId=5", "TimeLimit=soon"}).err,
            "scontrol: error: Invalid TimeLimit value\n");
  EXPECT_EQ(scontrol(fake, {"update", "JobId=7", "TimeLimit=5"}).err,
            "Job has already finished for job 7\n");
  const Result node = scontrol(fake, {"update", "NodeName=gpu-node-001", "State=DRAIN"});
  EXPECT_EQ(node.rc, 1);
  EXPECT_EQ(node.err,
            "scontrol: error: update of NodeName is not supported by kubeslurm yet (only jobs: "
            "JobId=...)\n");
  EXPECT_TRUE(fake.patches.empty());
}

// requeue and requeuehold (Slurm 22.05 src/scontrol/update_job.c scontrol_requeue,
// scontrol_requeue_hold): silent on success, rc 0; each job that may be requeued gets
// spec.requeueRequests + 1, guarded by the resourceVersion it was read at.
TEST(ScontrolCluster, RequeueRaisesTheRequestCount) {
  FakeCluster fake = cluster();
  fake.objects["slurmjobs"][1]["metadata"]["resourceVersion"] = "41";
  const Result run = scontrol(fake, {"requeue", "6"});
  EXPECT_EQ(run.rc, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "");
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].object, "default/job6");
  EXPECT_EQ(fake.patches[0].body,
            (json{{"metadata", {{"resourceVersion", "41"}}}, {"spec", {{"requeueRequests", 1}}}}));
  // A finished batch job may be requeued too ("running, suspended or finished", scontrol.1);
  // "JobId=" before the list is accepted, and the count goes on from what is stored.
  EXPECT_EQ(scontrol(fake, {"requeue", "JobId=7,6"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 3U);
  EXPECT_EQ(fake.patches[1].object, "default/job7");
  EXPECT_EQ(fake.patches[1].body, (json{{"spec", {{"requeueRequests", 1}}}}));
  EXPECT_EQ(fake.patches[2].object, "default/job6");
  EXPECT_EQ(fake.patches[2].body["spec"], (json{{"requeueRequests", 2}}));
}

// requeuehold: the request and spec.hold in one patch, so the requeued job waits for release.
// A cancelled job's spec.cancel is cleared, or the operator would cancel the next run.
TEST(ScontrolCluster, RequeueHoldAlsoHolds) {
  FakeCluster fake = cluster();
  fake.objects["slurmjobs"][2]["spec"]["cancel"] = true;
  EXPECT_EQ(scontrol(fake, {"requeuehold", "6", "7"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 2U);
  EXPECT_EQ(fake.patches[0].body, (json{{"spec", {{"requeueRequests", 1}, {"hold", true}}}}));
  EXPECT_EQ(fake.patches[1].object, "default/job7");
  EXPECT_EQ(fake.patches[1].body,
            (json{{"spec", {{"requeueRequests", 1}, {"hold", true}, {"cancel", nullptr}}}}));
  EXPECT_FALSE(fake.objects["slurmjobs"][2]["spec"].contains("cancel"));
}

// slurmctld's refusals (job_mgr.c _job_requeue_op, slurm_errno.c texts), "<error> for job
// <id>" as scontrol_requeue prints them, rc 1: a pending job ESLURM_JOB_PENDING, a job
// submitted with --no-requeue ESLURM_DISABLED (checked first, whatever its state), an unknown
// id ESLURM_INVALID_JOB_ID, and a word that is no job id (_is_job_id) the same.
TEST(ScontrolCluster, RequeueRefusals) {
  FakeCluster fake = cluster();
  fake.objects["slurmjobs"].push_back(job("default", 9, "RUNNING"));
  fake.objects["slurmjobs"].back()["spec"]["requeue"] = false;
  fake.objects["slurmjobs"].push_back(job("default", 10, "PENDING"));
  fake.objects["slurmjobs"].back()["spec"]["requeue"] = false;
  const Result run = scontrol(fake, {"requeue", "5,9", "10", "99", "abc"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err,
            "Job is pending execution for job 5\n"
            "Requested operation is presently disabled for job 9\n"
            "Requested operation is presently disabled for job 10\n"
            "Invalid job id specified for job 99\n"
            "Invalid job id specified for job abc\n");
  EXPECT_TRUE(fake.patches.empty());
  // requeuehold does not strip "JobId=" (scontrol_requeue_hold has no such step).
  const Result hold = scontrol(fake, {"requeuehold", "JobId=6"});
  EXPECT_EQ(hold.rc, 1);
  EXPECT_EQ(hold.err, "Invalid job id specified for job JobId=6\n");
  // -Q: quiet, still rc 1.
  const Result quiet = scontrol(fake, {"-Q", "requeue", "5"});
  EXPECT_EQ(quiet.rc, 1);
  EXPECT_EQ(quiet.err, "");
  EXPECT_TRUE(fake.patches.empty());
}

// parse_requeue_flags: Incomplete (any prefix) leaves finished jobs alone, silently;
// State=SpecialExit is not modelled; no id at all is "too few arguments".
TEST(ScontrolCluster, RequeueFlags) {
  FakeCluster fake = cluster();
  EXPECT_EQ(scontrol(fake, {"requeue", "Incomplete", "7"}).rc, 0);
  EXPECT_TRUE(fake.patches.empty());
  EXPECT_EQ(scontrol(fake, {"requeue", "inc", "6,7"}).rc, 0);
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].object, "default/job6");
  const Result special = scontrol(fake, {"requeuehold", "State=SpecialExit", "6"});
  EXPECT_EQ(special.rc, 1);
  EXPECT_EQ(special.err, "scontrol: error: State=SpecialExit is not supported by kubeslurm\n");
  const Result few = scontrol(fake, {"requeue"});
  EXPECT_EQ(few.rc, 1);
  EXPECT_EQ(few.err, "too few arguments for keyword:requeue\n");
  EXPECT_EQ(scontrol(fake, {"requeue", "incomplete"}).rc, 0);  // flags only: nothing to do
  EXPECT_EQ(fake.patches.size(), 1U);
}

// An array's id requeues its tasks (the array's own object is never a run); a task that may
// not be requeued is reported by its A_T id, as scontrol prints a job_array_resp.
TEST(ScontrolCluster, RequeueOfAnArrayRequeuesItsTasks) {
  FakeCluster fake = cluster();
  json parent = job("default", 20, "RUNNING");
  parent["spec"]["array"] = "0-1";
  json task0 = job("default", 21, "RUNNING");
  json task1 = job("default", 22, "PENDING");
  int index = 0;
  for (json* task : {&task0, &task1}) {
    (*task)["metadata"]["name"] = "arr-" + std::to_string(index);
    (*task)["metadata"]["labels"] = {{"kubeslurm.io/array-task", std::to_string(index)}};
    (*task)["status"]["arrayJobId"] = 20;
    (*task)["status"]["arrayTaskId"] = index++;
  }
  fake.objects["slurmjobs"].insert(fake.objects["slurmjobs"].end(), {parent, task0, task1});
  const Result run = scontrol(fake, {"requeue", "20"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err, "20_1: Job is pending execution\n");
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].object, "default/arr-0");
  EXPECT_EQ(scontrol(fake, {"requeue", "20_0"}).rc, 0);
  EXPECT_EQ(fake.patches.back().object, "default/arr-0");
}

// Two requeues at once must not write the same count: a 409 on the guarded patch reads the
// object again and raises what is stored now.
TEST(ScontrolCluster, RequeueRetriesAConflict) {
  FakeCluster fake = cluster();
  fake.objects["slurmjobs"][1]["metadata"]["resourceVersion"] = "41";
  struct Conflicting final : kube::Writer {
    FakeCluster* inner = nullptr;
    int conflicts = 1;
    StatusOr<kube::Json> create(const kube::ResourceType& t, std::string_view ns,
                                const kube::Json& o) override {
      return inner->create(t, ns, o);
    }
    StatusOr<kube::Json> update(const kube::ResourceType& t, std::string_view ns,
                                const kube::Json& o) override {
      return inner->update(t, ns, o);
    }
    StatusOr<kube::Json> patch(const kube::ResourceType& t, std::string_view ns,
                               std::string_view name, const kube::Json& body) override {
      if (conflicts-- > 0) {
        // Someone else's requeue got there first.
        for (json& stored : inner->objects["slurmjobs"]) {
          if (stored["metadata"]["name"] == name) {
            stored["spec"]["requeueRequests"] = 4;
            stored["metadata"]["resourceVersion"] = "42";
          }
        }
        return Status(StatusCode::kAborted, "the object has been modified");
      }
      return inner->patch(t, ns, name, body);
    }
    Status remove(const kube::ResourceType& t, std::string_view ns, std::string_view name,
                  const kube::DeleteOptions& o) override {
      return inner->remove(t, ns, name, o);
    }
  } writer;
  writer.inner = &fake;
  const Connector base = fake.connector();
  const Connector connect = [&](const KubeFlags& flags, const CliIo& io) {
    auto session = base(flags, io);
    if (session.isOk()) session->writer = &writer;
    return session;
  };
  FakeCli cli;
  EXPECT_EQ(runScontrolWith({"requeue", "6"}, cli.io(), connect), 0) << cli.err();
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].body,
            (json{{"metadata", {{"resourceVersion", "42"}}}, {"spec", {{"requeueRequests", 5}}}}));
}

// A task still in its array's record (squeue shows it pending there): slurmctld splits it off
// and changes its own record. Here the array's spec.splitTasks asks the operator to make it
// (held, so that no start comes first); once its SlurmJob exists, the change is patched onto it,
// with the array's hold unless the command sets one.
TEST(ScontrolCluster, ATaskNotMadeYetIsSplitOffItsArrayAndChanged) {
  FakeCluster fake;
  json array = job("default", 5, "PENDING");
  array["metadata"]["name"] = "arr";
  array["metadata"]["uid"] = "uid-arr";
  array["metadata"]["resourceVersion"] = "7";
  array["spec"]["array"] = "0-9";
  array["spec"]["splitTasks"] = "3";
  json made = array;
  made["metadata"]["name"] = "arr-0";
  made["metadata"]["uid"] = "uid-arr-0";
  made["metadata"]["labels"]["kubeslurm.io/array-task"] = "0";
  made["status"] = {{"jobId", 6}, {"state", "PENDING"}, {"arrayJobId", 5}, {"arrayTaskId", 0}};
  fake.objects["slurmjobs"] = {array, made};
  // The operator, as seen from the CLI: the task appears after the CLI's first wait.
  int sleeps = 0;
  const auto operatorMakes = [&](const std::string& name, const std::string& owner) {
    return [&fake, &sleeps, name, owner](std::chrono::milliseconds) {
      if (sleeps++ != 0) return;
      json task = fake.objects["slurmjobs"][0];
      task["metadata"]["name"] = name;
      task["metadata"]["labels"]["kubeslurm.io/array-job"] = "arr";
      task["metadata"]["labels"]["kubeslurm.io/array-task"] = name.substr(name.find('-') + 1);
      task["metadata"]["ownerReferences"] = {
          {{"kind", "SlurmJob"}, {"name", "arr"}, {"uid", owner}, {"controller", true}}};
      task["spec"]["hold"] = true;
      fake.objects["slurmjobs"].push_back(task);
    };
  };
  const Connector connect = fake.connector();
  FakeCli cli;
  ASSERT_EQ(runScontrolWith({"hold", "5_7"}, cli.io(), connect, operatorMakes("arr-7", "uid-arr")),
            0)
      << cli.err();
  ASSERT_EQ(fake.patches.size(), 2U);
  EXPECT_EQ(fake.patches[0].object, "default/arr");
  EXPECT_EQ(fake.patches[0].body,
            (json{{"metadata", {{"resourceVersion", "7"}}}, {"spec", {{"splitTasks", "3,7"}}}}));
  EXPECT_EQ(fake.patches[1].object, "default/arr-7");
  EXPECT_EQ(fake.patches[1].body, (json{{"spec", {{"hold", true}}}}));
  EXPECT_EQ(sleeps, 1);

  // update: the task gets the array's hold (none) with the change.
  sleeps = 0;
  ASSERT_EQ(runScontrolWith({"update", "JobId=5_8", "Comment=x"}, cli.io(), connect,
                            operatorMakes("arr-8", "uid-arr")),
            0)
      << cli.err();
  ASSERT_EQ(fake.patches.size(), 4U);
  EXPECT_EQ(fake.patches[3].object, "default/arr-8");
  EXPECT_EQ(fake.patches[3].body, (json{{"spec", {{"comment", "x"}, {"hold", false}}}}));

  // A made task is changed on its own object, as before; a task past the array is no job.
  EXPECT_EQ(runScontrolWith({"hold", "5_0"}, cli.io(), connect), 0);
  EXPECT_EQ(fake.patches.back().object, "default/arr-0");
  FakeCli past;
  EXPECT_EQ(runScontrolWith({"hold", "5_10"}, past.io(), connect), 1);
  EXPECT_EQ(past.err(), "Invalid job id specified for job 5_10\n");

  // requeue of such a task: pending, refused as slurmctld refuses a pending job; nothing split.
  FakeCli requeue;
  const std::size_t patches = fake.patches.size();
  EXPECT_EQ(runScontrolWith({"requeue", "5_9"}, requeue.io(), connect), 1);
  EXPECT_EQ(requeue.err(), "Job is pending execution for job 5_9\n");
  EXPECT_EQ(fake.patches.size(), patches);

  // An object of that name the array does not own is not the task: the CLI keeps waiting, and
  // says so after a minute of polls, patching nothing.
  const std::size_t before = fake.patches.size();
  sleeps = 0;
  FakeCli stray;
  EXPECT_EQ(runScontrolWith({"hold", "5_9"}, stray.io(), connect,
                            operatorMakes("arr-9", "uid-someone-else")),
            1);
  EXPECT_EQ(stray.err(),
            "scontrol: error: task 5_9 was not split off its array within 60 s: is the kubeslurm "
            "operator running?\n");
  EXPECT_EQ(sleeps, 240);
  ASSERT_EQ(fake.patches.size(), before + 1);  // the split asked for, nothing more
  EXPECT_EQ(fake.patches.back().object, "default/arr");
}

TEST(ScontrolCluster, ApiErrors) {
  FakeCluster fake = cluster();
  fake.listError = Status(StatusCode::kUnavailable, "connection refused");
  const Result run = scontrol(fake, {"show", "job"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err,
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n"
            "scontrol: error: connection refused\n");
  FakeCluster patching = cluster();
  patching.patchError = Status(StatusCode::kPermissionDenied, "forbidden");
  const Result denied = scontrol(patching, {"hold", "5"});
  EXPECT_EQ(denied.rc, 1);
  EXPECT_EQ(denied.err, "scontrol: error: forbidden\n");
}

}  // namespace
}  // namespace kubeslurm::cli

#include "controllers/job_status.h"

#include <gtest/gtest.h>

#include "controllers/cluster_view.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/step/step_records.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kStart = 1795000000;
constexpr core::Time kNow = kStart + 600;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

api::SlurmJobObject slurmJob(const std::string& state, const Json& spec = Json::object(),
                             const Json& status = Json::object()) {
  Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                 {"kind", "SlurmJob"},
                 {"metadata", {{"name", "train-x7k2p"}, {"namespace", "team-a"}}},
                 {"spec",
                  {{"jobName", "train"},
                   {"user", "alice"},
                   {"script", "#!/bin/bash\nsrun python train.py\n"},
                   {"nodes", 4},
                   {"gpusPerNode", 8}}},
                 {"status", {{"jobId", 1234}, {"state", state}, {"restarts", 0}}}};
  // As the operator writes a state: with its squeue code, and Reason=None once running.
  if (auto parsed = slurm::parseJobState(state)) {
    object["status"]["stateCode"] = std::string(slurm::jobStateShortName(*parsed));
  }
  if (state == "RUNNING") object["status"]["reason"] = "None";
  object["spec"].merge_patch(spec);
  object["status"].merge_patch(status);
  return ok(api::decodeSlurmJob(object));
}

// A rank pod of `train-x7k2p` with its container in the state `phase` implies.
struct RankSpec {
  int rank = 0;
  std::string node;
  std::string phase = "Running";
  int attempt = 0;
  int size = 4;
  std::string reason;         // pod status.reason
  std::optional<int> exit;    // terminated exit code
  std::optional<int> signal;  // terminated signal
  std::string terminatedReason = "Error";
  std::string message;  // the terminated state's termination message
  core::Time started = kStart;
  core::Time finished = kStart + 100;
  std::optional<core::Time> created;  // metadata.creationTimestamp
  std::string initWaiting;            // an init container "tools" waiting for this reason
};

api::Pod rankPod(const RankSpec& r) {
  Json state = Json::object();
  if (r.phase == "Running") {
    state = {{"running", {{"startedAt", api::formatTimestamp(r.started)}}}};
  } else if (r.exit || r.phase == "Succeeded") {
    Json terminated = {{"exitCode", r.exit.value_or(0)},
                       {"reason", r.phase == "Succeeded" ? "Completed" : r.terminatedReason},
                       {"startedAt", api::formatTimestamp(r.started)},
                       {"finishedAt", api::formatTimestamp(r.finished)}};
    if (r.signal) terminated["signal"] = *r.signal;
    if (!r.message.empty()) terminated["message"] = r.message;
    state = {{"terminated", terminated}};
  } else {
    state = {{"waiting", {{"reason", "ContainerCreating"}}}};
  }
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "train-x7k2p-" + std::to_string(r.rank)},
                {"namespace", "team-a"},
                {"labels",
                 {{"kubeslurm.io/job-name", "train-x7k2p"},
                  {"kubeslurm.io/rank", std::to_string(r.rank)},
                  {"kubeslurm.io/attempt", std::to_string(r.attempt)}}},
                {"annotations",
                 {{"kubeslurm.io/planned-node", r.node},
                  {"kubeslurm.io/gang-size", std::to_string(r.size)}}}}},
              {"spec", {{"containers", Json::array({{{"name", "rank"}, {"image", "pytorch"}}})}}},
              {"status",
               {{"phase", r.phase},
                {"containerStatuses", Json::array({{{"name", "rank"}, {"state", state}}})}}}};
  if (!r.node.empty()) pod["spec"]["nodeName"] = r.node;
  if (!r.reason.empty()) pod["status"]["reason"] = r.reason;
  if (r.created) pod["metadata"]["creationTimestamp"] = api::formatTimestamp(*r.created);
  if (!r.initWaiting.empty()) {
    pod["status"]["initContainerStatuses"] = Json::array(
        {{{"name", "tools"},
          {"state", {{"waiting", {{"reason", r.initWaiting}, {"message", "pull failed"}}}}}}});
  }
  return ok(api::decodePod(pod));
}

// Rank `rank` of the gang, on node gpu-<rank+1>; the rest as RankSpec's defaults.
RankSpec rankOnItsNode(int rank) {
  RankSpec r;
  r.rank = rank;
  r.node = "gpu-" + std::to_string(rank + 1);
  return r;
}

// Rank `rank` on gpu-<rank+1>, its container ended with `exit` (and `signal`).
api::Pod failedRank(int rank, int exit, core::Time finished = kStart + 100,
                    std::optional<int> signal = std::nullopt,
                    const std::string& terminatedReason = "Error") {
  RankSpec r = rankOnItsNode(rank);
  r.phase = "Failed";
  r.exit = exit;
  r.signal = signal;
  r.terminatedReason = terminatedReason;
  r.finished = finished;
  return rankPod(r);
}

// Rank `rank` failed by the kubelet's hand: pod status.reason `reason`, no container exit.
api::Pod failedPod(int rank, const std::string& reason) {
  RankSpec r = rankOnItsNode(rank);
  r.phase = "Failed";
  r.reason = reason;
  return rankPod(r);
}

// Four ranks on gpu-1..gpu-4, each in the given phase.
std::vector<api::Pod> gang(const std::vector<std::string>& phases, int attempt = 0) {
  std::vector<api::Pod> pods;
  for (int i = 0; i < static_cast<int>(phases.size()); ++i) {
    RankSpec r = rankOnItsNode(i);
    r.phase = phases[static_cast<std::size_t>(i)];
    r.attempt = attempt;
    r.started = kStart + 10 - i;  // rank 3 started first
    pods.push_back(rankPod(r));
  }
  return pods;
}

const NodeHealth kHealthy = {{"gpu-1", true}, {"gpu-2", true}, {"gpu-3", true}, {"gpu-4", true}};

StatusDecision decide(const api::SlurmJobObject& job, const std::vector<api::Pod>& pods,
                      core::Time now = kNow, const JobStatusPolicy& policy = {},
                      const NodeHealth& health = kHealthy) {
  return decideStatus(job, observeGang(job, pods, health), now, policy);
}

// Level-triggered: the job with the decided status, observed again, decides nothing new.
void expectIdempotent(const api::SlurmJobObject& job, const StatusDecision& first,
                      const std::vector<api::Pod>& pods, core::Time now = kNow,
                      const NodeHealth& health = kHealthy) {
  api::SlurmJobObject next = job;
  next.status = first.status;
  const StatusDecision again = decide(next, pods, now + 5, {}, health);
  EXPECT_FALSE(again.changed) << again.status.state;
  EXPECT_EQ(again.status, first.status);
  EXPECT_FALSE(again.event.has_value());
}

std::vector<api::Pod> markDeleting(std::vector<api::Pod> pods) {
  for (api::Pod& pod : pods) pod.metadata.deletionTimestamp = kNow;
  return pods;
}

TEST(ObserveGang, CountsTheCurrentAttemptOnly) {
  std::vector<api::Pod> pods = gang({"Running", "Running", "Pending", "Succeeded"}, 1);
  pods[2].spec.nodeName.clear();
  pods.push_back(gang({"Running"}, 0)[0]);  // a stale rank 0 of the first attempt
  const api::SlurmJobObject job = slurmJob("RUNNING", Json::object(), {{"restarts", 1}});
  const GangObservation g = observeGang(job, pods, kHealthy);
  EXPECT_EQ(g.attempt, 1U);
  EXPECT_EQ(g.size, std::optional<std::uint32_t>(4));
  EXPECT_EQ(g.pods, 4U);
  EXPECT_EQ(g.bound, 3U);
  EXPECT_EQ(g.running, 2U);
  EXPECT_EQ(g.succeeded, 1U);
  EXPECT_EQ(g.failed, 0U);
  EXPECT_FALSE(g.complete());
  EXPECT_EQ(g.all.size(), 5U);
  EXPECT_EQ(g.earliestStart, kStart + 7);  // rank 3's container
}

TEST(ObserveGang, FirstFailedRankIsTheEarliestFinishThenTheLowestRank) {
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods[2] = failedRank(2, 3, kStart + 50);
  pods[1] = failedRank(1, 7, kStart + 90);
  GangObservation g = observeGang(slurmJob("RUNNING"), pods, kHealthy);
  EXPECT_EQ(g.failed, 2U);
  EXPECT_EQ(g.firstFailedRank, std::optional<std::uint32_t>(2));
  EXPECT_EQ(g.firstFailedExitCode, 3);

  pods[1] = failedRank(1, 7, kStart + 50);
  g = observeGang(slurmJob("RUNNING"), pods, kHealthy);
  EXPECT_EQ(g.firstFailedRank, std::optional<std::uint32_t>(1));
  EXPECT_EQ(g.firstFailedExitCode, 7);
}

TEST(ObserveGang, NodeTroubleAndKubeletRejection) {
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  NodeHealth health = kHealthy;
  health["gpu-2"] = false;
  GangObservation g = observeGang(slurmJob("RUNNING"), pods, health);
  EXPECT_TRUE(g.nodeFailed);
  EXPECT_EQ(g.nodeFailure, "node gpu-2 of rank 1 is not ready");

  health = kHealthy;
  health.erase("gpu-4");
  g = observeGang(slurmJob("RUNNING"), pods, health);
  EXPECT_TRUE(g.nodeFailed);
  EXPECT_EQ(g.nodeFailure, "node gpu-4 of rank 3 is gone");

  pods[0] = failedPod(0, "NodeLost");
  g = observeGang(slurmJob("RUNNING"), pods, kHealthy);
  EXPECT_TRUE(g.nodeFailed);
  EXPECT_FALSE(g.firstFailedRank.has_value());  // not the job's own failure

  pods = gang({"Running", "Pending", "Pending", "Pending"});
  pods[1] = failedPod(1, "OutOfnvidia.com/gpu");
  g = observeGang(slurmJob("PENDING"), pods, kHealthy);
  EXPECT_TRUE(g.kubeletRejected);
  EXPECT_FALSE(g.nodeFailed);
  EXPECT_FALSE(g.firstFailedRank.has_value());
}

// squeue shows R once every rank runs; SLURM_JOB_NODELIST is the hostlist of the ranks'
// hostnames, compressed as scontrol show hostlist does.
TEST(DecideStatus, AllRanksRunningIsRunning) {
  const api::SlurmJobObject job =
      slurmJob("PENDING", Json::object(),
               {{"reason", "Resources"}, {"estimatedStart", api::formatTimestamp(kNow)}});
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  const StatusDecision d = decide(job, pods);
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.status.state, "RUNNING");
  EXPECT_EQ(d.status.stateCode, "R");
  EXPECT_EQ(d.status.reason, "None");
  EXPECT_EQ(d.status.startTime, kStart + 7);  // the earliest container start
  EXPECT_EQ(d.status.nodeList, "train-x7k2p-[0-3]");
  EXPECT_FALSE(d.status.estimatedStart.has_value());
  EXPECT_TRUE(d.deletePods.empty());
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->reason, "Started");
  expectIdempotent(job, d, pods);
}

TEST(DecideStatus, AGangNotYetRunningStaysPending) {
  const api::SlurmJobObject job = slurmJob("PENDING");
  std::vector<api::Pod> pods = gang({"Running", "Running", "Pending", "Running"});
  StatusDecision d = decide(job, pods);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.status.state, "PENDING");
  pods.pop_back();  // being created
  d = decide(job, pods);
  EXPECT_FALSE(d.changed);
  EXPECT_TRUE(d.deletePods.empty());  // the binder's gang, not ours to touch
}

// A batch script runs once, on rank 0; the job's exit is the script's (Slurm's batch step).
// The other ranks only hold their nodes and are stopped when it ends.
TEST(DecideStatus, ScriptJobCompletesWhenRankZeroSucceeds) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(),
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  const std::vector<api::Pod> pods = gang({"Succeeded", "Running", "Running", "Running"});
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "COMPLETED");
  EXPECT_EQ(d.status.stateCode, "CD");
  EXPECT_EQ(d.status.exitCode, "0:0");
  // When rank 0's container ended, as its kubelet recorded it, not when the operator looked.
  EXPECT_EQ(d.status.endTime, kStart + 100);
  EXPECT_EQ(d.status.startTime, kStart);
  EXPECT_EQ(d.deletePods,
            (std::vector<std::string>{"train-x7k2p-1", "train-x7k2p-2", "train-x7k2p-3"}));
  EXPECT_EQ(d.gracePeriodSeconds, 30);
  expectIdempotent(job, d, pods);
  api::SlurmJobObject done = job;
  done.status = d.status;
  EXPECT_TRUE(decide(done, markDeleting(pods)).deletePods.empty());
}

// Rank 0's termination message carries the steps srun ran (step/step_records.h): they become
// status.steps with sacct's "code:signal"; a message that is not such a report is ignored.
TEST(DecideStatus, RankZerosStepRecordsBecomeStatusSteps) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(),
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  std::vector<api::Pod> pods = gang({"Succeeded", "Running", "Running", "Running"});
  step::StepRecord second;
  second.stepId = 1;
  second.name = "sleep";
  second.nodelist = "train-x7k2p-[0-3]";
  second.nnodes = 4;
  second.ntasks = 4;
  second.cpus = 32;
  second.startTime = kStart + 50;
  second.endTime = kStart + 60;
  second.signal = 9;
  second.state = "FAILED";
  step::StepRecord first = second;
  first.stepId = 0;
  first.name = "torchrun";
  first.exitCode = 3;
  first.signal = 0;
  RankSpec r;
  r.node = "gpu-1";
  r.phase = "Succeeded";
  r.message = step::encodeStepRecords({second, first});
  pods[0] = rankPod(r);
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "COMPLETED");
  ASSERT_EQ(d.status.steps.size(), 2U);
  EXPECT_EQ(d.status.steps[0].stepId, 0);  // by step id
  EXPECT_EQ(d.status.steps[0].name, "torchrun");
  EXPECT_EQ(d.status.steps[0].exitCode, "3:0");
  EXPECT_EQ(d.status.steps[1].exitCode, "0:9");
  EXPECT_EQ(d.status.steps[1].nodes, 4);
  EXPECT_EQ(d.status.steps[1].cpus, 32);
  EXPECT_EQ(d.status.steps[1].startTime, kStart + 50);
  EXPECT_EQ(d.status.steps[1].state, "FAILED");
  EXPECT_FALSE(d.status.stepsDropped);
  // The codec keeps them (the CRD's status.steps).
  api::SlurmJobObject withSteps = job;
  withSteps.status = d.status;
  const auto decoded = api::decodeSlurmJob(api::encodeSlurmJob(withSteps));
  ASSERT_TRUE(decoded.isOk());
  EXPECT_EQ(decoded->status->steps, d.status.steps);

  r.message = "Segmentation fault (core dumped)";
  pods[0] = rankPod(r);
  EXPECT_TRUE(decide(job, pods).status.steps.empty());
}

TEST(DecideStatus, PodTemplateJobCompletesWhenEveryRankSucceeds) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING",
               {{"script", ""},
                {"podTemplate", {{"spec", {{"containers", Json::array({{{"name", "t"}}})}}}}}},
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  StatusDecision d = decide(job, gang({"Succeeded", "Running", "Succeeded", "Succeeded"}));
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.status.state, "RUNNING");
  d = decide(job, gang({"Succeeded", "Succeeded", "Succeeded", "Succeeded"}));
  EXPECT_EQ(d.status.state, "COMPLETED");
  EXPECT_EQ(d.status.exitCode, "0:0");
}

// The job starts when its gang was bound (Slurm's StartTime: the allocation), not when the last
// image was pulled: the minutes between count against its time limit and its account's usage.
TEST(DecideStatus, AGangStartsWhenItWasBoundNotWhenItsContainersStarted) {
  const api::SlurmJobObject job = slurmJob("PENDING");
  std::vector<api::Pod> pods;
  for (int i = 0; i < 4; ++i) {
    RankSpec r = rankOnItsNode(i);
    r.phase = "Running";
    r.created = kStart - 90 + i;  // bound 90 s before the containers started (a slow pull)
    pods.push_back(rankPod(r));
  }
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "RUNNING");
  EXPECT_EQ(d.status.startTime, kStart - 90);
}

// A job that ran and ended between two looks goes straight from PENDING to its end, with the
// start its containers report.
TEST(DecideStatus, AGangThatFinishedUnseenStillGetsItsStart) {
  const api::SlurmJobObject job = slurmJob("PENDING");
  const StatusDecision d = decide(job, gang({"Succeeded", "Succeeded", "Succeeded", "Succeeded"}));
  EXPECT_EQ(d.status.state, "COMPLETED");
  EXPECT_EQ(d.status.startTime, kStart + 7);
  EXPECT_EQ(d.status.nodeList, "train-x7k2p-[0-3]");
}

// sacct: a job whose batch script exits 3 is FAILED with ExitCode 3:0.
TEST(DecideStatus, FailedTakesTheFirstFailingRanksExitStatus) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(),
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods[0] = failedRank(0, 1, kStart + 99);
  pods[2] = failedRank(2, 3, kStart + 40);
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "FAILED");
  EXPECT_EQ(d.status.stateCode, "F");
  EXPECT_EQ(d.status.exitCode, "3:0");
  EXPECT_EQ(d.status.reason, "NonZeroExitCode");
  EXPECT_EQ(d.status.endTime, kStart + 40);  // the failing rank's container's end
  EXPECT_EQ(d.deletePods, (std::vector<std::string>{"train-x7k2p-1", "train-x7k2p-3"}));
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->type, "Warning");
  expectIdempotent(job, d, pods);
}

// sacct prints a job killed by signal S as ExitCode 0:S.
TEST(DecideStatus, ASignalIsReportedAsZeroColonSignal) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(), {{"startTime", api::formatTimestamp(kStart)}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods[1] = failedRank(1, 137, kStart + 100, 9);
  EXPECT_EQ(decide(job, pods).status.exitCode, "0:9");
}

// Slurm 22.05 ends an OOM-killed job OUT_OF_MEMORY, ExitCode 0:125.
TEST(DecideStatus, OomKilledRankIsOutOfMemory) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(), {{"startTime", api::formatTimestamp(kStart)}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods[3] = failedRank(3, 137, kStart + 100, std::nullopt, "OOMKilled");
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "OUT_OF_MEMORY");
  EXPECT_EQ(d.status.stateCode, "OOM");
  EXPECT_EQ(d.status.exitCode, "0:125");
}

// slurmctld ends a job at StartTime + TimeLimit: TIMEOUT (TO), the tasks get SIGTERM and
// KillWait seconds before SIGKILL.
TEST(DecideStatus, TimeLimitEndsTheJobWithTheGracePeriod) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", {{"timeLimit", "60"}},
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  JobStatusPolicy policy;
  policy.gracePeriodSeconds = 120;
  StatusDecision d = decide(job, pods, kStart + 3599, policy);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.status.state, "RUNNING");
  d = decide(job, pods, kStart + 3600, policy);
  EXPECT_EQ(d.status.state, "TIMEOUT");
  EXPECT_EQ(d.status.stateCode, "TO");
  EXPECT_EQ(d.status.reason, "TimeLimit");
  EXPECT_EQ(d.status.endTime, kStart + 3600);
  EXPECT_EQ(d.gracePeriodSeconds, 120);
  EXPECT_EQ(d.deletePods.size(), 4U);
  expectIdempotent(job, d, pods, kStart + 3600);
}

// While no operator ran, the kubelet stopped the ranks at their activeDeadlineSeconds (phase
// Failed, reason DeadlineExceeded, the containers SIGTERMed: 143). That is the time limit, not a
// failing task: TIMEOUT "0:0", ended when the first rank was stopped.
TEST(DecideStatus, RanksStoppedAtTheirActiveDeadlineAreATimeout) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", {{"timeLimit", "60"}}, {{"startTime", api::formatTimestamp(kStart)}});
  std::vector<api::Pod> pods;
  for (int rank = 0; rank < 4; ++rank) {
    RankSpec r = rankOnItsNode(rank);
    r.phase = "Failed";
    r.exit = 143;
    r.reason = "DeadlineExceeded";
    r.finished = kStart + 86490 + rank;
    pods.push_back(rankPod(r));
  }
  const StatusDecision d = decide(job, pods, kStart + 90000, JobStatusPolicy{});
  EXPECT_EQ(d.status.state, "TIMEOUT");
  EXPECT_EQ(d.status.exitCode, "0:0");
  EXPECT_EQ(d.status.reason, "TimeLimit");
  EXPECT_EQ(d.status.endTime, kStart + 86490);
  expectIdempotent(job, d, pods, kStart + 90000);
}

TEST(DecideStatus, WithoutItsOwnLimitTheJobTakesThePartitionDefault) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(), {{"startTime", api::formatTimestamp(kStart)}});
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  JobStatusPolicy policy;
  EXPECT_EQ(decide(job, pods, kStart + core::Duration{86400} * 30, policy).status.state, "RUNNING");
  policy.defaultTimeLimit = 300;
  EXPECT_EQ(decide(job, pods, kStart + 300, policy).status.state, "TIMEOUT");
}

// scancel: a running job is CANCELLED with 0:15 (its tasks got SIGTERM); a pending one never
// ran and shows 0:0.
TEST(DecideStatus, CancelStopsTheGang) {
  api::SlurmJobObject job =
      slurmJob("RUNNING", {{"cancel", true}}, {{"startTime", api::formatTimestamp(kStart)}});
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "CANCELLED");
  EXPECT_EQ(d.status.stateCode, "CA");
  EXPECT_EQ(d.status.exitCode, "0:15");
  EXPECT_EQ(d.status.endTime, kNow);
  EXPECT_EQ(d.deletePods.size(), 4U);
  expectIdempotent(job, d, pods);

  job = slurmJob("PENDING", {{"cancel", true}});
  d = decide(job, {});
  EXPECT_EQ(d.status.state, "CANCELLED");
  EXPECT_EQ(d.status.exitCode, "0:0");
  EXPECT_TRUE(d.deletePods.empty());
  expectIdempotent(job, d, {});
}

// sbatch -p a,b: once it runs, the job's partition is the one it started in, as its pods say
// (slurmctld's pack_job reports part_ptr's name for a job that is not pending); a requeue gives
// the choice back, the partition it ran in first (rebuild_job_part_list).
TEST(DecideStatus, ARunningJobReportsThePartitionItsPodsWereMadeFor) {
  const api::SlurmJobObject job = slurmJob("PENDING", {{"partition", "a,b"}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  for (api::Pod& pod : pods) pod.metadata.annotations["kubeslurm.io/partition"] = "b";
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "RUNNING");
  EXPECT_EQ(d.status.partition, "b");
  expectIdempotent(job, d, pods);

  api::SlurmJobObject running = job;
  running.status = d.status;
  NodeHealth health = kHealthy;
  health["gpu-3"] = false;
  const StatusDecision requeued = decide(running, pods, kNow, {}, health);
  EXPECT_EQ(requeued.status.state, "REQUEUED");
  EXPECT_EQ(requeued.status.partition, "b,a");

  // Its spec changed while it ran (an admin's kubectl edit; Slurm refuses that for a running
  // job): requeued, it waits for what it asks now, and the status stays within the CRD's 253.
  const std::string longList = std::string(120, 'c') + "," + std::string(132, 'd');
  running.request.partition = longList;
  const StatusDecision moved = decide(running, pods, kNow, {}, health);
  EXPECT_EQ(moved.status.state, "REQUEUED");
  EXPECT_EQ(moved.status.partition, longList);
}

// JobRequeue=1: a batch job whose node fails is requeued (restart count + 1) unless it said
// --no-requeue, in which case it ends NODE_FAIL (NF).
TEST(DecideStatus, NodeFailureRequeuesWithARestart) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(),
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  NodeHealth health = kHealthy;
  health["gpu-3"] = false;
  const StatusDecision d = decide(job, pods, kNow, {}, health);
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.stateCode, "RQ");
  EXPECT_EQ(d.status.restarts, 1);
  EXPECT_EQ(d.status.reason, "NodeDown");
  EXPECT_FALSE(d.status.startTime.has_value());
  EXPECT_TRUE(d.status.nodeList.empty());
  EXPECT_EQ(d.deletePods.size(), 4U);
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->reason, "NodeFail");
  // Observed again: the old pods are now a stale attempt; nothing changes but their deletion.
  expectIdempotent(job, d, pods, kNow, health);
  // Once they are gone the job is plain PENDING for the scheduler.
  api::SlurmJobObject requeued = job;
  requeued.status = d.status;
  const StatusDecision later = decide(requeued, {});
  EXPECT_EQ(later.status.state, "PENDING");
  EXPECT_EQ(later.status.restarts, 1);
  expectIdempotent(requeued, later, {});
}

TEST(DecideStatus, NoRequeueEndsNodeFail) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", {{"requeue", false}}, {{"startTime", api::formatTimestamp(kStart)}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods[2] = failedPod(2, "NodeLost");
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "NODE_FAIL");
  EXPECT_EQ(d.status.stateCode, "NF");
  EXPECT_EQ(d.status.endTime, kNow);
  EXPECT_EQ(d.status.restarts, 0);
  expectIdempotent(job, d, pods);
}

TEST(DecideStatus, ARankPodGoneFromARunningGangIsANodeFailure) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(), {{"startTime", api::formatTimestamp(kStart)}});
  std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  pods.erase(pods.begin() + 1);
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.restarts, 1);
}

// Invariant 1: a gang the kubelet refuses is rolled back whole and the job queued again; the
// refusal is the scheduler's stale view, not the job's fault, so no restart is counted.
TEST(DecideStatus, KubeletRejectionRollsTheGangBack) {
  const api::SlurmJobObject job = slurmJob("PENDING");
  std::vector<api::Pod> pods = gang({"Running", "Pending", "Pending", "Pending"});
  pods[2] = failedPod(2, "OutOfnvidia.com/gpu");
  const StatusDecision d = decide(job, pods);
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.restarts, 0);
  EXPECT_EQ(d.deletePods.size(), 4U);  // the refused pod too: its name is the next gang's
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->reason, "GangRolledBack");
  EXPECT_NE(d.event->message.find("OutOfnvidia.com/gpu"), std::string::npos);
  expectIdempotent(job, d, pods);
  api::SlurmJobObject rolledBack = job;
  rolledBack.status = d.status;
  EXPECT_TRUE(decide(rolledBack, markDeleting(pods)).deletePods.empty());
}

TEST(DecideStatus, AFinishedJobOnlyStopsWhatStillRuns) {
  const api::SlurmJobObject job = slurmJob("FAILED", Json::object(), {{"exitCode", "3:0"}});
  std::vector<api::Pod> pods = gang({"Failed", "Running", "Succeeded", "Running"});
  const StatusDecision d = decide(job, pods);
  EXPECT_FALSE(d.changed);
  EXPECT_EQ(d.status, *job.status);
  EXPECT_EQ(d.deletePods, (std::vector<std::string>{"train-x7k2p-1", "train-x7k2p-3"}));
}

// scontrol requeue (spec.requeueRequests above status.requeuesHandled) on a running job:
// slurmctld's _job_requeue_op (Slurm 22.05 src/slurmctld/job_mgr.c) counts a restart and
// deallocates the nodes; here the job is REQUEUED as its next attempt, as a node-failure
// requeue, its ranks are stopped with KillWait, and PENDING once they are gone.
TEST(DecideStatus, RequeueRequestSendsARunningJobBackToTheQueue) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", {{"requeueRequests", 1}},
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  ASSERT_TRUE(requeueRequested(job));
  const std::vector<api::Pod> pods = gang({"Running", "Running", "Running", "Running"});
  JobStatusPolicy policy;
  policy.gracePeriodSeconds = 30;
  const StatusDecision d = decide(job, pods, kNow, policy);
  EXPECT_TRUE(d.changed);
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.stateCode, "RQ");
  EXPECT_EQ(d.status.restarts, 1);
  EXPECT_EQ(d.status.requeuesHandled, 1);
  // batch_requeue_fini pushes the begin time: squeue shows (BeginTime).
  EXPECT_EQ(d.status.reason, "BeginTime");
  EXPECT_FALSE(d.status.startTime.has_value());
  EXPECT_FALSE(d.status.endTime.has_value());
  EXPECT_TRUE(d.status.nodeList.empty());
  EXPECT_EQ(d.deletePods.size(), 4U);
  EXPECT_EQ(d.gracePeriodSeconds, 30);  // SIGTERM, then SIGKILL after KillWait, as scancel
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->reason, "Requeued");

  // Handled once: observed again with the old pods still terminating, nothing more happens.
  api::SlurmJobObject requeued = job;
  requeued.status = d.status;
  EXPECT_FALSE(requeueRequested(requeued));
  const StatusDecision again = decide(requeued, markDeleting(pods));
  EXPECT_FALSE(again.changed);
  EXPECT_TRUE(again.deletePods.empty());
  expectIdempotent(job, d, pods);
  // The old attempt gone: PENDING, planned again; its next gang runs as attempt 1.
  const StatusDecision later = decide(requeued, {});
  EXPECT_EQ(later.status.state, "PENDING");
  EXPECT_EQ(later.status.restarts, 1);
  requeued.status = later.status;
  requeued.status->state = "RUNNING";
  const StatusDecision rerun =
      decide(requeued, gang({"Running", "Running", "Running", "Running"}, 1));
  EXPECT_EQ(rerun.status.state, "RUNNING");
  EXPECT_EQ(rerun.status.restarts, 1);

  // A second request (the count raised again) requeues once more.
  api::SlurmJobObject twice = slurmJob(
      "RUNNING", {{"requeueRequests", 2}},
      {{"startTime", api::formatTimestamp(kStart)}, {"restarts", 1}, {"requeuesHandled", 1}});
  const StatusDecision second =
      decide(twice, gang({"Running", "Running", "Running", "Running"}, 1));
  EXPECT_EQ(second.status.state, "REQUEUED");
  EXPECT_EQ(second.status.restarts, 2);
  EXPECT_EQ(second.status.requeuesHandled, 2);
}

// "Requeue a running, suspended or finished Slurm batch job into pending state" (scontrol.1):
// every finished state, the exit code of the last run kept until the next one ends.
TEST(DecideStatus, RequeueRequestRunsAFinishedJobAgain) {
  for (const std::string state :
       {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}) {
    SCOPED_TRACE(state);
    const api::SlurmJobObject job =
        slurmJob(state, {{"requeueRequests", 1}},
                 {{"exitCode", "3:0"}, {"endTime", api::formatTimestamp(kStart + 100)}});
    // Finished ranks kept for their logs hold the names of the next attempt's ranks.
    RankSpec done;
    done.rank = 1;
    done.node = "gpu-2";
    done.phase = "Succeeded";
    const std::vector<api::Pod> pods = {failedRank(0, 3), rankPod(done)};
    const StatusDecision d = decide(job, pods);
    EXPECT_EQ(d.status.state, "REQUEUED");
    EXPECT_EQ(d.status.restarts, 1);
    EXPECT_EQ(d.status.requeuesHandled, 1);
    EXPECT_FALSE(d.status.endTime.has_value());
    EXPECT_EQ(d.status.exitCode, "3:0");
    EXPECT_EQ(d.deletePods.size(), 2U);
    expectIdempotent(job, d, pods);
  }
}

// requeuehold: the CLI sets spec.hold with the request; the job waits as JobHeldUser
// (_job_requeue_op: WAIT_HELD_USER, priority 0) until scontrol release.
TEST(DecideStatus, RequeueHoldLeavesTheJobHeld) {
  const api::SlurmJobObject job = slurmJob("RUNNING", {{"requeueRequests", 1}, {"hold", true}},
                                           {{"startTime", api::formatTimestamp(kStart)}});
  const StatusDecision d = decide(job, gang({"Running", "Running", "Running", "Running"}));
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.reason, "JobHeldUser");
  EXPECT_EQ(d.status.restarts, 1);
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->message, "job requeued and held (scontrol requeue)");
}

// _job_requeue_op's refusals, in its order: a job that may not be requeued
// (ESLURM_DISABLED, whatever its state), then a pending one (ESLURM_JOB_PENDING). A refused
// request is handled too: it never fires later.
TEST(DecideStatus, RequeueRequestRefusals) {
  struct Case {
    std::string state;
    Json spec;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"RUNNING", {{"requeue", false}}, "Requested operation is presently disabled"},
      {"COMPLETED", {{"requeue", false}}, "Requested operation is presently disabled"},
      {"PENDING", {{"requeue", false}}, "Requested operation is presently disabled"},
      {"PENDING", Json::object(), "Job is pending execution"},
      {"REQUEUED", Json::object(), "Job is pending execution"},
      // spec.cancel left set (the CLI clears it): the next run would be cancelled at once.
      {"CANCELLED", {{"cancel", true}}, "spec.cancel is set"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.state + " " + c.spec.dump());
    Json spec = c.spec;
    spec["requeueRequests"] = 3;
    const api::SlurmJobObject job =
        slurmJob(c.state, spec,
                 {{"requeuesHandled", 2},
                  {"reason", c.state == "RUNNING" ? "None" : "Priority"},
                  {"startTime", api::formatTimestamp(kStart)},
                  {"nodeList", "train-x7k2p-[0-3]"}});
    // A running job's ranks run; the others have none (a REQUEUED job's are gone).
    const std::vector<api::Pod> pods = c.state == "RUNNING"
                                           ? gang({"Running", "Running", "Running", "Running"})
                                           : std::vector<api::Pod>{};
    const StatusDecision d = decide(job, pods);
    EXPECT_TRUE(d.changed);
    EXPECT_EQ(d.status.state, c.state);
    EXPECT_EQ(d.status.restarts, 0);
    EXPECT_EQ(d.status.requeuesHandled, 3);
    EXPECT_TRUE(d.deletePods.empty());
    ASSERT_TRUE(d.event.has_value());
    EXPECT_EQ(d.event->type, "Warning");
    EXPECT_EQ(d.event->reason, "RequeueRefused");
    EXPECT_NE(d.event->message.find(c.message), std::string::npos) << d.event->message;
    api::SlurmJobObject refused = job;
    refused.status = d.status;
    EXPECT_FALSE(requeueRequested(refused));
    if (c.state != "REQUEUED") expectIdempotent(job, d, pods);  // REQUEUED moves on to PENDING
  }
}

// scancel and a requeue request both pending on a running job: the cancel is taken (its
// request is older: the CLI's requeue clears spec.cancel), and the requeue is then refused.
TEST(DecideStatus, CancelBeatsARequeueRequestOnARunningJob) {
  const api::SlurmJobObject job = slurmJob("RUNNING", {{"cancel", true}, {"requeueRequests", 1}},
                                           {{"startTime", api::formatTimestamp(kStart)}});
  const StatusDecision d = decide(job, gang({"Running", "Running", "Running", "Running"}));
  EXPECT_EQ(d.status.state, "CANCELLED");
  EXPECT_FALSE(d.status.requeuesHandled.has_value());
}

// Kueue's waitForPodsReady for a gang: bound at kStart (the pods' creationTimestamp, which the
// API server sets), rank 3 never leaves its init container. At the timeout the gang is rolled
// back whole, the job waits a backoff (BeginTime, as squeue shows a job that may not start
// yet), and the kubelet's reason for the stuck rank is in the event and reasonDetail.
std::vector<api::Pod> stuckGang() {
  std::vector<api::Pod> pods;
  for (int i = 0; i < 4; ++i) {
    RankSpec r = rankOnItsNode(i);
    r.phase = i == 3 ? "Pending" : "Running";
    r.created = kStart + i;
    if (i == 3) r.initWaiting = "ImagePullBackOff";
    pods.push_back(rankPod(r));
  }
  return pods;
}

TEST(GangStartTimeout, ABoundGangNotRunningInTimeIsRolledBackAndRetriedLater) {
  const api::SlurmJobObject job = slurmJob("PENDING");
  const std::vector<api::Pod> pods = stuckGang();
  const GangObservation g = observeGang(job, pods, kHealthy);
  EXPECT_EQ(g.boundSince, kStart);
  EXPECT_EQ(g.notStarted, "rank 3 on gpu-4: init container tools: ImagePullBackOff (pull failed)");

  JobStatusPolicy policy;
  policy.gangStartTimeout = 300;
  EXPECT_FALSE(decide(job, pods, kStart + 299, policy).changed) << "not yet";

  const StatusDecision d = decide(job, pods, kStart + 300, policy);
  EXPECT_EQ(d.status.state, "REQUEUED");
  EXPECT_EQ(d.status.reason, "BeginTime");
  EXPECT_EQ(d.status.restarts, 0) << "the same attempt: the gang never ran";
  EXPECT_EQ(d.status.startFailures, 1);
  EXPECT_EQ(d.status.retryStartAfter, kStart + 300 + 60);
  EXPECT_EQ(d.deletePods.size(), 4U) << "the whole gang goes";
  ASSERT_TRUE(d.event.has_value());
  EXPECT_EQ(d.event->reason, "StartTimeout");
  EXPECT_EQ(d.event->message,
            "gang did not start within 300s (rank 3 on gpu-4: init container tools: "
            "ImagePullBackOff (pull failed)); rolled back, retry 1 of 3 in 60s");

  // Decided again before the watch shows the deletes: counted once.
  api::SlurmJobObject next = job;
  next.status = d.status;
  const StatusDecision again = decide(next, pods, kStart + 310, policy);
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.status.startFailures, 1);
}

TEST(GangStartTimeout, PastTheRetryLimitTheJobFailsWithJobLaunchFailure) {
  const api::SlurmJobObject job = slurmJob("PENDING", Json::object(), {{"startFailures", 3}});
  const std::vector<api::Pod> pods = stuckGang();
  const StatusDecision d = decide(job, pods, kStart + 600);  // the default: 600 s, 3 retries
  EXPECT_EQ(d.status.state, "FAILED");
  EXPECT_EQ(d.status.reason, "JobLaunchFailure");
  EXPECT_EQ(d.status.exitCode, "0:0");
  EXPECT_EQ(d.status.startFailures, 4);
  EXPECT_EQ(d.status.startTime, kStart) << "Slurm's StartTime: when the nodes were allocated";
  EXPECT_EQ(d.status.endTime, kStart + 600);
  EXPECT_EQ(d.deletePods.size(), 4U);
  EXPECT_NE(d.status.reasonDetail.find("4 times"), std::string::npos) << d.status.reasonDetail;
  expectIdempotent(job, d, pods, kStart + 600);
}

TEST(GangStartTimeout, ARunningGangOrNoTimeoutIsLeftAlone) {
  std::vector<api::Pod> pods = stuckGang();
  JobStatusPolicy off;
  off.gangStartTimeout = 0;
  EXPECT_FALSE(decide(slurmJob("PENDING"), pods, kStart + 100000, off).changed);
  // A gang still being created (3 of 4 pods) is the binder's, whatever its age.
  pods.pop_back();
  EXPECT_FALSE(decide(slurmJob("PENDING"), pods, kStart + 100000).changed);
}

TEST(GangStartTimeout, BackoffDoublesFromAMinuteToSixteen) {
  EXPECT_EQ(gangStartBackoff(1), 60);
  EXPECT_EQ(gangStartBackoff(2), 120);
  EXPECT_EQ(gangStartBackoff(3), 240);
  EXPECT_EQ(gangStartBackoff(5), 960);
  EXPECT_EQ(gangStartBackoff(50), 960);
  EXPECT_EQ(gangStartBackoff(0), 60);
}

// The operator was down while the job ran to its end: the job ends when its containers did,
// so sacct's Elapsed and the account's usage are the run's, not the outage's. A node clock
// ahead of the operator's, or a finish before the recorded start, is kept within [start, now].
TEST(DecideStatus, AJobThatEndedWhileNoOperatorRanEndsWhenItsContainersDid) {
  const api::SlurmJobObject job =
      slurmJob("RUNNING", Json::object(),
               {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  std::vector<api::Pod> pods = gang({"Succeeded", "Running", "Running", "Running"});
  const core::Time muchLater = kStart + 86400;
  EXPECT_EQ(decide(job, pods, muchLater).status.endTime, kStart + 100);

  pods[0] = failedRank(0, 2, kStart + 5000);  // "finished" after the operator's now
  EXPECT_EQ(decide(job, pods, kStart + 600).status.endTime, kStart + 600);
  pods[0] = failedRank(0, 2, kStart - 50);  // before the job's start
  EXPECT_EQ(decide(job, pods, kStart + 600).status.endTime, kStart);

  // A template job (every rank runs the work) ends with its last rank.
  const api::SlurmJobObject everyRank = slurmJob(
      "RUNNING",
      {{"podTemplate",
        {{"spec", {{"containers", Json::array({{{"name", "rank"}, {"image", "pytorch"}}})}}}}}},
      {{"startTime", api::formatTimestamp(kStart)}, {"nodeList", "train-x7k2p-[0-3]"}});
  std::vector<api::Pod> all;
  for (int i = 0; i < 4; ++i) {
    RankSpec r = rankOnItsNode(i);
    r.phase = "Succeeded";
    r.finished = kStart + 100 + 10 * i;
    all.push_back(rankPod(r));
  }
  const StatusDecision d = decide(everyRank, all, muchLater);
  EXPECT_EQ(d.status.state, "COMPLETED");
  EXPECT_EQ(d.status.endTime, kStart + 130);
}

// A status write is a merge patch from the job as cached: what changed, and null for what the
// new status dropped, also when the cache holds the job without the fields it models as JSON
// (holdSlurmJob); with the cached resourceVersion as precondition.
// A pending job's status is written when its reason moves, and once for a first priority; the
// drift of its priority and estimated start alone writes nothing (the query API serves them).
TEST(PendingStatus, WrittenWhenTheReasonMovesNotWhenPriorityOrEstimateDrift) {
  api::SlurmJobStatus current;
  current.state = "PENDING";
  current.reason = "Priority";
  current.priority = 1000;
  current.estimatedStart = 100;
  struct Case {
    const char* what;
    std::string reason;
    std::string detail;
    std::optional<core::Time> estimate;
    std::optional<std::int64_t> priority;
    bool written;
  };
  const std::vector<Case> cases = {
      {"priority and estimate drift", "Priority", "", 160, 1200, false},
      {"nothing moved", "Priority", "", 100, 1000, false},
      {"no priority in this plan", "Priority", "", std::nullopt, std::nullopt, false},
      {"the reason moved", "Resources", "", 160, 1200, true},
      {"the detail moved", "Priority", "UnavailableNodes:n-1", 100, 1000, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto next = pendingStatusToWrite(current, c.reason, c.detail, c.estimate, c.priority);
    ASSERT_EQ(next.has_value(), c.written);
    if (!next) continue;
    // What is written carries the estimate and priority of that moment, the rest kept.
    EXPECT_EQ(next->reason, c.reason);
    EXPECT_EQ(next->reasonDetail, c.detail);
    EXPECT_EQ(next->estimatedStart, c.estimate);
    EXPECT_EQ(next->priority, c.priority);
    EXPECT_EQ(next->state, "PENDING");
  }
  // A job's first priority is recorded once, its reason unchanged.
  api::SlurmJobStatus fresh;
  fresh.state = "PENDING";
  fresh.reason = "Priority";
  const auto first = pendingStatusToWrite(fresh, "Priority", "", std::nullopt, 1500);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->priority, 1500);
  EXPECT_FALSE(pendingStatusToWrite(*first, "Priority", "", 200, 1700).has_value());
  // Without a priority in the plan, a recorded one is kept.
  const auto kept = pendingStatusToWrite(current, "Resources", "", std::nullopt, std::nullopt);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->priority, 1000);
}

TEST(StatusPatch, CarriesWhatChangedAndNullForWhatWentFromTheCachedJob) {
  Json object = {
      {"apiVersion", "kubeslurm.io/v1alpha1"},
      {"kind", "SlurmJob"},
      {"metadata", {{"name", "train"}, {"namespace", "team-a"}, {"resourceVersion", "9"}}},
      {"spec", {{"jobName", "train"}, {"script", "#!/bin/bash\n"}, {"nodes", 1}}},
      {"status",
       {{"jobId", 7},
        {"state", "PENDING"},
        {"reason", "Priority"},
        {"conditions", Json::array({{{"type", "Valid"}, {"status", "True"}}})}}}};
  const api::SlurmJobObject whole = ok(api::decodeSlurmJob(object));
  const std::shared_ptr<api::SlurmJobObject> held = heldSlurmJob(holdSlurmJob(Json(object)));
  ASSERT_NE(held, nullptr);

  api::SlurmJobObject next = whole;
  next.status->state = "RUNNING";
  next.status->reason.clear();
  const Json written = api::encodeSlurmJob(next);
  const Json expected = {{"metadata", {{"resourceVersion", "9"}}},
                         {"status", {{"state", "RUNNING"}, {"reason", nullptr}}}};
  EXPECT_EQ(statusPatch(whole, written), expected);
  EXPECT_EQ(statusPatch(*held, written), expected);
}

}  // namespace
}  // namespace kubeslurm::controllers

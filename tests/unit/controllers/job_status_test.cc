#include "controllers/job_status.h"

#include <gtest/gtest.h>

#include "operator/slurm/names.h"

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
  core::Time started = kStart;
  core::Time finished = kStart + 100;
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
  return ok(api::decodePod(pod));
}

// Rank `rank` on gpu-<rank+1>, its container ended with `exit` (and `signal`).
api::Pod failedRank(int rank, int exit, core::Time finished = kStart + 100,
                    std::optional<int> signal = std::nullopt,
                    const std::string& terminatedReason = "Error") {
  RankSpec r;
  r.rank = rank;
  r.node = "gpu-" + std::to_string(rank + 1);
  r.phase = "Failed";
  r.exit = exit;
  r.signal = signal;
  r.terminatedReason = terminatedReason;
  r.finished = finished;
  return rankPod(r);
}

// Rank `rank` failed by the kubelet's hand: pod status.reason `reason`, no container exit.
api::Pod failedPod(int rank, const std::string& reason) {
  RankSpec r;
  r.rank = rank;
  r.node = "gpu-" + std::to_string(rank + 1);
  r.phase = "Failed";
  r.reason = reason;
  return rankPod(r);
}

// Four ranks on gpu-1..gpu-4, each in the given phase.
std::vector<api::Pod> gang(const std::vector<std::string>& phases, int attempt = 0) {
  std::vector<api::Pod> pods;
  for (int i = 0; i < static_cast<int>(phases.size()); ++i) {
    RankSpec r;
    r.rank = i;
    r.node = "gpu-" + std::to_string(i + 1);
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
  EXPECT_EQ(d.status.endTime, kNow);
  EXPECT_EQ(d.status.startTime, kStart);
  EXPECT_EQ(d.deletePods,
            (std::vector<std::string>{"train-x7k2p-1", "train-x7k2p-2", "train-x7k2p-3"}));
  EXPECT_EQ(d.gracePeriodSeconds, 30);
  expectIdempotent(job, d, pods);
  api::SlurmJobObject done = job;
  done.status = d.status;
  EXPECT_TRUE(decide(done, markDeleting(pods)).deletePods.empty());
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
  EXPECT_EQ(d.status.endTime, kNow);
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

}  // namespace
}  // namespace kubeslurm::controllers

#include "controllers/rank_tracking.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/slurmjob.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::SlurmJobObject job(const std::string& state, int restarts = 0,
                        const std::string& uid = "job-uid") {
  Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                 {"kind", "SlurmJob"},
                 {"metadata", {{"name", "train"}, {"namespace", "team-a"}, {"uid", uid}}},
                 {"spec", {{"jobName", "train"}, {"script", "#!/bin/sh\ntrue\n"}}},
                 {"status", {{"jobId", 7}, {"state", state}, {"restarts", restarts}}}};
  return api::decodeSlurmJob(object).value();
}

struct RankPod {
  int rank = 0;
  int attempt = 0;
  std::string phase = "Succeeded";
  bool deleting = false;
  bool bound = true;
  std::vector<std::string> finalizers = {"kubeslurm.io/job-tracking"};
};

// Rank `rank` of a 4-rank gang of job "train" (owner uid job-uid), as the binder makes it.
api::Pod rankPod(const RankPod& r) {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "train-" + std::to_string(r.rank)},
                {"namespace", "team-a"},
                {"uid", "pod-" + std::to_string(r.rank)},
                {"resourceVersion", std::to_string(100 + r.rank)},
                {"labels",
                 {{"kubeslurm.io/job-name", "train"},
                  {"kubeslurm.io/rank", std::to_string(r.rank)},
                  {"kubeslurm.io/attempt", std::to_string(r.attempt)}}},
                {"annotations",
                 {{"kubeslurm.io/gang-size", "4"},
                  {"kubeslurm.io/planned-node", "gpu-" + std::to_string(r.rank)}}},
                {"ownerReferences", Json::array({{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                                  {"kind", "SlurmJob"},
                                                  {"name", "train"},
                                                  {"uid", "job-uid"}}})},
                {"finalizers", r.finalizers}}},
              {"spec", {{"containers", Json::array({{{"name", "rank"}, {"image", "pytorch"}}})}}},
              {"status", {{"phase", r.phase}}}};
  if (r.bound) pod["spec"]["nodeName"] = "gpu-" + std::to_string(r.rank);
  if (r.deleting) pod["metadata"]["deletionTimestamp"] = "2026-11-27T08:00:00Z";
  return api::decodePod(pod).value();
}

// Every rank finished; deleted by someone while no operator ran when `deleting`.
std::vector<api::Pod> finishedGang(bool deleting, int attempt = 0) {
  std::vector<api::Pod> pods;
  for (int rank = 0; rank < 4; ++rank) {
    pods.push_back(rankPod({.rank = rank, .attempt = attempt, .deleting = deleting}));
  }
  return pods;
}

std::vector<std::string> names(const std::vector<TrackingRelease>& releases) {
  std::vector<std::string> out;
  for (const TrackingRelease& r : releases) out.push_back(r.name);
  return out;
}

// The point of the finalizer: a RUNNING job whose ranks ended, and were deleted, while no
// operator ran still has them to read; they go once the job has recorded its end.
TEST(RankTracking, FinishedRanksOfARunningJobAreKeptUntilItsEndIsRecorded) {
  const std::vector<api::Pod> pods = finishedGang(/*deleting=*/true);
  const std::vector<api::SlurmJobObject> running = {job("RUNNING")};
  EXPECT_THAT(rankPodsToRelease(pods, running), IsEmpty());
  const std::vector<api::SlurmJobObject> completed = {job("COMPLETED")};
  EXPECT_THAT(names(rankPodsToRelease(pods, completed)),
              ElementsAre("train-0", "train-1", "train-2", "train-3"));
}

// A finished job's ranks are released whether or not anyone deletes them (rank 0 stays for its
// output until retention, without the finalizer); ranks still running are not touched.
TEST(RankTracking, OnlyFinishedOrDeletingPodsAreReleased) {
  std::vector<api::Pod> pods = finishedGang(/*deleting=*/false);
  pods[1] = rankPod({.rank = 1, .phase = "Running"});
  pods[2] = rankPod({.rank = 2, .phase = "Running", .deleting = true});
  const std::vector<api::SlurmJobObject> completed = {job("COMPLETED")};
  EXPECT_THAT(names(rankPodsToRelease(pods, completed)),
              ElementsAre("train-0", "train-2", "train-3"));
}

TEST(RankTracking, PodsOfAGoneJobOrAnotherIncarnationAreReleased) {
  const std::vector<api::Pod> pods = finishedGang(/*deleting=*/true);
  EXPECT_EQ(rankPodsToRelease(pods, {}).size(), 4U);
  const std::vector<api::SlurmJobObject> recreated = {job("RUNNING", 0, "another-uid")};
  EXPECT_EQ(rankPodsToRelease(pods, recreated).size(), 4U);
}

TEST(RankTracking, AnAttemptTheJobHasLeftIsReleased) {
  const std::vector<api::Pod> pods = finishedGang(/*deleting=*/true, /*attempt=*/0);
  const std::vector<api::SlurmJobObject> requeued = {job("RUNNING", /*restarts=*/1)};
  EXPECT_EQ(rankPodsToRelease(pods, requeued).size(), 4U);
}

// A gang bound just before its operator died: the job is still PENDING, but its whole gang ran
// and its end is the job's to record. A gang that never ran whole (a rollback) has no end.
TEST(RankTracking, APendingJobClaimsOnlyAWholeBoundGang) {
  std::vector<api::Pod> pods = finishedGang(/*deleting=*/true);
  const std::vector<api::SlurmJobObject> pending = {job("PENDING")};
  EXPECT_THAT(rankPodsToRelease(pods, pending), IsEmpty());
  pods[3] = rankPod({.rank = 3, .phase = "Pending", .deleting = true, .bound = false});
  EXPECT_THAT(names(rankPodsToRelease(pods, pending)),
              ElementsAre("train-0", "train-1", "train-2", "train-3"));
  pods.pop_back();
  EXPECT_EQ(rankPodsToRelease(pods, pending).size(), 3U);
}

// The operator's own rollbacks: REQUEUED at the same attempt (a start timeout, a kubelet's
// refusal) and never-bound pods.
TEST(RankTracking, RolledBackGangsAreReleased) {
  const std::vector<api::Pod> pods = finishedGang(/*deleting=*/true);
  const std::vector<api::SlurmJobObject> requeued = {job("REQUEUED")};
  EXPECT_EQ(rankPodsToRelease(pods, requeued).size(), 4U);
  const std::vector<api::Pod> unbound = {
      rankPod({.rank = 0, .phase = "Pending", .deleting = true, .bound = false})};
  const std::vector<api::SlurmJobObject> running = {job("RUNNING")};
  EXPECT_EQ(rankPodsToRelease(unbound, running).size(), 1U);
}

TEST(RankTracking, OtherFinalizersAreKeptAndPodsWithoutOursIgnored) {
  const std::vector<api::Pod> pods = {
      rankPod({.rank = 0, .finalizers = {"example.com/audit", "kubeslurm.io/job-tracking"}}),
      rankPod({.rank = 1, .finalizers = {"example.com/audit"}}),
      rankPod({.rank = 2, .finalizers = {}})};
  const std::vector<api::SlurmJobObject> completed = {job("COMPLETED")};
  const std::vector<TrackingRelease> released = rankPodsToRelease(pods, completed);
  ASSERT_EQ(released.size(), 1U);
  EXPECT_EQ(released[0], (TrackingRelease{"team-a", "train-0", "100", {"example.com/audit"}}));
  EXPECT_EQ(releasePatch(released[0]), Json::parse(R"({"metadata": {"resourceVersion": "100",
                                         "finalizers": ["example.com/audit"]}})"));
  EXPECT_EQ(releasePatch({"team-a", "train-3", "103", {}}),
            Json::parse(R"({"metadata": {"resourceVersion": "103", "finalizers": null}})"));
}

}  // namespace
}  // namespace kubeslurm::controllers

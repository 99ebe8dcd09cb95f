// sbatch --test-only's plan (controllers/will_run.h), against the reference's will-run lines:
// "Job 1 to start at T using 4 processors on nodes gpu-node-[001-004] in partition train", a
// start at a running job's end when the cluster is full, and "Requested node configuration is
// not available" for more nodes than exist (../shared/reference/slurm-22.05.md).
#include "controllers/will_run.h"

#include <gtest/gtest.h>

#include "controllers/job_request.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kNow = 1795000000;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

api::Node node(const std::string& name) {
  return ok(api::decodeNode(
      {{"apiVersion", "v1"},
       {"kind", "Node"},
       {"metadata", {{"name", name}}},
       {"status",
        {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
         {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}}));
}

slurm::JobRequest request(std::uint32_t nodes, const std::string& partition = "") {
  slurm::JobRequest r;
  r.nodes = slurm::NodeRange{nodes, nodes};
  r.gres = {slurm::GresRequest{"gpu", "", 8}};
  if (!partition.empty()) r.partition = partition;
  return r;
}

class TestOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    objects.nodes = {node("gpu-1"), node("gpu-2"), node("gpu-3")};
    objects.partitions.push_back(ok(api::decodePartition(
        {{"apiVersion", "kubeslurm.io/v1alpha1"},
         {"kind", "Partition"},
         {"metadata", {{"name", "train"}}},
         {"spec", {{"nodes", "gpu-[1-3]"}, {"default", true}, {"maxTime", "1:00:00"}}}})));
  }

  StatusOr<WillRunResult> testOnly(const slurm::JobRequest& r, const SnapshotIndex& index) {
    return planWillRun(index, objects.partitions, r, "alice", "root", 7, kNow, core::Budget{});
  }

  ClusterObjects objects;
};

TEST_F(TestOnly, AnIdleClusterStartsItNow) {
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  const WillRunResult result = ok(testOnly(request(2), index));
  EXPECT_EQ(result.start, kNow);
  EXPECT_EQ(result.nodes, "gpu-[1-2]");
  EXPECT_EQ(result.processors, 2u);  // one task of one CPU per node
  EXPECT_EQ(result.partition, "train");
}

// The cycle's own starts hold their nodes: a what-if right after the cycle waits for them.
TEST_F(TestOnly, NodesTheCycleJustGaveAwayAreNotFree) {
  SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  core::Job running =
      ok(coreJob(request(2), objects.partitions[0], 5, "bob", kNow, objects.nodes.size()));
  index.snapshot.jobs.push_back(running);
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1u);
  applyPlan(index.snapshot, plan, kNow);
  EXPECT_EQ(index.snapshot.jobs[0].phase, core::JobPhase::kRunning);

  const WillRunResult result = ok(testOnly(request(3), index));
  EXPECT_EQ(result.start, kNow + 3600);  // when the running job's hour is up
  EXPECT_EQ(result.nodes, "gpu-[1-3]");
}

TEST_F(TestOnly, MoreNodesThanThePartitionHasIsNotAvailable) {
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  const auto result = testOnly(request(4), index);
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(result.status().message(), "Requested node configuration is not available");
}

// --gres=gpu:h100:8 where no GPU is an H100: slurmctld answers that no node configuration
// can hold it (issue 20); where some are, it starts there and only there.
TEST_F(TestOnly, AGpuTypeNoNodeHasIsNotAvailableAndOneSomeHaveStartsThere) {
  slurm::JobRequest typed = request(1);
  typed.gres = {slurm::GresRequest{"gpu", "h100", 8}};
  const auto none = testOnly(typed, buildSnapshot(objects, SnapshotOptions{}, kNow));
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(none.status().message(), "Requested node configuration is not available");

  std::vector<api::Node> typedNodes = {node("gpu-1"), node("gpu-2"), node("gpu-3")};
  for (std::size_t i = 0; i < typedNodes.size(); ++i) {
    typedNodes[i].metadata.labels["nvidia.com/gpu.product"] =
        i == 2 ? "NVIDIA-H100-80GB-HBM3" : "NVIDIA-A100-SXM4-80GB";
  }
  objects.nodes = {typedNodes[0], typedNodes[1], typedNodes[2]};
  const WillRunResult there = ok(testOnly(typed, buildSnapshot(objects, SnapshotOptions{}, kNow)));
  EXPECT_EQ(there.nodes, "gpu-3");
  typed.nodes = slurm::NodeRange{2, 2};
  EXPECT_EQ(testOnly(typed, buildSnapshot(objects, SnapshotOptions{}, kNow)).status().message(),
            "Requested node configuration is not available");
}

// sbatch --test-only -p small,train: slurmctld's job_start_data tries each partition and
// answers with the one of the earliest start (job_scheduler.c); `small` holds one node.
TEST_F(TestOnly, SeveralPartitionsAnswerWithTheOneWhereItStarts) {
  objects.partitions.push_back(ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                                                        {"kind", "Partition"},
                                                        {"metadata", {{"name", "small"}}},
                                                        {"spec", {{"nodes", "gpu-3"}}}})));
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  EXPECT_EQ(ok(testOnly(request(1, "small,train"), index)).partition, "small");
  const WillRunResult result = ok(testOnly(request(2, "small,train"), index));
  EXPECT_EQ(result.partition, "train");
  EXPECT_EQ(result.nodes, "gpu-[1-2]");
}

TEST_F(TestOnly, AnUnknownPartitionIsInvalid) {
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  const auto result = testOnly(request(1, "nope"), index);
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("nope"), std::string::npos) << result.status().message();
}

// The operator's --test-only handler: a stamped SlurmJob planned under the id it is given (the
// next one, peeked, not used up), for the user the webhook stamped.
TEST_F(TestOnly, AStampedSlurmJobIsPlannedUnderTheGivenId) {
  WillRunCluster cluster{
      std::make_shared<const SnapshotIndex>(buildSnapshot(objects, SnapshotOptions{}, kNow)),
      objects.partitions, objects.accounts};
  Json job = {
      {"apiVersion", "kubeslurm.io/v1alpha1"},
      {"kind", "SlurmJob"},
      {"metadata", {{"name", "what-if"}, {"namespace", "team-a"}}},
      {"spec", {{"user", "alice"}, {"nodes", 2}, {"gres", "gpu:8"}, {"script", "#!/bin/sh\n"}}}};
  const WillRunAnswer answer = ok(willRunForJob(cluster, "team-a", job, 42, kNow, {}));
  EXPECT_EQ(answer.jobId, 42);
  EXPECT_EQ(answer.result.nodes, "gpu-[1-2]");

  job["spec"].erase("user");  // never planned as nobody in particular
  EXPECT_EQ(willRunForJob(cluster, "team-a", job, 42, kNow, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(willRunForJob(cluster, "team-a", Json::array(), 42, kNow, {}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubeslurm::controllers

#include "controllers/job_request.h"

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

slurm::GresRequest gpu(std::uint64_t count, std::string type = {}) {
  slurm::GresRequest gres;
  gres.type = std::move(type);
  gres.count = count;
  return gres;
}

api::Partition partition(std::optional<std::int64_t> defaultSeconds,
                         std::optional<std::int64_t> maxSeconds) {
  api::Partition part;
  part.metadata.name = "gpu";
  if (defaultSeconds) part.spec.defaultTime = api::SlurmDuration{"", {defaultSeconds}};
  if (maxSeconds) part.spec.maxTime = api::SlurmDuration{"", {maxSeconds}};
  return part;
}

TEST(NodeRequest, GresIsPerNodeAndTypedEntriesAdd) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{4, std::nullopt};
  request.gres = {gpu(8)};
  auto nodes = nodeRequest(request);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->minNodes, 4U);
  EXPECT_EQ(nodes->maxNodes, 4U);
  EXPECT_EQ(nodes->gpusPerNode, 8U);
  EXPECT_EQ(nodes->tasksPerNode, 1U);
  EXPECT_EQ(nodes->cpuMillisPerNode, 1000U);

  request.gres = {gpu(2, "a100"), gpu(2, "a100")};
  EXPECT_EQ(nodeRequest(request)->gpusPerNode, 4U);
}

TEST(NodeRequest, JobWideGpusSpreadOverTheNodes) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, 4};
  request.gpus = {gpu(12)};
  auto nodes = nodeRequest(request);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->gpusPerNode, 6U);
  EXPECT_EQ(nodes->maxNodes, 4U);
  request.gpus = {gpu(13)};
  EXPECT_EQ(nodeRequest(request)->gpusPerNode, 7U);  // rounded up: no node gets fewer
}

TEST(NodeRequest, TasksDriveGpusPerTaskAndCpus) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, std::nullopt};
  request.ntasks = 8;
  request.cpusPerTask = 6;
  request.gpusPerTask = {gpu(2)};
  auto nodes = nodeRequest(request);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->tasksPerNode, 4U);
  EXPECT_EQ(nodes->gpusPerNode, 8U);
  EXPECT_EQ(nodes->cpuMillisPerNode, 24000U);
}

TEST(NodeRequest, AgreeingGpuOptionsAreAcceptedConflictingOnesRefused) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, std::nullopt};
  request.gres = {gpu(8)};
  request.gpusPerNode = {gpu(8)};
  request.gpus = {gpu(16)};
  EXPECT_TRUE(nodeRequest(request).isOk());
  request.gpusPerNode = {gpu(4)};
  auto conflicting = nodeRequest(request);
  ASSERT_FALSE(conflicting.isOk());
  EXPECT_EQ(conflicting.status().message(), "Invalid generic resource (gres) specification");
}

TEST(NodeRequest, MemoryOptions) {
  slurm::JobRequest request;
  request.memPerNodeMb = 1024;
  EXPECT_EQ(nodeRequest(request)->memoryBytesPerNode, std::uint64_t{1} << 30);
  request.memPerNodeMb.reset();
  request.cpusPerTask = 4;
  request.memPerCpuMb = 100;
  EXPECT_EQ(nodeRequest(request)->memoryBytesPerNode, 400U << 20);
  request.memPerCpuMb.reset();
  request.gres = {gpu(2)};
  request.memPerGpuMb = 1000;
  EXPECT_EQ(nodeRequest(request)->memoryBytesPerNode, 2000U << 20);
  // --mem=0: all of each node's memory, i.e. the whole node.
  request.memPerNodeMb = 0;
  auto whole = nodeRequest(request);
  EXPECT_TRUE(whole->wholeNode);
  EXPECT_EQ(whole->memoryBytesPerNode, 0U);
}

TEST(CoreJob, TimeLimitDefaultsFromThePartition) {
  slurm::JobRequest request;
  request.jobName = "train";
  request.account = "vision";
  auto job = coreJob(request, partition(3600, 86400), 7, "alice", 1000);
  ASSERT_TRUE(job.isOk());
  EXPECT_EQ(job->id, 7U);
  EXPECT_EQ(job->timeLimit, 3600);
  EXPECT_EQ(job->partition, "gpu");
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->submitTime, 1000);
  // DefaultTime absent: MaxTime; both absent: UNLIMITED.
  EXPECT_EQ(coreJob(request, partition(std::nullopt, 86400), 7, "a", 0)->timeLimit, 86400);
  EXPECT_EQ(coreJob(request, partition(std::nullopt, std::nullopt), 7, "a", 0)->timeLimit,
            core::kUnlimited);
  request.timeLimit = slurm::TimeLimit{600};
  EXPECT_EQ(coreJob(request, partition(3600, 86400), 7, "a", 0)->timeLimit, 600);
}

TEST(CoreJob, HostlistsAndConstraints) {
  slurm::JobRequest request;
  request.nodeList = "gpu-[001-002]";
  request.excludeList = "gpu-009";
  request.constraint = "h100&ib";
  request.shared = slurm::SharedMode::kExclusive;
  request.requeue = false;
  request.hold = true;
  auto job = coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->requiredNodes, (std::vector<std::string>{"gpu-001", "gpu-002"}));
  EXPECT_EQ(job->excludedNodes, (std::vector<std::string>{"gpu-009"}));
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"h100", "ib"}));
  EXPECT_TRUE(job->exclusive);
  EXPECT_FALSE(job->requeue);
  EXPECT_TRUE(job->held);

  request.nodeList = "gpu-[5-3]";  // Slurm: "Invalid range"
  EXPECT_FALSE(coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0).isOk());
}

}  // namespace
}  // namespace kubeslurm::controllers

#include "kubeslurm/accounting/slurmjob_records.h"

#include <gtest/gtest.h>

namespace kubeslurm::accounting {
namespace {

api::SlurmJobObject gpuJob() {
  api::SlurmJobObject j;
  j.namespaceName = "team-a";
  j.user = "alice";
  j.request.jobName = "train";
  j.request.account = "nlp";
  j.request.nodes = slurm::NodeRange{4, std::nullopt};
  j.request.ntasksPerNode = 8;
  j.request.cpusPerTask = 4;
  j.request.gres = {slurm::GresRequest{"gpu", "h100", 8}};
  j.request.timeLimit = slurm::TimeLimit{90};  // a minute and a half: 2 minutes stored
  j.status.emplace();
  j.status->jobId = 41;
  j.status->submitTime = 1000;
  return j;
}

// What the operator writes and sacct reads: the run (attempt = restarts), the counts and TRES of
// the allocation, the GPU type, the partition the job was given.
TEST(RecordOfSlurmJob, ARunningGangIsItsAllocation) {
  api::SlurmJobObject j = gpuJob();
  j.status->state = "RUNNING";
  j.status->startTime = 1100;
  j.status->nodeList = "gpu-[1-4]";
  j.status->restarts = 2;
  RecordContext context;
  context.cluster = "prod";
  context.defaultPartition = "batch";
  const auto r = recordOfSlurmJob(j, false, context);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->cluster, "prod");
  EXPECT_EQ(r->jobId, 41);
  EXPECT_EQ(r->attempt, 2);
  EXPECT_EQ(r->user, "alice");
  EXPECT_EQ(r->namespaceName, "team-a");
  EXPECT_EQ(r->partition, "batch");
  EXPECT_EQ(r->state, "RUNNING");
  EXPECT_EQ(r->nodes, 4);
  EXPECT_EQ(r->nodeList, "gpu-[1-4]");
  EXPECT_EQ(r->cpus, 128);
  EXPECT_EQ(r->gpus, 32);
  EXPECT_EQ(r->gpuType, "h100");
  EXPECT_EQ(r->allocTres, "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,node=4");
  EXPECT_EQ(r->reqTres, r->allocTres);
  EXPECT_EQ(r->timeLimitMinutes, 2);
  EXPECT_EQ(r->eligibleTime, 1000);
  EXPECT_EQ(r->startTime, 1100);
  EXPECT_EQ(r->endTime, std::nullopt);
}

// Memory as slurmdbd records it (api::recordedMemory): a job that asked for none holds all of
// each node's memory where its partition has no default (the partition's first node's, times
// nodes); on a DefMemPerGPU partition it waits with that and runs with its GPUs' share.
TEST(RecordOfSlurmJob, MemoryFromThePartitionAndItsNodes) {
  api::SlurmJobObject j = gpuJob();
  j.status->state = "RUNNING";
  j.status->startTime = 1100;
  j.status->nodeList = "gpu-[1-4]";
  RecordContext context;
  context.defaultPartition = "batch";
  context.nodeMemoryMb["batch"] = 512000;
  auto r = recordOfSlurmJob(j, false, context);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->allocTres, "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,mem=2000G,node=4");

  api::PartitionSpec perGpu;
  perGpu.defMemPerGpu = 81920;
  context.partitionMemory["batch"] = api::partitionMemory(perGpu);
  r = recordOfSlurmJob(j, false, context);
  EXPECT_EQ(r->allocTres, "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,mem=2560G,node=4");
  EXPECT_EQ(r->reqTres, "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,mem=2000G,node=4");

  // DefMemPerCPU: 128 CPUs x 1000M (125G); the job's own --mem wins.
  api::PartitionSpec perCpu;
  perCpu.defMemPerCpu = 1000;
  context.partitionMemory["batch"] = api::partitionMemory(perCpu);
  EXPECT_EQ(recordOfSlurmJob(j, false, context)->allocTres,
            "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,mem=125G,node=4");
  j.request.memPerNodeMb = 10240;
  EXPECT_EQ(recordOfSlurmJob(j, false, context)->allocTres,
            "billing=128,cpu=128,gres/gpu=32,gres/gpu:h100=32,mem=40G,node=4");
}

// A held job is not eligible yet and has no allocation; one cancelled while it waited started
// when it ended (slurmctld's job_signal); a job without an id has no record.
TEST(RecordOfSlurmJob, WaitingAndCancelledJobs) {
  api::SlurmJobObject held = gpuJob();
  held.status->state = "PENDING";
  held.status->reason = "JobHeldUser";
  const auto h = recordOfSlurmJob(held, false, {});
  EXPECT_EQ(h->eligibleTime, std::nullopt);
  EXPECT_EQ(h->nodes, 0);
  EXPECT_EQ(h->nodeList, "");
  EXPECT_EQ(h->allocTres, "");
  EXPECT_EQ(h->reqNodes, 4);

  api::SlurmJobObject cancelled = gpuJob();
  cancelled.status->state = "CANCELLED";
  cancelled.status->endTime = 1500;
  const auto c = recordOfSlurmJob(cancelled, false, {});
  EXPECT_EQ(c->startTime, 1500);
  EXPECT_EQ(c->endTime, 1500);

  api::SlurmJobObject unnumbered = gpuJob();
  unnumbered.status->jobId.reset();
  EXPECT_FALSE(recordOfSlurmJob(unnumbered, false, {}).has_value());

  // An array's own object stands for the tasks not split off yet.
  api::SlurmJobObject array = gpuJob();
  array.request.array = slurm::ArraySpec{{0, 1, 2, 3, 7}, std::nullopt};
  const auto a = recordOfSlurmJob(array, true, {});
  EXPECT_EQ(a->arrayJobId, 41);
  EXPECT_EQ(a->arrayTaskId, std::nullopt);
  EXPECT_EQ(a->arrayTasks, "0-3,7");
}

}  // namespace
}  // namespace kubeslurm::accounting

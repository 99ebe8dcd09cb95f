// `scontrol show job|partition|node` as pure functions (scontrol_show.h), held against
// ../shared/reference/slurm-22.05.md "scontrol show job" and "Job arrays", and the layouts of
// src/api/job_info.c, partition_info.c and node_info.c (Slurm 22.05.8).
#include "kubeslurm/cli/scontrol_show.h"

#include <gtest/gtest.h>

#include "kubeslurm/api/slurmjob.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;

constexpr std::int64_t kStart = 1795235712;  // 2026-11-21T04:35:12Z

// The reference's job 2: x.sbatch, 4 nodes x 1 task, gres gpu:8, one hour, running.
api::SlurmJobObject referenceJob() {
  api::SlurmJobObject job;
  job.name = "x-abcde";
  job.namespaceName = "default";
  job.user = "root";
  job.request.jobName = "x";
  job.request.partition = "train";
  job.request.account = "root";
  job.request.qos = "normal";
  job.request.nodes = slurm::NodeRange{4, std::nullopt};
  job.request.ntasksPerNode = 1;
  job.request.gres = {slurm::GresRequest{"gpu", "", 8}};
  job.request.timeLimit = slurm::TimeLimit{3600};
  job.request.workDir = "/home/alice/jobs";
  job.scriptPath = "/home/alice/jobs/x.sbatch";
  job.status.emplace();
  job.status->jobId = 2;
  job.status->state = "RUNNING";
  job.status->reason = "None";
  job.status->nodeList = "gpu-node-[001-004]";
  job.status->submitTime = kStart;
  job.status->startTime = kStart;
  job.status->priority = 10853;
  return *api::decodeSlurmJob(api::encodeSlurmJob(job));
}

std::vector<api::Partition> partitions() {
  return {*api::decodePartition(json{
      {"metadata", {{"name", "train"}}},
      {"spec", {{"default", true}, {"maxTime", "7-00:00:00"}, {"nodes", "gpu-node-[001-002]"}}}})};
}

ShowContext context(bool oneLiner = false) { return ShowContext{kStart + 3, 0, oneLiner}; }

// The reference rig's nodes: RealMemory=512000.
std::optional<std::uint64_t> referenceNodeMemory(const std::string&) { return 512000; }

// Reference "scontrol show job": every line in order. Differences are ours to document:
// UserId/GroupId (no Unix ids: NO_VAL, the namespace as group) and AllocNode:Sid. The job asked
// for no memory on a partition without DefMemPer*: all of each node's, 4 x 500G.
TEST(ScontrolShow, RunningJobLayout) {
  const CommandOutput out =
      formatShowJobs({referenceJob()}, partitions(), "2", context(), referenceNodeMemory);
  EXPECT_EQ(out.exitCode, 0);
  EXPECT_EQ(out.out,
            "JobId=2 JobName=x\n"
            "   UserId=root(4294967294) GroupId=default(4294967294) MCS_label=N/A\n"
            "   Priority=10853 Nice=0 Account=root QOS=normal\n"
            "   JobState=RUNNING Reason=None Dependency=(null)\n"
            "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
            "   RunTime=00:00:03 TimeLimit=01:00:00 TimeMin=N/A\n"
            "   SubmitTime=2026-11-21T04:35:12 EligibleTime=2026-11-21T04:35:12\n"
            "   AccrueTime=2026-11-21T04:35:12\n"
            "   StartTime=2026-11-21T04:35:12 EndTime=2026-11-21T05:35:12 Deadline=N/A\n"
            "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-21T04:35:12 "
            "Scheduler=Main\n"
            "   Partition=train AllocNode:Sid=(null):0\n"
            "   ReqNodeList=(null) ExcNodeList=(null)\n"
            "   NodeList=gpu-node-[001-004]\n"
            "   BatchHost=gpu-node-001\n"
            "   NumNodes=4 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
            "   TRES=cpu=4,mem=2000G,node=4,billing=4,gres/gpu=32\n"
            "   Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=*\n"
            "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
            "   Features=(null) DelayBoot=00:00:00\n"
            "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
            "   Command=/home/alice/jobs/x.sbatch\n"
            "   WorkDir=/home/alice/jobs\n"
            "   StdErr=/home/alice/jobs/slurm-2.out\n"
            "   StdIn=/dev/null\n"
            "   StdOut=/home/alice/jobs/slurm-2.out\n"
            "   Power=\n"
            "   TresPerNode=gres:gpu:8\n\n");
}

// The memory slurmctld records for a job that asks for none (job_get_tres_mem): its first
// partition's DefMemPerNode times nodes or DefMemPerCPU times CPUs, shown as MinMemoryNode= or
// MinMemoryCPU=; DefMemPerGPU only once cons_tres places it (a pending job counts all of each
// node's memory); without a lookup of the nodes' memory, no mem= at all.
TEST(ScontrolShow, MemoryFromThePartitionsDefaults) {
  api::SlurmJobObject job = referenceJob();
  job.status->state = "PENDING";
  job.status->nodeList.clear();
  job.request.nodes = slurm::NodeRange{2, std::nullopt};
  std::vector<api::Partition> parts = partitions();
  auto lines = [&](const NodeMemoryLookup& lookup) {
    const std::string text = formatShowJobs({job}, parts, "2", context(), lookup).out;
    const std::size_t tres = text.find("TRES=");
    const std::size_t minMemory = text.find("MinMemory");
    return text.substr(tres, text.find('\n', tres) - tres) + " " +
           text.substr(minMemory, text.find(' ', minMemory) - minMemory);
  };
  EXPECT_EQ(lines(referenceNodeMemory),
            "TRES=cpu=2,mem=1000G,node=2,billing=2,gres/gpu=16 MinMemoryNode=0");
  EXPECT_EQ(lines({}), "TRES=cpu=2,node=2,billing=2,gres/gpu=16 MinMemoryNode=0");
  parts[0].spec.defMemPerGpu = 40960;
  EXPECT_EQ(lines(referenceNodeMemory),
            "TRES=cpu=2,mem=1000G,node=2,billing=2,gres/gpu=16 MinMemoryNode=0");
  parts[0].spec.defMemPerCpu = 2048;
  EXPECT_EQ(lines(referenceNodeMemory),
            "TRES=cpu=2,mem=4G,node=2,billing=2,gres/gpu=16 MinMemoryCPU=2G");
  parts[0].spec.defMemPerNode = 65536;
  EXPECT_EQ(lines(referenceNodeMemory),
            "TRES=cpu=2,mem=128G,node=2,billing=2,gres/gpu=16 MinMemoryNode=64G");
  // The job's own --mem-per-cpu wins over every default.
  job.request.memPerCpuMb = 1000;
  EXPECT_EQ(lines(referenceNodeMemory),
            "TRES=cpu=2,mem=2000M,node=2,billing=2,gres/gpu=16 MinMemoryCPU=1000M");
}

// job_info.c: with -o the fields are joined by single spaces and the record ends in "\n".
TEST(ScontrolShow, OneLiner) {
  const CommandOutput out = formatShowJobs({referenceJob()}, partitions(), "2", context(true));
  EXPECT_EQ(out.out.find('\n'), out.out.size() - 1);
  EXPECT_EQ(out.out.rfind("JobId=2 JobName=x UserId=root(4294967294) ", 0), 0U);
  EXPECT_NE(out.out.find(" StdOut=/home/alice/jobs/slurm-2.out Power= TresPerNode=gres:gpu:8\n"),
            std::string::npos);
}

// An allocation of srun or salloc from a login host ran no script: batch_flag 0.
TEST(ScontrolShow, AnInteractiveAllocationIsNoBatchJob) {
  api::SlurmJobObject job = referenceJob();
  job.request.interactive = true;
  job.script.clear();
  const std::string text = formatShowJobs({job}, partitions(), std::nullopt, context()).out;
  EXPECT_NE(text.find("   Requeue=1 Restarts=0 BatchFlag=0 Reboot=0 ExitCode=0:0\n"),
            std::string::npos)
      << text;
}

// A pending held job: no nodes (an empty NodeList, as slurmctld 22.05 prints it for every
// pending job: tests/integration/slurm_diff/slurmctld_diff_test.cc), Unknown times, the
// default partition's limit, a comment.
TEST(ScontrolShow, PendingJob) {
  api::SlurmJobObject job = referenceJob();
  job.request.partition.clear();
  job.request.timeLimit.reset();
  job.request.comment = "retry";
  job.request.nodes = slurm::NodeRange{2, 4};
  job.request.output = "out-%x-%j.log";
  job.status->state = "PENDING";
  job.status->reason = "JobHeldUser";
  job.status->nodeList.clear();
  job.status->startTime.reset();
  const std::string text = formatShowJobs({job}, partitions(), std::nullopt, context()).out;
  EXPECT_NE(text.find("   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n"
                      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
                      "   RunTime=00:00:00 TimeLimit=7-00:00:00 TimeMin=N/A\n"
                      "   SubmitTime=2026-11-21T04:35:12 EligibleTime=Unknown\n"
                      "   AccrueTime=Unknown\n"
                      "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("   Partition=train AllocNode:Sid=(null):0\n"
                      "   ReqNodeList=(null) ExcNodeList=(null)\n"
                      "   NodeList=\n"
                      "   NumNodes=2-4 NumCPUs=2 NumTasks=2 "),
            std::string::npos)
      << text;
  // job_info.c prints "Comment=%s " (with its space); StdOut= expands %x and %j (_fname_format).
  EXPECT_NE(text.find("   WorkDir=/home/alice/jobs\n   Comment=retry \n"), std::string::npos);
  EXPECT_NE(text.find("   StdOut=/home/alice/jobs/out-x-2.log\n"), std::string::npos);
}

json arrayTask(std::int64_t id, std::int64_t task, const std::string& state) {
  json object = api::encodeSlurmJob(referenceJob());
  object["metadata"]["name"] = "arr-" + std::to_string(task);
  object["metadata"]["labels"] = {{"kubeslurm.io/array-task", std::to_string(task)}};
  object["spec"]["jobName"] = "arr";
  object["spec"]["array"] = "0-7%2";
  object["status"]["jobId"] = id;
  object["status"]["arrayJobId"] = 6;
  object["status"]["arrayTaskId"] = task;
  object["status"]["state"] = state;
  if (state == "PENDING") {
    object["status"]["reason"] = "JobArrayTaskLimit";
    object["status"].erase("nodeList");
    object["status"].erase("startTime");
  }
  return object;
}

// Tasks the operator has not made yet wait in the array's record: right after sbatch printed
// the array's id, `scontrol show job` of it shows the whole array pending (it answered "Invalid
// job id specified" before the tasks were made), and A_T of a task not made yet is that task.
TEST(ScontrolShow, TasksNotYetMadeWaitInTheArraysRecord) {
  json parent = api::encodeSlurmJob(referenceJob());
  parent["metadata"]["name"] = "arr";
  parent["spec"]["jobName"] = "arr";
  parent["spec"]["array"] = "0-7%2";
  parent["status"] = {{"jobId", 6}, {"state", "PENDING"}};
  std::vector<api::SlurmJobObject> jobs = {*api::decodeSlurmJob(parent)};
  std::string shown = formatShowJobs(jobs, partitions(), "6", context()).out;
  EXPECT_EQ(shown.substr(0, shown.find('\n')),
            "JobId=6 ArrayJobId=6 ArrayTaskId=0-7%2 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_NE(shown.find("JobState=PENDING Reason=None"), std::string::npos) << shown;
  shown = formatShowJobs(jobs, partitions(), "6_5", context()).out;
  EXPECT_EQ(shown.substr(0, shown.find('\n')),
            "JobId=6 ArrayJobId=6 ArrayTaskId=5 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_EQ(formatShowJobs(jobs, partitions(), "6_9", context()).exitCode, 1);

  // Tasks 0 and 1 run, 2 and 3 wait as made, 4-7 are not made yet: one record for 2-7.
  jobs.push_back(*api::decodeSlurmJob(arrayTask(7, 0, "RUNNING")));
  jobs.push_back(*api::decodeSlurmJob(arrayTask(8, 1, "RUNNING")));
  jobs.push_back(*api::decodeSlurmJob(arrayTask(102, 2, "PENDING")));
  jobs.push_back(*api::decodeSlurmJob(arrayTask(103, 3, "PENDING")));
  shown = formatShowJobs(jobs, partitions(), "6", context()).out;
  EXPECT_EQ(shown.substr(0, shown.find('\n')),
            "JobId=6 ArrayJobId=6 ArrayTaskId=2-7%2 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_NE(shown.find("JobState=PENDING Reason=JobArrayTaskLimit"), std::string::npos) << shown;
}

// Reference "Job arrays": `scontrol show job 6 | head -1` is the meta record of the pending
// tasks, "JobId=6 ArrayJobId=6 ArrayTaskId=2-7%2 ArrayTaskThrottle=2 JobName=arr"; job 7 is
// task 0.
TEST(ScontrolShow, ArrayFirstLines) {
  json parent = api::encodeSlurmJob(referenceJob());
  parent["metadata"]["name"] = "arr";
  parent["spec"]["array"] = "0-7%2";
  parent["status"] = {{"jobId", 6}, {"state", "PENDING"}};
  std::vector<api::SlurmJobObject> jobs = {*api::decodeSlurmJob(parent),
                                           *api::decodeSlurmJob(arrayTask(7, 0, "RUNNING")),
                                           *api::decodeSlurmJob(arrayTask(8, 1, "RUNNING"))};
  for (int task = 2; task <= 7; ++task) {
    jobs.push_back(*api::decodeSlurmJob(arrayTask(task == 7 ? 6 : 100 + task, task, "PENDING")));
  }
  const std::string all = formatShowJobs(jobs, partitions(), "6", context()).out;
  EXPECT_EQ(all.substr(0, all.find('\n')),
            "JobId=6 ArrayJobId=6 ArrayTaskId=2-7%2 ArrayTaskThrottle=2 JobName=arr");
  EXPECT_NE(all.find("\n\nJobId=7 ArrayJobId=6 ArrayTaskId=0 ArrayTaskThrottle=2 JobName=arr\n"),
            std::string::npos);
  const std::string seven = formatShowJobs(jobs, partitions(), "7", context()).out;
  EXPECT_EQ(seven.substr(0, seven.find('\n')),
            "JobId=7 ArrayJobId=6 ArrayTaskId=0 ArrayTaskThrottle=2 JobName=arr");
  const std::string task1 = formatShowJobs(jobs, partitions(), "6_1", context()).out;
  EXPECT_EQ(task1.substr(0, task1.find('\n')),
            "JobId=8 ArrayJobId=6 ArrayTaskId=1 ArrayTaskThrottle=2 JobName=arr");
}

// Issue 20: a pending array's record is the array's own, whose array_task_id is NO_VAL, so its
// StdOut expands %a to 4294967294 as Slurm 22.05's does; a task's record expands its own index.
TEST(ScontrolShow, ThePendingArrayRecordExpandsPercentAAsNoVal) {
  json parent = api::encodeSlurmJob(referenceJob());
  parent["metadata"]["name"] = "arr";
  parent["spec"]["array"] = "0-3";
  parent["spec"]["output"] = "arr-%A_%a.out";
  parent["status"] = {{"jobId", 6}, {"state", "PENDING"}};
  std::vector<api::SlurmJobObject> jobs = {*api::decodeSlurmJob(parent)};
  for (int task = 0; task <= 3; ++task) {
    json object = arrayTask(task == 3 ? 6 : 100 + task, task, task == 0 ? "RUNNING" : "PENDING");
    object["spec"]["array"] = "0-3";
    object["spec"]["output"] = "arr-%A_%a.out";
    jobs.push_back(*api::decodeSlurmJob(object));
  }
  const std::string all = formatShowJobs(jobs, partitions(), "6", context()).out;
  EXPECT_NE(all.find("ArrayTaskId=1-3 JobName=arr\n"), std::string::npos) << all;
  EXPECT_NE(all.find("   StdOut=/home/alice/jobs/arr-6_4294967294.out\n"), std::string::npos)
      << all;
  EXPECT_NE(all.find("   StdOut=/home/alice/jobs/arr-6_0.out\n"), std::string::npos) << all;
}

// Issue 20: OverSubscribe as slurm_protocol_defs.c job_share_string() names the job's sharing:
// --exclusive NO, --oversubscribe YES, --exclusive=user USER, --exclusive=mcs MCS, neither OK.
TEST(ScontrolShow, OverSubscribeNamesEachSharingMode) {
  const std::vector<std::pair<slurm::SharedMode, std::string>> cases = {
      {slurm::SharedMode::kDefault, "OK"},
      {slurm::SharedMode::kExclusive, "NO"},
      {slurm::SharedMode::kOversubscribe, "YES"},
      {slurm::SharedMode::kExclusiveUser, "USER"},
      {slurm::SharedMode::kExclusiveMcs, "MCS"}};
  for (const auto& [mode, name] : cases) {
    api::SlurmJobObject job = referenceJob();
    job.request.shared = mode;
    job = *api::decodeSlurmJob(api::encodeSlurmJob(job));
    const std::string text = formatShowJobs({job}, partitions(), "2", context()).out;
    EXPECT_NE(text.find("\n   OverSubscribe=" + name + " Contiguous=0 "), std::string::npos)
        << name << "\n"
        << text;
  }
  api::SlurmJobObject job = referenceJob();
  job.request.contiguous = true;
  job = *api::decodeSlurmJob(api::encodeSlurmJob(job));
  const std::string text = formatShowJobs({job}, partitions(), "2", context()).out;
  EXPECT_NE(text.find(" Contiguous=1 "), std::string::npos) << text;
}

// Reference "sbatch and squeue": scontrol show job 99999 -> "slurm_load_jobs error: Invalid
// job id specified", rc=1. info_job.c: nothing to list is "No jobs in the system".
TEST(ScontrolShow, UnknownAndNoJobs) {
  const CommandOutput unknown = formatShowJobs({referenceJob()}, partitions(), "99999", context());
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err, "slurm_load_jobs error: Invalid job id specified\n");
  const CommandOutput none = formatShowJobs({}, partitions(), std::nullopt, context());
  EXPECT_EQ(none.exitCode, 0);
  EXPECT_EQ(none.out, "No jobs in the system\n");
}

TEST(ScontrolShow, AllJobsAreSeparatedByBlankLines) {
  api::SlurmJobObject other = referenceJob();
  other.status->jobId = 3;
  const std::string text =
      formatShowJobs({other, referenceJob()}, partitions(), std::nullopt, context()).out;
  EXPECT_EQ(text.rfind("JobId=2 ", 0), 0U);
  EXPECT_NE(text.find("TresPerNode=gres:gpu:8\n\nJobId=3 JobName=x\n"), std::string::npos);
}

struct Nodes {
  std::vector<api::Node> nodes;
  std::vector<NodeFacts> facts;
};

Nodes twoNodes() {
  Nodes n;
  json drained = testing::nodeJson("gpu-node-002");
  drained["spec"]["unschedulable"] = true;
  drained["metadata"]["annotations"] = {{"kubeslurm.io/reason", "maintenance"},
                                        {"kubeslurm.io/reason-user", "alice"},
                                        {"kubeslurm.io/reason-time", "2026-11-21T04:36:13Z"}};
  n.nodes = {*api::decodeNode(testing::nodeJson("gpu-node-001")), *api::decodeNode(drained)};
  const std::vector<api::Pod> pods = {
      *api::decodePod(testing::podJson("ns", "p", "gpu-node-001", 8, 4))};
  for (const api::Node& node : n.nodes) n.facts.push_back(nodeFacts(node, pods));
  return n;
}

// partition_info.c's lines, with the totals of the partition's nodes.
TEST(ScontrolShow, Partition) {
  const Nodes n = twoNodes();
  const CommandOutput out =
      formatShowPartitions(partitions(), n.nodes, n.facts, "train", context());
  EXPECT_EQ(out.out,
            "PartitionName=train\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=YES QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=7-00:00:00 MinNodes=0 LLN=NO "
            "MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=gpu-node-[001-002]\n"
            "   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=OFF\n"
            "   State=UP TotalCPUs=128 TotalNodes=2 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "   TRES=cpu=128,mem=1000G,node=2,billing=128,gres/gpu=16\n\n");
  // partition_info.c's memory lines: DefMemPerGPU under JobDefaults=, the per-CPU forms when
  // they are the ones set.
  std::vector<api::Partition> withMemory = partitions();
  for (api::Partition& p : withMemory) {
    p.spec.defMemPerCpu = 4096;
    p.spec.defMemPerGpu = 81920;
    p.spec.maxMemPerNode = 512000;
  }
  const std::string memory =
      formatShowPartitions(withMemory, n.nodes, n.facts, "train", context()).out;
  EXPECT_NE(memory.find("   JobDefaults=DefMemPerGPU=81920\n"
                        "   DefMemPerCPU=4096 MaxMemPerNode=512000\n"),
            std::string::npos)
      << memory;
  const CommandOutput missing =
      formatShowPartitions(partitions(), n.nodes, n.facts, "nope", context());
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.out, "Partition nope not found\n");  // info_part.c, on stdout
}

// node_info.c's lines: state with flags ("MIXED+DRAIN" style), Reason=... [user@time].
TEST(ScontrolShow, Node) {
  const Nodes n = twoNodes();
  const CommandOutput out =
      formatShowNodes(partitions(), n.nodes, n.facts, "gpu-node-002", context());
  EXPECT_EQ(out.out,
            "NodeName=gpu-node-002 CoresPerSocket=1 \n"
            "   CPUAlloc=0 CPUEfctv=64 CPUTot=64 CPULoad=N/A\n"
            "   AvailableFeatures=(null)\n"
            "   ActiveFeatures=(null)\n"
            "   Gres=gpu:8\n"
            "   NodeHostName=gpu-node-002 \n"
            "   RealMemory=512000 AllocMem=0 FreeMem=N/A Sockets=64 Boards=1\n"
            "   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=train \n"
            "   BootTime=None SlurmdStartTime=None\n"
            "   LastBusyTime=Unknown\n"
            "   CfgTRES=cpu=64,mem=500G,billing=64,gres/gpu=8\n"
            "   AllocTRES=\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n"
            "   Reason=maintenance [alice@2026-11-21T04:36:13]\n\n");
  const std::string busy =
      formatShowNodes(partitions(), n.nodes, n.facts, "gpu-node-001", context()).out;
  EXPECT_NE(busy.find("   State=ALLOCATED ThreadsPerCore=1"), std::string::npos);
  EXPECT_NE(busy.find("   AllocTRES=cpu=4,gres/gpu=8\n"), std::string::npos);
  const CommandOutput missing = formatShowNodes(partitions(), n.nodes, n.facts, "n9", context());
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.out, "Node n9 not found\n");  // info_node.c
}

}  // namespace
}  // namespace kubeslurm::cli

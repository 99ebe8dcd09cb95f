#include "controllers/admission.h"

#include <map>

#include <gtest/gtest.h>

#include "controllers/job_object.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

constexpr core::Time kNow = 1795000000;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

api::Node node(const std::string& name, const std::string& leaf) {
  return ok(api::decodeNode(
      {{"apiVersion", "v1"},
       {"kind", "Node"},
       {"metadata",
        {{"name", name},
         {"labels", {{"kubeslurm.io/leaf", leaf}, {"kubeslurm.io/spine", "spine1"}}}}},
       {"status",
        {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
         {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}}));
}

ClusterObjects cluster(const Json& jobSpec, const Json& jobStatus = Json::object()) {
  ClusterObjects objects;
  objects.nodes = {node("gpu-1", "leaf1"), node("gpu-2", "leaf1"), node("gpu-3", "leaf2")};
  objects.partitions.push_back(ok(api::decodePartition(
      {{"apiVersion", "kubeslurm.io/v1alpha1"},
       {"kind", "Partition"},
       {"metadata", {{"name", "train"}}},
       {"spec",
        {{"nodes", "gpu-[1-3]"},
         {"default", true},
         {"nccl", {{"NCCL_SOCKET_IFNAME", "eth0"}}},
         {"sharedVolume", {{"claimName", "home"}, {"mountPath", "/home"}}}}}})));
  Json job = {{"apiVersion", "kubeslurm.io/v1alpha1"},
              {"kind", "SlurmJob"},
              {"metadata",
               {{"name", "train-abcde"},
                {"namespace", "team-a"},
                {"uid", "uid-1"},
                {"creationTimestamp", api::formatTimestamp(kNow - 60)}}},
              {"spec",
               {{"jobName", "train"},
                {"user", "alice"},
                {"account", "vision"},
                {"script", "#!/bin/bash\nsrun torchrun train.py\n"},
                {"workDir", "/home/alice"},
                {"nodes", 2},
                {"gpusPerNode", 8}}},
              {"status", {{"jobId", 42}, {"state", "PENDING"}}}};
  job["spec"].merge_patch(jobSpec);
  job["status"].merge_patch(jobStatus);
  if (jobStatus.contains("arrayTaskId")) {
    // A task as the reconciler creates it (controllers/arrays.h); an array's own object is
    // never planned.
    job["metadata"]["labels"] = {{"kubeslurm.io/array-job", "train"},
                                 {"kubeslurm.io/array-task", jobStatus["arrayTaskId"].dump()}};
    job["metadata"]["ownerReferences"] = {{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                           {"kind", "SlurmJob"},
                                           {"name", "train"},
                                           {"uid", "uid-train"},
                                           {"controller", true}}};
  }
  objects.jobs.push_back(ok(api::decodeSlurmJob(job)));
  return objects;
}

AdmissionOptions options() {
  AdmissionOptions result;
  result.clusterName = "sandbox";
  result.defaultImage = "busybox:1.36";
  return result;
}

// buildSnapshot -> plan -> gangForStart -> rankPods: what the operator would create.
struct Admitted {
  podspec::GangInput gang;
  std::vector<api::Pod> pods;
};

Admitted admit(const ClusterObjects& objects) {
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  EXPECT_EQ(plan.starts.size(), 1U);
  if (plan.starts.empty()) return {};
  Admitted admitted;
  admitted.gang = ok(gangForStart(plan.starts[0], index, objects, options()));
  admitted.pods = ok(podspec::rankPods(admitted.gang));
  return admitted;
}

std::map<std::string, std::string> envOf(const api::Pod& pod) {
  std::map<std::string, std::string> env;
  for (const api::EnvVar& var : pod.spec.containers.at(0).env) env[var.name] = var.value;
  return env;
}

TEST(Admission, ThePlannedStartBecomesAGangOnTheChosenNodes) {
  const Admitted admitted = admit(cluster(Json::object()));
  const podspec::GangInput& gang = admitted.gang;
  EXPECT_EQ(gang.namespaceName, "team-a");
  EXPECT_EQ(gang.jobName, "train-abcde");
  EXPECT_EQ(gang.jobUid, "uid-1");
  EXPECT_EQ(gang.jobId, 42);
  EXPECT_EQ(gang.attempt, 0U);
  ASSERT_EQ(gang.nodes.size(), 2U);
  // Topology placement keeps a 2-node job under one leaf switch.
  EXPECT_EQ(gang.nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
  EXPECT_EQ(gang.gpusPerNode, 8U);
  EXPECT_EQ(gang.image, "busybox:1.36");
  EXPECT_EQ(gang.terminationGracePeriodSeconds, 30);
  ASSERT_TRUE(gang.sharedVolume.has_value());
  EXPECT_EQ(gang.sharedVolume->claimName, "home");
  ASSERT_EQ(admitted.pods.size(), 2U);
  EXPECT_EQ(admitted.pods[1].metadata.annotations.at("kubeslurm.io/planned-node"), "gpu-2");
  EXPECT_EQ(admitted.pods[0].spec.containers[0].workingDir, "/home/alice");
}

// Time limits hold while no operator runs: every rank carries activeDeadlineSeconds of the
// partition's MaxTime (or an administrator's longer limit) plus KillWait and a minute, never the
// job's own limit (an administrator may raise that while it runs). None without a MaxTime, nor
// for an administrator's UNLIMITED.
TEST(Admission, RanksCarryTheirPartitionsMaxTimeAsActiveDeadline) {
  ClusterObjects objects = cluster({{"timeLimit", "1:00:00"}});
  EXPECT_EQ(admit(objects).gang.activeDeadlineSeconds, std::nullopt);
  objects.partitions[0].spec.maxTime = api::SlurmDuration{"1-00:00:00", {{86400}}};
  const Admitted admitted = admit(objects);
  EXPECT_EQ(admitted.gang.activeDeadlineSeconds, 86400 + 30 + 60);
  for (const api::Pod& pod : admitted.pods) EXPECT_EQ(pod.spec.activeDeadlineSeconds, 86490);

  // An administrator's longer limit, and UNLIMITED (a user's would never start here).
  const GangIdentity who{42, 0, "alice", "vision", ""};
  for (const auto& [limit, deadline] :
       std::vector<std::pair<std::string, std::optional<std::int64_t>>>{
           {"2-00:00:00", 2 * 86400 + 90}, {"UNLIMITED", std::nullopt}}) {
    ClusterObjects admin = cluster({{"timeLimit", limit}});
    auto pod = checkPod(admin.jobs[0], objects.partitions[0], who, options());
    ASSERT_TRUE(pod.isOk()) << pod.status().toString();
    EXPECT_EQ(pod->spec.activeDeadlineSeconds, deadline) << limit;
  }
}

// Rank pods request the memory the job was allocated: the partition's DefMemPerGPU for a job
// that asked for none; a job holding all of each node's memory requests none (the plan gives it
// the node), nor does it ask the kubelet for the whole node.
TEST(Admission, RanksRequestTheMemoryTheJobWasAllocated) {
  ClusterObjects objects = cluster(Json::object());
  const Admitted whole = admit(objects);
  ASSERT_EQ(whole.pods.size(), 2U);
  EXPECT_FALSE(whole.pods[0].spec.containers[0].resources.requests.contains("memory"));

  objects.partitions[0].spec.defMemPerGpu = 10240;  // 10 GiB a GPU, 8 GPUs a rank
  const Admitted perGpu = admit(objects);
  ASSERT_EQ(perGpu.pods.size(), 2U);
  for (const api::Pod& pod : perGpu.pods) {
    EXPECT_EQ(pod.spec.containers[0].resources.requests.at("memory"),
              std::to_string(std::uint64_t{80} << 30));
  }
}

// Pyxis's --container-workdir (spec.container.workdir) is where every rank's container starts,
// over the submit directory on the shared volume.
TEST(Admission, ContainerWorkdirIsWhereTheRanksStart) {
  const Admitted admitted = admit(cluster({{"container", {{"workdir", "/workspace"}}}}));
  ASSERT_EQ(admitted.pods.size(), 2U);
  for (const api::Pod& pod : admitted.pods) {
    EXPECT_EQ(pod.spec.containers[0].workingDir, "/workspace");
  }
}

// --output/--error expanded as slurmstepd names the batch step's files (fname.c: %x the job
// name, %j the id, %N the first node, which is rank 0's hostname here), relative to the
// working directory; kept only on the partition's shared volume (/home here).
TEST(Admission, BatchOutputGoesToItsFilesOnTheSharedVolume) {
  const Admitted onVolume = admit(cluster(
      {{"output", "out-%x-%j.log"}, {"error", "/home/alice/err-%N.log"}, {"openMode", "append"}}));
  EXPECT_EQ(onVolume.gang.batchStdout, "/home/alice/out-train-42.log");
  EXPECT_EQ(onVolume.gang.batchStderr, "/home/alice/err-train-abcde-0.log");
  EXPECT_TRUE(onVolume.gang.appendOutput);

  const Admitted elsewhere = admit(cluster({{"output", "/tmp/train-%j.out"}}));
  EXPECT_EQ(elsewhere.gang.batchStdout, "") << "not on the shared volume: the pod's log";
  EXPECT_FALSE(elsewhere.gang.appendOutput);
}

TEST(Admission, RanksSeeTheirJobPartitionTopologyAndNccl) {
  const Admitted admitted = admit(cluster(Json::object()));
  ASSERT_EQ(admitted.pods.size(), 2U);
  const auto env = envOf(admitted.pods[1]);
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");
  EXPECT_EQ(env.at("SLURM_JOB_NAME"), "train");
  EXPECT_EQ(env.at("SLURM_JOB_PARTITION"), "train");
  EXPECT_EQ(env.at("SLURM_JOB_ACCOUNT"), "vision");
  EXPECT_EQ(env.at("SLURM_JOB_QOS"), "normal");
  EXPECT_EQ(env.at("SLURM_JOB_USER"), "alice");
  EXPECT_EQ(env.at("SLURM_CLUSTER_NAME"), "sandbox");
  EXPECT_EQ(env.at("SLURM_SUBMIT_DIR"), "/home/alice");
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "train-abcde-[0-1]");
  // Spine, then leaf, then the node name the job sees (Slurm: "spine.leaf1.gpu-node-001").
  EXPECT_EQ(env.at("SLURM_TOPOLOGY_ADDR"), "spine1.leaf1.train-abcde-1");
  EXPECT_EQ(env.at("SLURM_TOPOLOGY_ADDR_PATTERN"), "switch.switch.node");
  EXPECT_EQ(env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(env.at("MASTER_ADDR"), "train-abcde-0.train-abcde.team-a.svc.cluster.local");
  EXPECT_EQ(env.at("MASTER_PORT"), "29500");
  EXPECT_EQ(env.at("SLURM_GPUS_PER_NODE"), "8");
}

TEST(Admission, RendezvousSettingsAndArrayTasks) {
  const Admitted admitted = admit(
      cluster({{"rendezvous", {{"port", 29400}, {"nprocPerNode", "gpu"}}}, {"array", "0-6:2%2"}},
              {{"arrayJobId", 40}, {"arrayTaskId", 2}}));
  ASSERT_EQ(admitted.pods.size(), 2U);
  const auto env = envOf(admitted.pods[0]);
  EXPECT_EQ(env.at("MASTER_PORT"), "29400");
  EXPECT_EQ(env.at("NPROC_PER_NODE"), "8");
  EXPECT_EQ(env.at("WORLD_SIZE"), "16");
  EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), "40");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "2");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "4");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MIN"), "0");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "6");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_STEP"), "2");
}

// A task's spec names only its own index (arrayTaskObject): SLURM_ARRAY_TASK_COUNT, MIN, MAX and
// STEP are its array's, read from the array's record its controller reference names, with that
// uid; without it, the task's own (one task).
TEST(Admission, ATasksArrayVariablesAreItsArrays) {
  ClusterObjects objects =
      cluster({{"array", "2%2"}, {"script", nullptr}}, {{"arrayJobId", 40}, {"arrayTaskId", 2}});
  Json array = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                {"kind", "SlurmJob"},
                {"metadata", {{"name", "train"}, {"namespace", "team-a"}, {"uid", "uid-train"}}},
                {"spec", {{"jobName", "train"}, {"array", "0-6:2%2"}, {"script", "#!/bin/sh\n"}}},
                {"status", {{"jobId", 40}, {"state", "PENDING"}}}};
  objects.jobs.push_back(ok(api::decodeSlurmJob(array)));
  const Admitted admitted = admit(objects);
  ASSERT_FALSE(admitted.pods.empty());
  auto env = envOf(admitted.pods[0]);
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "2");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "4");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MIN"), "0");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "6");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_STEP"), "2");

  // Another array of that name (another uid) is not this task's.
  array["metadata"]["uid"] = "uid-other";
  objects.jobs.replace(1, ok(api::decodeSlurmJob(array)));
  env = envOf(admit(objects).pods.at(0));
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "1");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "2");
}

// Tasks are made without a copy of their array's script (arrayTaskObject): the gang reads the
// array's, the one the task's controller reference names with that uid. A task made with a
// script (before tasks shared their array's) runs its own.
TEST(Admission, ATaskWithoutAScriptRunsItsArrays) {
  // A null in the merge patch removes the field.
  const Admitted task = admit(
      cluster({{"array", "0-3"}, {"script", nullptr}}, {{"arrayJobId", 40}, {"arrayTaskId", 2}}));
  EXPECT_EQ(task.gang.script, kScriptNotCached);
  EXPECT_EQ(task.gang.scriptSourceName, "train");
  EXPECT_EQ(task.gang.scriptSourceUid, "uid-train");

  const Admitted copied =
      admit(cluster({{"array", "0-3"}}, {{"arrayJobId", 40}, {"arrayTaskId", 2}}));
  EXPECT_EQ(copied.gang.script, "#!/bin/bash\nsrun torchrun train.py\n");
  EXPECT_TRUE(copied.gang.scriptSourceName.empty());

  // An ordinary job without a script (the webhook refuses one) has no array to read from.
  const ClusterObjects plain = cluster({{"script", nullptr}});
  const SnapshotIndex index = buildSnapshot(plain, SnapshotOptions{}, kNow);
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  const podspec::GangInput gang = ok(gangForStart(plan.starts[0], index, plain, options()));
  EXPECT_TRUE(gang.script.empty());
  EXPECT_TRUE(gang.scriptSourceName.empty());
}

TEST(Admission, ARequeuedJobStartsItsNextAttempt) {
  const Admitted admitted = admit(cluster(Json::object(), {{"restarts", 2}}));
  EXPECT_EQ(admitted.gang.attempt, 2U);
  ASSERT_FALSE(admitted.pods.empty());
  EXPECT_EQ(admitted.pods[0].metadata.labels.at("kubeslurm.io/attempt"), "2");
}

// sbatch -p full,train: the gang is made for the partition the plan started the job in, which
// its ranks see (SLURM_JOB_PARTITION) and its pods name for the job's status; a start in a
// partition the job does not name is refused.
TEST(Admission, AJobOfSeveralPartitionsIsMadeForTheOneItStartsIn) {
  ClusterObjects objects = cluster({{"partition", "full,train"}});
  objects.partitions.push_back(ok(api::decodePartition({{"apiVersion", "kubeslurm.io/v1alpha1"},
                                                        {"kind", "Partition"},
                                                        {"metadata", {{"name", "full"}}},
                                                        {"spec", {{"nodes", "gpu-3"}}}})));
  const Admitted admitted = admit(objects);
  EXPECT_EQ(admitted.gang.environment.partition, "train");
  ASSERT_EQ(admitted.pods.size(), 2U);
  EXPECT_EQ(envOf(admitted.pods[0]).at("SLURM_JOB_PARTITION"), "train");
  EXPECT_EQ(admitted.pods[1].metadata.annotations.at("kubeslurm.io/partition"), "train");

  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  plan.starts[0].partition = "elsewhere";
  EXPECT_EQ(gangForStart(plan.starts[0], index, objects, options()).status().code(),
            StatusCode::kNotFound);
}

TEST(Admission, RefusesWhatCannotRunAndStartsItDoesNotKnow) {
  ClusterObjects objects = cluster({{"rendezvous", {{"port", 70000}}}});
  const SnapshotIndex index = buildSnapshot(objects, SnapshotOptions{}, kNow);
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  ASSERT_EQ(plan.starts.size(), 1U);
  auto refused = gangForStart(plan.starts[0], index, objects, options());
  ASSERT_FALSE(refused.isOk());
  EXPECT_NE(refused.status().message().find("spec.rendezvous.port"), std::string::npos);

  core::Start unknown;
  unknown.jobId = 999;
  auto missing = gangForStart(unknown, index, objects, options());
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kubeslurm::controllers

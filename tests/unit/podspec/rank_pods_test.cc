#include "kubeslurm/podspec/rank_pods.h"

#include <algorithm>
#include <map>
#include <string>

#include <gtest/gtest.h>

namespace kubeslurm::podspec {
namespace {

GangInput scriptGang() {
  GangInput input;
  input.namespaceName = "team-a";
  input.jobName = "train-x7k2p";
  input.jobUid = "0b5c-uid";
  input.jobId = 42;
  input.attempt = 1;
  input.nodes = {"gpu-003", "gpu-004", "gpu-001"};
  input.gpusPerNode = 8;
  input.cpuMillisPerNode = 16000;
  input.memoryBytesPerNode = std::uint64_t{64} << 30;
  input.image = "nvcr.io/nvidia/pytorch:24.01-py3";
  input.script = "#!/bin/bash\nsrun torchrun train.py\n";
  input.scriptArgs = {"--epochs", "3"};
  input.environment.jobId = 42;
  input.environment.jobName = "train";
  input.environment.partition = "gpu";
  input.environment.account = "vision";
  input.environment.gpusPerNode = 8;
  return input;
}

std::map<std::string, std::string> envOf(const api::Container& container) {
  std::map<std::string, std::string> env;
  for (const api::EnvVar& var : container.env) env[var.name] = var.value;
  return env;
}

TEST(RankPods, OnePodPerNodeNamedAndAddressedByRank) {
  auto pods = rankPods(scriptGang());
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  ASSERT_EQ(pods->size(), 3U);
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    const api::Pod& pod = (*pods)[rank];
    const std::string name = "train-x7k2p-" + std::to_string(rank);
    EXPECT_EQ(pod.metadata.name, name);
    EXPECT_EQ(pod.metadata.namespaceName, "team-a");
    EXPECT_EQ(pod.spec.hostname, name);
    EXPECT_EQ(pod.spec.subdomain, "train-x7k2p");
    EXPECT_EQ(pod.spec.schedulerName, "kubeslurm");
    EXPECT_EQ(pod.spec.restartPolicy, "Never");
    // Unbound: the operator binds every rank through pods/binding once all exist.
    EXPECT_TRUE(pod.spec.nodeName.empty());
    ASSERT_EQ(pod.spec.dnsSearches.size(), 1U);
    EXPECT_EQ(pod.spec.dnsSearches[0], "train-x7k2p.team-a.svc.cluster.local");
    EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/job-name"), "train-x7k2p");
    EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/job-id"), "42");
    EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/rank"), std::to_string(rank));
    EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/attempt"), "1");
    EXPECT_EQ(pod.metadata.annotations.at("kubeslurm.io/planned-node"), scriptGang().nodes[rank]);
    EXPECT_EQ(pod.metadata.annotations.at("kubeslurm.io/gang-size"), "3");
    ASSERT_EQ(pod.metadata.ownerReferences.size(), 1U);
    const api::OwnerReference& owner = pod.metadata.ownerReferences[0];
    EXPECT_EQ(owner.kind, "SlurmJob");
    EXPECT_EQ(owner.apiVersion, "kubeslurm.io/v1alpha1");
    EXPECT_EQ(owner.uid, "0b5c-uid");
    EXPECT_EQ(owner.controller, true);
  }
}

TEST(RankPods, GpusAreRequestedAndLimitedSoTheKubeletEnforcesThem) {
  auto pods = rankPods(scriptGang());
  ASSERT_TRUE(pods.isOk());
  const api::Container& container = (*pods)[1].spec.containers.at(0);
  EXPECT_EQ(container.resources.requests.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(container.resources.limits.at("nvidia.com/gpu"), "8");
  EXPECT_EQ(container.resources.requests.at("cpu"), "16000m");
  EXPECT_EQ(container.resources.requests.at("memory"), "68719476736");
  auto request = api::podRequest((*pods)[1], "nvidia.com/gpu");
  ASSERT_TRUE(request.isOk());
  EXPECT_EQ(*request, 8);
}

TEST(RankPods, RankZeroRunsTheScriptTheOthersHoldTheirNode) {
  auto pods = rankPods(scriptGang());
  ASSERT_TRUE(pods.isOk());
  const api::Container& first = (*pods)[0].spec.containers.at(0);
  const api::Container& second = (*pods)[1].spec.containers.at(0);
  EXPECT_EQ(first.image, "nvcr.io/nvidia/pytorch:24.01-py3");
  ASSERT_EQ(first.command.size(), 3U);
  EXPECT_NE(first.command[2].find("exec \"$f\" \"$@\""), std::string::npos);
  EXPECT_EQ(first.args, (std::vector<std::string>{"slurm_script", "--epochs", "3"}));
  EXPECT_EQ(envOf(first).at("KUBESLURM_BATCH_SCRIPT"), scriptGang().script);
  EXPECT_EQ(envOf(second).count("KUBESLURM_BATCH_SCRIPT"), 0U);
  EXPECT_NE(second.command.at(2).find("trap 'exit 0' TERM"), std::string::npos);
}

TEST(RankPods, EveryRankGetsItsOwnEnvironment) {
  auto pods = rankPods(scriptGang());
  ASSERT_TRUE(pods.isOk());
  const auto env = envOf((*pods)[2].spec.containers.at(0));
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "train-x7k2p-[0-2]");
  EXPECT_EQ(env.at("SLURMD_NODENAME"), "train-x7k2p-2");
  EXPECT_EQ(env.at("SLURM_NODEID"), "2");
  EXPECT_EQ(env.at("NODE_RANK"), "2");
  EXPECT_EQ(env.at("MASTER_ADDR"), "train-x7k2p-0.train-x7k2p.team-a.svc.cluster.local");
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");
  EXPECT_EQ(env.at("SLURM_GPUS_ON_NODE"), "8");
}

TEST(RankPods, TheSameInputGivesTheSameObjects) {
  auto first = rankPods(scriptGang());
  auto second = rankPods(scriptGang());
  ASSERT_TRUE(first.isOk() && second.isOk());
  for (std::size_t i = 0; i < first->size(); ++i) {
    EXPECT_EQ(api::encodePod((*first)[i]), api::encodePod((*second)[i]));
  }
}

TEST(RankPods, PodTemplateRunsOnEveryRankAndKeepsWhatItSets) {
  GangInput input = scriptGang();
  input.script.clear();
  input.image.clear();
  input.podTemplate = api::Json::parse(R"({
    "metadata": {"labels": {"app": "llm"}, "annotations": {"team": "a"}},
    "spec": {
      "priorityClassName": "batch",
      "containers": [{"name": "trainer", "image": "ghcr.io/x/train:1",
                      "command": ["torchrun", "train.py"],
                      "env": [{"name": "HF_HOME", "value": "/cache"}],
                      "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
      "volumes": [{"name": "cache", "emptyDir": {}}]
    }})");
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  const api::Pod& pod = (*pods)[1];
  EXPECT_EQ(pod.metadata.labels.at("app"), "llm");
  EXPECT_EQ(pod.metadata.annotations.at("team"), "a");
  EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/rank"), "1");
  const api::Container& container = pod.spec.containers.at(0);
  EXPECT_EQ(container.name, "trainer");
  EXPECT_EQ(container.command, (std::vector<std::string>{"torchrun", "train.py"}));
  const auto env = envOf(container);
  EXPECT_EQ(env.at("HF_HOME"), "/cache");
  EXPECT_EQ(env.at("PET_NODE_RANK"), "1");
  EXPECT_EQ(env.count("KUBESLURM_BATCH_SCRIPT"), 0U);
  // What the struct does not model survives into the object the operator creates.
  const api::Json encoded = api::encodePod(pod);
  EXPECT_EQ(encoded["spec"]["priorityClassName"], "batch");
  EXPECT_EQ(encoded["spec"]["volumes"][0]["name"], "cache");
  EXPECT_EQ(encoded["spec"]["containers"][0]["volumeMounts"][0]["mountPath"], "/cache");
  EXPECT_EQ(encoded["spec"]["schedulerName"], "kubeslurm");
}

TEST(RankPods, PodTemplateMayNotOverrideTheRendezvous) {
  GangInput input = scriptGang();
  input.script.clear();
  input.podTemplate = api::Json::parse(R"({"spec": {"containers": [{"name": "c",
      "image": "i", "env": [{"name": "MASTER_ADDR", "value": "somewhere"}]}]}})");
  auto pods = rankPods(input);
  ASSERT_FALSE(pods.isOk());
  EXPECT_NE(pods.status().message().find("MASTER_ADDR"), std::string::npos);
}

// Every rank carries the job-tracking finalizer and the partition's deadline; a template may
// shorten the deadline (its own job ends sooner) but not lengthen it.
TEST(RankPods, RanksCarryTheTrackingFinalizerAndTheShorterDeadline) {
  GangInput input = scriptGang();
  input.activeDeadlineSeconds = 500;
  const std::vector<api::Pod> pods = rankPods(input).value();
  for (const api::Pod& pod : pods) {
    EXPECT_EQ(pod.metadata.finalizers, std::vector<std::string>{"kubeslurm.io/job-tracking"});
    EXPECT_EQ(pod.spec.activeDeadlineSeconds, 500);
  }
  input.script.clear();
  for (const std::string_view own : {"100", "900"}) {
    input.podTemplate =
        api::Json::parse(R"({"spec": {"activeDeadlineSeconds": )" + std::string(own) +
                         R"(, "containers": [{"name": "c", "image": "i"}]}})");
    const std::vector<api::Pod> templated = rankPods(input).value();
    EXPECT_EQ(templated[0].spec.activeDeadlineSeconds, own == "100" ? 100 : 500);
  }
}

TEST(RankPods, SharedVolumeIsMountedAndBecomesTheWorkingDirectory) {
  GangInput input = scriptGang();
  input.sharedVolume = api::SharedVolume{"home", "/home", ""};
  input.workDir = "/home/alice/jobs";
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  const api::Json encoded = api::encodePod((*pods)[0]);
  EXPECT_EQ(encoded["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "home");
  EXPECT_EQ(encoded["spec"]["containers"][0]["volumeMounts"][0]["mountPath"], "/home");
  EXPECT_EQ(encoded["spec"]["containers"][0]["workingDir"], "/home/alice/jobs");

  input.workDir = "/scratch/alice";  // not on the shared volume: the image may lack it
  pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  EXPECT_TRUE((*pods)[0].spec.containers[0].workingDir.empty());
}

TEST(RankPods, ContainerMountsBecomeVolumesOnEveryRank) {
  GangInput input = scriptGang();
  input.sharedVolume = api::SharedVolume{"home", "/home", ""};
  input.workDir = "/home/alice/jobs";
  api::PartitionSpec partition;
  api::AllowedMount datasets;
  datasets.path = "/datasets";
  datasets.readOnly = true;
  datasets.volume = {{"persistentVolumeClaim", {{"claimName", "datasets"}}}};
  partition.allowedMounts.push_back(datasets);
  partition.sharedVolume = input.sharedVolume;
  auto mounts = resolveContainerMounts(
      {"/datasets/a:/data/a", "/datasets/b:/data/b", "./ckpt:/ckpt", "tmpfs:/dev/shm"},
      input.workDir, "gpu", partition);
  ASSERT_TRUE(mounts.isOk()) << mounts.status().toString();
  input.containerMounts = *mounts;
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  for (const api::Pod& pod : *pods) {
    const api::Json encoded = api::encodePod(pod);
    const api::Json& volumes = encoded["spec"]["volumes"];
    std::size_t datasetVolumes = 0;
    for (const api::Json& v : volumes) datasetVolumes += v["name"] == "mount-0" ? 1U : 0U;
    EXPECT_EQ(datasetVolumes, 1U) << volumes.dump();  // two mounts, one volume
    const api::Json& volumeMounts = encoded["spec"]["containers"][0]["volumeMounts"];
    EXPECT_NE(std::find(volumeMounts.begin(), volumeMounts.end(),
                        api::Json({{"name", "mount-0"},
                                   {"mountPath", "/data/b"},
                                   {"subPath", "b"},
                                   {"readOnly", true}})),
              volumeMounts.end())
        << volumeMounts.dump();
    EXPECT_NE(std::find(volumeMounts.begin(), volumeMounts.end(),
                        api::Json({{"name", "kubeslurm-shared"},
                                   {"mountPath", "/ckpt"},
                                   {"subPath", "alice/jobs/ckpt"}})),
              volumeMounts.end())
        << volumeMounts.dump();
  }

  // A target the pod already mounts would make the API server refuse the pod.
  auto clash = resolveContainerMounts({"/datasets:/home"}, input.workDir, "gpu", partition);
  ASSERT_TRUE(clash.isOk());
  input.containerMounts = *clash;
  auto refused = rankPods(input);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().message(),
            "--container-mounts: /home is already mounted in the rank's container");
}

// sbatch's shipped variables (--export names, --container-env) reach every rank, under the
// job's own: a shipped SLURM_JOB_ID would be the submitting job's, not this one's.
TEST(RankPods, ShippedEnvironmentIsUnderTheJobsOwn) {
  GangInput input = scriptGang();
  input.shippedEnvironment = {{"WANDB_PROJECT", "vision"}, {"SLURM_JOB_ID", "7"}};
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  for (const api::Pod& pod : *pods) {
    const auto env = envOf(pod.spec.containers[0]);
    EXPECT_EQ(env.at("WANDB_PROJECT"), "vision");
    EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");
  }
}

TEST(RankPods, RefusesWhatCannotRun) {
  GangInput input = scriptGang();
  input.image.clear();
  EXPECT_FALSE(rankPods(input).isOk());
  input = scriptGang();
  input.script.clear();
  EXPECT_FALSE(rankPods(input).isOk());
  input = scriptGang();
  input.nodes.clear();
  EXPECT_FALSE(rankPods(input).isOk());
  input = scriptGang();
  input.podTemplate = api::Json::parse(R"({"spec": {"containers": []}})");
  EXPECT_FALSE(rankPods(input).isOk());
}

TEST(JobService, HeadlessAndPublishesRanksBeforeTheyAreReady) {
  const api::Service service = jobService(scriptGang());
  EXPECT_EQ(service.metadata.name, "train-x7k2p");
  EXPECT_EQ(service.clusterIP, "None");
  EXPECT_TRUE(service.publishNotReadyAddresses);
  EXPECT_EQ(service.selector.at("kubeslurm.io/job-name"), "train-x7k2p");
  ASSERT_EQ(service.ports.size(), 1U);
  EXPECT_EQ(service.ports[0].port, 29500);
  ASSERT_EQ(service.metadata.ownerReferences.size(), 1U);
  EXPECT_EQ(service.metadata.ownerReferences[0].uid, "0b5c-uid");
}

// An interactive allocation (srun or salloc from a login host) has no script: rank 0 holds its
// node and serves the login side's steps; it needs the in-pod runtime, and a job without the
// runtime cannot be one.
TEST(RankPods, AnInteractiveAllocationsRankZeroHoldsTheNodeForSteps) {
  GangInput input = scriptGang();
  input.script.clear();
  input.scriptArgs.clear();
  input.interactive = true;
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  input.stepSecretName = "train-x7k2p-step-q4z9d";
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  const api::Container& rank0 = (*pods)[0].spec.containers[0];
  EXPECT_EQ(rank0.command.at(2),
            "export PATH=\"/kubeslurm/bin:$PATH\" && exec kubeslurm-inpod allocation");
  EXPECT_EQ(envOf(rank0).count("KUBESLURM_BATCH_SCRIPT"), 0U);
  EXPECT_TRUE(
      (*pods)[1].spec.containers[0].command.at(2).ends_with("exec kubeslurm-inpod step-agent"));

  input.toolsImage.clear();
  EXPECT_EQ(rankPods(input).status().code(), StatusCode::kInvalidArgument);
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  input.script = "#!/bin/sh\necho no\n";
  EXPECT_EQ(rankPods(input).status().code(), StatusCode::kInvalidArgument);
}

// The in-pod runtime: the tools are copied in by an init container, rank 0 runs the script under
// the batch launcher, the others run their step agent, and every rank gets the agents' port and
// the job's step token (from the Secret, never in the pod spec itself).
TEST(RankPods, InPodRuntimeWiresToolsLauncherAgentsAndToken) {
  GangInput input = scriptGang();
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  input.stepSecretName = "train-x7k2p-step-q4z9d";
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  for (std::uint32_t rank = 0; rank < 3; ++rank) {
    const api::Pod& pod = (*pods)[rank];
    const api::Json encoded = api::encodePod(pod);
    ASSERT_EQ(pod.spec.initContainers.size(), 1U);
    const api::Container& tools = pod.spec.initContainers[0];
    EXPECT_EQ(tools.image, "kubeslurm/kubeslurm-tools:0.1.0");
    EXPECT_EQ(tools.command,
              (std::vector<std::string>{"/bin/sh", "-c", "cp -a /opt/kubeslurm/. /kubeslurm/"}));
    EXPECT_EQ(encoded["spec"]["volumes"],
              api::Json::parse(R"([{"name":"kubeslurm-tools","emptyDir":{}}])"));
    EXPECT_EQ(encoded["spec"]["initContainers"][0]["volumeMounts"],
              api::Json::parse(R"([{"name":"kubeslurm-tools","mountPath":"/kubeslurm"}])"));

    const api::Json& rankContainer = encoded["spec"]["containers"][0];
    EXPECT_EQ(rankContainer["volumeMounts"],
              api::Json::parse(
                  R"([{"name":"kubeslurm-tools","mountPath":"/kubeslurm","readOnly":true}])"));
    const std::string& command = pod.spec.containers[0].command.at(2);
    EXPECT_TRUE(command.starts_with("export PATH=\"/kubeslurm/bin:$PATH\" && ")) << command;
    if (rank == 0) {
      EXPECT_TRUE(command.ends_with("exec kubeslurm-inpod batch-step \"$f\" \"$@\"")) << command;
      EXPECT_EQ(pod.spec.containers[0].args,
                (std::vector<std::string>{"slurm_script", "--epochs", "3"}));
    } else {
      EXPECT_TRUE(command.ends_with("exec kubeslurm-inpod step-agent")) << command;
    }
    const auto env = envOf(pod.spec.containers[0]);
    EXPECT_EQ(env.at("KUBESLURM_STEP_PORT"), "6818");
    api::Json token;
    for (const api::Json& var : rankContainer["env"]) {
      if (var["name"] == "KUBESLURM_STEP_TOKEN") token = var;
    }
    EXPECT_EQ(token, api::Json::parse(R"({"name":"KUBESLURM_STEP_TOKEN","valueFrom":
        {"secretKeyRef":{"name":"train-x7k2p-step-q4z9d","key":"token"}}})"));
  }
  const api::Service service = jobService(input);
  ASSERT_EQ(service.ports.size(), 2U);
  EXPECT_EQ(service.ports[1].name, "step-agent");
  EXPECT_EQ(service.ports[1].port, 6818);

  // generateName, never a name: nobody can create the job's Secret before the operator does.
  const api::Json secret = stepTokenSecret(input, "abc123");
  EXPECT_FALSE(secret["metadata"].contains("name"));
  EXPECT_EQ(secret["metadata"]["generateName"], "train-x7k2p-step-");
  EXPECT_EQ(secret["metadata"]["namespace"], "team-a");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "0b5c-uid");
  EXPECT_EQ(secret["stringData"], api::Json::parse(R"({"token":"abc123"})"));
}

TEST(RankPods, TheRuntimeNeedsTheStepSecretsName) {
  GangInput input = scriptGang();
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  EXPECT_EQ(rankPods(input).status().code(), StatusCode::kInvalidArgument);
  input.podTemplate = api::Json::parse(R"({"spec":{"containers":[{"name":"m","image":"x"}]}})");
  EXPECT_TRUE(rankPods(input).isOk());  // a template runs no runtime, so needs no token
}

// Partition spec.jobNetwork Isolated: the job's ranks take connections only from each other.
TEST(RankPods, TheJobNetworkPolicyAdmitsOnlyTheJobsOwnRanks) {
  const GangInput input = scriptGang();
  const api::Json policy = jobNetworkPolicy(input);
  EXPECT_EQ(policy["apiVersion"], "networking.k8s.io/v1");
  EXPECT_EQ(policy["metadata"]["name"], input.jobName);
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0]["uid"], input.jobUid);
  const api::Json ranks = {{"matchLabels", {{"kubeslurm.io/job-name", input.jobName}}}};
  EXPECT_EQ(policy["spec"], (api::Json{{"podSelector", ranks},
                                       {"policyTypes", {"Ingress"}},
                                       {"ingress", {{{"from", {{{"podSelector", ranks}}}}}}}}));
  // The rank pods carry the label the policy selects, whatever the template says.
  GangInput templated = input;
  templated.podTemplate = api::Json::parse(
      R"({"metadata":{"labels":{"kubeslurm.io/job-name":"other"}},
          "spec":{"containers":[{"name":"m","image":"x"}]}})");
  auto pods = rankPods(templated);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  for (const api::Pod& pod : *pods) {
    EXPECT_EQ(pod.metadata.labels.at("kubeslurm.io/job-name"), input.jobName);
  }
}

// The batch script's files reach rank 0's launcher, and only rank 0's.
TEST(RankPods, BatchOutputFilesAreRankZerosOnly) {
  GangInput input = scriptGang();
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  input.stepSecretName = "train-x7k2p-step-q4z9d";
  input.batchStdout = "/home/alice/slurm-42.out";
  input.batchStderr = "/home/alice/slurm-42.err";
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  const auto rank0 = envOf((*pods)[0].spec.containers[0]);
  EXPECT_EQ(rank0.at("KUBESLURM_STDOUT"), "/home/alice/slurm-42.out");
  EXPECT_EQ(rank0.at("KUBESLURM_STDERR"), "/home/alice/slurm-42.err");
  EXPECT_EQ(rank0.at("KUBESLURM_OPEN_MODE"), "truncate");
  EXPECT_EQ(envOf((*pods)[1].spec.containers[0]).count("KUBESLURM_STDOUT"), 0U);

  input.batchStderr = input.batchStdout;  // --error not given: one file
  input.appendOutput = true;
  pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  const auto together = envOf((*pods)[0].spec.containers[0]);
  EXPECT_EQ(together.count("KUBESLURM_STDERR"), 0U);
  EXPECT_EQ(together.at("KUBESLURM_OPEN_MODE"), "append");
}

// Without a tools image nothing of the runtime appears: no init container, no token, one port.
TEST(RankPods, WithoutToolsImageThereIsNoInPodRuntime) {
  auto pods = rankPods(scriptGang());
  ASSERT_TRUE(pods.isOk());
  for (const api::Pod& pod : *pods) {
    EXPECT_TRUE(pod.spec.initContainers.empty());
    EXPECT_EQ(envOf(pod.spec.containers[0]).count("KUBESLURM_STEP_TOKEN"), 0U);
  }
  EXPECT_EQ(jobService(scriptGang()).ports.size(), 1U);
}

// Security review M5: a job's pods hold no token of the namespace's ServiceAccount unless the
// partition's podPolicy asks for one (Kubernetes mounts it by default).
TEST(RankPods, NoServiceAccountTokenUnlessThePartitionAllowsOne) {
  GangInput input = scriptGang();
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  for (const api::Pod& pod : *pods) {
    EXPECT_EQ(api::encodePod(pod)["spec"]["automountServiceAccountToken"], false);
  }
  input.policy.automountServiceAccountToken = true;
  pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  EXPECT_EQ(api::encodePod((*pods)[0])["spec"]["automountServiceAccountToken"], true);
}

// Security review M10: under a restricted partition the containers the operator writes (the rank
// and the tools' init container) meet the restricted Pod Security level, so a namespace labelled
// pod-security.kubernetes.io/enforce=restricted admits them.
TEST(RankPods, RestrictedPartitionsGetContainersThatMeetTheRestrictedLevel) {
  GangInput input = scriptGang();
  input.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  input.stepSecretName = "train-x7k2p-step-q4z9d";
  input.policy.level = PodSecurityLevel::kRestricted;
  input.policy.runAsUser = 1000;
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  const api::Json pod = api::encodePod((*pods)[0]);
  const api::Json expected = {{"allowPrivilegeEscalation", false},
                              {"runAsNonRoot", true},
                              {"runAsUser", 1000},
                              {"capabilities", {{"drop", {"ALL"}}}},
                              {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  EXPECT_EQ(pod["spec"]["containers"][0]["securityContext"], expected);
  EXPECT_EQ(pod["spec"]["initContainers"][0]["securityContext"], expected);
  // And the pod passes the restricted check the templates are held to.
  api::Json asTemplate = {{"spec", pod["spec"]}};
  asTemplate["spec"].erase("automountServiceAccountToken");
  EXPECT_TRUE(checkPodTemplate(asTemplate, input.policy, {}, "gpu").isOk())
      << checkPodTemplate(asTemplate, input.policy, {}, "gpu").toString();
}

// Security review M11: a partition's tolerations reach its jobs' pods (GKE taints every GPU node
// nvidia.com/gpu:NoSchedule).
TEST(RankPods, ThePartitionsTolerationsReachEveryRank) {
  GangInput input = scriptGang();
  api::Toleration gpu;
  gpu.key = "nvidia.com/gpu";
  gpu.operator_ = "Exists";
  gpu.effect = "NoSchedule";
  input.tolerations.push_back(gpu);
  auto pods = rankPods(input);
  ASSERT_TRUE(pods.isOk());
  for (const api::Pod& pod : *pods) {
    ASSERT_EQ(pod.spec.tolerations.size(), 1U);
    EXPECT_EQ(pod.spec.tolerations[0].key, "nvidia.com/gpu");
  }
}

}  // namespace
}  // namespace kubeslurm::podspec

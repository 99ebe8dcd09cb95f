#include "kubeslurm/podspec/rank_pods.h"

#include <algorithm>
#include <utility>

#include "kubeslurm/base/text.h"
#include "kubeslurm/step/pod_contract.h"

namespace kubeslurm::podspec {

namespace {

// rank 0 with a batch script: write it to a file and run it, so that its #! line chooses the
// interpreter as slurmd's exec of the script does; "$@" are sbatch's script arguments.
constexpr std::string_view kWriteBatchScript =
    "f=\"${TMPDIR:-/tmp}/slurm_script.${SLURM_JOB_ID}\" && "
    "printf '%s' \"$KUBESLURM_BATCH_SCRIPT\" > \"$f\" && chmod 700 \"$f\" && ";
constexpr std::string_view kExecBatchScript = R"(exec "$f" "$@")";
// The other ranks: hold the node until the operator stops the gang; SIGTERM is a clean end.
constexpr std::string_view kHoldNode =
    "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done";
// With the in-pod runtime: the script runs under the batch launcher (which serves rank 0's
// step agent beside it), and the other ranks run their step agent. The tools go first on PATH so
// that the script's `srun` and `scontrol` are ours.
constexpr std::string_view kExecBatchStep = R"(exec kubeslurm-inpod batch-step "$f" "$@")";
constexpr std::string_view kExecStepAgent = "exec kubeslurm-inpod step-agent";
// Rank 0 of an interactive allocation: hold the nodes, serve the login side's steps.
constexpr std::string_view kExecAllocation = "exec kubeslurm-inpod allocation";

// The shell command of a script job's rank (or an interactive allocation's, which needs the
// runtime).
std::string rankCommand(std::uint32_t rank, bool inPodRuntime, bool interactive) {
  std::string command;
  if (inPodRuntime) {
    command = "export PATH=\"" + std::string(step::kToolsMountPath) + "/bin:$PATH\" && ";
  }
  if (rank == 0 && interactive) {
    command += kExecAllocation;
  } else if (rank == 0) {
    command += kWriteBatchScript;
    command += inPodRuntime ? kExecBatchStep : kExecBatchScript;
  } else {
    command += inPodRuntime ? kExecStepAgent : kHoldNode;
  }
  return command;
}
constexpr std::string_view kToolsVolume = "kubeslurm-tools";
constexpr std::string_view kBatchScriptVariable = "KUBESLURM_BATCH_SCRIPT";

api::OwnerReference ownerReference(const GangInput& input) {
  api::OwnerReference owner;
  owner.apiVersion = "kubeslurm.io/v1alpha1";
  owner.kind = "SlurmJob";
  owner.name = input.jobName;
  owner.uid = input.jobUid;
  owner.controller = true;
  owner.blockOwnerDeletion = true;
  return owner;
}

api::ObjectMeta jobObjectMeta(const GangInput& input, std::string name) {
  api::ObjectMeta meta;
  meta.name = std::move(name);
  meta.namespaceName = input.namespaceName;
  meta.labels = jobLabels(input.jobName, input.jobId);
  meta.ownerReferences.push_back(ownerReference(input));
  return meta;
}

void setResources(const GangInput& input, api::Container& container) {
  const std::string gpu(kGpuResource);
  if (input.gpusPerNode > 0) {
    // Extended resources must have requests equal to limits; the kubelet enforces the limit.
    container.resources.requests[gpu] = std::to_string(input.gpusPerNode);
    container.resources.limits[gpu] = std::to_string(input.gpusPerNode);
  } else {
    container.resources.requests.erase(gpu);
    container.resources.limits.erase(gpu);
  }
  if (input.cpuMillisPerNode > 0) {
    container.resources.requests["cpu"] = std::to_string(input.cpuMillisPerNode) + "m";
  }
  if (input.memoryBytesPerNode > 0) {
    container.resources.requests["memory"] = std::to_string(input.memoryBytesPerNode);
  }
}

Status addEnvironment(const EnvironmentList& env, api::Container& container) {
  for (const auto& entry : env) {
    const std::string& name = entry.first;
    const std::string& value = entry.second;
    auto existing = std::find_if(container.env.begin(), container.env.end(),
                                 [&name](const api::EnvVar& var) { return var.name == name; });
    if (existing != container.env.end()) {
      if (existing->value == value && !existing->raw.contains("valueFrom")) continue;
      return invalidArgument("the pod template sets " + name +
                             ", which the operator sets for every rank");
    }
    api::EnvVar var;
    var.name = name;
    var.value = value;
    container.env.push_back(std::move(var));
  }
  return Status::ok();
}

// object[key] as an array to append to: made one when it is absent or something else.
api::Json& arrayMember(api::Json& object, const char* key) {
  api::Json& member = object[key];
  if (!member.is_array()) member = api::Json::array();
  return member;
}

void mountSharedVolume(const api::SharedVolume& volume, api::Pod& pod, api::Container& container) {
  api::Json& volumes = arrayMember(pod.raw["spec"], "volumes");
  volumes.push_back(
      {{"name", kSharedVolumeName}, {"persistentVolumeClaim", {{"claimName", volume.claimName}}}});
  api::Json mount = {{"name", kSharedVolumeName}, {"mountPath", volume.mountPath}};
  if (!volume.subPath.empty()) mount["subPath"] = volume.subPath;
  api::Json& mounts = arrayMember(container.raw, "volumeMounts");
  mounts.push_back(std::move(mount));
}

// What the restricted Pod Security level asks of a container, for the ones the operator writes.
void restrict(api::Container& container, const PodPolicy& policy) {
  container.raw["securityContext"] = {{"allowPrivilegeEscalation", false},
                                      {"runAsNonRoot", true},
                                      {"runAsUser", policy.runAsUser},
                                      {"capabilities", {{"drop", {"ALL"}}}},
                                      {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

// Pyxis's mounts, after ours: a target already mounted (the tools, the shared volume, the pod
// template's own) would make the API server refuse the pod, so it is refused here with the
// entry's path.
Status addContainerMounts(const std::vector<ContainerMount>& mounts, api::Pod& pod,
                          api::Container& container) {
  if (mounts.empty()) return Status::ok();
  api::Json& volumes = arrayMember(pod.raw["spec"], "volumes");
  api::Json& volumeMounts = arrayMember(container.raw, "volumeMounts");
  for (const ContainerMount& mount : mounts) {
    for (const api::Json& existing : volumeMounts) {
      if (api::stringMember(existing, "mountPath") == mount.mountPath) {
        return invalidArgument("--container-mounts: " + mount.mountPath +
                               " is already mounted in the rank's container");
      }
    }
    if (!mount.volume.is_null() &&
        std::none_of(volumes.begin(), volumes.end(), [&](const api::Json& v) {
          return api::stringMember(v, "name") == mount.volumeName;
        })) {
      volumes.push_back(mount.volume);
    }
    api::Json entry = {{"name", mount.volumeName}, {"mountPath", mount.mountPath}};
    if (!mount.subPath.empty()) entry["subPath"] = mount.subPath;
    if (mount.readOnly) entry["readOnly"] = true;
    if (!mount.mountPropagation.empty()) entry["mountPropagation"] = mount.mountPropagation;
    volumeMounts.push_back(std::move(entry));
  }
  return Status::ok();
}

// The init container that copies the tools into the pod, the volume they live in, and what the
// rank's container needs to use them: the mount, the agents' port and the step token.
void addInPodRuntime(const GangInput& input, std::uint32_t rank, api::Pod& pod,
                     api::Container& container) {
  const std::string mountPath(step::kToolsMountPath);
  api::Json& volumes = arrayMember(pod.raw["spec"], "volumes");
  volumes.push_back({{"name", kToolsVolume}, {"emptyDir", api::Json::object()}});

  api::Container tools;
  tools.name = std::string(kToolsVolume);
  tools.image = input.toolsImage;
  tools.command = {"/bin/sh", "-c", "cp -a /opt/kubeslurm/. " + mountPath + "/"};
  tools.raw["volumeMounts"] =
      api::Json::array({{{"name", kToolsVolume}, {"mountPath", mountPath}}});
  pod.spec.initContainers.insert(pod.spec.initContainers.begin(), std::move(tools));

  api::Json& mounts = arrayMember(container.raw, "volumeMounts");
  mounts.push_back({{"name", kToolsVolume}, {"mountPath", mountPath}, {"readOnly", true}});

  auto addVariable = [&container](std::string_view name, std::string value) {
    api::EnvVar var;
    var.name = std::string(name);
    var.value = std::move(value);
    container.env.push_back(std::move(var));
  };
  addVariable(step::kStepPortVariable, std::to_string(step::kDefaultStepAgentPort));
  if (rank == 0 && !input.batchStdout.empty()) {
    addVariable(step::kStdoutVariable, input.batchStdout);
    if (!input.batchStderr.empty() && input.batchStderr != input.batchStdout) {
      addVariable(step::kStderrVariable, input.batchStderr);
    }
    addVariable(step::kOpenModeVariable, input.appendOutput ? "append" : "truncate");
  }
  api::EnvVar token;
  token.name = std::string(step::kStepTokenVariable);
  token.raw = {
      {"name", token.name},
      {"valueFrom",
       {{"secretKeyRef",
         {{"name", input.stepSecretName}, {"key", std::string(step::kStepTokenSecretKey)}}}}}};
  container.env.push_back(std::move(token));
}

// The template's pod (labels, annotations, spec) with its unknown fields kept in raw.
StatusOr<api::Pod> podFromTemplate(const api::Json& podTemplate) {
  if (!podTemplate.is_object()) return invalidArgument("spec.podTemplate: expected an object");
  api::Json object = api::Json::object();
  if (podTemplate.contains("metadata")) object["metadata"] = podTemplate["metadata"];
  if (podTemplate.contains("spec")) object["spec"] = podTemplate["spec"];
  auto pod = api::decodePod(object);
  if (!pod.isOk()) {
    return invalidArgument("spec.podTemplate: " + std::string(pod.status().message()));
  }
  if (pod->spec.containers.empty()) {
    return invalidArgument("spec.podTemplate: the template has no container to run");
  }
  return pod;
}

}  // namespace

std::string rankPodName(std::string_view jobName, std::uint32_t rank) {
  return std::string(jobName) + "-" + std::to_string(rank);
}

std::string serviceDomain(std::string_view jobName, std::string_view ns,
                          std::string_view clusterDomain) {
  return std::string(jobName) + "." + std::string(ns) + ".svc." + std::string(clusterDomain);
}

std::optional<std::uint32_t> bookkeepingNumber(const std::map<std::string, std::string>& values,
                                               std::string_view key) {
  const auto it = values.find(std::string(key));
  if (it == values.end()) return std::nullopt;
  return parseInteger<std::uint32_t>(it->second);
}

bool rejectedByKubelet(const api::Pod& pod) {
  return pod.status.phase == "Failed" && pod.status.reason.starts_with("OutOf");
}

std::map<std::string, std::string> jobLabels(std::string_view jobName, std::int64_t jobId) {
  return {{std::string(kJobNameLabel), std::string(jobName)},
          {std::string(kJobIdLabel), std::to_string(jobId)}};
}

StatusOr<std::vector<api::Pod>> rankPods(const GangInput& input) {
  if (input.nodes.empty()) return invalidArgument("a gang needs at least one node");
  if (input.jobName.empty() || input.namespaceName.empty() || input.jobUid.empty()) {
    return invalidArgument("a gang needs its job's name, namespace and uid");
  }
  if (input.interactive) {
    if (input.podTemplate || !input.script.empty()) {
      return invalidArgument("an interactive allocation has no batch script or pod template");
    }
    if (input.toolsImage.empty()) {
      return invalidArgument(
          "an interactive allocation needs the in-pod runtime, and this operator runs without "
          "one (--tools-image)");
    }
  } else if (!input.podTemplate && input.script.empty()) {
    return invalidArgument("the job has neither a batch script nor a pod template");
  }
  const auto ranks = static_cast<std::uint32_t>(input.nodes.size());
  JobEnvironmentInput environment = input.environment;
  environment.rankHostnames.clear();
  for (std::uint32_t rank = 0; rank < ranks; ++rank) {
    environment.rankHostnames.push_back(rankPodName(input.jobName, rank));
  }
  // Topology addresses end in the node name the job sees, which is the rank's hostname.
  const std::string domain = serviceDomain(input.jobName, input.namespaceName, input.clusterDomain);
  environment.serviceDomain = domain;

  std::vector<api::Pod> pods;
  pods.reserve(ranks);
  for (std::uint32_t rank = 0; rank < ranks; ++rank) {
    api::Pod pod;
    if (input.podTemplate) {
      auto fromTemplate = podFromTemplate(*input.podTemplate);
      if (!fromTemplate.isOk()) return fromTemplate.status();
      pod = std::move(fromTemplate).value();
    } else {
      pod.spec.containers.emplace_back();
    }
    const std::string name = rankPodName(input.jobName, rank);
    api::ObjectMeta meta = jobObjectMeta(input, name);
    for (auto& [key, value] : pod.metadata.labels) meta.labels.emplace(key, value);
    meta.annotations = pod.metadata.annotations;
    meta.labels[std::string(kRankLabel)] = std::to_string(rank);
    meta.labels[std::string(kAttemptLabel)] = std::to_string(input.attempt);
    meta.annotations[std::string(kPlannedNodeAnnotation)] = input.nodes[rank];
    meta.annotations[std::string(kGangSizeAnnotation)] = std::to_string(ranks);
    meta.annotations[std::string(kPartitionAnnotation)] = input.environment.partition;
    meta.finalizers = {std::string(kJobTrackingFinalizer)};
    pod.metadata = std::move(meta);

    pod.spec.nodeName.clear();
    pod.spec.schedulerName = input.schedulerName;
    pod.spec.hostname = name;
    pod.spec.subdomain = input.jobName;
    pod.spec.restartPolicy = "Never";
    if (std::find(pod.spec.dnsSearches.begin(), pod.spec.dnsSearches.end(), domain) ==
        pod.spec.dnsSearches.end()) {
      pod.spec.dnsSearches.insert(pod.spec.dnsSearches.begin(), domain);
    }
    for (const api::Toleration& toleration : input.tolerations) {
      pod.spec.tolerations.push_back(toleration);
    }
    if (input.terminationGracePeriodSeconds) {
      pod.spec.terminationGracePeriodSeconds = input.terminationGracePeriodSeconds;
    }
    if (input.activeDeadlineSeconds) {
      pod.spec.activeDeadlineSeconds =
          std::min(pod.spec.activeDeadlineSeconds.value_or(*input.activeDeadlineSeconds),
                   *input.activeDeadlineSeconds);
    }
    // No token of the namespace's ServiceAccount in a job's pods unless the partition asks for
    // one (security review M5): the job's code has no business with the API server by default.
    pod.raw["spec"]["automountServiceAccountToken"] = input.policy.automountServiceAccountToken;

    api::Container& container = pod.spec.containers.front();
    if (container.name.empty()) container.name = std::string(kRankContainerName);
    if (container.image.empty()) container.image = input.image;
    if (container.image.empty()) {
      return invalidArgument(
          "no container image: set spec.container.image, the pod template's "
          "image, or the partition's default");
    }
    const bool inPodRuntime = usesStepRuntime(input);
    if (inPodRuntime && input.stepSecretName.empty()) {
      return invalidArgument("the job's step-token Secret has no name yet");
    }
    if (!input.podTemplate) {
      container.command = {"/bin/sh", "-c", rankCommand(rank, inPodRuntime, input.interactive)};
      container.args = {"slurm_script"};
      if (rank == 0) {
        container.args.insert(container.args.end(), input.scriptArgs.begin(),
                              input.scriptArgs.end());
      }
    }
    setResources(input, container);
    auto env = rankEnvironment(environment, rank);
    if (!env.isOk()) return env.status();
    if (!input.podTemplate && !input.interactive && rank == 0) {
      env->emplace_back(std::string(kBatchScriptVariable), input.script);
    }
    if (Status added = addEnvironment(*env, container); !added.isOk()) return added;
    // What sbatch shipped from the submitting environment, under the job's own variables (as
    // slurmstepd's overwrite the submitted ones) and under the pod template's.
    for (const auto& shipped : input.shippedEnvironment) {
      const std::string& variable = shipped.first;
      if (std::none_of(container.env.begin(), container.env.end(),
                       [&variable](const api::EnvVar& var) { return var.name == variable; })) {
        api::EnvVar var;
        var.name = variable;
        var.value = shipped.second;
        container.env.push_back(std::move(var));
      }
    }
    if (inPodRuntime) addInPodRuntime(input, rank, pod, container);
    if (!input.podTemplate && input.policy.level == PodSecurityLevel::kRestricted) {
      // Our own containers meet the restricted level; a template's are checked, not changed.
      for (api::Container& own : pod.spec.initContainers) restrict(own, input.policy);
      restrict(container, input.policy);
    }
    if (input.sharedVolume) {
      mountSharedVolume(*input.sharedVolume, pod, container);
      if (!input.workDir.empty() && input.workDir.starts_with(input.sharedVolume->mountPath)) {
        container.workingDir = input.workDir;
      }
    }
    if (Status mounted = addContainerMounts(input.containerMounts, pod, container);
        !mounted.isOk()) {
      return mounted;
    }
    // Pyxis: --container-workdir is where the container starts, whatever the submit directory.
    if (!input.containerWorkdir.empty()) container.workingDir = input.containerWorkdir;
    pods.push_back(std::move(pod));
  }
  return pods;
}

bool usesStepRuntime(const GangInput& input) {
  return !input.podTemplate && !input.toolsImage.empty();
}

std::string stepTokenSecretPrefix(std::string_view jobName) {
  return std::string(jobName) + "-step-";
}

api::Json stepTokenSecret(const GangInput& input, const std::string& token) {
  api::Json secret = {{"apiVersion", "v1"}, {"kind", "Secret"}, {"type", "Opaque"}};
  api::ObjectMeta meta = jobObjectMeta(input, "");
  meta.generateName = stepTokenSecretPrefix(input.jobName);
  meta.labels[std::string(kAttemptLabel)] = std::to_string(input.attempt);
  api::encodeObjectMeta(meta, secret["metadata"]);
  secret["stringData"] = {{std::string(step::kStepTokenSecretKey), token}};
  return secret;
}

api::Json jobNetworkPolicy(const GangInput& input) {
  api::Json policy = {{"apiVersion", "networking.k8s.io/v1"}, {"kind", "NetworkPolicy"}};
  api::encodeObjectMeta(jobObjectMeta(input, input.jobName), policy["metadata"]);
  const api::Json ranks = {{"matchLabels", {{std::string(kJobNameLabel), input.jobName}}}};
  policy["spec"] = {{"podSelector", ranks},
                    {"policyTypes", {"Ingress"}},
                    {"ingress", {{{"from", {{{"podSelector", ranks}}}}}}}};
  return policy;
}

api::Service jobService(const GangInput& input) {
  api::Service service;
  service.metadata = jobObjectMeta(input, input.jobName);
  service.clusterIP = "None";
  service.selector = {{std::string(kJobNameLabel), input.jobName}};
  service.publishNotReadyAddresses = true;
  api::ServicePort port;
  port.name = "rendezvous";
  port.port = input.environment.masterPort;
  port.protocol = "TCP";
  service.ports.push_back(std::move(port));
  if (!input.toolsImage.empty()) {
    api::ServicePort step;
    step.name = "step-agent";
    step.port = step::kDefaultStepAgentPort;
    step.protocol = "TCP";
    service.ports.push_back(std::move(step));
  }
  return service;
}

}  // namespace kubeslurm::podspec

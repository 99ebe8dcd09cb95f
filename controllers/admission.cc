#include "controllers/admission.h"

#include <algorithm>
#include <numeric>

#include "controllers/arrays.h"
#include "controllers/job_object.h"
#include "controllers/job_request.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/filename_pattern.h"

namespace kubeslurm::controllers {

namespace {

// A scan, compared in place: a start looks up its job (and a task its array) among every job.
const api::SlurmJobObject* findJob(const ClusterObjects& objects, std::string_view ns,
                                   std::string_view name) {
  for (const api::SlurmJobObject& job : objects.jobs) {
    if (job.name == name && job.namespaceName == ns) return &job;
  }
  return nullptr;
}

const api::SlurmJobObject* findJob(const ClusterObjects& objects, std::string_view key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return nullptr;
  return findJob(objects, key.substr(0, slash), key.substr(slash + 1));
}

const core::Job* findCoreJob(const core::Snapshot& snapshot, core::JobId id) {
  for (const core::Job& job : snapshot.jobs) {
    if (job.id == id) return &job;
  }
  return nullptr;
}

// Where the batch script's --output/--error go: the pattern expanded as slurmstepd names the
// batch step's files (fname.c), relative to the working directory, kept only when the file is
// on the partition's shared volume (elsewhere it would be inside the rank-0 pod, lost with it:
// the pod's log has it instead). "" for the pod's log.
std::string batchOutputPath(const std::string& pattern, const api::SlurmJobObject& job,
                            const podspec::GangInput& gang, const std::string& user) {
  if (pattern.empty() || !gang.sharedVolume || gang.sharedVolume->mountPath.empty()) return "";
  slurm::FilenamePatternValues values;
  values.jobId = static_cast<std::uint64_t>(gang.jobId);
  if (job.status && job.status->arrayJobId && job.status->arrayTaskId) {
    values.arrayJobId = static_cast<std::uint64_t>(*job.status->arrayJobId);
    values.arrayTaskId = static_cast<std::uint32_t>(*job.status->arrayTaskId);
  }
  values.jobName = job.request.jobName;
  values.nodeName = podspec::rankPodName(gang.jobName, 0);
  values.userName = user;
  std::string path = slurm::expandFilenamePattern(pattern, values);
  if (!path.starts_with('/')) path = job.request.workDir + "/" + path;
  std::string mount = gang.sharedVolume->mountPath;
  if (!mount.ends_with('/')) mount += '/';
  return path.starts_with(mount) ? path : "";
}

// SLURM_ARRAY_TASK_*: the spacing of the task ids when they are evenly spaced, else 1. `whole`:
// the array's tasks, from its own record (a task's spec names only itself: arrayTaskObject);
// null, the task's spec's (a task made with a copy of the array's).
std::optional<podspec::ArrayTaskInfo> arrayInfo(const api::SlurmJobObject& job,
                                                const slurm::ArraySpec* whole) {
  if (!job.status || !job.status->arrayJobId || !job.status->arrayTaskId) return std::nullopt;
  podspec::ArrayTaskInfo info;
  info.arrayJobId = *job.status->arrayJobId;
  info.taskId = static_cast<std::uint32_t>(*job.status->arrayTaskId);
  if (whole == nullptr && job.request.array) whole = &*job.request.array;
  if (whole != nullptr && !whole->taskIds.empty()) {
    const std::vector<std::uint32_t>& ids = whole->taskIds;
    info.taskCount = static_cast<std::uint32_t>(ids.size());
    info.taskMin = ids.front();
    info.taskMax = ids.back();
    std::uint32_t step = ids.size() > 1 ? ids[1] - ids[0] : 1;
    for (std::size_t i = 2; i < ids.size(); ++i) {
      if (ids[i] - ids[i - 1] != step) step = 1;
    }
    info.taskStep = std::max<std::uint32_t>(step, 1);
  } else {
    info.taskCount = 1;
    info.taskMin = info.taskMax = info.taskId;
  }
  return info;
}

// spec.rendezvous: {port, nprocPerNode: N | "gpu" | "auto"}, kept in the object's raw JSON.
Status applyRendezvous(const api::Json& raw, std::uint32_t gpusPerNode,
                       podspec::JobEnvironmentInput& environment) {
  if (!raw.contains("spec") || !raw["spec"].is_object() || !raw["spec"].contains("rendezvous")) {
    return Status::ok();
  }
  const api::Json& rendezvous = raw["spec"]["rendezvous"];
  if (!rendezvous.is_object()) return invalidArgument("spec.rendezvous: expected an object");
  if (rendezvous.contains("port")) {
    const api::Json& port = rendezvous["port"];
    if (!port.is_number_integer() || port.get<std::int64_t>() < 1 ||
        port.get<std::int64_t>() > 65535) {
      return invalidArgument("spec.rendezvous.port: expected a port number (1-65535)");
    }
    environment.masterPort = static_cast<std::uint16_t>(port.get<std::int64_t>());
  }
  if (rendezvous.contains("nprocPerNode")) {
    const api::Json& nproc = rendezvous["nprocPerNode"];
    if (nproc.is_number_unsigned() && nproc.get<std::uint64_t>() > 0 &&
        nproc.get<std::uint64_t>() <= 1024) {
      environment.nprocPerNode = static_cast<std::uint32_t>(nproc.get<std::uint64_t>());
    } else if (nproc.is_string() && (nproc == "gpu" || nproc == "auto")) {
      // torchrun's "gpu" is one process per GPU; "auto" falls back to the tasks without GPUs.
      environment.nprocPerNode = gpusPerNode > 0 ? gpusPerNode : environment.tasksPerNode;
    } else {
      return invalidArgument(R"(spec.rendezvous.nprocPerNode: expected a count, "gpu" or "auto")");
    }
  }
  return Status::ok();
}

// Time limits hold while no operator runs: the kubelet ends a rank pod past its
// activeDeadlineSeconds (from the pod's start, which is after the bind). The deadline is the
// partition's MaxTime (or the job's own limit where an administrator set a longer one) plus
// KillWait and a minute, so a running operator always ends the job first, as TIMEOUT at its
// own limit. Not the job's own limit: a deadline can never be raised once set, and an
// administrator's `scontrol update TimeLimit` must still be able to raise a running job's, as
// in Slurm, up to MaxTime. No deadline in a partition without a MaxTime.
std::optional<std::int64_t> rankDeadline(const slurm::JobRequest& request,
                                         const api::Partition& partition,
                                         const AdmissionOptions& options) {
  constexpr std::int64_t kMargin = 60;
  const std::optional<std::int64_t> maxTime = api::partitionMaxTime(partition.spec).seconds;
  if (!maxTime) return std::nullopt;
  std::int64_t limit = *maxTime;
  if (request.timeLimit) {
    // UNLIMITED past a MaxTime is an administrator's word (a user's job would never start).
    if (!request.timeLimit->seconds) return std::nullopt;
    limit = std::max(limit, *request.timeLimit->seconds);
  }
  return limit + std::max<std::int64_t>(options.killWaitSeconds, 0) + kMargin;
}

// The gang of `job` on `nodes` as `who` runs it: everything but the topology addresses, which
// come from the snapshot's tree.
StatusOr<podspec::GangInput> gangFor(const api::SlurmJobObject& job,
                                     const api::Partition& partition, const GangIdentity& who,
                                     std::vector<std::string> nodes,
                                     const AdmissionOptions& options,
                                     const slurm::ArraySpec* arrayTasks = nullptr) {
  auto meta = api::decodeObjectMeta(job.raw->contains("metadata") ? (*job.raw)["metadata"]
                                                                  : api::Json::object());
  if (!meta.isOk()) return meta.status();
  auto request = nodeRequest(job.request, partition.spec);
  if (!request.isOk()) return request.status();

  podspec::GangInput gang;
  gang.namespaceName = job.namespaceName;
  gang.jobName = job.name;
  gang.jobUid = meta->uid;
  gang.jobId = who.jobId;
  gang.attempt = who.attempt;
  gang.nodes = std::move(nodes);
  gang.clusterDomain = options.clusterDomain;
  gang.schedulerName = options.schedulerName;
  gang.gpusPerNode = request->gpusPerNode;
  gang.cpuMillisPerNode = request->cpuMillisPerNode;
  gang.memoryBytesPerNode = request->memoryBytesPerNode;
  gang.image =
      !job.request.container.image.empty() ? job.request.container.image : options.defaultImage;
  gang.interactive = job.request.interactive;
  if (!gang.interactive) gang.script = job.script;
  const api::Json* podTemplate = api::specMember(job, "podTemplate");
  if (job.script.empty() && podTemplate == nullptr && !job.request.interactive) {
    // A task made without a copy of its array's script reads the array's: the one its
    // controller reference names, with that uid (arrayTaskOf), never one a label points at.
    if (const std::optional<ArrayTaskRef> task = arrayTaskOf(job)) {
      gang.script = std::string(kScriptNotCached);
      gang.scriptSourceName = task->arrayName;
      gang.scriptSourceUid = task->arrayUid;
    }
  }
  gang.toolsImage = options.toolsImage;
  gang.scriptArgs = job.scriptArgs;
  gang.workDir = job.request.workDir;
  gang.containerWorkdir = job.request.container.workdir;
  if (podTemplate != nullptr) gang.podTemplate = *podTemplate;
  // The partition's pod policy holds the template to its Pod Security level and lists
  // (security review C1): the operator creates these pods, so it checks what a tenant put in.
  auto policy = podspec::podPolicyOf(partition);
  if (!policy.isOk()) return policy.status();
  gang.policy = std::move(policy).value();
  if (gang.podTemplate) {
    if (Status allowed = podspec::checkPodTemplate(
            *gang.podTemplate, gang.policy, partition.spec.allowedMounts, partition.metadata.name);
        !allowed.isOk()) {
      return allowed;
    }
  }
  gang.tolerations = partition.spec.tolerations;
  gang.isolateNetwork = partition.spec.jobNetwork != "Open";
  gang.sharedVolume = partition.spec.sharedVolume;
  auto mounts = containerMounts(job.request, partition);
  if (!mounts.isOk()) return mounts.status();
  gang.containerMounts = std::move(mounts).value();
  gang.shippedEnvironment = job.request.environment;
  gang.terminationGracePeriodSeconds = options.killWaitSeconds;
  gang.activeDeadlineSeconds = rankDeadline(job.request, partition, options);
  gang.batchStdout = batchOutputPath(job.request.output, job, gang, who.user);
  if (!gang.batchStdout.empty()) {
    gang.batchStderr = batchOutputPath(job.request.error, job, gang, who.user);
  }
  gang.appendOutput = job.request.openMode == slurm::OpenMode::kAppend;

  podspec::JobEnvironmentInput& env = gang.environment;
  env.jobId = gang.jobId;
  env.jobName = job.request.jobName;
  env.user = who.user;
  env.partition = partition.metadata.name;
  env.account = who.account;  // defaulted from the namespace's Account
  // slurmctld reports the QOS it applied; "normal" is the one every cluster has.
  env.qos = who.qos;  // defaulted from the Account's defaultQos, else "normal"
  env.clusterName = options.clusterName;
  env.submitDir = job.request.workDir;
  env.tasksPerNode = request->tasksPerNode;
  env.cpusPerTaskOption = job.request.cpusPerTask;
  env.cpusPerNode = static_cast<std::uint32_t>(request->cpuMillisPerNode / 1000);
  env.gpusPerNode = request->gpusPerNode;
  if (!job.request.gpusPerNode.empty())
    env.gpusPerNodeOption = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(gpuCount(job.request.gpusPerNode), UINT32_MAX));
  env.array = arrayInfo(job, arrayTasks);
  env.ncclSettings = partition.spec.nccl;
  if (Status applied = applyRendezvous(*job.raw, request->gpusPerNode, env); !applied.isOk()) {
    return applied;
  }
  return gang;
}

StatusOr<podspec::GangInput> gangForStartUnguarded(const core::Start& start,
                                                   const SnapshotIndex& index,
                                                   const ClusterObjects& objects,
                                                   const AdmissionOptions& options) {
  const auto key = index.jobKeys.find(start.jobId);
  if (key == index.jobKeys.end()) {
    return notFound("job " + std::to_string(start.jobId) + " is not in the snapshot");
  }
  const api::SlurmJobObject* job = findJob(objects, key->second);
  const core::Job* planned = findCoreJob(index.snapshot, start.jobId);
  if (job == nullptr || planned == nullptr) return notFound("SlurmJob " + key->second + " is gone");
  // The partition the plan started the job in: of a job that names several, one of them.
  std::string message;
  const std::vector<const api::Partition*> partitions =
      jobPartitions(job->request, objects.partitions, &message);
  if (partitions.empty()) return invalidArgument(message);
  const auto chosen = std::ranges::find_if(partitions, [&](const api::Partition* p) {
    return start.partition.empty() || p->metadata.name == start.partition;
  });
  if (chosen == partitions.end()) {
    return notFound("partition " + start.partition + " is not one of " + key->second + "'s");
  }
  const api::Partition* partition = *chosen;
  std::vector<std::string> nodes;
  for (const core::NodeIndex node : start.nodes) {
    if (node >= index.nodeNames.size()) {
      return notFound("node index " + std::to_string(node) + " is not in the snapshot");
    }
    nodes.push_back(index.nodeNames[node]);
  }
  const GangIdentity who{static_cast<std::int64_t>(start.jobId), planned->restarts, planned->user,
                         planned->account, planned->qos};
  // A task's array, which its controller reference names with that uid.
  const slurm::ArraySpec* arrayTasks = nullptr;
  if (const auto task = arrayTaskOf(*job)) {
    const api::SlurmJobObject* array = findJob(objects, job->namespaceName, task->arrayName);
    if (array != nullptr && jobMetadata(*array).uid == task->arrayUid && array->request.array) {
      arrayTasks = &*array->request.array;
    }
  }
  auto gang = gangFor(*job, *partition, who, std::move(nodes), options, arrayTasks);
  if (!gang.isOk()) return gang;

  // SLURM_TOPOLOGY_ADDR from the tree the snapshot used: its label levels, top level first,
  // then the node name the job sees (the rank's hostname), as topo_get_node_addr writes it.
  const std::vector<std::string>& levels = index.snapshot.topologyLabels;
  podspec::JobEnvironmentInput& env = gang->environment;
  if (!levels.empty()) {
    std::string pattern;
    pattern.reserve(levels.size() * 7);
    for ([[maybe_unused]] const std::string& level : levels) pattern += "switch.";
    env.topologyPattern = pattern + "node";
    for (std::uint32_t rank = 0; rank < start.nodes.size(); ++rank) {
      const core::Node& node = index.snapshot.nodes[start.nodes[rank]];
      std::string address;
      for (std::size_t level = levels.size(); level-- > 0;) {  // the top level first
        const auto value = node.labels.find(levels[level]);
        address += (value == node.labels.end() ? std::string() : value->second) + ".";
      }
      env.topologyAddresses.push_back(address + podspec::rankPodName(gang->jobName, rank));
    }
  }
  return gang;
}

// What a tenant wrote reaches pod construction: a throw from a library on a value no check
// foresaw becomes this job's error, never the operator's.
template <typename Build>
auto guarded(Build build) -> decltype(build()) {
  try {
    return build();
  } catch (const std::exception& e) {
    return invalidArgument(std::string("the job's pods cannot be made: ") + e.what());
  }
}

}  // namespace

StatusOr<podspec::GangInput> gangForStart(const core::Start& start, const SnapshotIndex& index,
                                          const ClusterObjects& objects,
                                          const AdmissionOptions& options) {
  return guarded([&] { return gangForStartUnguarded(start, index, objects, options); });
}

StatusOr<api::Pod> checkPod(const api::SlurmJobObject& job, const api::Partition& partition,
                            const GangIdentity& who, const AdmissionOptions& options) {
  return guarded([&]() -> StatusOr<api::Pod> {
    auto gang = gangFor(job, partition, who, {std::string(kCheckNode)}, options);
    if (!gang.isOk()) return gang.status();
    // The Secret's real name comes from the API server when the gang is admitted.
    gang->stepSecretName = podspec::stepTokenSecretPrefix(job.name) + "check";
    auto pods = podspec::rankPods(*gang);
    if (!pods.isOk()) return pods.status();
    return std::move(pods->front());
  });
}

Status checkJobPods(const api::SlurmJobObject& job, const api::Partition& partition,
                    const GangIdentity& who, const AdmissionOptions& options) {
  auto pod = checkPod(job, partition, who, options);
  return pod.isOk() ? Status::ok() : pod.status();
}

}  // namespace kubeslurm::controllers

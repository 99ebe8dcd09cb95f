// The Kubernetes objects of a placed gang: one rank pod per allocated node and the job's
// headless Service. PURE: the same inputs always give the same objects, so the operator can
// compare what exists with what should exist and a repeated reconcile writes nothing.
//
// Naming: the SlurmJob `<job>` owns Service `<job>` and pods `<job>-<rank>`; each pod's
// hostname is its own name and its subdomain the Service, so every rank resolves every other by
// `<job>-<rank>` through the DNS search path `<job>.<ns>.svc.<domain>`.
//
// What runs. With a batch script, rank 0 runs it once, as slurmd runs a batch step: the script
// text travels in the pod (KUBESLURM_BATCH_SCRIPT), is written to a file and executed, so its
// `#!` line picks the interpreter; the other ranks hold their node for the script's steps
// (`srun`) and are stopped when rank 0 ends. With a pod template, its first container runs on
// every rank and the job ends when all have.
//
// The in-pod runtime (GangInput::toolsImage; kubeslurm/inpod). An init container copies the tools
// image's /opt/kubeslurm (the static `kubeslurm-inpod` binary and its srun/scontrol links) into
// an emptyDir at /kubeslurm; rank 0 runs the script under `kubeslurm-inpod batch-step` and every
// other rank runs `kubeslurm-inpod step-agent`, so that `srun` in the
// script starts its tasks on every rank. The agents authenticate srun with the job's step token,
// from the Secret `<job>-step` the operator creates beside the Service. An interactive
// allocation (GangInput::interactive: srun or salloc from a login host) has no script: rank 0
// runs `kubeslurm-inpod allocation`, which serves the steps the login side sends through the
// operator's step proxy and ends when that side releases the allocation; it needs the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/podspec/container_mounts.h"
#include "kubeslurm/podspec/environment.h"
#include "kubeslurm/podspec/pod_policy.h"

namespace kubeslurm::podspec {

// Labels and annotations the operator finds its objects by.
inline constexpr std::string_view kJobNameLabel = "kubeslurm.io/job-name";  // the SlurmJob's name
inline constexpr std::string_view kJobIdLabel = "kubeslurm.io/job-id";      // status.jobId
inline constexpr std::string_view kRankLabel = "kubeslurm.io/rank";
// The job's restart count when the gang was made: pods of an earlier attempt are stale.
inline constexpr std::string_view kAttemptLabel = "kubeslurm.io/attempt";
// The node the scheduler chose for the rank, written before the bind so that a new leader can
// tell a gang that was being bound (some ranks bound, some not) from one that was not.
inline constexpr std::string_view kPlannedNodeAnnotation = "kubeslurm.io/planned-node";
// The number of ranks in the gang: a gang with fewer pods than this was cut short.
inline constexpr std::string_view kGangSizeAnnotation = "kubeslurm.io/gang-size";
// The partition the gang was admitted to: of a job that names several (sbatch -p a,b), the one
// the plan started it in, which its status then reports.
inline constexpr std::string_view kPartitionAnnotation = "kubeslurm.io/partition";
// Keeps a rank pod until its job has recorded the rank's end (controllers/rank_tracking.h).
inline constexpr std::string_view kJobTrackingFinalizer = "kubeslurm.io/job-tracking";
inline constexpr std::string_view kDefaultSchedulerName = "kubeslurm";
inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kRankContainerName = "rank";

struct GangInput {
  std::string namespaceName;
  std::string jobName;  // the SlurmJob's metadata.name
  std::string jobUid;   // for the owner references
  std::int64_t jobId = 0;
  std::uint32_t attempt = 0;       // status.restarts
  std::vector<std::string> nodes;  // one per rank, in rank order: where each rank is bound
  std::string clusterDomain = "cluster.local";
  std::string schedulerName = std::string(kDefaultSchedulerName);

  // What each rank requests (whole-node figures: one rank per node).
  std::uint32_t gpusPerNode = 0;
  std::uint64_t cpuMillisPerNode = 0;    // 0: no cpu request
  std::uint64_t memoryBytesPerNode = 0;  // 0: no memory request

  std::string image;         // required unless the pod template names one
  std::string script;        // the batch script (rank 0); empty with a pod template
  bool interactive = false;  // an allocation for a login host's steps: no script, no template
  // The SlurmJob (name, uid) whose spec.script `script` is, when the caller holds a stand-in for
  // it and reads it before the pods are made: an array task's array (tasks carry no copy of the
  // script). Empty: the job itself.
  std::string scriptSourceName;
  std::string scriptSourceUid;
  std::vector<std::string> scriptArgs;
  std::string workDir;
  std::string containerWorkdir;  // Pyxis --container-workdir: where the rank's container starts
  std::optional<api::Json> podTemplate;           // spec.podTemplate (a PodTemplateSpec)
  std::optional<api::SharedVolume> sharedVolume;  // the partition's spec.sharedVolume
  std::vector<ContainerMount> containerMounts;    // --container-mounts, resolved
  // Variables sbatch shipped from the submitting environment (spec.environment): --export's
  // named ones and Pyxis's --container-env. Set on every rank below the job's own.
  std::map<std::string, std::string> shippedEnvironment;
  std::vector<api::Toleration> tolerations;  // the partition's
  std::optional<std::int64_t> terminationGracePeriodSeconds;
  // spec.activeDeadlineSeconds of every rank (a template's own, when shorter, is kept): the
  // kubelet ends a rank that runs longer, with or without an operator.
  std::optional<std::int64_t> activeDeadlineSeconds;
  // The partition's pod policy: no ServiceAccount token unless it allows one, and under
  // `restricted` the operator's own containers run as its runAsUser with what the restricted
  // level asks. A pod template is checked against it before it gets here (checkPodTemplate).
  PodPolicy policy;
  // The image with the in-pod tools (kubeslurm-tools); empty: no in-pod runtime (no srun).
  std::string toolsImage;
  // With the runtime: the name the API server gave the job's step-token Secret (made with
  // generateName, so nobody can create it first: security review M6). rankPods() refuses a
  // runtime gang without it.
  std::string stepSecretName;
  // The partition's spec.jobNetwork is Isolated: the job gets a NetworkPolicy (jobNetworkPolicy).
  bool isolateNetwork = false;
  // With the runtime: where rank 0's batch launcher writes the script's output (absolute paths
  // on the shared volume, --output/--error expanded; empty: the pod's log) and whether it
  // appends to them (--open-mode=append).
  std::string batchStdout;
  std::string batchStderr;  // empty with batchStdout set: with the output
  bool appendOutput = false;

  // The environment without the per-rank parts, which rankPods() fills in from `nodes`.
  JobEnvironmentInput environment;
};

// `<job>-<rank>`.
std::string rankPodName(std::string_view jobName, std::uint32_t rank);
// `<job>.<ns>.svc.<domain>`: the search domain of every rank.
std::string serviceDomain(std::string_view jobName, std::string_view ns,
                          std::string_view clusterDomain);

// Every rank pod of the gang, rank order; none has spec.nodeName (the operator binds them).
// kInvalidArgument names what is missing or inconsistent (no image, a template without a
// container, an environment the template already sets to something else).
StatusOr<std::vector<api::Pod>> rankPods(const GangInput& input);

// The headless Service (clusterIP None, publishNotReadyAddresses, selector on the job's
// ranks) that gives each rank its DNS name before any rank is ready.
api::Service jobService(const GangInput& input);

// Whether the gang's pods run the in-pod runtime (the step agents, srun, the batch launcher):
// the tools image is set and no pod template replaces the operator's containers.
bool usesStepRuntime(const GangInput& input);

// `<job>-step-`: the generateName of the Secret that holds the job's step token.
std::string stepTokenSecretPrefix(std::string_view jobName);

// The job's step-token Secret (owned by the SlurmJob, so it goes with it), as the API object to
// create: metadata.generateName, never a name, so that the API server picks one nobody could
// have taken first.
api::Json stepTokenSecret(const GangInput& input, const std::string& token);

// The job's NetworkPolicy (named as the job, owned by it): its rank pods take connections only
// from the job's own rank pods, on every port — the step agents (6818), the rendezvous and
// NCCL, none of which may be reached by another tenant's pods. Egress is not restricted.
// The job-name label is the operator's: a template's labels never override it.
api::Json jobNetworkPolicy(const GangInput& input);

// Reading the bookkeeping back: a numeric label or annotation of one of our pods (rank,
// attempt, gang size); nullopt when it is absent or not a number.
std::optional<std::uint32_t> bookkeepingNumber(const std::map<std::string, std::string>& values,
                                               std::string_view key);

// The kubelet's admission refused the pod for a resource it lacks (pkg/kubelet/lifecycle:
// phase Failed, reason "OutOf" + the resource name). Such a pod never ran; its gang was placed
// on a stale view of the node and must be rolled back, not counted as a job failure.
bool rejectedByKubelet(const api::Pod& pod);

// The labels every object of the job carries, for selectors and informer indexes.
std::map<std::string, std::string> jobLabels(std::string_view jobName, std::int64_t jobId);

}  // namespace kubeslurm::podspec

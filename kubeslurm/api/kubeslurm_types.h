// Typed views of our cluster-scoped kinds, kubeslurm.io/v1alpha1 Partition and Account
// (crds/kubeslurm.io_partitions.yaml, crds/kubeslurm.io_accounts.yaml): every spec and status
// field of the CRDs. SlurmJob is in slurmjob.h.
//
// Same round-trip rule as core_v1.h: `raw` keeps the object as decoded, encode writes the
// modelled fields over it, and a member that already decodes to the field's value is left as
// written. Durations in Slurm's time format keep the text the user wrote beside its parsed
// value; encode writes the text while it still means the value, else the value formatted as
// scontrol does ("7-00:00:00", "UNLIMITED").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::api {

inline constexpr std::string_view kKubeslurmApiVersion = "kubeslurm.io/v1alpha1";

// A duration field in Slurm time format ("7-00:00:00", "90", "UNLIMITED").
struct SlurmDuration {
  std::string text;        // as written; may be "" for one built in code
  slurm::TimeLimit limit;  // parsed (slurm::parseTimeLimit); no seconds = UNLIMITED
};

// metav1.LabelSelector.
struct LabelSelectorRequirement {
  std::string key;
  std::string operator_;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  Json raw = Json::object();
};

struct LabelSelector {
  std::map<std::string, std::string> matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;
};

// metav1.LabelSelector semantics (labels.Selector from LabelSelectorAsSelector): every
// matchLabels pair and every expression must hold; an empty selector matches everything; a
// missing label satisfies NotIn; an unknown operator selects nothing (the API server would have
// refused it).
bool labelSelectorMatches(const LabelSelector& selector,
                          const std::map<std::string, std::string, std::less<>>& labels);
bool labelSelectorMatches(const LabelSelector& selector,
                          const std::map<std::string, std::string>& labels);

struct PartitionTopology {
  std::string conf;                    // topology.conf text
  std::vector<std::string> labelKeys;  // outermost level first
};

struct SharedVolume {
  std::string claimName;
  std::string mountPath;
  std::string subPath;
};

// A source Pyxis's --container-mounts may name (spec.allowedMounts[]): the path users know from
// the Slurm cluster and the Kubernetes volume that holds it. A job's SRC at or under `path`
// becomes that volume, mounted with the rest of SRC as its subPath. (nlohmann::json's implicit
// members only throw on a corrupted value, a bug, not an input error.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AllowedMount {
  std::string path;       // absolute
  bool readOnly = false;  // every mount of it is read-only, whatever the job asks
  Json volume;            // one volume source: {"persistentVolumeClaim": {...}}, {"hostPath": ...}
  Json raw;
};

// spec.podPolicy: what the partition's jobs' pods may ask of a node (podspec/pod_policy.h).
struct PartitionPodPolicy {
  std::string podSecurity;  // baseline, restricted, privileged ("" = baseline)
  std::vector<std::string> serviceAccounts;
  std::optional<bool> automountServiceAccountToken;
  std::vector<std::string> priorityClasses;
  std::vector<std::string> runtimeClasses;
  std::vector<std::string> capabilities;
  std::optional<std::int64_t> runAsUser;
};

// The largest memory figure a Partition may give, in megabytes (1 EiB): the operator works in
// bytes, and this keeps a figure times 2^20 inside 64 bits.
inline constexpr std::int64_t kMaxPartitionMemoryMb = std::int64_t{1} << 40;

struct PartitionSpec {
  std::string nodes;  // hostlist expression
  std::optional<LabelSelector> nodeSelector;
  bool isDefault = false;                    // spec.default
  std::optional<SlurmDuration> maxTime;      // absent: UNLIMITED
  std::optional<SlurmDuration> defaultTime;  // absent: maxTime
  std::optional<std::int32_t> priorityTier;
  std::optional<std::int32_t> priorityJobFactor;
  std::string preemptMode;  // OFF, REQUEUE, CANCEL ("" = OFF)
  std::optional<std::int32_t> maxNodesPerJob;
  std::optional<std::int32_t> minNodesPerJob;
  // Memory, in megabytes as slurm.conf gives it; absent or 0 is UNLIMITED. The node form wins
  // over the CPU form when both are set, as slurmctld reads them.
  std::optional<std::int64_t> defMemPerNode;  // DefMemPerNode=
  std::optional<std::int64_t> defMemPerCpu;   // DefMemPerCPU=
  std::optional<std::int64_t> defMemPerGpu;   // DefMemPerGPU= (scontrol's JobDefaults=)
  std::optional<std::int64_t> maxMemPerNode;  // MaxMemPerNode=
  std::optional<std::int64_t> maxMemPerCpu;   // MaxMemPerCPU=
  std::vector<std::string> allowedAccounts;
  std::string state;  // UP, DOWN, DRAIN, INACTIVE ("" = UP)
  std::optional<PartitionTopology> topology;
  std::map<std::string, std::string> nccl;
  std::optional<SharedVolume> sharedVolume;
  std::vector<AllowedMount> allowedMounts;
  std::optional<PartitionPodPolicy> podPolicy;
  // Taints of the partition's nodes its jobs tolerate (GKE's nvidia.com/gpu:NoSchedule...).
  std::vector<Toleration> tolerations;
  // Isolated (""): each job gets a NetworkPolicy that admits only its own ranks; Open: none.
  std::string jobNetwork;
};

struct PartitionStatus {
  std::int32_t nodes = 0;
  std::int32_t idleNodes = 0;
  std::int32_t mixedNodes = 0;
  std::int32_t allocatedNodes = 0;
  std::int32_t downNodes = 0;
  std::int32_t drainedNodes = 0;
  std::int32_t gpus = 0;
  std::int32_t allocatedGpus = 0;
  std::int32_t idleGpus = 0;
  std::int32_t pendingJobs = 0;
  std::int32_t runningJobs = 0;
  std::vector<Condition> conditions;
};

struct Partition {
  ObjectMeta metadata;
  PartitionSpec spec;
  PartitionStatus status;
  Json raw = Json::object();
};

struct AccountLimits {
  std::optional<std::int32_t> maxJobs;
  std::optional<std::int32_t> maxSubmitJobs;
  std::optional<std::int32_t> maxNodesPerJob;
  std::optional<SlurmDuration> maxWallDurationPerJob;
  std::optional<std::int32_t> grpJobs;
  std::map<std::string, std::int64_t> grpTres;  // "cpu", "mem" (MB), "node", "gres/gpu"
  std::map<std::string, std::int64_t> maxTresPerJob;
};

struct AccountSpec {
  std::string parent;  // "" = child of root
  std::string description;
  std::string organization;            // "": the parent's name, or its own under root
  std::optional<std::int32_t> shares;  // absent: 1
  std::vector<std::string> namespaces;
  // Who may name the account (a job in one of `namespaces` may too): users by their Kubernetes
  // user name or its Slurm short name, and groups.
  std::vector<std::string> users;
  std::vector<std::string> groups;
  std::string defaultQos;
  std::vector<std::string> allowedQos;
  std::optional<AccountLimits> limits;
};

struct AccountStatus {
  std::optional<double> rawUsage;
  std::optional<double> normShares;
  std::optional<double> effectiveUsage;
  std::optional<double> fairShare;
  std::int32_t runningJobs = 0;
  std::int32_t pendingJobs = 0;
  std::optional<std::int64_t> lastDecay;  // Unix seconds
  std::vector<Condition> conditions;
};

struct Account {
  ObjectMeta metadata;
  AccountSpec spec;
  AccountStatus status;
  Json raw = Json::object();
};

StatusOr<Partition> decodePartition(const Json& object);
Json encodePartition(const Partition& partition);
StatusOr<Account> decodeAccount(const Json& object);
Json encodeAccount(const Account& account);

// The effective limits with the CRDs' defaults applied.
inline slurm::TimeLimit partitionMaxTime(const PartitionSpec& spec) {
  return spec.maxTime ? spec.maxTime->limit : slurm::TimeLimit{};
}
inline slurm::TimeLimit partitionDefaultTime(const PartitionSpec& spec) {
  return spec.defaultTime ? spec.defaultTime->limit : partitionMaxTime(spec);
}
// A partition's memory settings as slurmctld holds them, in megabytes, 0 for UNLIMITED: one
// default, per node or per CPU (the node form wins when both are given, and slurmctld logs
// "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode"), one limit the same
// way, and the per-GPU default of JobDefaults=.
struct PartitionMemory {
  std::uint64_t defPerNode = 0;
  std::uint64_t defPerCpu = 0;
  std::uint64_t defPerGpu = 0;
  std::uint64_t maxPerNode = 0;
  std::uint64_t maxPerCpu = 0;
  bool bothDefaults = false;  // defMemPerNode and defMemPerCPU were both given
  bool bothLimits = false;    // maxMemPerNode and maxMemPerCPU were both given
};
PartitionMemory partitionMemory(const PartitionSpec& spec);

inline std::int32_t accountShares(const AccountSpec& spec) { return spec.shares.value_or(1); }

}  // namespace kubeslurm::api

// What a partition lets its jobs' pods ask of a node (Partition.spec.podPolicy), and the check of
// a job's pod template against it. PURE.
//
// The operator creates a job's rank pods under its own ServiceAccount, so a template that
// reached them unchecked would let anyone who may create a SlurmJob run privileged pods, host
// namespaces, a hostPath of / or any ServiceAccount of the namespace (security review C1: a
// confused deputy). The template is held to the partition's Pod Security level, the one the
// Kubernetes Pod Security Standards define (v1.25 and later), whether or not the cluster runs
// Pod Security admission:
//
//   baseline    (the default) no host namespaces, no privileged containers, no capabilities
//               beyond the baseline set (and the partition's `capabilities`), no hostPath
//               volume outside the partition's allowedMounts, no hostPort, no unconfined
//               seccomp or AppArmor, no custom SELinux user or role, the default procMount,
//               only safe sysctls;
//   restricted  baseline, plus only configMap, csi, downwardAPI, emptyDir, ephemeral,
//               persistentVolumeClaim, projected and secret volumes, allowPrivilegeEscalation
//               false, runAsNonRoot, a RuntimeDefault or Localhost seccomp profile, capabilities
//               dropped (ALL) but NET_BIND_SERVICE;
//   privileged  no check (an administrator's explicit choice for a partition).
//
// Whatever the level, a template runs as one of the partition's `serviceAccounts` (default:
// "default"), mounts no ServiceAccount token unless the partition allows it, and names a
// priority or runtime class only from the partition's lists.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::podspec {

enum class PodSecurityLevel { kBaseline, kRestricted, kPrivileged };

struct PodPolicy {
  PodSecurityLevel level = PodSecurityLevel::kBaseline;
  std::vector<std::string> serviceAccounts;  // empty: only "default"
  bool automountServiceAccountToken = false;
  std::vector<std::string> priorityClasses;
  std::vector<std::string> runtimeClasses;
  std::vector<std::string> capabilities;  // added capabilities allowed beyond baseline's
  // restricted: the user the operator's own containers run as (a template sets its own).
  std::int64_t runAsUser = 65532;
};

// The partition's policy: its spec.podPolicy, with the defaults above. kInvalidArgument for an
// unknown podSecurity level.
StatusOr<PodPolicy> podPolicyOf(const api::Partition& partition);

// Checks `podTemplate` (a PodTemplateSpec as the job wrote it) against `policy` and the
// partition's allowed mounts (a hostPath volume is allowed at or under one of their hostPath
// sources). kInvalidArgument naming the field and the rule, e.g.
// "spec.podTemplate.spec.hostNetwork: host namespaces are not allowed in partition gpu
// (podSecurity baseline)".
Status checkPodTemplate(const api::Json& podTemplate, const PodPolicy& policy,
                        const std::vector<api::AllowedMount>& allowedMounts,
                        std::string_view partition);

}  // namespace kubeslurm::podspec

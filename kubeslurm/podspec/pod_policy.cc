#include "kubeslurm/podspec/pod_policy.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

namespace kubeslurm::podspec {
namespace {

using api::Json;

// The Pod Security Standards' lists (kubernetes.io/docs/concepts/security/pod-security-standards,
// v1.25; pod-security-admission's policy checks are the reference).
constexpr std::array<std::string_view, 13> kBaselineCapabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
constexpr std::array<std::string_view, 5> kSafeSysctls = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range"};
constexpr std::array<std::string_view, 4> kBaselineSeLinuxTypes = {
    "", "container_t", "container_init_t", "container_kvm_t"};
constexpr std::array<std::string_view, 8> kRestrictedVolumes = {
    "configMap", "csi",   "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret"};
constexpr std::array<std::string_view, 3> kContainerLists = {"initContainers", "containers",
                                                             "ephemeralContainers"};
constexpr std::string_view kAppArmorPrefix = "container.apparmor.security.beta.kubernetes.io/";

template <std::size_t N>
bool among(const std::array<std::string_view, N>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool among(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

const Json* member(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool isTrue(const Json* value) {
  return value != nullptr && value->is_boolean() && value->get<bool>();
}

std::string levelName(PodSecurityLevel level) {
  switch (level) {
    case PodSecurityLevel::kRestricted:
      return "restricted";
    case PodSecurityLevel::kPrivileged:
      return "privileged";
    case PodSecurityLevel::kBaseline:
      break;
  }
  return "baseline";
}

// Collects the first broken rule, with the field's path.
class Checker {
 public:
  Checker(const PodPolicy& policy, const std::vector<api::AllowedMount>& allowedMounts,
          std::string_view partition)
      : policy_(policy), allowedMounts_(allowedMounts), partition_(partition) {}

  Status check(const Json& podTemplate) {
    const std::string root = "spec.podTemplate";
    if (!podTemplate.is_object()) {
      refuse(root, "expected an object");
      return firstProblem_;
    }
    if (const Json* meta = member(podTemplate, "metadata"))
      checkMetadata(*meta, root + ".metadata");
    const Json* spec = member(podTemplate, "spec");
    if (spec == nullptr) return firstProblem_;
    if (!spec->is_object()) {
      refuse(root + ".spec", "expected an object");
      return firstProblem_;
    }
    checkSpec(*spec, root + ".spec");
    return firstProblem_;
  }

 private:
  bool baseline() const { return policy_.level != PodSecurityLevel::kPrivileged; }
  bool restricted() const { return policy_.level == PodSecurityLevel::kRestricted; }

  void refuse(const std::string& path, const std::string& rule) {
    if (firstProblem_.isOk()) firstProblem_ = invalidArgument(path + ": " + rule);
  }
  // A Pod Security rule: says which level of which partition forbids it.
  void forbid(const std::string& path, const std::string& what) {
    refuse(path, what + " not allowed in partition " + std::string(partition_) + " (podSecurity " +
                     levelName(policy_.level) + ")");
  }

  void checkMetadata(const Json& meta, const std::string& path) {
    if (!baseline()) return;
    const Json* annotations = member(meta, "annotations");
    if (annotations == nullptr || !annotations->is_object()) return;
    for (const auto& [key, value] : annotations->items()) {
      if (!key.starts_with(kAppArmorPrefix)) continue;
      const std::string profile = value.is_string() ? value.get<std::string>() : "";
      if (profile != "runtime/default" && !profile.starts_with("localhost/")) {
        std::string field = path;
        field.append(".annotations[").append(key).append("]");
        forbid(field,
               "an AppArmor profile other than runtime/default "
               "or localhost/* is");
      }
    }
  }

  void checkSpec(const Json& spec, const std::string& path) {
    checkAlways(spec, path);
    if (baseline()) {
      for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
        if (isTrue(member(spec, host))) forbid(path + "." + host, "host namespaces are");
      }
      if (const Json* sc = member(spec, "securityContext")) {
        checkSecurityContext(*sc, path + ".securityContext", /*pod=*/true);
      }
      checkVolumes(spec, path);
    }
    if (restricted()) checkRestrictedPod(spec, path);
    for (const std::string_view list : kContainerLists) {
      const Json* containers = member(spec, list);
      if (containers == nullptr) continue;
      if (!containers->is_array()) {
        refuse(path + "." + std::string(list), "expected a list");
        continue;
      }
      for (std::size_t i = 0; i < containers->size(); ++i) {
        checkContainer((*containers)[i],
                       path + "." + std::string(list) + "[" + std::to_string(i) + "]",
                       member(spec, "securityContext"));
      }
    }
  }

  // What no level lets a template choose: whose token it runs with and which classes it uses.
  void checkAlways(const Json& spec, const std::string& path) {
    std::string account = "default";
    for (const char* key : {"serviceAccountName", "serviceAccount"}) {
      const Json* name = member(spec, key);
      if (name == nullptr) continue;
      if (!name->is_string()) {
        refuse(path + "." + key, "expected a string");
        return;
      }
      if (!name->get<std::string>().empty()) account = name->get<std::string>();
    }
    const std::vector<std::string> allowed = policy_.serviceAccounts.empty()
                                                 ? std::vector<std::string>{"default"}
                                                 : policy_.serviceAccounts;
    if (!among(allowed, account)) {
      refuse(path + ".serviceAccountName",
             "ServiceAccount \"" + account + "\" is not one partition " + std::string(partition_) +
                 " lets jobs run as (podPolicy.serviceAccounts)");
    }
    if (isTrue(member(spec, "automountServiceAccountToken")) &&
        !policy_.automountServiceAccountToken) {
      refuse(path + ".automountServiceAccountToken",
             "partition " + std::string(partition_) +
                 " does not mount ServiceAccount tokens into jobs' pods "
                 "(podPolicy.automountServiceAccountToken)");
    }
    for (const auto& [key, list, field] :
         {std::tuple<const char*, const std::vector<std::string>*, const char*>{
              "priorityClassName", &policy_.priorityClasses, "podPolicy.priorityClasses"},
          {"runtimeClassName", &policy_.runtimeClasses, "podPolicy.runtimeClasses"}}) {
      const Json* name = member(spec, key);
      if (name == nullptr) continue;
      const std::string value = name->is_string() ? name->get<std::string>() : "";
      if (value.empty() && name->is_string()) continue;
      if (!among(*list, value)) {
        refuse(path + "." + key, "\"" + value + "\" is not allowed in partition " +
                                     std::string(partition_) + " (" + field + ")");
      }
    }
  }

  void checkVolumes(const Json& spec, const std::string& path) {
    const Json* volumes = member(spec, "volumes");
    if (volumes == nullptr) return;
    if (!volumes->is_array()) {
      refuse(path + ".volumes", "expected a list");
      return;
    }
    for (std::size_t i = 0; i < volumes->size(); ++i) {
      const Json& volume = (*volumes)[i];
      const std::string at = path + ".volumes[" + std::to_string(i) + "]";
      if (!volume.is_object()) {
        refuse(at, "expected an object");
        continue;
      }
      if (const Json* hostPath = member(volume, "hostPath")) {
        const std::string source = api::stringMember(*hostPath, "path");
        if (!hostPathAllowed(source)) {
          forbid(at + ".hostPath",
                 "a hostPath volume (" + source + ") outside the partition's allowedMounts is");
        }
      }
      if (restricted()) {
        for (const auto& [key, value] : volume.items()) {
          if (key == "name" || value.is_null()) continue;
          if (!among(kRestrictedVolumes, key)) {
            std::string field = at;
            field.append(".").append(key);
            std::string what = "a ";
            what.append(key).append(" volume is");
            forbid(field, what);
          }
        }
      }
    }
  }

  // A hostPath at or under one the partition's allowedMounts name as a volume source: the
  // administrator chose to expose that path.
  bool hostPathAllowed(const std::string& source) const {
    if (source.empty() || source.front() != '/') return false;
    for (const api::AllowedMount& allowed : allowedMounts_) {
      const Json* hostPath = member(allowed.volume, "hostPath");
      if (hostPath == nullptr) continue;
      std::string root = api::stringMember(*hostPath, "path");
      if (root.empty()) continue;
      if (root.size() > 1 && root.back() == '/') root.pop_back();
      if (source == root || (source.starts_with(root) && source.size() > root.size() &&
                             (root == "/" || source[root.size()] == '/'))) {
        if (source.find("/..") == std::string::npos) return true;
      }
    }
    return false;
  }

  void checkSecurityContext(const Json& sc, const std::string& path, bool pod) {
    if (!sc.is_object()) {
      refuse(path, "expected an object");
      return;
    }
    if (!pod && isTrue(member(sc, "privileged")))
      forbid(path + ".privileged", "privileged containers are");
    if (const Json* proc = member(sc, "procMount")) {
      if (!proc->is_string() ||
          (proc->get<std::string>() != "Default" && !proc->get<std::string>().empty())) {
        forbid(path + ".procMount", "a procMount other than Default is");
      }
    }
    if (const Json* se = member(sc, "seLinuxOptions")) {
      if (!api::stringMember(*se, "user").empty() || !api::stringMember(*se, "role").empty()) {
        forbid(path + ".seLinuxOptions", "an SELinux user or role is");
      }
      if (!among(kBaselineSeLinuxTypes, api::stringMember(*se, "type"))) {
        forbid(path + ".seLinuxOptions.type",
               "SELinux type " + api::stringMember(*se, "type") + " is");
      }
    }
    if (const Json* seccomp = member(sc, "seccompProfile")) {
      if (api::stringMember(*seccomp, "type") == "Unconfined") {
        forbid(path + ".seccompProfile.type", "an Unconfined seccomp profile is");
      }
    }
    if (const Json* windows = member(sc, "windowsOptions")) {
      if (isTrue(member(*windows, "hostProcess")))
        forbid(path + ".windowsOptions.hostProcess", "host processes are");
    }
    if (pod) {
      if (const Json* sysctls = member(sc, "sysctls"); sysctls != nullptr && sysctls->is_array()) {
        for (std::size_t i = 0; i < sysctls->size(); ++i) {
          const std::string name = api::stringMember((*sysctls)[i], "name");
          if (!among(kSafeSysctls, name)) {
            forbid(path + ".sysctls[" + std::to_string(i) + "]", "sysctl " + name + " is");
          }
        }
      }
    }
  }

  void checkContainer(const Json& container, const std::string& path, const Json* podSc) {
    if (!container.is_object()) {
      refuse(path, "expected an object");
      return;
    }
    const Json* sc = member(container, "securityContext");
    if (baseline()) {
      if (sc != nullptr) checkSecurityContext(*sc, path + ".securityContext", /*pod=*/false);
      const Json* capabilities = sc != nullptr ? member(*sc, "capabilities") : nullptr;
      if (const Json* add = capabilities != nullptr ? member(*capabilities, "add") : nullptr;
          add != nullptr && add->is_array()) {
        for (const Json& capability : *add) {
          const std::string name = capability.is_string() ? capability.get<std::string>() : "";
          const bool ok = restricted() ? name == "NET_BIND_SERVICE"
                                       : among(kBaselineCapabilities, name) ||
                                             among(policy_.capabilities, name);
          if (!ok) forbid(path + ".securityContext.capabilities.add", "capability " + name + " is");
        }
      }
      if (const Json* ports = member(container, "ports"); ports != nullptr && ports->is_array()) {
        for (std::size_t i = 0; i < ports->size(); ++i) {
          const Json* hostPort = member((*ports)[i], "hostPort");
          if (hostPort != nullptr &&
              !(hostPort->is_number_integer() && hostPort->get<std::int64_t>() == 0)) {
            forbid(path + ".ports[" + std::to_string(i) + "].hostPort", "host ports are");
          }
        }
      }
    }
    if (restricted()) checkRestrictedContainer(sc, podSc, path);
  }

  void checkRestrictedPod(const Json& spec, const std::string& path) {
    const Json* sc = member(spec, "securityContext");
    if (sc != nullptr) {
      const Json* user = member(*sc, "runAsUser");
      if (user != nullptr && user->is_number_integer() && user->get<std::int64_t>() == 0) {
        forbid(path + ".securityContext.runAsUser", "running as root (uid 0) is");
      }
    }
  }

  void checkRestrictedContainer(const Json* sc, const Json* podSc, const std::string& path) {
    const std::string at = path + ".securityContext";
    const Json* escalation = sc != nullptr ? member(*sc, "allowPrivilegeEscalation") : nullptr;
    if (escalation == nullptr || !escalation->is_boolean() || escalation->get<bool>()) {
      forbid(at + ".allowPrivilegeEscalation", "anything but false is");
    }
    const auto fromEither = [&](const char* key) -> const Json* {
      const Json* own = sc != nullptr ? member(*sc, key) : nullptr;
      return own != nullptr ? own : (podSc != nullptr ? member(*podSc, key) : nullptr);
    };
    if (!isTrue(fromEither("runAsNonRoot"))) forbid(at + ".runAsNonRoot", "anything but true is");
    if (const Json* user = fromEither("runAsUser");
        user != nullptr && user->is_number_integer() && user->get<std::int64_t>() == 0) {
      forbid(at + ".runAsUser", "running as root (uid 0) is");
    }
    const Json* seccomp = fromEither("seccompProfile");
    const std::string type = seccomp != nullptr ? api::stringMember(*seccomp, "type") : "";
    if (type != "RuntimeDefault" && type != "Localhost") {
      forbid(at + ".seccompProfile.type", "a profile other than RuntimeDefault or Localhost is");
    }
    const Json* capabilities = sc != nullptr ? member(*sc, "capabilities") : nullptr;
    const Json* drop = capabilities != nullptr ? member(*capabilities, "drop") : nullptr;
    const bool dropsAll = drop != nullptr && drop->is_array() &&
                          std::any_of(drop->begin(), drop->end(), [](const Json& c) {
                            return c.is_string() && c.get<std::string>() == "ALL";
                          });
    if (!dropsAll) forbid(at + ".capabilities.drop", "keeping capabilities (drop ALL) is");
  }

  const PodPolicy& policy_;
  const std::vector<api::AllowedMount>& allowedMounts_;
  std::string_view partition_;
  Status firstProblem_;
};

}  // namespace

StatusOr<PodPolicy> podPolicyOf(const api::Partition& partition) {
  PodPolicy policy;
  if (!partition.spec.podPolicy) return policy;
  const api::PartitionPodPolicy& spec = *partition.spec.podPolicy;
  if (spec.podSecurity.empty() || spec.podSecurity == "baseline") {
    policy.level = PodSecurityLevel::kBaseline;
  } else if (spec.podSecurity == "restricted") {
    policy.level = PodSecurityLevel::kRestricted;
  } else if (spec.podSecurity == "privileged") {
    policy.level = PodSecurityLevel::kPrivileged;
  } else {
    return invalidArgument("spec.podPolicy.podSecurity: \"" + spec.podSecurity +
                           "\" is not baseline, restricted or privileged");
  }
  policy.serviceAccounts = spec.serviceAccounts;
  policy.automountServiceAccountToken = spec.automountServiceAccountToken.value_or(false);
  policy.priorityClasses = spec.priorityClasses;
  policy.runtimeClasses = spec.runtimeClasses;
  policy.capabilities = spec.capabilities;
  if (spec.runAsUser) policy.runAsUser = *spec.runAsUser;
  return policy;
}

Status checkPodTemplate(const api::Json& podTemplate, const PodPolicy& policy,
                        const std::vector<api::AllowedMount>& allowedMounts,
                        std::string_view partition) {
  return Checker(policy, allowedMounts, partition).check(podTemplate);
}

}  // namespace kubeslurm::podspec

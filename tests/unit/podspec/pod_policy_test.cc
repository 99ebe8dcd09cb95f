// A job's pod template against its partition's pod policy (kubeslurm/podspec/pod_policy.h).
// Security review C1: the operator creates the rank pods, so a template that reached them
// unchecked ran privileged, in the host's namespaces, on a hostPath of / or as any
// ServiceAccount of the namespace, under the operator's authority. Each row names the Pod
// Security Standards rule it follows (kubernetes.io/docs/concepts/security/pod-security-standards).
#include "kubeslurm/podspec/pod_policy.h"

#include <cctype>

#include <gtest/gtest.h>

namespace kubeslurm::podspec {
namespace {

using api::Json;

// A template whose first container gets `container` merged in and whose spec gets `spec`.
Json templateWith(const Json& spec, const Json& container = Json::object(),
                  const Json& metadata = Json::object()) {
  Json c = {{"name", "main"}, {"image", "pytorch:2"}};
  if (container.is_object()) c.merge_patch(container);  // a patch of null would replace it
  Json s = {{"containers", Json::array({c})}};
  if (spec.is_object()) s.merge_patch(spec);
  Json t = {{"spec", s}};
  if (!metadata.empty()) t["metadata"] = metadata;
  return t;
}

api::AllowedMount hostPathMount(const std::string& path) {
  api::AllowedMount mount;
  mount.path = path;
  mount.volume = {{"hostPath", {{"path", path}}}};
  return mount;
}

struct Row {
  std::string name;  // the rule
  Json podTemplate;
  PodSecurityLevel level;
  std::string refusal;  // a part of the message; "" when allowed
};

class PodPolicyTable : public ::testing::TestWithParam<Row> {};

TEST_P(PodPolicyTable, Verdict) {
  const Row& row = GetParam();
  PodPolicy policy;
  policy.level = row.level;
  const Status verdict =
      checkPodTemplate(row.podTemplate, policy, {hostPathMount("/datasets")}, "gpu");
  if (row.refusal.empty()) {
    EXPECT_TRUE(verdict.isOk()) << verdict.toString();
  } else {
    ASSERT_FALSE(verdict.isOk());
    EXPECT_EQ(verdict.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(verdict.message()).find(row.refusal), std::string::npos)
        << verdict.message();
  }
}

const PodSecurityLevel kBase = PodSecurityLevel::kBaseline;
const PodSecurityLevel kRestr = PodSecurityLevel::kRestricted;
const PodSecurityLevel kPriv = PodSecurityLevel::kPrivileged;

const Json kRestrictedContainer = {{"securityContext",
                                    {{"allowPrivilegeEscalation", false},
                                     {"runAsNonRoot", true},
                                     {"seccompProfile", {{"type", "RuntimeDefault"}}},
                                     {"capabilities", {{"drop", {"ALL"}}}}}}};

INSTANTIATE_TEST_SUITE_P(
    PodSecurityStandards, PodPolicyTable,
    ::testing::Values(
        Row{"a plain template", templateWith({}), kBase, ""},
        // Baseline "Host Namespaces": hostNetwork, hostPID, hostIPC.
        Row{"hostNetwork", templateWith({{"hostNetwork", true}}), kBase,
            "spec.podTemplate.spec.hostNetwork: host namespaces are not allowed in partition gpu "
            "(podSecurity baseline)"},
        Row{"hostPID", templateWith({{"hostPID", true}}), kBase, "spec.hostPID: host namespaces"},
        Row{"hostIPC", templateWith({{"hostIPC", true}}), kBase, "spec.hostIPC: host namespaces"},
        // Baseline "Privileged Containers", in every container list.
        Row{"privileged", templateWith({}, {{"securityContext", {{"privileged", true}}}}), kBase,
            "containers[0].securityContext.privileged: privileged containers are not allowed"},
        Row{"privileged init container",
            templateWith({{"initContainers",
                           {{{"name", "i"}, {"securityContext", {{"privileged", true}}}}}}}),
            kBase, "initContainers[0].securityContext.privileged"},
        // Baseline "Capabilities": only the default set may be added.
        Row{"SYS_ADMIN",
            templateWith({}, {{"securityContext", {{"capabilities", {{"add", {"SYS_ADMIN"}}}}}}}),
            kBase, "capability SYS_ADMIN is not allowed"},
        Row{"NET_BIND_SERVICE",
            templateWith({}, {{"securityContext",
                               {{"capabilities", {{"add", {"NET_BIND_SERVICE"}}}}}}}),
            kBase, ""},
        // Baseline "HostPath Volumes", except where the partition's allowedMounts expose them.
        Row{"hostPath /",
            templateWith({{"volumes", {{{"name", "root"}, {"hostPath", {{"path", "/"}}}}}}}), kBase,
            "volumes[0].hostPath: a hostPath volume (/) outside the partition's allowedMounts"},
        Row{"hostPath allowed",
            templateWith({{"volumes",
                           {{{"name", "d"}, {"hostPath", {{"path", "/datasets/mnist"}}}}}}}),
            kBase, ""},
        Row{"hostPath escaping an allowed one",
            templateWith({{"volumes",
                           {{{"name", "d"}, {"hostPath", {{"path", "/datasets/../etc"}}}}}}}),
            kBase, "hostPath volume (/datasets/../etc)"},
        Row{"hostPath beside an allowed one",
            templateWith({{"volumes", {{{"name", "d"}, {"hostPath", {{"path", "/datasets2"}}}}}}}),
            kBase, "hostPath volume (/datasets2)"},
        // Baseline "Host Ports".
        Row{"hostPort", templateWith({}, {{"ports", {{{"containerPort", 80}, {"hostPort", 80}}}}}),
            kBase, "ports[0].hostPort: host ports are"},
        // Baseline "AppArmor", "SELinux", "/proc Mount Type", "Seccomp", "Sysctls".
        Row{"AppArmor unconfined",
            templateWith({}, {},
                         {{"annotations",
                           {{"container.apparmor.security.beta.kubernetes.io/main",
                             "unconfined"}}}}),
            kBase, "AppArmor profile"},
        Row{"SELinux user",
            templateWith({}, {{"securityContext", {{"seLinuxOptions", {{"user", "root"}}}}}}),
            kBase, "an SELinux user or role"},
        Row{"procMount Unmasked",
            templateWith({}, {{"securityContext", {{"procMount", "Unmasked"}}}}), kBase,
            "procMount"},
        Row{"seccomp Unconfined",
            templateWith({{"securityContext", {{"seccompProfile", {{"type", "Unconfined"}}}}}}),
            kBase, "spec.securityContext.seccompProfile.type: an Unconfined seccomp profile"},
        Row{"unsafe sysctl",
            templateWith({{"securityContext",
                           {{"sysctls", {{{"name", "kernel.msgmax"}, {"value", "1"}}}}}}}),
            kBase, "sysctl kernel.msgmax is"},
        // Whatever the level: whose token, which classes.
        Row{"another ServiceAccount", templateWith({{"serviceAccountName", "ci-admin"}}), kPriv,
            "ServiceAccount \"ci-admin\" is not one partition gpu lets jobs run as"},
        Row{"the deprecated serviceAccount field", templateWith({{"serviceAccount", "ci-admin"}}),
            kBase, "ServiceAccount \"ci-admin\""},
        Row{"a token", templateWith({{"automountServiceAccountToken", true}}), kBase,
            "does not mount ServiceAccount tokens"},
        Row{"priorityClassName", templateWith({{"priorityClassName", "system-node-critical"}}),
            kBase,
            "\"system-node-critical\" is not allowed in partition gpu (podPolicy.priorityClasses)"},
        Row{"runtimeClassName", templateWith({{"runtimeClassName", "kata"}}), kBase,
            "podPolicy.runtimeClasses"},
        // Privileged: the administrator chose it for the partition.
        Row{"privileged level",
            templateWith({{"hostNetwork", true}}, {{"securityContext", {{"privileged", true}}}}),
            kPriv, ""},
        // Restricted: volume types, escalation, non-root, seccomp, capabilities.
        Row{"restricted, compliant",
            templateWith({{"volumes", {{{"name", "c"}, {"configMap", {{"name", "c"}}}}}}},
                         kRestrictedContainer),
            kRestr, ""},
        Row{"restricted, no securityContext", templateWith({}), kRestr,
            "allowPrivilegeEscalation: anything but false is not allowed in partition gpu "
            "(podSecurity restricted)"},
        Row{"restricted, hostPath even where allowed",
            templateWith({{"volumes", {{{"name", "d"}, {"hostPath", {{"path", "/datasets"}}}}}}},
                         kRestrictedContainer),
            kRestr, "volumes[0].hostPath: a hostPath volume is"},
        Row{"restricted, root",
            templateWith({{"securityContext", {{"runAsUser", 0}}}}, kRestrictedContainer), kRestr,
            "running as root"},
        Row{"not an object", Json::array(), kBase, "spec.podTemplate: expected an object"},
        Row{"containers not a list",
            {{"spec", {{"containers", 3}}}},
            kBase,
            "spec.podTemplate.spec.containers: expected a list"}),
    [](const ::testing::TestParamInfo<Row>& row) {
      std::string name;
      for (const char c : row.param.name) {
        name += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
      }
      return name;
    });

TEST(PodPolicyOf, DefaultsAndTheLevelsAPartitionMayName) {
  api::Partition partition;
  auto policy = podPolicyOf(partition);
  ASSERT_TRUE(policy.isOk());
  EXPECT_EQ(policy->level, PodSecurityLevel::kBaseline);
  EXPECT_FALSE(policy->automountServiceAccountToken);
  partition.spec.podPolicy = api::PartitionPodPolicy{};
  partition.spec.podPolicy->podSecurity = "restricted";
  partition.spec.podPolicy->serviceAccounts = {"trainer"};
  policy = podPolicyOf(partition);
  ASSERT_TRUE(policy.isOk());
  EXPECT_EQ(policy->level, PodSecurityLevel::kRestricted);
  EXPECT_TRUE(
      checkPodTemplate(templateWith({{"serviceAccountName", "trainer"}}, kRestrictedContainer),
                       *policy, {}, "p")
          .isOk());
  // The default account is not allowed once the partition names its own.
  EXPECT_FALSE(checkPodTemplate(templateWith({}, kRestrictedContainer), *policy, {}, "p").isOk());
  partition.spec.podPolicy->podSecurity = "lenient";
  EXPECT_EQ(podPolicyOf(partition).status().message(),
            "spec.podPolicy.podSecurity: \"lenient\" is not baseline, restricted or privileged");
}

}  // namespace
}  // namespace kubeslurm::podspec

// Partition and Account (crds/kubeslurm.io_partitions.yaml, crds/kubeslurm.io_accounts.yaml).
#include "kubeslurm/api/kubeslurm_types.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::api {
namespace {

std::vector<std::string> changedPaths(const Json& before, const Json& after) {
  std::vector<std::string> paths;
  for (const Json& op : Json::diff(before, after)) paths.push_back(op["path"].get<std::string>());
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Every spec and status field of the CRD, as the API server returns the object.
constexpr std::string_view kPartitionJson = R"json({
  "apiVersion": "kubeslurm.io/v1alpha1", "kind": "Partition",
  "metadata": {"name": "gpu", "uid": "p-1", "resourceVersion": "700", "generation": 3,
               "creationTimestamp": "2026-11-20T08:00:00Z",
               "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
  "spec": {
    "nodes": "gpu-node-[001-008]",
    "nodeSelector": {"matchLabels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
                     "matchExpressions": [{"key": "pool", "operator": "NotIn",
                                           "values": ["inference"]}]},
    "default": true, "maxTime": "7-0", "defaultTime": "60", "priorityTier": 10,
    "priorityJobFactor": 5, "preemptMode": "REQUEUE", "maxNodesPerJob": 8,
    "minNodesPerJob": 1, "defMemPerNode": 0, "defMemPerCPU": 4096, "defMemPerGPU": 81920,
    "maxMemPerCPU": 16384, "allowedAccounts": ["physics", "nlp"], "state": "UP",
    "topology": {"conf": "SwitchName=leaf1 Nodes=gpu-node-[001-004]\n",
                 "labelKeys": ["network.example.com/spine", "network.example.com/leaf"]},
    "nccl": {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_HCA": "mlx5"},
    "sharedVolume": {"claimName": "home", "mountPath": "/home", "subPath": "users"},
    "allowedMounts": [
      {"path": "/datasets", "readOnly": true,
       "volume": {"persistentVolumeClaim": {"claimName": "datasets"}}},
      {"path": "/scratch", "volume": {"hostPath": {"path": "/mnt/nvme", "type": "Directory"}},
       "futureField": 1}
    ]
  },
  "status": {
    "nodes": 8, "idleNodes": 2, "mixedNodes": 1, "allocatedNodes": 4, "downNodes": 0,
    "drainedNodes": 1, "gpus": 64, "allocatedGpus": 40, "idleGpus": 24, "pendingJobs": 3,
    "runningJobs": 5,
    "conditions": [{"type": "TopologyValid", "status": "True", "observedGeneration": 3,
                    "lastTransitionTime": "2026-11-20T08:00:05Z", "reason": "Parsed",
                    "message": ""}]
  }
})json";

TEST(PartitionTest, EveryFieldDecodesAndTheObjectRoundTrips) {
  const Json in = Json::parse(kPartitionJson);
  const StatusOr<Partition> p = decodePartition(in);
  ASSERT_TRUE(p.isOk()) << p.status().toString();
  EXPECT_EQ(encodePartition(*p), in) << Json::diff(in, encodePartition(*p)).dump(1);
  const PartitionSpec& s = p->spec;
  EXPECT_EQ(s.nodes, "gpu-node-[001-008]");
  ASSERT_TRUE(s.nodeSelector);
  EXPECT_EQ(s.nodeSelector->matchLabels.size(), 1U);
  EXPECT_EQ(s.nodeSelector->matchExpressions[0].operator_, "NotIn");
  EXPECT_EQ(s.nodeSelector->matchExpressions[0].values, std::vector<std::string>{"inference"});
  EXPECT_TRUE(s.isDefault);
  // Slurm time format: "7-0" is 7 days, a bare "60" is minutes (time_str2secs).
  EXPECT_EQ(s.maxTime->text, "7-0");
  EXPECT_EQ(partitionMaxTime(s), slurm::TimeLimit{7 * 86400});
  EXPECT_EQ(partitionDefaultTime(s), slurm::TimeLimit{3600});
  EXPECT_EQ(s.priorityTier, 10);
  EXPECT_EQ(s.priorityJobFactor, 5);
  EXPECT_EQ(s.preemptMode, "REQUEUE");
  EXPECT_EQ(s.maxNodesPerJob, 8);
  EXPECT_EQ(s.minNodesPerJob, 1);
  EXPECT_EQ(s.defMemPerGpu, 81920);
  // DefMemPerNode given (even as 0, UNLIMITED) wins over DefMemPerCPU, as slurmctld reads them.
  const PartitionMemory memory = partitionMemory(s);
  EXPECT_EQ(memory.defPerNode, 0U);
  EXPECT_EQ(memory.defPerCpu, 0U);
  EXPECT_EQ(memory.defPerGpu, 81920U);
  EXPECT_TRUE(memory.bothDefaults);
  EXPECT_EQ(memory.maxPerCpu, 16384U);
  EXPECT_FALSE(memory.bothLimits);
  EXPECT_EQ(s.allowedAccounts.size(), 2U);
  EXPECT_EQ(s.state, "UP");
  EXPECT_EQ(s.topology->labelKeys[1], "network.example.com/leaf");
  EXPECT_EQ(s.nccl.at("NCCL_IB_HCA"), "mlx5");
  EXPECT_EQ(s.sharedVolume->subPath, "users");
  ASSERT_EQ(s.allowedMounts.size(), 2U);
  EXPECT_EQ(s.allowedMounts[0].path, "/datasets");
  EXPECT_TRUE(s.allowedMounts[0].readOnly);
  EXPECT_FALSE(s.allowedMounts[1].readOnly);
  EXPECT_EQ(s.allowedMounts[1].volume["hostPath"]["type"], "Directory");
  const PartitionStatus& st = p->status;
  EXPECT_EQ(st.nodes, 8);
  EXPECT_EQ(st.idleNodes, 2);
  EXPECT_EQ(st.mixedNodes, 1);
  EXPECT_EQ(st.allocatedNodes, 4);
  EXPECT_EQ(st.drainedNodes, 1);
  EXPECT_EQ(st.gpus, 64);
  EXPECT_EQ(st.allocatedGpus, 40);
  EXPECT_EQ(st.idleGpus, 24);
  EXPECT_EQ(st.pendingJobs, 3);
  EXPECT_EQ(st.runningJobs, 5);
  EXPECT_EQ(st.conditions[0].observedGeneration, 3);
}

TEST(PartitionTest, MemoryOutsideZeroToAnExbibyteIsRefused) {
  for (const char* field :
       {"defMemPerNode", "defMemPerCPU", "defMemPerGPU", "maxMemPerNode", "maxMemPerCPU"}) {
    SCOPED_TRACE(field);
    Json in = {{"apiVersion", "kubeslurm.io/v1alpha1"},
               {"kind", "Partition"},
               {"metadata", {{"name", "gpu"}}},
               {"spec", {{field, -1}}}};
    EXPECT_FALSE(decodePartition(in).isOk());
    in["spec"][field] = kMaxPartitionMemoryMb + 1;
    const StatusOr<Partition> tooBig = decodePartition(in);
    ASSERT_FALSE(tooBig.isOk());
    EXPECT_NE(tooBig.status().message().find(std::string("spec.") + field), std::string::npos)
        << tooBig.status().message();
    in["spec"][field] = kMaxPartitionMemoryMb;
    EXPECT_TRUE(decodePartition(in).isOk());
  }
}

TEST(PartitionTest, StatusUpdateWritesZerosAndTouchesNothingElse) {
  const Json in = Json::parse(kPartitionJson);
  Partition p = *decodePartition(in);
  p.status.idleNodes = 0;
  p.status.downNodes = 2;
  const Json out = encodePartition(p);
  EXPECT_EQ(changedPaths(in, out),
            (std::vector<std::string>{"/status/downNodes", "/status/idleNodes"}));
  EXPECT_EQ(out["status"]["idleNodes"], 0);  // shown as 0 by `kubectl get part`, not blank
  // A new metav1.Condition carries reason and message even when empty: the CRD requires them.
  Condition ready;
  ready.type = "Ready";
  ready.status = "False";
  ready.reason = "NoNodes";
  ready.lastTransitionTime = 1795255200;
  p.status.conditions.push_back(ready);
  EXPECT_EQ(encodePartition(p)["status"]["conditions"][1],
            Json::parse(R"({"type": "Ready", "status": "False", "reason": "NoNodes",
                            "message": "", "lastTransitionTime": "2026-11-21T10:00:00Z"})"));
}

TEST(PartitionTest, ChangedTimeIsWrittenInSlurmFormat) {
  const Json in = Json::parse(kPartitionJson);
  Partition p = *decodePartition(in);
  p.spec.maxTime->limit = slurm::TimeLimit{2 * 86400 + 3600};
  p.spec.defaultTime.reset();
  p.spec.topology.reset();
  const Json out = encodePartition(p);
  EXPECT_EQ(out["spec"]["maxTime"], "2-01:00:00");
  EXPECT_EQ(changedPaths(in, out),
            (std::vector<std::string>{"/spec/defaultTime", "/spec/maxTime", "/spec/topology"}));
  Partition unlimited;
  unlimited.metadata.name = "debug";
  unlimited.spec.maxTime = SlurmDuration{"", slurm::TimeLimit{}};
  EXPECT_EQ(encodePartition(unlimited), Json::parse(R"({"apiVersion": "kubeslurm.io/v1alpha1",
      "kind": "Partition", "metadata": {"name": "debug"}, "spec": {"maxTime": "UNLIMITED"}})"));
}

TEST(PartitionTest, ErrorsNameTheField) {
  auto error = [](std::string_view spec) {
    return decodePartition(Json::parse(R"({"spec": )" + std::string(spec) + "}"))
        .status()
        .message();
  };
  EXPECT_EQ(error(R"({"maxTime": "7 days"})"), "spec.maxTime: invalid Slurm time limit \"7 days\"");
  EXPECT_EQ(error(R"({"maxTime": 60})"), "spec.maxTime: expected a string");
  EXPECT_EQ(error(R"({"nodeSelector": {"matchExpressions": [{"values": "a"}]}})"),
            "spec.nodeSelector.matchExpressions[0].values: expected an array");
  EXPECT_EQ(error(R"({"nccl": {"NCCL_IB_HCA": 1}})"), "spec.nccl.NCCL_IB_HCA: expected a string");
  EXPECT_EQ(decodePartition(Json::parse(R"({"kind": "Account"})")).status().message(),
            "kind: expected Partition, got \"Account\"");
}

constexpr std::string_view kAccountJson = R"json({
  "apiVersion": "kubeslurm.io/v1alpha1", "kind": "Account",
  "metadata": {"name": "physics", "resourceVersion": "81", "labels": {"org": "science"}},
  "spec": {
    "parent": "science", "description": "Physics department", "organization": "science",
    "shares": 40,
    "namespaces": ["physics", "physics-dev"], "defaultQos": "normal",
    "allowedQos": ["normal", "high"],
    "limits": {"maxJobs": 10, "maxSubmitJobs": 100, "maxNodesPerJob": 16,
               "maxWallDurationPerJob": "2-00:00:00", "grpJobs": 50,
               "grpTres": {"gres/gpu": 128, "cpu": 4096, "mem": 8388608},
               "maxTresPerJob": {"gres/gpu": 64, "node": 8}}
  },
  "status": {"rawUsage": 123456.75, "normShares": 0.4, "effectiveUsage": 0.25,
             "fairShare": 0.8125, "runningJobs": 4, "pendingJobs": 2,
             "lastDecay": "2026-11-21T10:00:00Z", "conditions": []}
})json";

TEST(AccountTest, EveryFieldDecodesAndTheObjectRoundTrips) {
  const Json in = Json::parse(kAccountJson);
  const StatusOr<Account> a = decodeAccount(in);
  ASSERT_TRUE(a.isOk()) << a.status().toString();
  EXPECT_EQ(encodeAccount(*a), in) << Json::diff(in, encodeAccount(*a)).dump(1);
  const AccountSpec& s = a->spec;
  EXPECT_EQ(s.parent, "science");
  EXPECT_EQ(s.description, "Physics department");
  EXPECT_EQ(s.organization, "science");
  EXPECT_EQ(accountShares(s), 40);
  EXPECT_EQ(s.namespaces[1], "physics-dev");
  EXPECT_EQ(s.defaultQos, "normal");
  EXPECT_EQ(s.allowedQos.size(), 2U);
  ASSERT_TRUE(s.limits);
  EXPECT_EQ(s.limits->maxJobs, 10);
  EXPECT_EQ(s.limits->maxSubmitJobs, 100);
  EXPECT_EQ(s.limits->maxNodesPerJob, 16);
  EXPECT_EQ(s.limits->maxWallDurationPerJob->limit, slurm::TimeLimit{2 * 86400});
  EXPECT_EQ(s.limits->grpJobs, 50);
  EXPECT_EQ(s.limits->grpTres.at("mem"), 8388608);
  EXPECT_EQ(s.limits->maxTresPerJob.at("node"), 8);
  const AccountStatus& st = a->status;
  EXPECT_EQ(st.rawUsage, 123456.75);
  EXPECT_EQ(st.normShares, 0.4);
  EXPECT_EQ(st.effectiveUsage, 0.25);
  EXPECT_EQ(st.fairShare, 0.8125);
  EXPECT_EQ(st.runningJobs, 4);
  EXPECT_EQ(st.pendingJobs, 2);
  EXPECT_EQ(st.lastDecay, *parseTimestamp("2026-11-21T10:00:00Z"));
}

TEST(AccountTest, DefaultsAndUsageUpdate) {
  const Json in = Json::parse(R"({"apiVersion": "kubeslurm.io/v1alpha1", "kind": "Account",
                                  "metadata": {"name": "root-child"}, "spec": {}})");
  Account a = *decodeAccount(in);
  EXPECT_EQ(accountShares(a.spec), 1);  // the CRD's default
  EXPECT_FALSE(a.spec.limits);
  EXPECT_EQ(encodeAccount(a), in);
  a.status.rawUsage = 3600.5;
  a.status.fairShare = 1.0;
  a.status.lastDecay = *parseTimestamp("2026-11-21T10:05:00Z");
  // Absent counters already mean 0, so they stay absent.
  EXPECT_EQ(encodeAccount(a)["status"], Json::parse(R"({"rawUsage": 3600.5, "fairShare": 1.0,
                            "lastDecay": "2026-11-21T10:05:00Z"})"));
  EXPECT_EQ(decodeAccount(Json::parse(R"({"spec": {"limits": {"grpTres": {"cpu": 1.5}}}})"))
                .status()
                .message(),
            "spec.limits.grpTres.cpu: expected a 64-bit integer");
  EXPECT_EQ(decodeAccount(Json::parse(R"({"status": {"fairShare": "high"}})")).status().message(),
            "status.fairShare: expected a number");
}

}  // namespace
}  // namespace kubeslurm::api

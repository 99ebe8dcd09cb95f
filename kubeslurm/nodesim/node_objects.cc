#include "kubeslurm/nodesim/node_objects.h"

#include "kubeslurm/api/core_v1.h"

namespace kubeslurm::nodesim {

namespace {

using Json = nlohmann::json;

Json condition(std::string_view type, std::string_view status, std::string_view reason,
               std::string_view message, std::int64_t nowS, std::int64_t sinceS) {
  return Json{{"type", type},
              {"status", status},
              {"reason", reason},
              {"message", message},
              {"lastHeartbeatTime", api::formatTimestamp(nowS)},
              {"lastTransitionTime", api::formatTimestamp(sinceS)}};
}

Json resources(const api::ResourceList& list) {
  Json out = Json::object();
  for (const auto& [name, quantity] : list) out[name] = quantity;
  return out;
}

}  // namespace

Json nodeStatus(const SimNode& node, std::int64_t nowS, std::int64_t readySinceS) {
  // The pressure conditions' reasons and messages are the kubelet's (setNodeMemoryPressure...).
  Json conditions =
      Json::array({condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                             "kubelet has sufficient memory available", nowS, readySinceS),
                   condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                             "kubelet has no disk pressure", nowS, readySinceS),
                   condition("PIDPressure", "False", "KubeletHasSufficientPID",
                             "kubelet has sufficient PID available", nowS, readySinceS),
                   condition("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                             nowS, readySinceS)});
  return Json{{"capacity", resources(node.capacity)},
              {"allocatable", resources(node.allocatable)},
              {"conditions", conditions},
              {"addresses", Json::array({Json{{"type", "InternalIP"}, {"address", node.internalIP}},
                                         Json{{"type", "Hostname"}, {"address", node.name}}})},
              {"daemonEndpoints", Json{{"kubeletEndpoint", Json{{"Port", 10250}}}}},
              {"nodeInfo", Json{{"machineID", std::to_string(node.index)},
                                {"systemUUID", "nodesim-" + node.name},
                                {"bootID", "nodesim-" + node.name},
                                {"kernelVersion", "6.1.0-nodesim"},
                                {"osImage", "Debian GNU/Linux 12 (bookworm)"},
                                {"containerRuntimeVersion", "containerd://1.6.20"},
                                {"kubeletVersion", kKubeletVersion},
                                {"kubeProxyVersion", kKubeletVersion},
                                {"operatingSystem", "linux"},
                                {"architecture", "amd64"}}}};
}

Json nodeObject(const SimNode& node, std::int64_t nowS) {
  Json labels = Json::object();
  for (const auto& [key, value] : node.labels) labels[key] = value;
  return Json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               Json{{"name", node.name},
                    {"labels", labels},
                    {"annotations",
                     Json{{"node.alpha.kubernetes.io/ttl", "0"},
                          {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}}}},
              {"spec", Json{{"podCIDR", node.podCIDR}, {"podCIDRs", Json::array({node.podCIDR})}}},
              {"status", nodeStatus(node, nowS, nowS)}};
}

Json nodeLabelsPatch(const SimNode& node) {
  Json labels = Json::object();
  for (const auto& [key, value] : node.labels) labels[key] = value;
  return Json{{"metadata", Json{{"labels", labels}}}};
}

Json leaseObject(const SimNode& node, std::string_view nodeUid, std::int64_t nowMicros,
                 std::int32_t leaseDurationSeconds) {
  Json metadata{{"name", node.name}, {"namespace", kLeaseNamespace}};
  if (!nodeUid.empty()) {
    metadata["ownerReferences"] = Json::array(
        {Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node.name}, {"uid", nodeUid}}});
  }
  return Json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", metadata},
              {"spec", leaseRenewPatch(node, nowMicros, leaseDurationSeconds)["spec"]}};
}

Json leaseRenewPatch(const SimNode& node, std::int64_t nowMicros,
                     std::int32_t leaseDurationSeconds) {
  return Json{{"spec", Json{{"holderIdentity", node.name},
                            {"leaseDurationSeconds", leaseDurationSeconds},
                            {"renewTime", api::formatMicroTime(nowMicros)}}}};
}

}  // namespace kubeslurm::nodesim

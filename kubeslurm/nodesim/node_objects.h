// The Node and Lease objects a kubelet writes for itself, as JSON. Pure.
//
// Registration (kubelet_node_status.go): the Node is created with its status in one request
// (capacity, allocatable, conditions, addresses, nodeInfo); afterwards the kubelet reports
// status through the status subresource. Heartbeats (pkg/kubelet/nodelease): the Lease
// kube-node-lease/<node> is renewed every 10 s with leaseDurationSeconds 40 and an owner
// reference to the Node; the Ready condition's lastHeartbeatTime is refreshed less often.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeslurm/nodesim/shape.h"

namespace kubeslurm::nodesim {

inline constexpr std::string_view kKubeletVersion = "v1.20.2";
inline constexpr std::string_view kLeaseNamespace = "kube-node-lease";

// status of a healthy node at `nowS`; the Ready condition has been True since `readySinceS`.
nlohmann::json nodeStatus(const SimNode& node, std::int64_t nowS, std::int64_t readySinceS);

// The whole Node for a create: labels, spec.podCIDR(s), status.
nlohmann::json nodeObject(const SimNode& node, std::int64_t nowS);

// Merge patch of the node's labels (an existing Node re-registered by a restarted simulator).
nlohmann::json nodeLabelsPatch(const SimNode& node);

// The node's Lease, held by the node itself, renewed at `nowMicros`.
nlohmann::json leaseObject(const SimNode& node, std::string_view nodeUid, std::int64_t nowMicros,
                           std::int32_t leaseDurationSeconds);
nlohmann::json leaseRenewPatch(const SimNode& node, std::int64_t nowMicros,
                               std::int32_t leaseDurationSeconds);

}  // namespace kubeslurm::nodesim

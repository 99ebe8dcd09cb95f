// The label that marks the leader's pod, so that the query API's Service reaches only the leader.
#pragma once

#include <string>

#include "kubeslurm/kube/client.h"

namespace kubeslurm::op {

// The gRPC Service selects the leader's pod by this label (the chart's templates/query-api.yaml),
// because only the leader has scheduler state to answer with. Best effort: a failed patch only
// sends CLI calls to a replica that answers UNAVAILABLE until the next leadership change.
constexpr const char* kLeaderLabel = "kubeslurm.io/leader";

void labelOwnPod(kube::Writer& writer, const std::string& ns, const std::string& pod,
                 bool leader) noexcept;

}  // namespace kubeslurm::op

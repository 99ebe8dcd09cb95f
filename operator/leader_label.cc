#include "operator/leader_label.h"

#include <exception>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "kubeslurm/kube/resource.h"

namespace kubeslurm::op {

void labelOwnPod(kube::Writer& writer, const std::string& ns, const std::string& pod,
                 bool leader) noexcept {
  if (pod.empty()) return;  // not in a pod (POD_NAME unset): nothing to label
  try {
    nlohmann::json labels = nlohmann::json::object();
    labels[kLeaderLabel] = leader ? nlohmann::json("true") : nlohmann::json(nullptr);
    nlohmann::json patch = nlohmann::json::object();
    patch["metadata"]["labels"] = std::move(labels);
    auto patched = writer.patch(kube::resources::pods(), ns, pod, patch);
    if (!patched.isOk()) {
      spdlog::warn("cannot label pod {}/{} {}={}: {}", ns, pod, kLeaderLabel, leader,
                   patched.status().toString());
    }
  } catch (const std::exception& e) {
    spdlog::warn("cannot label pod {}/{}: {}", ns, pod, e.what());
  }
}

}  // namespace kubeslurm::op

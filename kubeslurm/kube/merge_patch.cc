#include "kubeslurm/kube/merge_patch.h"

namespace kubeslurm::kube {

nlohmann::json mergePatchBetween(const nlohmann::json& from, const nlohmann::json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  nlohmann::json patch = nlohmann::json::object();
  for (const auto& [key, value] : from.items()) {
    if (!to.contains(key)) patch[key] = nullptr;
  }
  for (const auto& [key, value] : to.items()) {
    const auto old = from.find(key);
    if (old == from.end()) {
      patch[key] = value;
    } else if (old->is_object() && value.is_object()) {
      nlohmann::json inner = mergePatchBetween(*old, value);
      if (!inner.empty()) patch[key] = std::move(inner);
    } else if (*old != value) {
      patch[key] = value;
    }
  }
  return patch;
}

}  // namespace kubeslurm::kube

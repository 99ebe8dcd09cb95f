// kubeconfig: any text parses to a config or an error Status, never an exception or a crash;
// a parsed config resolves or fails cleanly; base64 never reads out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kubeslurm/kube/kubeconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = kubeslurm::kube::parseKubeconfig(text, "/base");
  if (config.isOk()) {
    (void)kubeslurm::kube::resolveContext(*config);
    for (const auto& [name, context] : config->contexts) {
      (void)kubeslurm::kube::resolveContext(*config, name);
    }
    (void)kubeslurm::kube::mergeKubeconfigs({*config, *config});
  }
  (void)kubeslurm::kube::decodeBase64(text);
  return 0;
}

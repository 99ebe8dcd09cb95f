// JSON text from outside the operator, parsed within limits. A body anyone can send (an
// AdmissionReview, a --test-only SlurmJob) is bounded in size before parsing and in nesting
// depth while parsing: nlohmann's parser keeps its own stack, so a tree deeper than the limit is
// never built and nothing recursive (decoding, copying, dumping) ever walks one (security review
// C3: 200 KB of "[" overflowed the stack of a gRPC thread). PURE.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeslurm/base/status.h"

namespace kubeslurm::api {

struct JsonLimits {
  std::size_t maxBytes = std::size_t{8} << 20;
  // Far deeper than any Kubernetes object (a pod template is about 12 levels); far shallower
  // than what a thread's stack survives in a recursive walk.
  std::size_t maxDepth = 100;
};

// kResourceExhausted past a limit (naming it); kInvalidArgument when `text` is not JSON.
StatusOr<nlohmann::json> parseJson(std::string_view text, const JsonLimits& limits = {});

}  // namespace kubeslurm::api

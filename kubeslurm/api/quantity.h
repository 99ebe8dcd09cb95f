// resource.Quantity text ("8", "500m", "64Gi", "1e3") as numbers, with the grammar of
// k8s.io/apimachinery's ParseQuantity. Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::api {

// Quantity -> thousandths of the unit ("500m" -> 500, "2" -> 2000, "1Ki" -> 1024000).
// kInvalidArgument for malformed text, kOutOfRange when it does not fit in int64.
StatusOr<std::int64_t> parseQuantityMilli(std::string_view text);
// Whole units, rounded up as the kubelet rounds requests ("1500m" -> 2).
StatusOr<std::int64_t> parseQuantityValue(std::string_view text);

}  // namespace kubeslurm::api

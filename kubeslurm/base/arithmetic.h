// Arithmetic on figures a tenant gives (memory per CPU, per GPU, counts): held at the largest
// value rather than wrapped into a small one that would pass for a modest request.
#pragma once

#include <cstdint>

namespace kubeslurm {

inline std::uint64_t saturatingProduct(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

}  // namespace kubeslurm

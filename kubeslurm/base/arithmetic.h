// Arithmetic on figures a tenant gives (memory per CPU, per GPU, counts, usage summed over runs):
// held at the largest
// value rather than wrapped into a small one that would pass for a modest request.
#pragma once

#include <cstdint>

namespace kubeslurm {

inline std::uint64_t saturatingProduct(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

inline std::uint64_t saturatingSum(std::uint64_t a, std::uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

}  // namespace kubeslurm

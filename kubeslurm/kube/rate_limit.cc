#include "kubeslurm/kube/rate_limit.h"

#include <algorithm>
#include <cmath>

namespace kubeslurm::kube {

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

TokenBucket::Clock::duration TokenBucket::reserve(Clock::time_point now) {
  if (qps_ <= 0) return Clock::duration::zero();
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1.0;
  if (tokens_ >= 0) return Clock::duration::zero();
  // -tokens_ tokens are owed; they refill at qps per second.
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

std::chrono::milliseconds backoffDelay(int attempt, std::chrono::milliseconds base,
                                       std::chrono::milliseconds cap, double jitter) {
  const double exponent = std::clamp(attempt, 0, 62);
  const double full = std::min(static_cast<double>(cap.count()),
                               static_cast<double>(base.count()) * std::exp2(exponent));
  const double scaled = full / 2 + full / 2 * std::clamp(jitter, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(scaled));
}

std::optional<std::chrono::milliseconds> retryDelay(std::chrono::milliseconds backoff,
                                                    std::optional<std::chrono::seconds> retryAfter,
                                                    std::chrono::seconds retryAfterCap) {
  if (!retryAfter) return backoff;
  if (*retryAfter > retryAfterCap) return std::nullopt;
  return std::max<std::chrono::milliseconds>(backoff, *retryAfter);
}

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 9) return std::nullopt;
  long long seconds = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return std::chrono::seconds(seconds);
}

}  // namespace kubeslurm::kube

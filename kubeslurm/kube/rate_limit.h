// Client-side flow control, pure (time is a parameter): a QPS/burst token bucket like
// client-go's flowcontrol.NewTokenBucketRateLimiter, and retry backoff.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace kubeslurm::kube {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // qps <= 0 disables limiting. The bucket starts full (burst tokens).
  TokenBucket(double qps, int burst, Clock::time_point now);

  // Takes one token and returns how long to wait before using it (zero when one was there).
  // Tokens may go negative: concurrent callers queue up and are spaced 1/qps apart, in order,
  // instead of all waking at once.
  Clock::duration reserve(Clock::time_point now);

 private:
  double qps_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

// Delay before retry number `attempt` (0-based): base * 2^attempt capped at `cap`, then
// "equal jitter": half fixed, half scaled by `jitter` in [0, 1), so that clients that failed
// together do not retry together yet never retry sooner than half the backoff.
std::chrono::milliseconds backoffDelay(int attempt, std::chrono::milliseconds base,
                                       std::chrono::milliseconds cap, double jitter);

// Retry-After in delta-seconds form (the API server's form); nullopt for anything else.
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view value);

// The wait before a retry: the backoff, or the server's Retry-After if longer. A Retry-After
// above `retryAfterCap` returns nullopt: the caller gives up instead of sleeping (a server, or
// anything between, must not park a writer for minutes; the caller's loop comes back).
std::optional<std::chrono::milliseconds> retryDelay(std::chrono::milliseconds backoff,
                                                    std::optional<std::chrono::seconds> retryAfter,
                                                    std::chrono::seconds retryAfterCap);

}  // namespace kubeslurm::kube

// The one source of time of the code that waits: monotonic time for deciding, wall time for the
// timestamps objects carry, and waiting on a condition variable until a deadline. Production
// code takes a Clock& (steadyClock() by default); tests pass a clock they move themselves
// (tests/support/manual_clock.h), so no test sleeps to see a timeout. The pure core never reads
// a clock: time is a parameter there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kubeslurm::kube {

// Monotonic time for scheduling plus wall time for the timestamps objects carry.
class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // Unix time in microseconds, for Lease renewTime and Event timestamps (never for deciding).
  virtual std::int64_t wallMicros() const = 0;
  // Blocks on `cv` (whose mutex `lock` holds) until it is notified or now() >= deadline. May
  // return early; callers re-check their condition in a loop.
  virtual void waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         TimePoint deadline) = 0;
};

// std::chrono::steady_clock and system_clock; one per process.
Clock& steadyClock();

}  // namespace kubeslurm::kube

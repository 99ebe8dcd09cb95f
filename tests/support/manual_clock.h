// A kube::Clock for tests: time moves only when the test says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "kubeslurm/kube/clock.h"

namespace kubeslurm::testing_support {

using kube::Clock;

// A clock that moves only when told to. advance() wakes every thread blocked in waitUntil() so
// that it re-checks its deadline against the new time; nothing is lost between a waiter's check
// and its wait (see the .cc for why).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t wallMicrosAtStart = 1'700'000'000'000'000);

  TimePoint now() const override;
  std::int64_t wallMicros() const override;
  void waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override;

  void advance(Duration by);
  // Threads blocked in waitUntil() now (tests wait for a worker to block before advancing).
  std::size_t waiters() const;

 private:
  struct Waiter {
    std::mutex* mutex;
    std::condition_variable* cv;
  };
  mutable std::mutex mutex_;
  TimePoint now_{};
  std::int64_t wallAtStart_;
  std::uint64_t nextWaiterId_ = 0;
  std::map<std::uint64_t, Waiter> waiters_;
};

}  // namespace kubeslurm::testing_support

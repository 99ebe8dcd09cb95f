// The controllers' work queue: string keys ("namespace/name") with the guarantees of client-go's
// k8s.io/client-go/util/workqueue (queue.go, delaying_queue.go, rate_limiting_queue.go,
// default_rate_limiters.go), in one thread-safe class:
//
//   * dedup: a key added any number of times while it waits is handed out once;
//   * one worker per key: a key added while a worker holds it is marked dirty and queued again
//     when that worker calls done(), never handed to a second worker meanwhile;
//   * FIFO among waiting keys;
//   * addAfter(key, delay): the key joins the queue once the delay has passed (a key already
//     waiting keeps the earlier of its two ready times, as the delaying queue does);
//   * addRateLimited(key): addAfter with max(per-key exponential backoff 5 ms * 2^n capped at
//     1000 s, a global token bucket of 10 qps / burst 100): DefaultControllerRateLimiter;
//     forget(key) resets the key's backoff, numRequeues(key) reads it;
//   * shutDown(): adds are ignored from then on, delayed keys are dropped, get() hands out what
//     is already queued and then returns nullopt to every caller, blocked or not.
//
// Key states (a key is in at most one of waiting-delayed / queued, and may be both processing
// and dirty):
//
//          addAfter            ready            get()               done()
//   (none) -------> delayed ---------> queued ---------> processing -------> (none)
//     |                                 ^  add()             | add(): dirty      |
//     +------------------ add() --------+                    +--> queued again <-+
//
// Time comes from a Clock so that tests advance it instead of sleeping. The Clock lives here
// because the queue is its first user; the leader elector and the event recorder use it too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kubeslurm/kube/rate_limit.h"

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

struct WorkQueueOptions {
  // ItemExponentialFailureRateLimiter(5ms, 1000s) of DefaultControllerRateLimiter.
  Clock::Duration baseDelay = std::chrono::milliseconds(5);
  Clock::Duration maxDelay = std::chrono::seconds(1000);
  // BucketRateLimiter(rate.NewLimiter(10, 100)) of DefaultControllerRateLimiter; qps <= 0
  // turns the global bucket off.
  double qps = 10;
  int burst = 100;
};

class WorkQueue {
 public:
  explicit WorkQueue(Clock& clock = steadyClock(), WorkQueueOptions options = {});
  // Shuts down and wakes blocked callers; they must have returned before the queue is freed.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& key);
  void addAfter(const std::string& key, Clock::Duration delay);
  void addRateLimited(const std::string& key);
  // The delay addRateLimited would use now (and counts as one: it is the rate limiter's When).
  Clock::Duration when(const std::string& key);
  void forget(const std::string& key);
  int numRequeues(const std::string& key) const;

  // Blocks until a key is ready or the queue is shut down and empty (nullopt). The caller owns
  // the key until done(key).
  std::optional<std::string> get();
  void done(const std::string& key);

  void shutDown();
  // shutDown(), then waits until every key handed out by get() has been done() (client-go's
  // ShutDownWithDrain). Keys still queued are handed out as after shutDown().
  void shutDownWithDrain();
  bool shuttingDown() const;

  // Keys queued and ready now (not those processing, not those still delayed).
  std::size_t len() const;
  // Keys held by workers.
  std::size_t processing() const;
  // Keys added with a delay that has not passed yet.
  std::size_t delayed() const;

 private:
  using Ready = std::tuple<Clock::TimePoint, std::uint64_t, std::string>;

  void addLocked(const std::string& key);
  // Moves every delayed key whose time has come into the queue (delaying_queue's waitingLoop,
  // done lazily by whoever holds the lock).
  void promoteReadyLocked();

  Clock& clock_;
  const WorkQueueOptions options_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;       // get() waits here
  std::condition_variable drained_;  // shutDownWithDrain() waits here
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_set<std::string> processing_;
  std::set<Ready> delayedByTime_;
  std::unordered_map<std::string, std::set<Ready>::iterator> delayedByKey_;
  std::uint64_t sequence_ = 0;
  bool shuttingDown_ = false;
  bool draining_ = false;

  std::unordered_map<std::string, int> failures_;
  TokenBucket bucket_;
};

}  // namespace kubeslurm::kube

#include "kubeslurm/kube/work_queue.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <utility>

namespace kubeslurm::kube {

namespace {

class SteadyClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  std::int64_t wallMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 TimePoint deadline) override {
    cv.wait_until(lock, deadline);
  }
};

}  // namespace

Clock& steadyClock() {
  static SteadyClock clock;
  return clock;
}

// ---- ManualClock --------------------------------------------------------------------------

ManualClock::ManualClock(std::int64_t wallMicrosAtStart) : wallAtStart_(wallMicrosAtStart) {}

Clock::TimePoint ManualClock::now() const {
  const std::lock_guard lock(mutex_);
  return now_;
}

std::int64_t ManualClock::wallMicros() const {
  const std::lock_guard lock(mutex_);
  return wallAtStart_ +
         std::chrono::duration_cast<std::chrono::microseconds>(now_.time_since_epoch()).count();
}

std::size_t ManualClock::waiters() const {
  const std::lock_guard lock(mutex_);
  return waiters_.size();
}

// The waiter reads the time and registers under mutex_ while it holds its own mutex, and only
// unregisters (under mutex_ again) once it holds its mutex after the wait. advance() therefore
// either happens before the registration (the waiter sees the new time and does not wait), or
// finds the waiter registered: then, holding mutex_, it knows the waiter's mutex and cv are
// alive, and once it holds the waiter's mutex the waiter is inside cv.wait(), so the notify
// cannot be lost. advance() only try_locks the waiter's mutex because the waiter takes the two
// locks in the other order; on failure it lets go of mutex_ and tries again.
void ManualClock::waitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            TimePoint deadline) {
  std::uint64_t id = 0;
  {
    const std::lock_guard guard(mutex_);
    if (now_ >= deadline) return;
    id = nextWaiterId_++;
    waiters_.emplace(id, Waiter{lock.mutex(), &cv});
  }
  cv.wait(lock);
  const std::lock_guard guard(mutex_);
  waiters_.erase(id);
}

void ManualClock::advance(Duration by) {
  std::vector<std::uint64_t> pending;
  {
    const std::lock_guard guard(mutex_);
    now_ += by;
    for (const auto& entry : waiters_) pending.push_back(entry.first);
  }
  while (!pending.empty()) {
    {
      const std::lock_guard guard(mutex_);
      std::erase_if(pending, [&](std::uint64_t id) {
        const auto it = waiters_.find(id);
        if (it == waiters_.end()) return true;  // already awake and gone
        if (!it->second.mutex->try_lock()) return false;
        it->second.cv->notify_all();
        it->second.mutex->unlock();
        return true;
      });
    }
    if (!pending.empty()) std::this_thread::yield();
  }
}

// ---- WorkQueue ----------------------------------------------------------------------------

WorkQueue::WorkQueue(Clock& clock, WorkQueueOptions options)
    : clock_(clock), options_(options), bucket_(options.qps, options.burst, clock.now()) {}

WorkQueue::~WorkQueue() { shutDown(); }

void WorkQueue::addLocked(const std::string& key) {
  if (shuttingDown_) return;
  if (!dirty_.insert(key).second) return;  // already waiting: handed out once
  if (processing_.contains(key)) return;   // re-queued by done()
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::promoteReadyLocked() {
  if (delayedByTime_.empty()) return;
  const auto now = clock_.now();
  while (!delayedByTime_.empty() && std::get<0>(*delayedByTime_.begin()) <= now) {
    const std::string key = std::get<2>(*delayedByTime_.begin());
    delayedByKey_.erase(key);
    delayedByTime_.erase(delayedByTime_.begin());
    addLocked(key);
  }
}

void WorkQueue::add(const std::string& key) {
  const std::lock_guard lock(mutex_);
  promoteReadyLocked();
  addLocked(key);
}

void WorkQueue::addAfter(const std::string& key, Clock::Duration delay) {
  const std::lock_guard lock(mutex_);
  if (shuttingDown_) return;
  promoteReadyLocked();
  if (delay <= Clock::Duration::zero()) {
    addLocked(key);
    return;
  }
  const auto readyAt = clock_.now() + delay;
  if (const auto it = delayedByKey_.find(key); it != delayedByKey_.end()) {
    // Already waiting: the earlier time wins (delaying_queue.go insert()).
    if (std::get<0>(*it->second) <= readyAt) return;
    delayedByTime_.erase(it->second);
    delayedByKey_.erase(it);
  }
  const auto inserted = delayedByTime_.emplace(readyAt, sequence_++, key).first;
  delayedByKey_.emplace(key, inserted);
  // A get() blocked on an empty queue must now wake by this key's time.
  cv_.notify_all();
}

Clock::Duration WorkQueue::when(const std::string& key) {
  Clock::Duration backoff{};
  Clock::Duration bucketDelay{};
  {
    const std::lock_guard lock(mutex_);
    const int exponent = failures_[key]++;
    // base * 2^exponent, computed in double so that a large exponent saturates at the cap
    // instead of overflowing (default_rate_limiters.go does the same with float64).
    const double scaled =
        static_cast<double>(options_.baseDelay.count()) * std::exp2(std::min(exponent, 1023));
    backoff = scaled >= static_cast<double>(options_.maxDelay.count())
                  ? options_.maxDelay
                  : Clock::Duration(static_cast<Clock::Duration::rep>(scaled));
    bucketDelay = bucket_.reserve(clock_.now());
  }
  return std::max(backoff, bucketDelay);
}

void WorkQueue::addRateLimited(const std::string& key) {
  if (shuttingDown()) return;
  addAfter(key, when(key));
}

void WorkQueue::forget(const std::string& key) {
  const std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int WorkQueue::numRequeues(const std::string& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mutex_);
  while (true) {
    promoteReadyLocked();
    if (!queue_.empty() || shuttingDown_) break;
    if (delayedByTime_.empty()) {
      cv_.wait(lock);
    } else {
      clock_.waitUntil(cv_, lock, std::get<0>(*delayedByTime_.begin()));
    }
  }
  if (queue_.empty()) return std::nullopt;  // shut down and drained
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::done(const std::string& key) {
  const std::lock_guard lock(mutex_);
  promoteReadyLocked();
  processing_.erase(key);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
  if (draining_ && processing_.empty()) drained_.notify_all();
}

void WorkQueue::shutDown() {
  const std::lock_guard lock(mutex_);
  shuttingDown_ = true;
  delayedByTime_.clear();
  delayedByKey_.clear();
  cv_.notify_all();
}

void WorkQueue::shutDownWithDrain() {
  std::unique_lock lock(mutex_);
  shuttingDown_ = true;
  draining_ = true;
  delayedByTime_.clear();
  delayedByKey_.clear();
  cv_.notify_all();
  drained_.wait(lock, [this] { return processing_.empty(); });
}

bool WorkQueue::shuttingDown() const {
  const std::lock_guard lock(mutex_);
  return shuttingDown_;
}

std::size_t WorkQueue::len() const {
  const std::lock_guard lock(mutex_);
  // const: count what is due without moving it (the next mutating call moves it).
  const auto now = clock_.now();
  std::size_t due = 0;
  for (const auto& [readyAt, sequence, key] : delayedByTime_) {
    if (readyAt > now) break;
    if (!dirty_.contains(key) && !processing_.contains(key)) ++due;
  }
  return queue_.size() + due;
}

std::size_t WorkQueue::processing() const {
  const std::lock_guard lock(mutex_);
  return processing_.size();
}

std::size_t WorkQueue::delayed() const {
  const std::lock_guard lock(mutex_);
  const auto now = clock_.now();
  return static_cast<std::size_t>(
      std::count_if(delayedByTime_.begin(), delayedByTime_.end(),
                    [&](const Ready& ready) { return std::get<0>(ready) > now; }));
}

}  // namespace kubeslurm::kube

#include "tests/support/manual_clock.h"

#include <thread>
#include <vector>

namespace kubeslurm::testing_support {

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

}  // namespace kubeslurm::testing_support

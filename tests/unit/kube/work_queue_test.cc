// The work queue against client-go's k8s.io/client-go/util/workqueue: queue.go (dirty and
// processing sets, FIFO, ShutDown), delaying_queue.go (AddAfter), rate_limiting_queue.go and
// default_rate_limiters.go (DefaultControllerRateLimiter: max of 5 ms..1000 s per-key
// exponential and a 10 qps / burst 100 bucket).
#include "kubeslurm/kube/work_queue.h"

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

using namespace std::chrono_literals;

// Waits (in real time, briefly) until `condition` holds; the queue's threads block on the
// manual clock, never on real time, so this only waits for a thread to get scheduled.
template <typename Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 2000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return condition();
}

WorkQueueOptions noBucket() {
  WorkQueueOptions options;
  options.qps = 0;
  return options;
}

TEST(WorkQueueTest, KeyAddedTwiceWhileWaitingIsHandedOutOnce) {
  // queue.go Add: a key already in the dirty set is not queued again.
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("ns/a");
  queue.add("ns/a");
  queue.add("ns/a");
  EXPECT_EQ(queue.len(), 1U);
  EXPECT_EQ(queue.get(), "ns/a");
  EXPECT_EQ(queue.len(), 0U);
  queue.done("ns/a");
  EXPECT_EQ(queue.len(), 0U);
}

TEST(WorkQueueTest, KeyAddedWhileProcessingWaitsForDoneThenComesBackOnce) {
  // queue.go Add: a key in the processing set is only marked dirty; Done re-queues it.
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  ASSERT_EQ(queue.get(), "a");
  queue.add("a");
  queue.add("a");
  queue.add("b");
  EXPECT_EQ(queue.len(), 1U);  // only b: a is held by a worker
  EXPECT_EQ(queue.get(), "b");
  EXPECT_EQ(queue.len(), 0U);
  queue.done("a");
  EXPECT_EQ(queue.len(), 1U);
  EXPECT_EQ(queue.get(), "a");
  queue.done("a");
  queue.done("b");
  EXPECT_EQ(queue.len(), 0U);
  EXPECT_EQ(queue.processing(), 0U);
}

TEST(WorkQueueTest, WaitingKeysAreHandedOutInOrderOfFirstAdd) {
  ManualClock clock;
  WorkQueue queue(clock);
  for (const char* key : {"c", "a", "b", "a", "c"}) queue.add(key);
  EXPECT_EQ(queue.get(), "c");
  EXPECT_EQ(queue.get(), "a");
  EXPECT_EQ(queue.get(), "b");
}

TEST(WorkQueueTest, AddAfterJoinsTheQueueOnlyOnceTheDelayHasPassed) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("late", 10s);
  queue.addAfter("early", 2s);
  EXPECT_EQ(queue.len(), 0U);
  EXPECT_EQ(queue.delayed(), 2U);
  clock.advance(1999ms);
  EXPECT_EQ(queue.len(), 0U);
  clock.advance(1ms);
  EXPECT_EQ(queue.len(), 1U);
  EXPECT_EQ(queue.get(), "early");
  clock.advance(8s);
  EXPECT_EQ(queue.get(), "late");
}

TEST(WorkQueueTest, AddAfterKeepsTheEarlierReadyTime) {
  // delaying_queue.go insert(): an entry already waiting only moves earlier.
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 5s);
  queue.addAfter("a", 60s);  // later: ignored
  clock.advance(5s);
  EXPECT_EQ(queue.len(), 1U);
  queue.addAfter("b", 60s);
  queue.addAfter("b", 1s);  // earlier: wins
  EXPECT_EQ(queue.delayed(), 1U);
  clock.advance(1s);
  EXPECT_EQ(queue.len(), 2U);
}

TEST(WorkQueueTest, AddAfterZeroOrNegativeIsAPlainAdd) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 0s);
  queue.addAfter("b", -1s);
  EXPECT_EQ(queue.len(), 2U);
}

TEST(WorkQueueTest, DelayedKeyThatComesDueWhileProcessingIsMarkedDirty) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  ASSERT_EQ(queue.get(), "a");
  queue.addAfter("a", 1s);
  clock.advance(1s);
  EXPECT_EQ(queue.len(), 0U);  // due, but a worker holds it
  queue.done("a");
  EXPECT_EQ(queue.len(), 1U);
}

TEST(WorkQueueTest, BlockedGetWakesWhenTheClockReachesADelayedKey) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.addAfter("a", 30s);
  std::optional<std::string> got;
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    got = queue.get();
    finished = true;
  });
  ASSERT_TRUE(eventually([&] { return clock.waiters() == 1; }));
  clock.advance(29s);
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(finished.load());  // woke, re-checked, still early: waiting again
  clock.advance(1s);
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, AddAfterWakesAGetBlockedOnAnEmptyQueue) {
  ManualClock clock;
  WorkQueue queue(clock);
  std::optional<std::string> got;
  std::thread worker([&] { got = queue.get(); });
  std::this_thread::sleep_for(2ms);
  queue.addAfter("a", 1s);  // the worker must now wait on the clock, not forever
  ASSERT_TRUE(eventually([&] { return clock.waiters() == 1; }));
  clock.advance(1s);
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, PerKeyBackoffDoublesFromFiveMillisecondsAndForgetResetsIt) {
  // ItemExponentialFailureRateLimiter: base * 2^failures, per key, NumRequeues = failures.
  ManualClock clock;
  WorkQueue queue(clock, noBucket());
  EXPECT_EQ(queue.when("a"), 5ms);
  EXPECT_EQ(queue.when("a"), 10ms);
  EXPECT_EQ(queue.when("a"), 20ms);
  EXPECT_EQ(queue.when("b"), 5ms);  // per key
  EXPECT_EQ(queue.numRequeues("a"), 3);
  EXPECT_EQ(queue.numRequeues("b"), 1);
  queue.forget("a");
  EXPECT_EQ(queue.numRequeues("a"), 0);
  EXPECT_EQ(queue.when("a"), 5ms);
}

TEST(WorkQueueTest, PerKeyBackoffIsCappedAtOneThousandSeconds) {
  ManualClock clock;
  WorkQueue queue(clock, noBucket());
  Clock::Duration last{};
  for (int i = 0; i < 2000; ++i) last = queue.when("a");  // 2^2000 must not overflow
  EXPECT_EQ(last, 1000s);
  // 5 ms * 2^17 = 655 s < 1000 s < 5 ms * 2^18.
  WorkQueue fresh(clock, noBucket());
  for (int i = 0; i < 17; ++i) (void)fresh.when("k");
  EXPECT_EQ(fresh.when("k"), 655360ms);
  EXPECT_EQ(fresh.when("k"), 1000s);
}

TEST(WorkQueueTest, GlobalBucketTakesOverAfterABurstOfOneHundred) {
  // MaxOfRateLimiter(exponential, bucket(10 qps, 100)): the 101st first failure in the same
  // instant waits 100 ms for a token, the 102nd 200 ms.
  ManualClock clock;
  WorkQueue queue(clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(queue.when("k" + std::to_string(i)), 5ms) << i;
  EXPECT_EQ(queue.when("k100"), 100ms);
  EXPECT_EQ(queue.when("k101"), 200ms);
  clock.advance(10s);  // the bucket refills at 10/s
  EXPECT_EQ(queue.when("fresh"), 5ms);
}

TEST(WorkQueueTest, AddRateLimitedDelaysTheKeyByItsBackoff) {
  ManualClock clock;
  WorkQueue queue(clock, noBucket());
  queue.addRateLimited("a");
  queue.addRateLimited("a");  // 10 ms, but the 5 ms entry already waiting wins
  EXPECT_EQ(queue.len(), 0U);
  clock.advance(5ms);
  EXPECT_EQ(queue.len(), 1U);
  EXPECT_EQ(queue.numRequeues("a"), 2);
}

TEST(WorkQueueTest, ShutDownWakesEveryBlockedGetWithNothing) {
  ManualClock clock;
  WorkQueue queue(clock);
  std::atomic<int> nothing{0};
  std::vector<std::thread> workers;
  workers.reserve(3);
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      if (!queue.get().has_value()) ++nothing;
    });
  }
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(nothing.load(), 0);
  queue.shutDown();
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(nothing.load(), 3);
}

TEST(WorkQueueTest, AfterShutDownQueuedKeysAreStillHandedOutButAddsAreIgnored) {
  // queue.go Get: "if q.queue.Len() == 0 { return nil, true }": what was queued drains.
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  queue.addAfter("later", 1s);
  queue.shutDown();
  queue.add("b");
  queue.addRateLimited("c");
  EXPECT_TRUE(queue.shuttingDown());
  EXPECT_EQ(queue.get(), "a");
  clock.advance(1s);
  EXPECT_EQ(queue.get(), std::nullopt);  // delayed keys die with the delaying loop
  queue.done("a");
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForKeysInFlight) {
  ManualClock clock;
  WorkQueue queue(clock);
  queue.add("a");
  ASSERT_EQ(queue.get(), "a");
  std::atomic<bool> drained{false};
  std::thread closer([&] {
    queue.shutDownWithDrain();
    drained = true;
  });
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(drained.load());
  queue.done("a");
  closer.join();
  EXPECT_TRUE(drained.load());
}

TEST(WorkQueueTest, ConcurrentWorkersNeverShareAKeyAndSeeEveryAdd) {
  // Level-triggered contract: after the last add of a key, some processing of that key starts
  // after it (so it observes the latest state), and no two workers ever hold the same key.
  constexpr int kKeys = 16;
  constexpr int kWorkers = 4;
  constexpr int kProducers = 3;
  constexpr int kAddsPerProducer = 3000;
  WorkQueue queue;  // real clock: no delays are used
  std::mutex stateMutex;
  std::array<int, kKeys> version{};            // bumped before every add
  std::array<int, kKeys> seen{};               // version read when processing started
  std::array<std::atomic<int>, kKeys> held{};  // workers holding the key right now
  std::atomic<int> overlaps{0};
  std::atomic<int> processed{0};

  std::vector<std::thread> workers;
  workers.reserve(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto key = queue.get()) {
        const int k = std::stoi(*key);
        if (held[static_cast<std::size_t>(k)].fetch_add(1) != 0) ++overlaps;
        {
          const std::lock_guard lock(stateMutex);
          seen[static_cast<std::size_t>(k)] = version[static_cast<std::size_t>(k)];
        }
        // Hold the key long enough for producers to add it again meanwhile.
        std::this_thread::sleep_for(20us);
        held[static_cast<std::size_t>(k)].fetch_sub(1);
        ++processed;
        queue.done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  producers.reserve(kProducers);
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 random(static_cast<unsigned>(p));
      std::uniform_int_distribution<int> pick(0, kKeys - 1);
      for (int i = 0; i < kAddsPerProducer; ++i) {
        const int k = pick(random);
        {
          const std::lock_guard lock(stateMutex);
          ++version[static_cast<std::size_t>(k)];
        }
        queue.add(std::to_string(k));
        if (i % 8 == 0) std::this_thread::sleep_for(10us);
      }
    });
  }
  for (auto& producer : producers) producer.join();
  queue.shutDown();  // what is queued or dirty still gets processed
  for (auto& worker : workers) worker.join();

  EXPECT_EQ(overlaps.load(), 0);
  for (std::size_t k = 0; k < kKeys; ++k) {
    EXPECT_EQ(seen[k], version[k]) << "key " << k << " missed its last add";
  }
  // Dedup did its job: far fewer runs than adds, at least one per key.
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LE(processed.load(), kProducers * kAddsPerProducer);
  EXPECT_EQ(queue.len(), 0U);
  EXPECT_EQ(queue.processing(), 0U);
}

}  // namespace
}  // namespace kubeslurm::kube

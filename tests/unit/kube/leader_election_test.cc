// Leader election against an in-memory Lease store and a manual clock. Each test names the
// client-go behaviour (tools/leaderelection/leaderelection.go) it pins, or the fencing rule of
// DESIGN.md invariant 2 that we add to it.
#include "kubeslurm/kube/leader_election.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/api/core_v1.h"
#include "tests/support/manual_clock.h"

namespace kubeslurm::kube {
namespace {

using namespace std::chrono_literals;
using testing_support::ManualClock;

template <typename Condition>
bool eventually(Condition condition) {
  for (int i = 0; i < 3000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return condition();
}

// An API server holding Leases: resourceVersion preconditions on update (stale -> kAborted),
// kAlreadyExists on create, and hooks to fail or stall calls.
class FakeLeaseStore final : public Reader, public Writer {
 public:
  StatusOr<Json> get(const ResourceType& type, std::string_view ns,
                     std::string_view name) override {
    EXPECT_EQ(type.plural, "leases");
    if (Status failure = failing(); !failure.isOk()) return failure;
    const std::lock_guard lock(mutex_);
    ++gets;
    const auto it = objects_.find(key(ns, name));
    if (it == objects_.end()) return Status(StatusCode::kNotFound, "leases not found");
    return it->second;
  }
  StatusOr<Json> list(const ResourceType&, std::string_view, const ListOptions&) override {
    return Status(StatusCode::kUnimplemented, "list");
  }
  StatusOr<Json> create(const ResourceType& type, std::string_view ns,
                        const Json& object) override {
    EXPECT_EQ(type.apiVersion(), "coordination.k8s.io/v1");
    if (Status failure = failing(); !failure.isOk()) return failure;
    const std::lock_guard lock(mutex_);
    const std::string name = object["metadata"]["name"];
    if (objects_.contains(key(ns, name))) {
      return Status(StatusCode::kAlreadyExists, "leases already exists");
    }
    Json stored = object;
    stored["metadata"]["namespace"] = std::string(ns);
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    objects_[key(ns, name)] = stored;
    return stored;
  }
  StatusOr<Json> update(const ResourceType&, std::string_view ns, const Json& object) override {
    if (beforeUpdate) beforeUpdate();
    if (Status failure = failing(); !failure.isOk()) return failure;
    const std::lock_guard lock(mutex_);
    ++updates;
    const std::string name = object["metadata"]["name"];
    const auto it = objects_.find(key(ns, name));
    if (it == objects_.end()) return Status(StatusCode::kNotFound, "leases not found");
    if (object["metadata"].value("resourceVersion", "") !=
        it->second["metadata"]["resourceVersion"].get<std::string>()) {
      return Status(StatusCode::kAborted, "the object has been modified");
    }
    Json stored = object;
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    it->second = stored;
    return stored;
  }
  StatusOr<Json> patch(const ResourceType&, std::string_view, std::string_view,
                       const Json&) override {
    return Status(StatusCode::kUnimplemented, "patch");
  }
  Status remove(const ResourceType&, std::string_view, std::string_view,
                const DeleteOptions&) override {
    return {StatusCode::kUnimplemented, "remove"};
  }

  // What another candidate would write: takes the stored lease for `holder`.
  void putHolder(const std::string& holder, std::int32_t durationSeconds = 3) {
    const std::lock_guard lock(mutex_);
    Json& stored = objects_[key("ns", "lock")];
    stored["apiVersion"] = "coordination.k8s.io/v1";
    stored["kind"] = "Lease";
    stored["metadata"]["name"] = "lock";
    stored["metadata"]["namespace"] = "ns";
    stored["metadata"]["resourceVersion"] = std::to_string(++version_);
    stored["spec"]["holderIdentity"] = holder;
    stored["spec"]["leaseDurationSeconds"] = durationSeconds;
    stored["spec"]["renewTime"] = api::formatMicroTime(1'700'000'000'000'000 + version_);
    if (!stored["spec"].contains("leaseTransitions")) stored["spec"]["leaseTransitions"] = 0;
  }
  api::Lease lease() {
    const std::lock_guard lock(mutex_);
    auto decoded = api::decodeLease(objects_.at(key("ns", "lock")));
    EXPECT_TRUE(decoded.isOk()) << decoded.status().toString();
    return decoded.isOk() ? *decoded : api::Lease{};
  }

  std::atomic<bool> unavailable{false};
  std::function<void()> beforeUpdate;
  int gets = 0;
  int updates = 0;

 private:
  static std::string key(std::string_view ns, std::string_view name) {
    return std::string(ns) + "/" + std::string(name);
  }
  Status failing() const {
    if (unavailable) return {StatusCode::kUnavailable, "connection refused"};
    return Status::ok();
  }

  std::mutex mutex_;
  std::map<std::string, Json> objects_;
  int version_ = 0;
};

LeaderElectionConfig shortConfig(const std::string& identity) {
  LeaderElectionConfig config;
  config.leaseNamespace = "ns";
  config.leaseName = "lock";
  config.identity = identity;
  config.leaseDuration = 3s;
  config.renewDeadline = 2s;
  config.retryPeriod = 500ms;
  config.acquireJitter = 0;  // deterministic retry times under the manual clock
  return config;
}

std::unique_ptr<LeaderElector> makeElector(FakeLeaseStore& store, Clock& clock,
                                           LeaderElectionConfig config) {
  auto made = LeaderElector::create(store, store, std::move(config), clock);
  EXPECT_TRUE(made.isOk()) << made.status().toString();
  return made.isOk() ? std::move(made).value() : nullptr;
}

TEST(LeaderElectionTest, ConfigIsValidatedAsNewLeaderElectorDoes) {
  FakeLeaseStore store;
  auto bad = [&](auto mutate) {
    LeaderElectionConfig config = shortConfig("a");
    config.acquireJitter = 1.2;
    mutate(config);
    return LeaderElector::create(store, store, config).status().code();
  };
  EXPECT_EQ(bad([](auto&) {}), StatusCode::kOk);
  EXPECT_EQ(bad([](auto& c) { c.renewDeadline = c.leaseDuration; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](auto& c) { c.retryPeriod = 1900ms; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](auto& c) { c.identity.clear(); }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](auto& c) { c.retryPeriod = 0s; }), StatusCode::kInvalidArgument);
}

TEST(LeaderElectionTest, AbsentLeaseIsCreatedWithUsAsHolder) {
  ManualClock clock;
  FakeLeaseStore store;
  auto elector = makeElector(store, clock, shortConfig("a"));
  EXPECT_FALSE(elector->isLeader());
  EXPECT_FALSE(elector->canWrite());
  ASSERT_TRUE(elector->tryAcquireOrRenew()) << elector->lastError().toString();
  EXPECT_TRUE(elector->isLeader());
  EXPECT_TRUE(elector->canWrite());
  const api::Lease lease = store.lease();
  EXPECT_EQ(lease.holderIdentity, "a");
  EXPECT_EQ(lease.leaseDurationSeconds, 3);
  EXPECT_EQ(lease.leaseTransitions, 0);
  EXPECT_EQ(lease.acquireTime, clock.wallMicros());
  EXPECT_EQ(lease.renewTime, clock.wallMicros());
}

TEST(LeaderElectionTest, FreeLeaseIsTakenAndCountsATransition) {
  // A released lease (holderIdentity "") is free at once, whatever its duration says.
  ManualClock clock;
  FakeLeaseStore store;
  store.putHolder("");
  auto elector = makeElector(store, clock, shortConfig("a"));
  ASSERT_TRUE(elector->tryAcquireOrRenew());
  EXPECT_EQ(store.lease().holderIdentity, "a");
  EXPECT_EQ(store.lease().leaseTransitions, 1);
}

TEST(LeaderElectionTest, UnexpiredForeignLeaseIsRespectedUntilOurObservationExpires) {
  // "lock is held by %v and has not yet expired": expiry is observedTime + leaseDuration on
  // our clock, where observedTime is when we last saw the record change.
  ManualClock clock;
  FakeLeaseStore store;
  store.putHolder("b", 3);
  auto elector = makeElector(store, clock, shortConfig("a"));
  EXPECT_FALSE(elector->tryAcquireOrRenew());
  EXPECT_EQ(elector->leader(), "b");
  clock.advance(2s);
  EXPECT_FALSE(elector->tryAcquireOrRenew());
  store.putHolder("b", 3);  // b renews at 2 s; we see the change at our next try
  clock.advance(500ms);
  EXPECT_FALSE(elector->tryAcquireOrRenew());  // observed at 2.5 s: expires at 5.5 s
  clock.advance(2500ms);
  EXPECT_FALSE(elector->tryAcquireOrRenew());  // 5 s after we first saw b: not enough
  EXPECT_EQ(store.lease().holderIdentity, "b");
  clock.advance(499ms);
  EXPECT_FALSE(elector->tryAcquireOrRenew());
  clock.advance(1ms);  // 3 s since we saw the record change
  EXPECT_TRUE(elector->tryAcquireOrRenew());
  EXPECT_EQ(store.lease().holderIdentity, "a");
  EXPECT_EQ(store.lease().leaseTransitions, 1);
}

TEST(LeaderElectionTest, ForeignRenewTimeInTheFarPastDoesNotMeanExpired) {
  // Clocks are never compared: a renewTime years old still counts from when we saw it.
  ManualClock clock(/*wallMicrosAtStart=*/4'000'000'000'000'000);
  FakeLeaseStore store;
  store.putHolder("b", 3);  // renewTime around 2023, our wall clock says 2096
  auto elector = makeElector(store, clock, shortConfig("a"));
  EXPECT_FALSE(elector->tryAcquireOrRenew());
}

TEST(LeaderElectionTest, ConflictOnUpdateMeansNotLeaderThisRound) {
  ManualClock clock;
  FakeLeaseStore store;
  store.putHolder("");
  auto elector = makeElector(store, clock, shortConfig("a"));
  // A rival writes between our get and our update: our resourceVersion is stale.
  store.beforeUpdate = [&] {
    store.beforeUpdate = nullptr;
    store.putHolder("b");
  };
  EXPECT_FALSE(elector->tryAcquireOrRenew());
  EXPECT_EQ(elector->lastError().code(), StatusCode::kAborted);
  EXPECT_FALSE(elector->isLeader());
  EXPECT_FALSE(elector->canWrite());
  EXPECT_EQ(store.lease().holderIdentity, "b");
}

TEST(LeaderElectionTest, RenewalKeepsAcquireTimeAndTransitions) {
  ManualClock clock;
  FakeLeaseStore store;
  store.putHolder("");
  auto elector = makeElector(store, clock, shortConfig("a"));
  ASSERT_TRUE(elector->tryAcquireOrRenew());
  const api::Lease first = store.lease();
  clock.advance(500ms);
  ASSERT_TRUE(elector->tryAcquireOrRenew());
  const api::Lease second = store.lease();
  EXPECT_EQ(second.acquireTime, first.acquireTime);
  EXPECT_EQ(second.leaseTransitions, first.leaseTransitions);
  EXPECT_EQ(*second.renewTime, *first.renewTime + 500'000);
}

TEST(LeaderElectionTest, TransitionsCountEveryChangeOfHolder) {
  ManualClock clock;
  FakeLeaseStore store;
  auto a = makeElector(store, clock, shortConfig("a"));
  auto b = makeElector(store, clock, shortConfig("b"));
  ASSERT_TRUE(a->tryAcquireOrRenew());  // created: 0
  ASSERT_TRUE(a->release().isOk());
  ASSERT_TRUE(b->tryAcquireOrRenew());  // 1
  EXPECT_FALSE(a->tryAcquireOrRenew());
  clock.advance(3s);                    // b stopped renewing
  ASSERT_TRUE(a->tryAcquireOrRenew());  // 2
  clock.advance(1s);
  ASSERT_TRUE(a->tryAcquireOrRenew());  // renewal: still 2
  EXPECT_EQ(store.lease().leaseTransitions, 2);
  EXPECT_EQ(store.lease().holderIdentity, "a");
}

TEST(LeaderElectionTest, FenceClosesAtRenewDeadlineCountedFromBeforeTheRenewal) {
  ManualClock clock;
  FakeLeaseStore store;
  auto elector = makeElector(store, clock, shortConfig("a"));
  // The renewal request takes 300 ms: the fence counts from when it was sent.
  store.beforeUpdate = [&] { clock.advance(300ms); };
  store.putHolder("");
  ASSERT_TRUE(elector->tryAcquireOrRenew());
  EXPECT_TRUE(elector->canWrite());
  clock.advance(1699ms);  // 1999 ms after the attempt started
  EXPECT_TRUE(elector->canWrite());
  clock.advance(1ms);
  EXPECT_FALSE(elector->canWrite());
  EXPECT_TRUE(elector->isLeader());  // still the recorded holder, but may not write
}

TEST(LeaderElectionTest, ReleaseEmptiesHolderWithOneSecondSoARivalTakesOverAtOnce) {
  ManualClock clock;
  FakeLeaseStore store;
  auto a = makeElector(store, clock, shortConfig("a"));
  auto b = makeElector(store, clock, shortConfig("b"));
  ASSERT_TRUE(a->tryAcquireOrRenew());
  EXPECT_FALSE(b->tryAcquireOrRenew());
  ASSERT_TRUE(a->release().isOk());
  EXPECT_FALSE(a->canWrite());
  EXPECT_FALSE(a->isLeader());
  const api::Lease released = store.lease();
  EXPECT_EQ(released.holderIdentity, "");
  EXPECT_EQ(released.leaseDurationSeconds, 1);
  EXPECT_TRUE(b->tryAcquireOrRenew());  // no waiting out the 3 s
  EXPECT_TRUE(a->release().isOk());     // not ours any more: nothing written
  EXPECT_EQ(store.lease().holderIdentity, "b");
}

// run() on its own thread with the manual clock.
class RunningElector {
 public:
  RunningElector(FakeLeaseStore& store, ManualClock& clock, LeaderElectionConfig config) {
    config.callbacks.onStartedLeading = [this] { started = true; };
    config.callbacks.onStoppedLeading = [this] {
      stoppedWhileFenceOpen = elector->canWrite();
      stoppedAt = clockRef->now();
      stopped = true;
    };
    config.callbacks.onNewLeader = [this](const std::string& identity) {
      const std::lock_guard lock(mutex);
      leaders.push_back(identity);
    };
    clockRef = &clock;
    elector = makeElector(store, clock, std::move(config));
    thread = std::thread([this] { result = elector->run(); });
  }
  ~RunningElector() {
    elector->stop();
    if (thread.joinable()) thread.join();
  }
  RunningElector(const RunningElector&) = delete;
  RunningElector& operator=(const RunningElector&) = delete;
  void join() { thread.join(); }

  ManualClock* clockRef = nullptr;
  std::unique_ptr<LeaderElector> elector;
  std::thread thread;
  Status result;
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};
  std::atomic<bool> stoppedWhileFenceOpen{false};
  Clock::TimePoint stoppedAt{};
  std::mutex mutex;
  std::vector<std::string> leaders;
};

// Advances the clock in steps, letting the elector's threads react between steps.
void advanceInSteps(ManualClock& clock, Clock::Duration total, Clock::Duration step) {
  for (Clock::Duration done{}; done < total; done += step) {
    clock.advance(step);
    std::this_thread::sleep_for(1ms);
  }
}

TEST(LeaderElectionTest, RunAcquiresRenewsAndReleasesOnStop) {
  ManualClock clock;
  FakeLeaseStore store;
  RunningElector a(store, clock, shortConfig("a"));
  ASSERT_TRUE(eventually([&] { return a.started.load(); }));
  advanceInSteps(clock, 5s, 100ms);  // well past the lease duration: renewals kept it
  EXPECT_TRUE(a.elector->canWrite());
  EXPECT_FALSE(a.stopped.load());
  EXPECT_GE(store.lease().renewTime.value_or(0), clock.wallMicros() - 600'000);
  a.elector->stop();
  a.join();
  EXPECT_TRUE(a.result.isOk());
  EXPECT_TRUE(a.stopped.load());
  EXPECT_FALSE(a.stoppedWhileFenceOpen.load());
  EXPECT_EQ(store.lease().holderIdentity, "");  // released
  const std::lock_guard lock(a.mutex);
  EXPECT_EQ(a.leaders, std::vector<std::string>({"a", ""}));
}

TEST(LeaderElectionTest, FailingRenewalsStopLeadingAtRenewDeadlineBeforeTheLeaseExpires) {
  ManualClock clock;
  FakeLeaseStore store;
  RunningElector a(store, clock, shortConfig("a"));
  ASSERT_TRUE(eventually([&] { return a.started.load(); }));
  const auto lastRenewal = clock.now();
  store.unavailable = true;  // the API server is unreachable from here on
  advanceInSteps(clock, 1900ms, 100ms);
  EXPECT_FALSE(a.stopped.load());
  EXPECT_TRUE(a.elector->canWrite());
  advanceInSteps(clock, 200ms, 100ms);
  ASSERT_TRUE(eventually([&] { return a.stopped.load(); }));
  // Stopped at the renew deadline (2 s), a full second before a rival could take the lease.
  EXPECT_LE(a.stoppedAt - lastRenewal, 2100ms);
  EXPECT_LT(a.stoppedAt - lastRenewal, shortConfig("a").leaseDuration);
  EXPECT_FALSE(a.stoppedWhileFenceOpen.load());
  a.join();
  EXPECT_EQ(a.result.code(), StatusCode::kAborted);
  EXPECT_EQ(store.lease().holderIdentity, "a");  // not released: we could not reach it
}

TEST(LeaderElectionTest, HungRenewalStillStopsLeadingOnTime) {
  // The watchdog: run()'s thread is stuck inside a renewal request, yet onStoppedLeading fires
  // at the deadline.
  ManualClock clock;
  FakeLeaseStore store;
  std::mutex gate;
  std::condition_variable opened;
  bool open = false;
  std::atomic<bool> hung{false};
  RunningElector a(store, clock, shortConfig("a"));
  ASSERT_TRUE(eventually([&] { return a.started.load(); }));
  store.beforeUpdate = [&] {
    hung = true;
    std::unique_lock lock(gate);
    opened.wait(lock, [&] { return open; });
  };
  advanceInSteps(clock, 600ms, 100ms);
  ASSERT_TRUE(eventually([&] { return hung.load(); }));
  advanceInSteps(clock, 2s, 100ms);
  EXPECT_TRUE(eventually([&] { return a.stopped.load(); }));
  EXPECT_FALSE(a.elector->canWrite());
  {
    const std::lock_guard lock(gate);
    open = true;
  }
  opened.notify_all();
  a.join();
  EXPECT_EQ(a.result.code(), StatusCode::kAborted);
}

TEST(LeaderElectionTest, SeeingAnotherHolderWhileLeadingStopsAtOnce) {
  ManualClock clock;
  FakeLeaseStore store;
  RunningElector a(store, clock, shortConfig("a"));
  ASSERT_TRUE(eventually([&] { return a.started.load(); }));
  store.putHolder("b");  // e.g. we were paused longer than the lease and b took over
  advanceInSteps(clock, 600ms, 100ms);
  ASSERT_TRUE(eventually([&] { return a.stopped.load(); }));
  EXPECT_FALSE(a.elector->canWrite());
  a.join();
  EXPECT_EQ(a.result.code(), StatusCode::kAborted);
  EXPECT_EQ(store.lease().holderIdentity, "b");  // never released someone else's lease
  const std::lock_guard lock(a.mutex);
  EXPECT_EQ(a.leaders, std::vector<std::string>({"a", "b"}));
}

TEST(LeaderElectionTest, CandidateWaitsAndTakesOverWhenTheLeaderStopsRenewing) {
  ManualClock clock;
  FakeLeaseStore store;
  store.putHolder("b", 3);
  RunningElector a(store, clock, shortConfig("a"));
  advanceInSteps(clock, 2900ms, 100ms);
  EXPECT_FALSE(a.started.load());
  advanceInSteps(clock, 700ms, 100ms);  // 3 s unchanged + at most one retry period
  EXPECT_TRUE(eventually([&] { return a.started.load(); }));
  EXPECT_EQ(store.lease().holderIdentity, "a");
}

}  // namespace
}  // namespace kubeslurm::kube

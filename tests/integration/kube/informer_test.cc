// The informer against the sandbox's real kube-apiserver v1.20.2, directly and through the
// fault-injecting proxy (tests/integration/support/fault_proxy.h). The sandbox Environment is
// registered once, in client_test.cc.
//
// What is pinned (client-go tools/cache behaviour):
//   - the cache equals a fresh list once writes stop (reflector.go: list, then watch from the
//     list's resourceVersion; shared_informer.go: the indexer is the source of truth);
//   - handler-derived state equals it too: every add, update and delete reached the handlers
//     once, in order (an add for a key already known, or an update/delete for an unknown key,
//     is counted as a violation);
//   - a relist after a cut watch reports what was deleted meanwhile (delta_fifo.go Replace
//     with DeletedFinalStateUnknown).
#include "kubeslurm/kube/informer.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/kube/client.h"
#include "tests/integration/support/fault_proxy.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::kube {
namespace {

using namespace std::chrono_literals;
using testing_support::FaultProxy;
using testing_support::SandboxEnvironment;
using Versions = std::map<std::string, std::string>;  // key -> resourceVersion

Json configMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", {{"k", value}}}};
}

// State built only from handler calls, checked for impossible sequences.
class HandlerState {
 public:
  EventHandler handler() {
    EventHandler h;
    h.onAdd = [this](const ObjectPtr& o) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!versions_.emplace(objectKey(*o), objectResourceVersion(*o)).second) ++violations_;
    };
    h.onUpdate = [this](const ObjectPtr& before, const ObjectPtr& after) {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = versions_.find(objectKey(*after));
      if (it == versions_.end() || it->second != objectResourceVersion(*before)) ++violations_;
      if (it != versions_.end()) it->second = objectResourceVersion(*after);
    };
    h.onDelete = [this](const ObjectPtr& last, bool finalStateUnknown) {
      const std::lock_guard<std::mutex> lock(mutex_);
      const std::string key = objectKey(*last);
      if (versions_.erase(key) != 1) ++violations_;
      (finalStateUnknown ? unknownDeletes_ : watchedDeletes_).insert(key);
    };
    return h;
  }
  Versions versions() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return versions_;
  }
  int violations() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return violations_;
  }
  std::set<std::string> unknownDeletes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return unknownDeletes_;
  }
  std::set<std::string> watchedDeletes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return watchedDeletes_;
  }

 private:
  mutable std::mutex mutex_;
  Versions versions_;
  int violations_ = 0;
  std::set<std::string> unknownDeletes_;
  std::set<std::string> watchedDeletes_;
};

Versions storeVersions(const ObjectStore& store) {
  Versions out;
  for (const ObjectPtr& o : store.list()) out[objectKey(*o)] = objectResourceVersion(*o);
  return out;
}

class InformerIT : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "sandbox did not start";
    auto made = Client::create(testing_support::sandboxAdminConfig());
    ASSERT_TRUE(made.isOk()) << made.status().toString();
    client_ = std::move(made).value();
    ns_ = "inf-" + std::to_string(counter_++) + "-" + std::to_string(::getpid());
    Json nsObject = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    auto created = client_->create(resources::namespaces(), "", nsObject);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
  }
  // The informer goes first: it reads through proxied_, which talks to proxy_.
  void TearDown() override {
    if (informer_) informer_->stop();
    informer_.reset();
    proxied_.reset();
    proxy_.reset();
    if (client_) (void)client_->remove(resources::namespaces(), "", ns_, {});
  }

  // Starts proxy_ and proxied_, a client that reaches the apiserver through it: same CA, the
  // admin token (the proxy does not pass client certificates on).
  // Its own retries are kept to one so that faults reach the informer (under test) instead of
  // being absorbed by the client; a 429 still waits its Retry-After (1 s) once.
  void startProxy() {
    auto proxyOptions = FaultProxy::sandboxOptions();
    ASSERT_TRUE(proxyOptions.isOk()) << proxyOptions.status().toString();
    proxyOptions->trace =
        std::getenv("FAULT_PROXY_TRACE") != nullptr;  // NOLINT(concurrency-mt-unsafe)
    auto started = FaultProxy::start(*proxyOptions);
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    proxy_ = std::move(started).value();
    proxied_ = proxiedClient(*proxy_);
    ASSERT_NE(proxied_, nullptr);
  }
  std::unique_ptr<Client> proxiedClient(const FaultProxy& proxy) {
    ClientOptions retries;
    retries.maxRetries = 1;
    retries.backoffBase = 50ms;
    ClientConfig config;
    config.server = proxy.url();
    config.caFile = SandboxEnvironment::env()["KUBESLURM_CA_FILE"];
    config.token = SandboxEnvironment::env()["KUBESLURM_TOKEN"];
    auto made = Client::create(config, retries);
    EXPECT_TRUE(made.isOk()) << made.status().toString();
    return made.isOk() ? std::move(made).value() : nullptr;
  }

  Versions freshList() {
    ListOptions options;
    auto listed = listAll(*client_, resources::configMaps(), ns_, options);
    EXPECT_TRUE(listed.isOk()) << listed.status().toString();
    Versions out;
    if (!listed.isOk()) return out;
    for (const Json& item : (*listed)["items"]) out[objectKey(item)] = objectResourceVersion(item);
    return out;
  }

  // Waits until the store and the handler state both equal a fresh list; returns how long
  // that took, or -1 ms on timeout.
  std::chrono::milliseconds waitConverged(const HandlerState& state,
                                          std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < timeout) {
      const Versions truth = freshList();
      if (storeVersions(informer_->store()) == truth && state.versions() == truth) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
      }
      std::this_thread::sleep_for(50ms);
    }
    return std::chrono::milliseconds(-1);
  }

  std::unique_ptr<Client> client_;
  // Declared in the order they may be destroyed in, last first.
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<Client> proxied_;
  std::unique_ptr<Informer> informer_;
  std::string ns_;
  static inline int counter_ = 0;
};

TEST_F(InformerIT, SeesCreatesUpdatesDeletesAndEqualsAFreshList) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        client_->create(resources::configMaps(), ns_, configMap("a" + std::to_string(i), "0"))
            .isOk());
  }
  InformerOptions options;
  options.ns = ns_;
  options.pageSize = 2;  // the initial list takes several pages
  HandlerState state;
  informer_ = std::make_unique<Informer>(*client_, *client_, resources::configMaps(), options);
  ASSERT_TRUE(informer_->addEventHandler(state.handler()).isOk());
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(10s));
  EXPECT_GE(informer_->store().size(), 5U);
  ASSERT_NE(informer_->store().get(ns_ + "/a0"), nullptr);
  // managedFields are dropped by default (v1.20 sends them on every object).
  EXPECT_FALSE(informer_->store().get(ns_ + "/a0")->at("metadata").contains("managedFields"));

  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        client_->create(resources::configMaps(), ns_, configMap("b" + std::to_string(i), "0"))
            .isOk());
  }
  ASSERT_TRUE(client_->patch(resources::configMaps(), ns_, "a0", {{"data", {{"k", "1"}}}}).isOk());
  ASSERT_TRUE(client_->patch(resources::configMaps(), ns_, "b1", {{"data", {{"k", "1"}}}}).isOk());
  ASSERT_TRUE(client_->remove(resources::configMaps(), ns_, "a1", {}).isOk());
  ASSERT_TRUE(client_->remove(resources::configMaps(), ns_, "b2", {}).isOk());

  const auto took = waitConverged(state, 10s);
  ASSERT_GE(took.count(), 0) << "store never matched a fresh list";
  EXPECT_EQ(state.violations(), 0);
  EXPECT_EQ(state.watchedDeletes(), (std::set<std::string>{ns_ + "/a1", ns_ + "/b2"}));
  EXPECT_TRUE(state.unknownDeletes().empty());
  EXPECT_EQ(informer_->store().get(ns_ + "/a0")->at("data").at("k"), "1");
  EXPECT_GE(informer_->stats().lists, 1U);
  std::printf("[ converged ] %lld ms after the last write\n", static_cast<long long>(took.count()));
}

TEST_F(InformerIT, ConvergesThroughDroppedConnectionsThrottlingErrorsAndDelays) {
  ASSERT_NO_FATAL_FAILURE(startProxy());
  FaultProxy* proxy = proxy_.get();

  InformerOptions options;
  options.ns = ns_;
  options.pageSize = 50;
  // Short backoffs, reset after 2 s of health, so that the informer keeps reconnecting into
  // the faults instead of sleeping through them; the defaults (800 ms .. 30 s, reset after
  // 2 min) would be just as correct, only slower to converge.
  options.backoffBase = 50ms;
  options.backoffCap = 400ms;
  options.backoffReset = 2000ms;
  std::atomic<int> errors{0};
  options.onError = [&](const Status&) { ++errors; };
  HandlerState state;
  informer_ = std::make_unique<Informer>(*proxied_, *proxied_, resources::configMaps(), options);
  ASSERT_TRUE(informer_->addEventHandler(state.handler()).isOk());
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(20s));

  // The writer talks to the apiserver directly; only the informer suffers the faults.
  std::atomic<bool> writing{true};
  std::atomic<int> writes{0};
  std::atomic<int> writeFailures{0};
  std::thread writer([&] {
    std::minstd_rand random(42);  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible load
    std::vector<bool> exists(200, false);
    const auto name = [](int i) { return "cm-" + std::to_string(i); };
    for (int i = 0; i < 200; ++i) {
      std::this_thread::sleep_for(6ms);
      if (client_->create(resources::configMaps(), ns_, configMap(name(i), "0")).isOk()) {
        exists[static_cast<std::size_t>(i)] = true;
        ++writes;
      } else {
        ++writeFailures;
      }
    }
    for (int op = 0; op < 400; ++op) {
      std::this_thread::sleep_for(6ms);
      const int i = static_cast<int>(random() % 200);
      const auto slot = static_cast<std::size_t>(i);
      Status done;
      if (!exists[slot]) {
        done = client_->create(resources::configMaps(), ns_, configMap(name(i), "r")).status();
        if (done.isOk()) exists[slot] = true;
      } else if (op % 4 == 0) {
        done = client_->remove(resources::configMaps(), ns_, name(i), {});
        if (done.isOk()) exists[slot] = false;
      } else {
        done = client_
                   ->patch(resources::configMaps(), ns_, name(i),
                           {{"data", {{"k", std::to_string(op)}}}})
                   .status();
      }
      done.isOk() ? ++writes : ++writeFailures;
    }
    writing = false;
  });

  // Every ~300 ms: cut every connection, then one fault for the next 300 ms, in turn: a 429
  // (Retry-After: 1), nothing, two 500s, 150 ms delays, a 20% error rate, and a 410 on the
  // next watch (which forces a relist under churn). The writer is paced (~6 s for 600 writes)
  // so that the faults overlap the whole write load.
  int tick = 0;
  while (writing.load()) {
    std::this_thread::sleep_for(300ms);
    proxy->dropAll();
    proxy->clearFaults();
    switch (tick++ % 6) {
      case 0:
        proxy->failNext(1, 429);
        break;
      case 1:
        break;
      case 2:
        proxy->failNext(2, 500);
        break;
      case 3:
        proxy->setDelay(150ms);
        break;
      case 4:
        proxy->setFailureRate(0.2, 500);
        break;
      default:
        proxy->expireNextWatches(1);
        break;
    }
  }
  writer.join();
  // A 410 in the rotation only reaches the informer if it reconnects within that tick, which a
  // loaded machine may not do (its backoff exceeds 300 ms). So the last fault is always one:
  // cut the watch and answer the next one with 410, and wait for the relist it forces.
  proxy->clearFaults();
  const std::uint64_t relistsBefore = informer_->stats().relists;
  proxy->expireNextWatches(1);
  proxy->dropAll();
  const auto relistDeadline = std::chrono::steady_clock::now() + 20s;
  while (informer_->stats().relists == relistsBefore &&
         std::chrono::steady_clock::now() < relistDeadline) {
    std::this_thread::sleep_for(20ms);
  }
  proxy->clearFaults();
  const auto faults = proxy->stats();

  const auto took = waitConverged(state, 20s);
  const InformerStats stats = informer_->stats();
  std::printf(
      "[ faults    ] %d ticks, %d writes (%d failed), proxy: %llu connections, %llu forwarded, "
      "%llu injected, %llu sockets dropped\n"
      "[ informer  ] %llu lists (%llu after 410), %llu watches, %llu failures, %llu events, "
      "%llu ignored\n"
      "[ converged ] %lld ms after the faults stopped\n",
      tick, writes.load(), writeFailures.load(),
      static_cast<unsigned long long>(faults.connections),
      static_cast<unsigned long long>(faults.forwarded),
      static_cast<unsigned long long>(faults.injected),
      static_cast<unsigned long long>(faults.dropped), static_cast<unsigned long long>(stats.lists),
      static_cast<unsigned long long>(stats.relists),
      static_cast<unsigned long long>(stats.watches),
      static_cast<unsigned long long>(stats.failures),
      static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.ignored),
      static_cast<long long>(took.count()));
  ASSERT_GE(took.count(), 0) << "store never matched a fresh list";
  EXPECT_LE(took, 5000ms);
  EXPECT_EQ(state.violations(), 0);
  EXPECT_EQ(writeFailures.load(), 0);
  // The faults really happened and really reached the informer.
  EXPECT_GT(faults.injected, 0U);
  EXPECT_GT(faults.dropped, 0U);
  EXPECT_GT(stats.failures, 0U);
  EXPECT_GT(stats.relists, 0U);
  EXPECT_GE(stats.watches, 3U);
  EXPECT_GT(errors.load(), 0);
}

TEST_F(InformerIT, RelistAfterACutWatchReportsDeletesMissedWhileDisconnected) {
  ASSERT_NO_FATAL_FAILURE(startProxy());
  FaultProxy* proxy = proxy_.get();
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(
        client_->create(resources::configMaps(), ns_, configMap("c" + std::to_string(i), "0"))
            .isOk());
  }
  InformerOptions options;
  options.ns = ns_;
  options.backoffBase = 50ms;
  options.backoffCap = 500ms;
  HandlerState state;
  informer_ = std::make_unique<Informer>(*proxied_, *proxied_, resources::configMaps(), options);
  ASSERT_TRUE(informer_->addEventHandler(state.handler()).isOk());
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(10s));
  ASSERT_NE(informer_->store().get(ns_ + "/c0"), nullptr);

  // Cut the watch and keep the informer out while objects change.
  proxy->setFailureRate(1.0, 500);
  proxy->dropAll();
  const auto cutAt = std::chrono::steady_clock::now();
  while (informer_->stats().failures < 2 && std::chrono::steady_clock::now() - cutAt < 10s) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(informer_->stats().failures, 2U) << "the watch was not cut";
  for (const char* gone : {"c0", "c1", "c2"}) {
    ASSERT_TRUE(client_->remove(resources::configMaps(), ns_, gone, {}).isOk());
  }
  ASSERT_TRUE(client_->create(resources::configMaps(), ns_, configMap("c9", "0")).isOk());

  // Let it back in, with the resume point "compacted": the informer must relist and diff.
  proxy->expireNextWatches(1);
  proxy->setFailureRate(0, 500);
  const auto took = waitConverged(state, 10s);
  ASSERT_GE(took.count(), 0) << "store never matched a fresh list";
  EXPECT_EQ(state.unknownDeletes(), (std::set<std::string>{ns_ + "/c0", ns_ + "/c1", ns_ + "/c2"}));
  EXPECT_TRUE(state.watchedDeletes().empty());  // nothing came by the (cut) watch
  EXPECT_EQ(state.violations(), 0);
  EXPECT_GE(informer_->stats().relists, 1U);
  EXPECT_NE(informer_->store().get(ns_ + "/c9"), nullptr);
}

}  // namespace
}  // namespace kubeslurm::kube

// The informer against a scripted fake API server (client-go tools/cache: reflector.go,
// delta_fifo.go, shared_informer.go). The fake serves lists page by page and watch streams
// event by event; a script can end a stream with 410, a connection error, or leave it open
// until the informer stops it. Backoff sleeps and the clock are injected, so no test sleeps.
#include "kubeslurm/kube/informer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::kube {
namespace {

using namespace std::chrono_literals;
using RealClock = std::chrono::steady_clock;

Json object(const std::string& name, const std::string& rv, const std::string& node = "",
            const std::string& ns = "ns") {
  Json o = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name}, {"namespace", ns}, {"uid", "uid-" + name}, {"resourceVersion", rv}}},
            {"spec", Json::object()}};
  if (!node.empty()) o["spec"]["nodeName"] = node;
  return o;
}

Json withUid(Json o, const std::string& uid) {
  o["metadata"]["uid"] = uid;
  return o;
}

WatchEvent event(WatchEventType type, Json o) {
  WatchEvent e;
  e.type = type;
  e.object = std::move(o);
  return e;
}

WatchEvent bookmark(const std::string& rv) {
  return event(WatchEventType::kBookmark,
               {{"kind", "Pod"}, {"metadata", {{"resourceVersion", rv}}}});
}

// The informer's clock in these tests: it moves only when a watch script says how long the
// watch ran, or when the informer waits, which returns at once and is recorded (so no test
// sleeps through a backoff, and each one's delays can be checked).
class RecordingClock final : public kube::Clock {
 public:
  TimePoint now() const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    return now_;
  }
  std::int64_t wallMicros() const override { return 0; }
  void waitUntil(std::condition_variable& /*cv*/, std::unique_lock<std::mutex>& /*lock*/,
                 TimePoint deadline) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (deadline <= now_) return;
    waits_.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_));
    now_ = deadline;
  }
  void advance(Duration by) {
    const std::lock_guard<std::mutex> lock(mutex_);
    now_ += by;
  }
  // The waits asked for so far (the backoffs).
  std::vector<std::chrono::milliseconds> waits() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return waits_;
  }

 private:
  mutable std::mutex mutex_;
  TimePoint now_{};
  std::vector<std::chrono::milliseconds> waits_;
};

struct ListScript {
  Status error;
  std::vector<Json> items;
  std::string resourceVersion;
};

struct WatchScript {
  std::vector<WatchEvent> events;
  Status end;                   // how the stream ends after the events
  bool holdOpen = false;        // after the events, wait for WatchStop (an idle watch)
  RealClock::duration lasts{};  // advances the fake clock: how long this watch "ran"
};

// Reader + Watcher. Lists are paginated by options.limit with the offset as continue token,
// from a snapshot taken at the first page (as the apiserver serves a continued list from one
// etcd revision). With no watch script left, a watch stays open until stopped.
class FakeApi final : public Reader, public Watcher {
 public:
  explicit FakeApi(RecordingClock* clock = nullptr) : clock_(clock) {}

  void addList(ListScript script) {
    const std::lock_guard<std::mutex> lock(mutex_);
    lists_.push_back(std::move(script));
  }
  void addWatch(WatchScript script) {
    const std::lock_guard<std::mutex> lock(mutex_);
    watches_.push_back(std::move(script));
  }

  StatusOr<Json> get(const ResourceType&, std::string_view, std::string_view) override {
    return Status(StatusCode::kUnimplemented, "fake");
  }

  StatusOr<Json> list(const ResourceType&, std::string_view, const ListOptions& options) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    listCalls_.push_back(options);
    std::size_t offset = 0;
    if (options.continueToken.empty()) {
      if (lists_.empty()) return Status(StatusCode::kUnavailable, "fake: no list scripted");
      paging_ = std::move(lists_.front());
      lists_.pop_front();
      if (!paging_.error.isOk()) return paging_.error;
    } else {
      offset = std::stoul(options.continueToken);
    }
    const std::size_t limit =
        options.limit > 0 ? static_cast<std::size_t>(options.limit) : paging_.items.size();
    const std::size_t end = std::min(paging_.items.size(), offset + limit);
    Json page = {{"kind", "PodList"},
                 {"metadata", {{"resourceVersion", paging_.resourceVersion}}},
                 {"items", Json::array()}};
    for (std::size_t i = offset; i < end; ++i) page["items"].push_back(paging_.items[i]);
    if (end < paging_.items.size()) page["metadata"]["continue"] = std::to_string(end);
    return page;
  }

  WatchResult watch(const ResourceType&, std::string_view, const WatchOptions& options,
                    const WatchHandler& handler, WatchStop* stop) override {
    WatchScript script;
    bool scripted = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      watchCalls_.push_back(options);
      if (!watches_.empty()) {
        script = std::move(watches_.front());
        watches_.pop_front();
        scripted = true;
      }
    }
    watchStarted_.notify_all();
    WatchResult result;
    result.resourceVersion = options.resourceVersion;
    if (clock_ != nullptr) clock_->advance(script.lasts);
    for (const WatchEvent& e : script.events) {
      ++result.events;
      if (e.type != WatchEventType::kError) result.resourceVersion = e.resourceVersion();
      if (!handler(e)) return result;
    }
    if (scripted && !script.holdOpen) {
      result.status = script.end;
      return result;
    }
    // Open until WatchStop: what a quiet real watch does. The canceller owns its state: a
    // WatchStop may run a copy of it after this call returned.
    struct Cancel {
      std::mutex mutex;
      std::condition_variable cv;
      bool cancelled = false;
    };
    auto cancel = std::make_shared<Cancel>();
    if (stop != nullptr) {
      stop->setCanceller([cancel] {
        {
          const std::lock_guard<std::mutex> lock(cancel->mutex);
          cancel->cancelled = true;
        }
        cancel->cv.notify_all();
      });
    }
    {
      std::unique_lock<std::mutex> lock(cancel->mutex);
      cancel->cv.wait(lock, [&] { return cancel->cancelled; });
    }
    if (stop != nullptr) stop->clearCanceller();
    result.status = Status(StatusCode::kCancelled, "fake: stopped");
    return result;
  }

  std::vector<ListOptions> listCalls() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return listCalls_;
  }
  std::vector<WatchOptions> watchCalls() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return watchCalls_;
  }
  // Waits until `count` watches have started (the informer has consumed the scripts before).
  bool waitForWatches(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return watchStarted_.wait_for(lock, 2s, [&] { return watchCalls_.size() >= count; });
  }

 private:
  RecordingClock* clock_;
  mutable std::mutex mutex_;
  std::condition_variable watchStarted_;
  std::deque<ListScript> lists_;
  std::deque<WatchScript> watches_;
  ListScript paging_;
  std::vector<ListOptions> listCalls_;
  std::vector<WatchOptions> watchCalls_;
};

// What the handlers saw, as lines: "add ns/a@1", "update ns/a@1->2", "delete ns/b@3 unknown".
class Recorder {
 public:
  EventHandler handler() {
    EventHandler h;
    h.onAdd = [this](const ObjectPtr& o) { record("add " + describe(o)); };
    h.onUpdate = [this](const ObjectPtr& a, const ObjectPtr& b) {
      if (a == b) {
        const std::lock_guard<std::mutex> lock(mutex_);
        ++resyncs_[objectKey(*a)];
        cv_.notify_all();
        return;
      }
      record("update " + describe(a) + "->" + objectResourceVersion(*b));
    };
    h.onDelete = [this](const ObjectPtr& o, bool unknown) {
      record("delete " + describe(o) + (unknown ? " unknown" : ""));
    };
    return h;
  }

  std::vector<std::string> lines() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  bool waitForLines(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, 2s, [&] { return lines_.size() >= count; });
  }
  bool waitForResyncs(int rounds, std::size_t keys) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, 2s, [&] {
      if (resyncs_.size() < keys) return false;
      return std::all_of(resyncs_.begin(), resyncs_.end(),
                         [&](const auto& entry) { return entry.second >= rounds; });
    });
  }

 private:
  static std::string describe(const ObjectPtr& o) {
    return objectKey(*o) + "@" + objectResourceVersion(*o);
  }
  void record(std::string line) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(std::move(line));
    }
    cv_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
  std::map<std::string, int> resyncs_;
};

InformerOptions quietOptions(RecordingClock& clock) {
  InformerOptions options;
  options.ns = "ns";
  options.clock = &clock;
  options.jitter = [] { return 0.0; };  // backoff = base * 2^n / 2 exactly
  return options;
}

class InformerTest : public testing::Test {
 protected:
  void start(InformerOptions options) {
    informer_ = std::make_unique<Informer>(api_, api_, resources::pods(), std::move(options));
    ASSERT_TRUE(informer_->addEventHandler(recorder_.handler()).isOk());
    informer_->start();
  }
  void TearDown() override {
    if (informer_) informer_->stop();
  }

  RecordingClock clock_;
  FakeApi api_{&clock_};
  Recorder recorder_;
  std::unique_ptr<Informer> informer_;
};

TEST_F(InformerTest, InitialListFillsStoreThenSyncsThenWatchesFromListVersion) {
  // reflector.go ListAndWatch: list, store.Replace, then watch from the list's
  // resourceVersion with AllowWatchBookmarks.
  api_.addList({{}, {object("a", "5"), object("b", "6"), object("c", "7")}, "10"});
  InformerOptions options = quietOptions(clock_);
  std::vector<bool> syncedDuringAdds;
  informer_ = std::make_unique<Informer>(api_, api_, resources::pods(), options);
  EventHandler probe;
  probe.onAdd = [&](const ObjectPtr&) { syncedDuringAdds.push_back(informer_->hasSynced()); };
  ASSERT_TRUE(informer_->addEventHandler(probe).isOk());
  ASSERT_TRUE(informer_->addEventHandler(recorder_.handler()).isOk());
  EXPECT_FALSE(informer_->hasSynced());
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(2s));
  EXPECT_EQ(recorder_.lines(),
            (std::vector<std::string>{"add ns/a@5", "add ns/b@6", "add ns/c@7"}));
  // Synced only once the whole list is in the store.
  EXPECT_EQ(syncedDuringAdds, (std::vector<bool>{false, false, false}));
  EXPECT_EQ(informer_->store().size(), 3U);
  ASSERT_TRUE(api_.waitForWatches(1));
  const WatchOptions first = api_.watchCalls().front();
  EXPECT_EQ(first.resourceVersion, "10");
  EXPECT_TRUE(first.allowWatchBookmarks);
  // timeoutSeconds drawn from [t, 2t): jitter 0 gives t.
  EXPECT_EQ(first.timeoutSeconds, 300);
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "10");
  EXPECT_EQ(api_.listCalls().front().resourceVersion, "");  // a consistent read, see informer.cc
}

TEST_F(InformerTest, ListIsPaginatedWithLimit) {
  std::vector<Json> items;
  items.reserve(7);
  for (int i = 0; i < 7; ++i) items.push_back(object("p" + std::to_string(i), "1"));
  api_.addList({{}, items, "20"});
  InformerOptions options = quietOptions(clock_);
  options.pageSize = 3;
  start(options);
  ASSERT_TRUE(informer_->waitForSync(2s));
  EXPECT_EQ(informer_->store().size(), 7U);
  const auto calls = api_.listCalls();
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[0].limit, 3);
  EXPECT_EQ(calls[0].continueToken, "");
  EXPECT_EQ(calls[1].continueToken, "3");
  EXPECT_EQ(calls[2].continueToken, "6");
}

TEST_F(InformerTest, WatchEventsFireAddUpdateDeleteInStreamOrder) {
  api_.addList({{}, {object("a", "5")}, "10"});
  api_.addWatch({{event(WatchEventType::kModified, object("a", "11")),
                  event(WatchEventType::kAdded, object("b", "12")),
                  event(WatchEventType::kDeleted, object("a", "13")),
                  event(WatchEventType::kModified, object("b", "14"))},
                 {},
                 /*holdOpen=*/true});
  start(quietOptions(clock_));
  ASSERT_TRUE(recorder_.waitForLines(5));
  EXPECT_EQ(recorder_.lines(),
            (std::vector<std::string>{"add ns/a@5", "update ns/a@5->11", "add ns/b@12",
                                      "delete ns/a@13", "update ns/b@12->14"}));
  EXPECT_EQ(informer_->store().get("ns/a"), nullptr);
  EXPECT_EQ(objectResourceVersion(*informer_->store().get("ns/b")), "14");
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "14");
}

TEST_F(InformerTest, ReplayedAndStaleEventsDoNotFireHandlers) {
  // Level-triggered idempotence (DESIGN.md invariant 3): the same resourceVersion again is a
  // replay; a lower one for the same uid is stale (see olderThan() in informer.cc).
  api_.addList({{}, {object("a", "5"), object("b", "8")}, "10"});
  api_.addWatch({{event(WatchEventType::kModified, object("a", "5")),    // replay
                  event(WatchEventType::kModified, object("b", "7")),    // stale
                  event(WatchEventType::kDeleted, object("b", "6")),     // stale delete
                  event(WatchEventType::kDeleted, object("zz", "9")),    // unknown
                  event(WatchEventType::kModified, object("a", "11"))},  // real
                 {},
                 true});
  start(quietOptions(clock_));
  ASSERT_TRUE(recorder_.waitForLines(3));
  ASSERT_TRUE(api_.waitForWatches(1));
  EXPECT_EQ(recorder_.lines(),
            (std::vector<std::string>{"add ns/a@5", "add ns/b@8", "update ns/a@5->11"}));
  EXPECT_EQ(objectResourceVersion(*informer_->store().get("ns/b")), "8");
  EXPECT_EQ(informer_->stats().ignored, 4U);
}

TEST_F(InformerTest, RelistAfter410DiffsTheStore) {
  // DeltaFIFO.Replace: keys missing from the new list are deleted with
  // DeletedFinalStateUnknown; here onDelete(last, finalStateUnknown=true). Unchanged objects
  // fire nothing; an object recreated under the same name is a delete then an add.
  api_.addList(
      {{}, {object("a", "5"), object("b", "6"), object("c", "7"), object("d", "8")}, "10"});
  api_.addWatch({{}, outOfRange("too old resource version")});
  api_.addList({{},
                {object("a", "5"), object("c", "12"), withUid(object("d", "13"), "uid-d2"),
                 object("e", "14")},
                "15"});
  start(quietOptions(clock_));
  ASSERT_TRUE(recorder_.waitForLines(9));
  ASSERT_TRUE(api_.waitForWatches(2));
  EXPECT_EQ(recorder_.lines(),
            (std::vector<std::string>{"add ns/a@5", "add ns/b@6", "add ns/c@7", "add ns/d@8",
                                      "delete ns/b@6 unknown", "update ns/c@7->12",
                                      "delete ns/d@8 unknown", "add ns/d@13", "add ns/e@14"}));
  EXPECT_EQ(api_.watchCalls()[1].resourceVersion, "15");
  EXPECT_EQ(api_.listCalls().size(), 2U);
  // A single 410 is answered by relisting at once, without a backoff.
  EXPECT_TRUE(clock_.waits().empty());
  EXPECT_EQ(informer_->stats().relists, 1U);
  EXPECT_EQ(objectUid(*informer_->store().get("ns/d")), "uid-d2");
}

TEST_F(InformerTest, Repeated410WithoutEventsBacksOff) {
  api_.addList({{}, {}, "10"});
  api_.addWatch({{}, outOfRange("gone")});
  api_.addList({{}, {}, "11"});
  api_.addWatch({{}, outOfRange("gone again")});
  api_.addList({{}, {}, "12"});
  start(quietOptions(clock_));
  ASSERT_TRUE(api_.waitForWatches(3));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{400ms}));
}

TEST_F(InformerTest, WatchErrorsBackOffExponentiallyAndResumeFromLastVersion) {
  // reflector.go: a broken watch is re-established from the last resourceVersion seen; the
  // backoff manager doubles the wait (800 ms base, equal jitter here fixed at 0 -> halves).
  api_.addList({{}, {object("a", "5")}, "10"});
  api_.addWatch({{event(WatchEventType::kAdded, object("b", "11"))},
                 Status(StatusCode::kUnavailable, "connection reset")});
  api_.addWatch({{}, Status(StatusCode::kUnavailable, "connection refused")});
  api_.addWatch({{}, Status(StatusCode::kResourceExhausted, "429")});
  start(quietOptions(clock_));
  ASSERT_TRUE(api_.waitForWatches(4));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{400ms, 800ms, 1600ms}));
  const auto calls = api_.watchCalls();
  EXPECT_EQ(calls[1].resourceVersion, "11");
  EXPECT_EQ(calls[2].resourceVersion, "11");
  EXPECT_EQ(calls[3].resourceVersion, "11");
  EXPECT_EQ(api_.listCalls().size(), 1U);  // no relist for a connection error
  EXPECT_EQ(informer_->stats().failures, 3U);
}

TEST_F(InformerTest, BackoffResetsAfterAHealthyPeriod) {
  // client-go's exponentialBackoffManager resets after backoffResetDuration (2 min) without a
  // backoff: a watch that ran for 3 minutes before breaking starts again from the base.
  api_.addList({{}, {}, "10"});
  api_.addWatch({{}, Status(StatusCode::kUnavailable, "cut")});
  api_.addWatch({{}, Status(StatusCode::kUnavailable, "cut")});
  api_.addWatch({{bookmark("20")}, Status(StatusCode::kUnavailable, "cut"), false, 3min});
  api_.addWatch({{}, Status(StatusCode::kUnavailable, "cut")});
  start(quietOptions(clock_));
  ASSERT_TRUE(api_.waitForWatches(5));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{400ms, 800ms, 400ms, 800ms}));
}

TEST_F(InformerTest, BackoffIsCapped) {
  api_.addList({{}, {}, "10"});
  for (int i = 0; i < 8; ++i) api_.addWatch({{}, Status(StatusCode::kUnavailable, "cut")});
  InformerOptions options = quietOptions(clock_);
  options.jitter = [] { return 1.0; };
  options.backoffCap = 5000ms;
  start(options);
  ASSERT_TRUE(api_.waitForWatches(9));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{
                                800ms, 1600ms, 3200ms, 5000ms, 5000ms, 5000ms, 5000ms, 5000ms}));
}

TEST_F(InformerTest, ListErrorsBackOffAndRetry) {
  api_.addList({Status(StatusCode::kUnavailable, "apiserver down"), {}, ""});
  api_.addList({Status(StatusCode::kResourceExhausted, "429"), {}, ""});
  api_.addList({{}, {object("a", "5")}, "10"});
  std::vector<std::string> errors;
  InformerOptions options = quietOptions(clock_);
  options.onError = [&](const Status& s) { errors.push_back(s.message()); };
  start(options);
  ASSERT_TRUE(informer_->waitForSync(2s));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{400ms, 800ms}));
  EXPECT_EQ(errors, (std::vector<std::string>{"apiserver down", "429"}));
  EXPECT_EQ(recorder_.lines(), (std::vector<std::string>{"add ns/a@5"}));
}

TEST_F(InformerTest, BookmarkMovesResumeVersionWithoutHandlerCalls) {
  // reflector.go watchHandler: a BOOKMARK only sets the last-sync resourceVersion.
  api_.addList({{}, {object("a", "5")}, "10"});
  api_.addWatch({{bookmark("50")}, {}});  // then the server's timeout ends the watch
  start(quietOptions(clock_));
  ASSERT_TRUE(informer_->waitForSync(2s));
  ASSERT_TRUE(api_.waitForWatches(2));
  EXPECT_EQ(api_.watchCalls()[1].resourceVersion, "50");
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "50");
  EXPECT_EQ(recorder_.lines(), (std::vector<std::string>{"add ns/a@5"}));
  EXPECT_EQ(informer_->store().size(), 1U);
  EXPECT_EQ(informer_->stats().bookmarks, 1U);
  EXPECT_TRUE(clock_.waits().empty());  // a normal end is not a failure
}

TEST_F(InformerTest, WatchEndingAtOnceWithNothingBacksOff) {
  // client-go's "very short watch": a stream the server closes at once, event-less, would
  // otherwise be re-opened in a tight loop.
  api_.addList({{}, {}, "10"});
  api_.addWatch({{}, {}});
  start(quietOptions(clock_));
  ASSERT_TRUE(api_.waitForWatches(2));
  EXPECT_EQ(clock_.waits(), (std::vector<std::chrono::milliseconds>{400ms}));
}

TEST_F(InformerTest, ResyncRedeliversEveryObjectAsUpdateOfItself) {
  // shared_informer.go resync: OnUpdate(obj, obj) for every object, every resync period.
  api_.addList({{}, {object("a", "5"), object("b", "6")}, "10"});
  InformerOptions options = quietOptions(clock_);
  options.resyncPeriod = 2ms;
  options.clock = nullptr;  // real time: a clock that jumps to each deadline would spin resyncs
  start(options);
  ASSERT_TRUE(recorder_.waitForResyncs(2, 2));
  EXPECT_GE(informer_->stats().resyncs, 2U);
  // Resync is not a change: no update line (those are only for old != new).
  EXPECT_EQ(recorder_.lines(), (std::vector<std::string>{"add ns/a@5", "add ns/b@6"}));
}

TEST_F(InformerTest, NoResyncWithoutAPeriod) {
  api_.addList({{}, {object("a", "5")}, "10"});
  start(quietOptions(clock_));
  ASSERT_TRUE(informer_->waitForSync(2s));
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(informer_->stats().resyncs, 0U);
}

TEST_F(InformerTest, IndexesFollowUpdatesThatMoveObjects) {
  api_.addList({{}, {object("p", "5", "n1"), object("q", "6", "n1", "other")}, "10"});
  api_.addWatch({{event(WatchEventType::kModified, object("p", "11", "n2")),
                  event(WatchEventType::kDeleted, object("q", "12", "n1", "other"))},
                 {},
                 true});
  informer_ = std::make_unique<Informer>(api_, api_, resources::pods(), quietOptions(clock_));
  ASSERT_TRUE(informer_->addIndexer(std::string(kNodeIndex), indexByNode).isOk());
  ASSERT_TRUE(informer_->addIndexer(std::string(kNamespaceIndex), indexByNamespace).isOk());
  // Checked inside the handler: the store and its indexes already reflect the event, and
  // reading them does not deadlock (no store lock is held while a handler runs).
  std::vector<std::string> seen;
  EventHandler h;
  h.onUpdate = [&](const ObjectPtr&, const ObjectPtr& now) {
    EXPECT_EQ(informer_->store().get("ns/p"), now);
    seen.push_back("n1:" + std::to_string(informer_->store().byIndex(kNodeIndex, "n1")->size()) +
                   " n2:" + std::to_string(informer_->store().byIndex(kNodeIndex, "n2")->size()));
  };
  ASSERT_TRUE(informer_->addEventHandler(h).isOk());
  ASSERT_TRUE(informer_->addEventHandler(recorder_.handler()).isOk());
  informer_->start();
  ASSERT_TRUE(recorder_.waitForLines(4));
  EXPECT_EQ(seen, (std::vector<std::string>{"n1:1 n2:1"}));  // p moved, q still on n1
  EXPECT_TRUE(informer_->store().byIndex(kNodeIndex, "n1")->empty());
  EXPECT_EQ(informer_->store().byIndex(kNodeIndex, "n2")->size(), 1U);
  EXPECT_TRUE(informer_->store().byIndex(kNamespaceIndex, "other")->empty());
  EXPECT_EQ(informer_->store().byIndex(kNamespaceIndex, "ns")->size(), 1U);
}

TEST_F(InformerTest, ManagedFieldsDroppedByDefault) {
  Json a = object("a", "5");
  a["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  Json b = object("b", "11");
  b["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  api_.addList({{}, {a}, "10"});
  api_.addWatch({{event(WatchEventType::kAdded, b)}, {}, true});
  start(quietOptions(clock_));
  ASSERT_TRUE(recorder_.waitForLines(2));
  EXPECT_FALSE(informer_->store().get("ns/a")->at("metadata").contains("managedFields"));
  EXPECT_FALSE(informer_->store().get("ns/b")->at("metadata").contains("managedFields"));
  EXPECT_EQ(informer_->store().get("ns/a")->at("metadata").at("uid"), "uid-a");
}

TEST_F(InformerTest, CustomTransformAndNoTransform) {
  Json a = object("a", "5");
  a["metadata"]["managedFields"] = Json::array();
  a["status"] = {{"big", "x"}};
  {
    FakeApi api;
    api.addList({{}, {a}, "10"});
    InformerOptions options = quietOptions(clock_);
    options.transform = [](Json& o) { o.erase("status"); };
    Informer informer(api, api, resources::pods(), options);
    informer.start();
    ASSERT_TRUE(informer.waitForSync(2s));
    EXPECT_FALSE(informer.store().get("ns/a")->contains("status"));
    EXPECT_TRUE(informer.store().get("ns/a")->at("metadata").contains("managedFields"));
  }
  {
    FakeApi api;
    api.addList({{}, {a}, "10"});
    InformerOptions options = quietOptions(clock_);
    options.transform = nullptr;
    Informer informer(api, api, resources::pods(), options);
    informer.start();
    ASSERT_TRUE(informer.waitForSync(2s));
    EXPECT_EQ(*informer.store().get("ns/a"), a);
  }
}

// A holder makes the stored pointer, after the transform: it may carry a form of its own in the
// pointer's deleter, which handlers and readers of the store get with the pointer.
TEST_F(InformerTest, AHolderMakesTheStoredPointerAfterTheTransform) {
  struct Carried {
    std::shared_ptr<const Json> json;
    std::string seen;
    void operator()(const Json* /*json*/) const noexcept {}
  };
  Json a = object("a", "5");
  a["status"] = {{"big", "x"}};
  Json b = object("a", "6");
  b["status"] = {{"big", "y"}};
  FakeApi api;
  api.addList({{}, {a}, "10"});
  api.addWatch({{event(WatchEventType::kModified, b)}, {}, true});
  InformerOptions options = quietOptions(clock_);
  options.transform = [](Json& o) { o.erase("status"); };
  options.holder = [](Json&& o) -> ObjectPtr {
    auto json = std::make_shared<const Json>(Json{{"metadata", o["metadata"]}});
    const Json* at = json.get();
    return {at, Carried{json, o.contains("status") ? "status" : "no status"}};
  };
  std::vector<std::string> updated;
  std::mutex mutex;
  EventHandler handler;
  handler.onUpdate = [&](const ObjectPtr&, const ObjectPtr& now) {
    const std::lock_guard<std::mutex> lock(mutex);
    updated.push_back(objectResourceVersion(*now));
  };
  Informer informer(api, api, resources::pods(), options);
  (void)informer.addEventHandler(handler);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(2s));
  for (int i = 0; i < 200 && objectResourceVersion(*informer.store().get("ns/a")) != "6"; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  const ObjectPtr stored = informer.store().get("ns/a");
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(*stored, Json({{"metadata", b["metadata"]}}));
  const auto* carried = std::get_deleter<Carried>(stored);
  ASSERT_NE(carried, nullptr);
  EXPECT_EQ(carried->seen, "no status");  // the transform ran first
  const std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(updated, std::vector<std::string>{"6"});
}

TEST_F(InformerTest, StopEndsAnOpenWatchPromptly) {
  api_.addList({{}, {object("a", "5")}, "10"});
  start(quietOptions(clock_));
  ASSERT_TRUE(informer_->waitForSync(2s));
  ASSERT_TRUE(api_.waitForWatches(1));
  const auto before = RealClock::now();
  informer_->stop();  // joins the informer's thread
  EXPECT_LT(RealClock::now() - before, 200ms);
  EXPECT_EQ(api_.watchCalls().size(), 1U);  // a cancelled watch is not re-opened
}

TEST_F(InformerTest, StopInterruptsABackoffSleep) {
  api_.addList({Status(StatusCode::kUnavailable, "down"), {}, ""});
  InformerOptions options;
  options.backoffBase = 60s;  // the default clock: a real wait that stop() must wake
  options.backoffCap = 60s;
  start(options);
  std::this_thread::sleep_for(5ms);
  const auto before = RealClock::now();
  informer_->stop();
  EXPECT_LT(RealClock::now() - before, 200ms);
  EXPECT_FALSE(informer_->hasSynced());
  EXPECT_FALSE(informer_->waitForSync(1ms));
}

TEST_F(InformerTest, StopFromAHandlerAndRunOnTheCallersThread) {
  api_.addList({{}, {object("a", "5"), object("b", "6")}, "10"});
  Informer informer(api_, api_, resources::pods(), quietOptions(clock_));
  int adds = 0;
  EventHandler h;
  h.onAdd = [&](const ObjectPtr&) {
    if (++adds == 1) informer.stop();
  };
  ASSERT_TRUE(informer.addEventHandler(h).isOk());
  const auto before = RealClock::now();
  informer.run();  // returns once stopped
  EXPECT_LT(RealClock::now() - before, 500ms);
  EXPECT_GE(adds, 1);
  EXPECT_EQ(informer.addEventHandler(h).code(), StatusCode::kFailedPrecondition);
}

TEST_F(InformerTest, ObjectsWithoutANameAreSkipped) {
  Json nameless = object("x", "5");
  nameless["metadata"].erase("name");
  api_.addList({{}, {nameless, object("a", "6")}, "10"});
  start(quietOptions(clock_));
  ASSERT_TRUE(informer_->waitForSync(2s));
  EXPECT_EQ(informer_->store().listKeys(), (std::vector<std::string>{"ns/a"}));
}

}  // namespace
}  // namespace kubeslurm::kube

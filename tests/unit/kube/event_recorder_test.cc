// The event recorder against a fake Writer and a manual clock. Behaviours pinned are client-go's
// tools/record: events_cache.go (eventLogger: identical events -> count + PATCH;
// EventSourceObjectSpamFilter: 25 burst, 1 per 5 minutes, per object) and event.go
// (recordToSink: retry transport errors only; re-create when the patched Event is gone;
// makeEvent: cluster-scoped objects' events go to "default").
#include "kubeslurm/kube/event_recorder.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
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

struct Call {
  std::string verb;  // create, patch
  std::string ns;
  std::string name;
  Json body;
};

// Stores Events; patch merges top-level fields. `failNext` answers the next calls with errors.
class FakeEventWriter final : public Writer {
 public:
  StatusOr<Json> create(const ResourceType& type, std::string_view ns,
                        const Json& object) override {
    EXPECT_EQ(type.plural, "events");
    return answer({"create", std::string(ns), object["metadata"]["name"], object});
  }
  StatusOr<Json> update(const ResourceType&, std::string_view, const Json&) override {
    return Status(StatusCode::kUnimplemented, "update");
  }
  StatusOr<Json> patch(const ResourceType& type, std::string_view ns, std::string_view name,
                       const Json& mergePatch) override {
    EXPECT_EQ(type.plural, "events");
    return answer({"patch", std::string(ns), std::string(name), mergePatch});
  }
  Status remove(const ResourceType&, std::string_view, std::string_view,
                const DeleteOptions&) override {
    return {StatusCode::kUnimplemented, "remove"};
  }

  std::vector<Call> calls() {
    const std::lock_guard lock(mutex_);
    return calls_;
  }
  void failNext(std::vector<StatusCode> codes) {
    const std::lock_guard lock(mutex_);
    failures_ = std::move(codes);
  }
  void forgetStored() {
    const std::lock_guard lock(mutex_);
    stored_.clear();
  }
  // Blocks every call until open() (for the never-blocks test).
  void close() { closed_ = true; }
  void open() {
    {
      const std::lock_guard lock(gate_);
      closed_ = false;
    }
    gateCv_.notify_all();
  }
  std::atomic<int> inFlight{0};

 private:
  StatusOr<Json> answer(const Call& call) {
    ++inFlight;
    {
      std::unique_lock lock(gate_);
      gateCv_.wait(lock, [this] { return !closed_.load(); });
    }
    --inFlight;
    const std::lock_guard lock(mutex_);
    calls_.push_back(call);
    if (!failures_.empty()) {
      const StatusCode code = failures_.front();
      failures_.erase(failures_.begin());
      return Status(code, "injected");
    }
    const std::string key = call.ns + "/" + call.name;
    if (call.verb == "create") {
      if (stored_.contains(key)) return Status(StatusCode::kAlreadyExists, "exists");
      stored_[key] = call.body;
      return call.body;
    }
    const auto it = stored_.find(key);
    if (it == stored_.end()) return Status(StatusCode::kNotFound, "events not found");
    it->second.merge_patch(call.body);
    return it->second;
  }

  std::mutex mutex_;
  std::vector<Call> calls_;
  std::vector<StatusCode> failures_;
  std::map<std::string, Json> stored_;
  std::mutex gate_;
  std::condition_variable gateCv_;
  std::atomic<bool> closed_{false};
};

Json configMap(const std::string& name) {
  return {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       {{"name", name}, {"namespace", "team"}, {"uid", "u-" + name}, {"resourceVersion", "7"}}}};
}

EventRecorderOptions options() {
  EventRecorderOptions options;
  options.component = "kubeslurm-operator";
  options.host = "node-1";
  options.reportingController = "kubeslurm.io/operator";
  options.reportingInstance = "operator-0";
  return options;
}

TEST(EventRecorderTest, FirstEventIsCreatedAboutTheObjectWithCountOne) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  recorder.record(configMap("cm"), kEventTypeNormal, "Scheduled", "placed on n1");
  recorder.flush();
  const auto calls = writer.calls();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].verb, "create");
  EXPECT_EQ(calls[0].ns, "team");
  auto event = api::decodeEvent(calls[0].body);
  ASSERT_TRUE(event.isOk()) << event.status().toString();
  EXPECT_EQ(event->involvedObject.kind, "ConfigMap");
  EXPECT_EQ(event->involvedObject.apiVersion, "v1");
  EXPECT_EQ(event->involvedObject.name, "cm");
  EXPECT_EQ(event->involvedObject.namespaceName, "team");
  EXPECT_EQ(event->involvedObject.uid, "u-cm");
  EXPECT_EQ(event->involvedObject.resourceVersion, "7");
  EXPECT_EQ(event->type, "Normal");
  EXPECT_EQ(event->reason, "Scheduled");
  EXPECT_EQ(event->message, "placed on n1");
  EXPECT_EQ(event->sourceComponent, "kubeslurm-operator");
  EXPECT_EQ(event->sourceHost, "node-1");
  EXPECT_EQ(event->reportingController, "kubeslurm.io/operator");
  EXPECT_EQ(event->reportingInstance, "operator-0");
  EXPECT_EQ(event->count, 1);
  EXPECT_EQ(event->firstTimestamp, clock.wallMicros() / 1'000'000);
  EXPECT_EQ(event->lastTimestamp, event->firstTimestamp);
  EXPECT_EQ(event->metadata.name.rfind("cm.", 0), 0U);
  EXPECT_EQ(recorder.stats().created, 1U);
}

TEST(EventRecorderTest, IdenticalEventsBecomeOneEventWithACountPatched) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  const auto start = clock.wallMicros() / 1'000'000;
  for (int i = 0; i < 3; ++i) {
    recorder.record(configMap("cm"), kEventTypeWarning, "BindFailed", "node n1 is full");
    recorder.flush();
    clock.advance(10s);
  }
  const auto calls = writer.calls();
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[0].verb, "create");
  const std::string name = calls[0].body["metadata"]["name"];
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(calls[static_cast<std::size_t>(i)].verb, "patch");
    EXPECT_EQ(calls[static_cast<std::size_t>(i)].name, name);
    EXPECT_EQ(calls[static_cast<std::size_t>(i)].body["count"], i + 1);
    EXPECT_EQ(calls[static_cast<std::size_t>(i)].body["lastTimestamp"],
              api::formatTimestamp(start + 10LL * i));
    EXPECT_FALSE(calls[static_cast<std::size_t>(i)].body.contains("firstTimestamp"));
  }
  EXPECT_EQ(recorder.stats().created, 1U);
  EXPECT_EQ(recorder.stats().patched, 2U);
}

TEST(EventRecorderTest, ADifferentMessageReasonOrObjectIsAnotherEvent) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  recorder.record(configMap("cm"), kEventTypeNormal, "Started", "rank 0");
  recorder.record(configMap("cm"), kEventTypeNormal, "Started", "rank 1");
  recorder.record(configMap("cm"), kEventTypeNormal, "Restarted", "rank 1");
  recorder.record(configMap("cm"), kEventTypeWarning, "Restarted", "rank 1");
  recorder.record(configMap("other"), kEventTypeWarning, "Restarted", "rank 1");
  recorder.flush();
  const auto calls = writer.calls();
  ASSERT_EQ(calls.size(), 5U);
  for (const Call& call : calls) EXPECT_EQ(call.verb, "create");
}

TEST(EventRecorderTest, PatchOfAVanishedEventCreatesItAgainKeepingTheCount) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  recorder.record(configMap("cm"), kEventTypeNormal, "Ping", "same");
  recorder.flush();
  writer.forgetStored();  // the API server's event TTL removed it
  recorder.record(configMap("cm"), kEventTypeNormal, "Ping", "same");
  recorder.flush();
  const auto calls = writer.calls();
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[2].verb, "create");
  EXPECT_EQ(calls[2].body["count"], 2);
  EXPECT_EQ(calls[2].name, calls[0].name);
  EXPECT_EQ(recorder.stats().created, 2U);
  EXPECT_EQ(recorder.stats().failed, 0U);
}

TEST(EventRecorderTest, SpamFilterAllowsABurstOf25ThenOnePerFiveMinutesPerObject) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  for (int i = 0; i < 30; ++i) {
    recorder.record(configMap("noisy"), kEventTypeNormal, "Tick", "t" + std::to_string(i));
  }
  recorder.record(configMap("quiet"), kEventTypeNormal, "Tick", "t");  // its own bucket
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 26U);
  EXPECT_EQ(recorder.stats().droppedSpam, 5U);
  clock.advance(299s);
  recorder.record(configMap("noisy"), kEventTypeNormal, "Tick", "late");
  EXPECT_EQ(recorder.stats().droppedSpam, 6U);
  clock.advance(1s);  // five minutes: one token back
  recorder.record(configMap("noisy"), kEventTypeNormal, "Tick", "later");
  recorder.record(configMap("noisy"), kEventTypeNormal, "Tick", "too soon");
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 27U);
  EXPECT_EQ(recorder.stats().droppedSpam, 7U);
}

TEST(EventRecorderTest, RecordNeverWaitsForTheServerAndAFullQueueDrops) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorderOptions small = options();
  small.queueCapacity = 3;
  EventRecorder recorder(writer, small, clock);
  writer.close();  // the API server hangs
  recorder.record(configMap("cm"), kEventTypeNormal, "R", "0");
  ASSERT_TRUE([&] {
    for (int i = 0; i < 2000 && writer.inFlight.load() == 0; ++i) std::this_thread::sleep_for(1ms);
    return writer.inFlight.load() == 1;
  }());
  const auto before = std::chrono::steady_clock::now();
  for (int i = 1; i < 10; ++i) {
    recorder.record(configMap("cm"), kEventTypeNormal, "R", std::to_string(i));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - before, 1s);  // did not wait on the writer
  EXPECT_EQ(recorder.stats().droppedQueueFull, 6U);          // 1 in flight + 3 queued kept
  writer.open();
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 4U);
}

TEST(EventRecorderTest, TransportFailuresAreRetriedServerAnswersAreNot) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  writer.failNext({StatusCode::kUnavailable, StatusCode::kUnavailable});
  recorder.record(configMap("cm"), kEventTypeNormal, "Retried", "x");
  // The worker waits retryDelay (1 s) on the manual clock between attempts.
  for (int spin = 0; spin < 5000 && writer.calls().size() < 3; ++spin) {
    if (clock.waiters() > 0) clock.advance(1s);
    std::this_thread::sleep_for(1ms);
  }
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 3U);
  EXPECT_EQ(recorder.stats().created, 1U);

  writer.failNext({StatusCode::kInvalidArgument});
  recorder.record(configMap("cm"), kEventTypeNormal, "Refused", "x");
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 4U);
  EXPECT_EQ(recorder.stats().failed, 1U);
}

TEST(EventRecorderTest, EventsAboutClusterScopedObjectsGoToDefault) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  const Json node = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-1"}, {"uid", "n1"}}}};
  recorder.record(node, kEventTypeWarning, "NodeNotReady", "kubelet stopped posting");
  recorder.flush();
  const auto calls = writer.calls();
  ASSERT_EQ(calls.size(), 1U);
  EXPECT_EQ(calls[0].ns, "default");
  EXPECT_EQ(calls[0].body["involvedObject"].value("namespace", ""), "");
}

TEST(EventRecorderTest, ShutDownWritesWhatWasRecordedThenDropsLaterRecords) {
  ManualClock clock;
  FakeEventWriter writer;
  EventRecorder recorder(writer, options(), clock);
  for (int i = 0; i < 5; ++i) {
    recorder.record(configMap("cm" + std::to_string(i)), kEventTypeNormal, "R", "m");
  }
  recorder.shutDown();
  EXPECT_EQ(writer.calls().size(), 5U);
  recorder.record(configMap("late"), kEventTypeNormal, "R", "m");
  recorder.flush();
  EXPECT_EQ(writer.calls().size(), 5U);
}

}  // namespace
}  // namespace kubeslurm::kube

// core/v1 Events about objects, as client-go's tools/record (recorder in event.go, correlation
// in events_cache.go), so that `kubectl describe` shows what the operator did and why:
//
//   * the same (object, type, reason, message) again is one Event whose count goes up and whose
//     lastTimestamp moves (a merge PATCH of count, lastTimestamp and message), not a new object
//     (eventLogger.eventObserve); a patch that finds the Event gone re-creates it;
//   * a per-object token bucket (burst 25, one token per 5 minutes) drops a storm of events
//     about one object (EventSourceObjectSpamFilter);
//   * record() never blocks: it puts the event on a bounded queue (1000, client-go's
//     maxQueuedEvents) and a worker thread writes it; a full queue drops and counts
//     (watch.DropIfChannelFull);
//   * transport failures (kUnavailable) are retried a few times; an answer from the server
//     (4xx, 5xx with a Status) is final, as recordToSink decides.
//
// Not done: client-go's EventAggregator, which folds 10+ similar events (same reason,
// different messages) within 10 minutes into one "(combined from similar events)" event.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/clock.h"

namespace kubeslurm::kube {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

struct EventRecorderOptions {
  std::string component;            // source.component: `kubectl describe`'s "From" column
  std::string host;                 // source.host
  std::string reportingController;  // e.g. "kubeslurm.io/operator"
  std::string reportingInstance;    // e.g. the pod name
  std::size_t queueCapacity = 1000;
  // EventSourceObjectSpamFilter's defaults: 25 events, then one per 5 minutes, per object.
  int spamBurst = 25;
  double spamQps = 1.0 / 300.0;
  std::size_t cacheEntries = 4096;  // LRU size of both caches (maxLruCacheEntries)
  int maxAttempts = 3;
  Clock::Duration retryDelay = std::chrono::seconds(1);
};

struct EventRecorderStats {
  std::uint64_t created = 0;
  std::uint64_t patched = 0;
  std::uint64_t droppedQueueFull = 0;
  std::uint64_t droppedSpam = 0;
  std::uint64_t failed = 0;  // given up after the server refused or retries ran out
};

// The involvedObject of an event about `object` (apiVersion, kind, metadata.*).
api::ObjectReference referenceTo(const Json& object);

class EventRecorder {
 public:
  explicit EventRecorder(Writer& writer, EventRecorderOptions options,
                         Clock& clock = steadyClock());
  // shutDown().
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Never blocks on the API server. `type` is Normal or Warning.
  void record(const api::ObjectReference& object, std::string_view type, std::string_view reason,
              std::string_view message);
  void record(const Json& object, std::string_view type, std::string_view reason,
              std::string_view message) {
    record(referenceTo(object), type, reason, message);
  }

  // Blocks until every event recorded before the call has been written or given up.
  void flush();
  // flush(), then stops the worker; later records are dropped.
  void shutDown();

  EventRecorderStats stats() const;

 private:
  struct Pending {
    api::Event event;
  };
  struct Logged {  // eventLog: what the server holds for an event key
    std::int32_t count = 0;
    std::int64_t firstTimestamp = 0;
    std::string name;
  };
  struct Bucket {
    double tokens = 0;
    Clock::TimePoint last{};
  };

  // A least-recently-used map bounded like client-go's lru caches.
  template <typename Value>
  class Lru {
   public:
    explicit Lru(std::size_t capacity) : capacity_(capacity) {}
    Value* find(const std::string& key);
    Value& put(const std::string& key, Value value);

   private:
    std::size_t capacity_;
    std::list<std::pair<std::string, Value>> order_;  // most recent first
    std::unordered_map<std::string, typename std::list<std::pair<std::string, Value>>::iterator>
        index_;
  };

  bool spamAllowedLocked(const api::Event& event);
  void work();
  void write(api::Event event);
  // One write with transport retries; false after stop during a retry wait.
  StatusOr<Json> send(const api::Event& event, const Json* patch);

  Writer& writer_;
  const EventRecorderOptions options_;
  Clock& clock_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::uint64_t sequence_ = 0;
  EventRecorderStats stats_;
  Lru<Bucket> spam_;
  Lru<Logged> logged_;  // worker thread only
  std::thread worker_;
};

}  // namespace kubeslurm::kube

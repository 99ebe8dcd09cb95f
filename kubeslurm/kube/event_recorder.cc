#include "kubeslurm/kube/event_recorder.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

namespace kubeslurm::kube {

namespace {

std::string stringAt(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Fields joined with a separator that cannot occur in names, so ("ab","c") != ("a","bc").
template <typename... Parts>
std::string joinKey(const Parts&... parts) {
  std::string key;
  ((key += parts, key += '\x1f'), ...);
  return key;
}

// EventSourceObjectSpamFilter's key (getSpamKey): one bucket per source and object.
std::string spamKey(const api::Event& e) {
  const auto& o = e.involvedObject;
  return joinKey(e.sourceComponent, e.sourceHost, o.kind, o.namespaceName, o.name, o.uid,
                 o.apiVersion);
}

// eventLogger's key (getEventKey): identical events are one Event with a count.
std::string eventKey(const api::Event& e) {
  const auto& o = e.involvedObject;
  return joinKey(e.sourceComponent, e.sourceHost, o.kind, o.namespaceName, o.name, o.uid,
                 o.apiVersion, e.type, e.reason, e.message);
}

}  // namespace

api::ObjectReference referenceTo(const Json& object) {
  api::ObjectReference ref;
  ref.apiVersion = stringAt(object, "apiVersion");
  ref.kind = stringAt(object, "kind");
  if (object.is_object() && object.contains("metadata")) {
    const Json& metadata = object["metadata"];
    ref.namespaceName = stringAt(metadata, "namespace");
    ref.name = stringAt(metadata, "name");
    ref.uid = stringAt(metadata, "uid");
    ref.resourceVersion = stringAt(metadata, "resourceVersion");
  }
  return ref;
}

template <typename Value>
Value* EventRecorder::Lru<Value>::find(const std::string& key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return &it->second->second;
}

template <typename Value>
Value& EventRecorder::Lru<Value>::put(const std::string& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  order_.emplace_front(key, std::move(value));
  index_[key] = order_.begin();
  if (order_.size() > capacity_) {
    index_.erase(order_.back().first);
    order_.pop_back();
  }
  return order_.front().second;
}

EventRecorder::EventRecorder(Writer& writer, EventRecorderOptions options, Clock& clock)
    : writer_(writer),
      options_(std::move(options)),
      clock_(clock),
      spam_(std::max<std::size_t>(1, options_.cacheEntries)),
      logged_(std::max<std::size_t>(1, options_.cacheEntries)),
      worker_([this] { work(); }) {}

EventRecorder::~EventRecorder() { shutDown(); }

bool EventRecorder::spamAllowedLocked(const api::Event& event) {
  const auto now = clock_.now();
  const std::string key = spamKey(event);
  Bucket* bucket = spam_.find(key);
  if (bucket == nullptr) {
    bucket = &spam_.put(key, Bucket{static_cast<double>(options_.spamBurst), now});
  }
  const double elapsed = std::chrono::duration<double>(now - bucket->last).count();
  bucket->tokens = std::min(static_cast<double>(options_.spamBurst),
                            bucket->tokens + std::max(0.0, elapsed) * options_.spamQps);
  bucket->last = now;
  if (bucket->tokens < 1.0) return false;
  bucket->tokens -= 1.0;
  return true;
}

void EventRecorder::record(const api::ObjectReference& object, std::string_view type,
                           std::string_view reason, std::string_view message) {
  const std::int64_t wall = clock_.wallMicros();
  api::Event event;
  event.involvedObject = object;
  // Events about cluster-scoped objects live in "default" (client-go's makeEvent).
  event.metadata.namespaceName = object.namespaceName.empty() ? "default" : object.namespaceName;
  event.type = std::string(type);
  event.reason = std::string(reason);
  event.message = std::string(message);
  event.sourceComponent = options_.component;
  event.sourceHost = options_.host;
  event.reportingController = options_.reportingController;
  event.reportingInstance = options_.reportingInstance;
  event.firstTimestamp = wall / 1'000'000;
  event.lastTimestamp = event.firstTimestamp;
  event.count = 1;

  const std::lock_guard lock(mutex_);
  if (stopping_) return;
  if (queue_.size() >= options_.queueCapacity) {
    ++stats_.droppedQueueFull;
    return;
  }
  if (!spamAllowedLocked(event)) {
    ++stats_.droppedSpam;
    return;
  }
  // name.<hex nanoseconds> as client-go; the sequence keeps two events of one microsecond apart.
  std::array<char, 32> hex{};
  (void)std::snprintf(hex.data(), hex.size(), "%llx",
                      static_cast<unsigned long long>(wall) * 1000ULL + sequence_++ % 1000ULL);
  event.metadata.name = object.name + "." + hex.data();
  queue_.push_back(Pending{std::move(event)});
  cv_.notify_all();
}

void EventRecorder::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and drained
    api::Event event = std::move(queue_.front().event);
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    write(std::move(event));
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

StatusOr<Json> EventRecorder::send(const api::Event& event, const Json* patch) {
  const std::string& ns = event.metadata.namespaceName;
  for (int attempt = 1;; ++attempt) {
    StatusOr<Json> result =
        patch != nullptr ? writer_.patch(resources::events(), ns, event.metadata.name, *patch)
                         : writer_.create(resources::events(), ns, api::encodeEvent(event));
    // Only a transport failure is worth repeating; whatever the server answered, it will
    // answer again.
    if (result.isOk() || result.status().code() != StatusCode::kUnavailable ||
        attempt >= options_.maxAttempts) {
      return result;
    }
    std::unique_lock lock(mutex_);
    const auto deadline = clock_.now() + options_.retryDelay;
    while (clock_.now() < deadline) clock_.waitUntil(cv_, lock, deadline);
  }
}

void EventRecorder::write(api::Event event) {
  const std::string key = eventKey(event);
  bool patched = false;
  StatusOr<Json> result = Status(StatusCode::kUnknown, "not sent");
  if (const Logged* seen = logged_.find(key)) {
    event.count = seen->count + 1;
    event.firstTimestamp = seen->firstTimestamp;
    event.metadata.name = seen->name;
    const Json patch = {{"count", event.count},
                        {"lastTimestamp", api::formatTimestamp(event.lastTimestamp.value_or(0))},
                        {"message", event.message}};
    result = send(event, &patch);
    patched = true;
    if (!result.isOk() && result.status().code() == StatusCode::kNotFound) {
      // Deleted (or expired by the server's event TTL) meanwhile: start it again, keeping the
      // count so far, as recordToSink does.
      result = send(event, nullptr);
      patched = false;
    }
  } else {
    result = send(event, nullptr);
  }

  if (result.isOk()) {
    Logged logged{event.count, event.firstTimestamp.value_or(0), event.metadata.name};
    if (auto stored = api::decodeEvent(*result); stored.isOk()) {
      logged.count = stored->count;
      logged.firstTimestamp = stored->firstTimestamp.value_or(logged.firstTimestamp);
      logged.name = stored->metadata.name;
    }
    logged_.put(key, std::move(logged));
  }
  const std::lock_guard lock(mutex_);
  if (!result.isOk()) {
    ++stats_.failed;
  } else if (patched) {
    ++stats_.patched;
  } else {
    ++stats_.created;
  }
}

void EventRecorder::flush() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void EventRecorder::shutDown() {
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
    stopping_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

EventRecorderStats EventRecorder::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace kubeslurm::kube

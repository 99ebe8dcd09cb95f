#include "kubeslurm/kube/informer.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <unordered_map>
#include <utility>

#include "kubeslurm/kube/rate_limit.h"

namespace kubeslurm::kube {
namespace {

double randomUnit() {
  thread_local std::minstd_rand engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

// Kubernetes documents resourceVersion as opaque: clients may compare them only for equality.
// We still order them in one place, to drop an event older than what the store holds for the
// same uid, because (1) a watch stream is ordered, so anything older than the stored object
// can only come from an older source (a list served by a lagging watch cache, a delayed
// event replayed after a relist), and keeping the newer state is what level-triggered
// controllers want; (2) every apiserver up to today backs resourceVersion with etcd's
// integer revision. When either value is not a plain integer we do not guess: not older.
bool olderThan(const std::string& candidate, const std::string& stored) {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  const auto [endA, errA] =
      std::from_chars(candidate.data(), candidate.data() + candidate.size(), a);
  const auto [endB, errB] = std::from_chars(stored.data(), stored.data() + stored.size(), b);
  if (errA != std::errc() || errB != std::errc()) return false;
  if (endA != candidate.data() + candidate.size() || endB != stored.data() + stored.size()) {
    return false;
  }
  return a < b;
}

}  // namespace

void dropManagedFields(Json& object) {
  if (!object.is_object()) return;
  auto metadata = object.find("metadata");
  if (metadata != object.end() && metadata->is_object()) metadata->erase("managedFields");
}

Informer::Informer(Reader& reader, Watcher& watcher, ResourceType type, InformerOptions options)
    : reader_(reader), watcher_(watcher), type_(std::move(type)), options_(std::move(options)) {}

Informer::~Informer() { stop(); }

Status Informer::addEventHandler(EventHandler handler) {
  if (started_.load()) return failedPrecondition("informer: addEventHandler after start");
  handlers_.push_back(std::move(handler));
  return Status::ok();
}

Status Informer::addIndexer(std::string name, IndexFunc function) {
  return store_.addIndexer(std::move(name), std::move(function));
}

bool Informer::hasSynced() const {
  const std::lock_guard<std::mutex> lock(syncMutex_);
  return synced_;
}

bool Informer::waitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(syncMutex_);
  syncCv_.wait_for(lock, timeout, [this] { return synced_ || stopped_.load(); });
  return synced_;
}

std::string Informer::lastSyncResourceVersion() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return resumeVersion_;
}

InformerStats Informer::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

Clock& Informer::clock() const {
  return options_.clock != nullptr ? *options_.clock : steadyClock();
}

void Informer::start() {
  const std::lock_guard<std::mutex> lock(joinMutex_);
  // Marked started here, not in the new thread, so that addEventHandler() racing with the
  // thread's start is refused rather than a data race.
  if (started_.exchange(true)) return;
  ownThread_ = std::thread([this] { loop(); });
}

void Informer::stop() {
  {
    // Set under the lock so that a waiter cannot test the flag, miss it, and then sleep
    // through the notification.
    const std::lock_guard<std::mutex> lock(mutex_);
    stopped_.store(true);
  }
  watchStop_.stop();
  wake_.notify_all();
  stopCv_.notify_all();
  { const std::lock_guard<std::mutex> lock(syncMutex_); }
  syncCv_.notify_all();
  const std::lock_guard<std::mutex> lock(joinMutex_);
  if (ownThread_.joinable() && ownThread_.get_id() != std::this_thread::get_id()) {
    ownThread_.join();
  }
}

// ---- reflector thread ----

void Informer::setResumeVersion(const std::string& resourceVersion) {
  const std::lock_guard<std::mutex> lock(mutex_);
  resumeVersion_ = resourceVersion;
}

ObjectPtr Informer::prepare(Json&& object) {
  if (options_.transform) options_.transform(object);
  if (options_.holder) return options_.holder(std::move(object));
  return std::make_shared<const Json>(std::move(object));
}

void Informer::push(Delta delta) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(delta));
  }
  wake_.notify_one();
}

void Informer::backoff(const Status& failure) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.failures;
  }
  if (options_.onError) options_.onError(failure);
  const Clock::TimePoint t = clock().now();
  if (failures_ > 0 && t - lastFailure_ >= options_.backoffReset) failures_ = 0;
  const auto delay = backoffDelay(failures_, options_.backoffBase, options_.backoffCap,
                                  options_.jitter ? options_.jitter() : randomUnit());
  ++failures_;
  lastFailure_ = t;
  const Clock::TimePoint until = t + delay;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_.load() && clock().now() < until) clock().waitUntil(stopCv_, lock, until);
}

bool Informer::listOnce(std::string& resourceVersion) {
  ListOptions list;
  list.labelSelector = options_.labelSelector;
  list.fieldSelector = options_.fieldSelector;
  list.limit = options_.pageSize;
  // resourceVersion "" (a consistent read from etcd), not client-go's "0" (the watch cache,
  // which ignores `limit` and may be older than what this informer already saw).
  auto listed = listAll(reader_, type_, options_.ns, list);
  if (stopped_.load()) return false;
  if (!listed.isOk()) {
    backoff(listed.status());
    return false;
  }
  Json& all = *listed;
  resourceVersion = objectResourceVersion(all);
  Delta replace;
  replace.kind = Delta::Kind::kReplace;
  if (all.contains("items") && all["items"].is_array()) {
    replace.objects.reserve(all["items"].size());
    for (Json& item : all["items"]) replace.objects.push_back(prepare(std::move(item)));
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.lists;
    resumeVersion_ = resourceVersion;
  }
  push(std::move(replace));
  return true;
}

void Informer::reflect() {
  std::string resourceVersion;
  bool needList = true;
  while (!stopped_.load()) {
    if (needList) {
      if (!listOnce(resourceVersion)) continue;
      needList = false;
    }
    WatchOptions watch;
    watch.resourceVersion = resourceVersion;
    watch.labelSelector = options_.labelSelector;
    watch.fieldSelector = options_.fieldSelector;
    watch.allowWatchBookmarks = true;
    const double spread = options_.jitter ? options_.jitter() : randomUnit();
    watch.timeoutSeconds =
        options_.watchTimeoutSeconds +
        static_cast<std::int64_t>(spread * static_cast<double>(options_.watchTimeoutSeconds));
    std::size_t received = 0;
    const Clock::TimePoint began = clock().now();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.watches;
    }
    const WatchResult result = watcher_.watch(
        type_, options_.ns, watch,
        [&](const WatchEvent& event) {
          if (event.type == WatchEventType::kError) return true;  // watch() ends with it
          ++received;
          std::string version = event.resourceVersion();
          if (!version.empty()) resourceVersion = version;
          if (event.type == WatchEventType::kBookmark) {
            const std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.bookmarks;
            resumeVersion_ = resourceVersion;
            return !stopped_.load();
          }
          Delta delta;
          delta.kind =
              event.type == WatchEventType::kDeleted ? Delta::Kind::kDelete : Delta::Kind::kUpsert;
          // The event is the client's; copying it is the price of not stalling its stream.
          delta.object = prepare(Json(event.object));
          {
            const std::lock_guard<std::mutex> lock(mutex_);
            ++stats_.events;
            resumeVersion_ = resourceVersion;
          }
          push(std::move(delta));
          return !stopped_.load();
        },
        &watchStop_);
    if (stopped_.load()) break;
    if (received > 0) expiredInARow_ = false;
    const StatusCode code = result.status.code();
    if (code == StatusCode::kOutOfRange) {
      // 410: resourceVersion is older than the server keeps. Relist now: nothing is wrong with
      // the server. Two 410s with nothing between them are a loop, so that one backs off.
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.relists;
      }
      if (expiredInARow_) backoff(result.status);
      expiredInARow_ = true;
      needList = true;
      continue;
    }
    if (code == StatusCode::kOk) {
      // The server's timeoutSeconds ended it: re-watch from where it stopped. A watch that
      // ends at once with nothing in it (client-go's "very short watch") would spin: back off.
      if (received == 0 && clock().now() - began < std::chrono::seconds(1)) {
        backoff(Status(StatusCode::kUnavailable, "watch ended at once without events"));
      }
      continue;
    }
    // Connection cut, 5xx, 429, framing: the stream is ordered and resumable, so re-watch from
    // the last resourceVersion (a 410 then tells us if that point has been compacted away).
    backoff(result.status);
  }
}

// ---- run() thread ----

void Informer::run() {
  if (started_.exchange(true)) return;
  loop();
}

void Informer::loop() {
  std::thread reflector([this] { reflect(); });
  const bool resyncOn = options_.resyncPeriod.count() > 0;
  Clock::TimePoint nextResync = Clock::TimePoint::max();
  while (true) {
    Delta delta;
    bool haveDelta = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto ready = [this] { return stopped_.load() || !queue_.empty(); };
      if (nextResync == Clock::TimePoint::max()) {
        wake_.wait(lock, ready);
      } else {
        while (!ready() && clock().now() < nextResync) clock().waitUntil(wake_, lock, nextResync);
      }
      if (stopped_.load()) break;
      if (!queue_.empty()) {
        delta = std::move(queue_.front());
        queue_.pop_front();
        haveDelta = true;
      }
    }
    if (haveDelta) process(delta);
    if (resyncOn && hasSynced()) {
      const Clock::TimePoint t = clock().now();
      if (nextResync == Clock::TimePoint::max()) {
        nextResync = t + options_.resyncPeriod;
      } else if (t >= nextResync) {
        resync();
        nextResync = t + options_.resyncPeriod;
      }
    }
  }
  watchStop_.stop();
  reflector.join();
  const std::lock_guard<std::mutex> lock(mutex_);
  queue_.clear();
}

void Informer::process(Delta& delta) {
  switch (delta.kind) {
    case Delta::Kind::kReplace: {
      applyReplace(delta.objects);
      bool first = false;
      {
        const std::lock_guard<std::mutex> lock(syncMutex_);
        first = !synced_;
        synced_ = true;
      }
      if (first) syncCv_.notify_all();
      break;
    }
    case Delta::Kind::kUpsert:
      applyUpsert(delta.object, /*fromList=*/false);
      break;
    case Delta::Kind::kDelete:
      applyDelete(delta.object);
      break;
  }
}

void Informer::applyReplace(std::vector<ObjectPtr>& objects) {
  std::unordered_map<std::string, const ObjectPtr*> incoming;
  incoming.reserve(objects.size());
  for (const ObjectPtr& object : objects) incoming.emplace(objectKey(*object), &object);
  // Deletes first, in key order: what vanished while the watch was down is told before what
  // appeared, so a cache that counts capacity never holds both at once.
  std::vector<std::string> gone;
  for (std::string& key : store_.listKeys()) {
    if (!incoming.contains(key)) gone.push_back(std::move(key));
  }
  std::sort(gone.begin(), gone.end());
  for (const std::string& key : gone) {
    ObjectPtr last = store_.erase(key);
    if (last) fireDelete(last, /*finalStateUnknown=*/true);
  }
  for (const ObjectPtr& object : objects) applyUpsert(object, /*fromList=*/true);
  objects.clear();
}

void Informer::applyUpsert(const ObjectPtr& object, bool fromList) {
  const std::string key = objectKey(*object);
  const auto ignore = [this, fromList] {
    if (fromList) return;
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.ignored;
  };
  if (key.empty()) {
    ignore();
    return;
  }
  ObjectPtr old = store_.get(key);
  if (!old) {
    store_.put(key, object);
    fireAdd(object);
    return;
  }
  if (objectUid(*old) != objectUid(*object)) {
    // Another incarnation under the same name: its predecessor was deleted while we were not
    // watching. Handlers keyed by uid need the delete, not an update across incarnations.
    store_.put(key, object);
    fireDelete(old, /*finalStateUnknown=*/true);
    fireAdd(object);
    return;
  }
  const std::string before = objectResourceVersion(*old);
  const std::string after = objectResourceVersion(*object);
  if (before == after || olderThan(after, before)) {
    ignore();
    return;
  }
  store_.put(key, object);
  fireUpdate(old, object);
}

void Informer::applyDelete(const ObjectPtr& object) {
  const std::string key = objectKey(*object);
  ObjectPtr old = key.empty() ? nullptr : store_.get(key);
  // Nothing stored (a relist already removed it), another incarnation stored, or an event
  // older than what we hold: this delete does not describe the stored object.
  if (!old || objectUid(*old) != objectUid(*object) ||
      olderThan(objectResourceVersion(*object), objectResourceVersion(*old))) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.ignored;
    return;
  }
  store_.erase(key);
  fireDelete(object, /*finalStateUnknown=*/false);
}

void Informer::resync() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.resyncs;
  }
  for (const ObjectPtr& object : store_.list()) fireUpdate(object, object);
}

void Informer::fireAdd(const ObjectPtr& object) {
  for (const EventHandler& handler : handlers_) {
    if (handler.onAdd) handler.onAdd(object);
  }
}

void Informer::fireUpdate(const ObjectPtr& oldObject, const ObjectPtr& newObject) {
  for (const EventHandler& handler : handlers_) {
    if (handler.onUpdate) handler.onUpdate(oldObject, newObject);
  }
}

void Informer::fireDelete(const ObjectPtr& last, bool finalStateUnknown) {
  for (const EventHandler& handler : handlers_) {
    if (handler.onDelete) handler.onDelete(last, finalStateUnknown);
  }
}

}  // namespace kubeslurm::kube

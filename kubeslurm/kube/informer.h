// A list+watch informer over Json objects of one ResourceType (client-go's tools/cache:
// reflector.go, delta_fifo.go, shared_informer.go, over an ObjectStore).
//
// Two threads, one job each:
//
//   reflector thread        list (paginated) ──► Replace(items) ─┐
//   (network I/O only)      watch from the list's RV ──► events ─┤   FIFO of deltas
//                           re-watch / relist / back off         │
//                                                                ▼
//   run() thread            pop delta → apply to the store → call handlers; resync timer
//   (the caller's, or the one start() owns)
//
// The run() thread is the only one that writes the store and the only one that calls
// handlers, so handlers are called in order, one at a time, never with the store's lock held
// (a handler may read the store and sees its own event applied). The watch socket is read on
// another thread so that a slow handler does not stall the stream, and so that resync can fire
// while a watch is blocked waiting for events.
//
// Reflector state machine:
//
//   ┌──► LIST (limit=pageSize, consistent read) ──error──► backoff ──► LIST
//   │      │ ok: queue Replace, resume RV = list RV
//   │      ▼
//   │    WATCH from resume RV (allowWatchBookmarks, timeoutSeconds jittered)
//   │      │ each event: resume RV = its RV; BOOKMARK: only that
//   │      ├─ ended OK (server timeout) ────────────► WATCH again from resume RV
//   │      ├─ error (connection, 5xx, 429, framing) ► backoff ──► WATCH from resume RV
//   └──────┴─ kOutOfRange (410 Gone/Expired) ───────► LIST (at once; backoff if two 410s in a
//                                                      row with no event between)
//
// Backoff: backoffDelay(failures, base, cap, jitter) from rate_limit.h; the failure count
// resets when the previous failure is older than `backoffReset` (client-go's
// exponentialBackoffManager: 800 ms, 30 s cap, reset after 2 min quiet).
//
// Guarantees:
//   - hasSynced() is true once the first complete list is in the store (and its onAdd calls
//     made), never before.
//   - A relist (after 410) is diffed against the store: objects gone from the list get
//     onDelete(last, finalStateUnknown=true) like DeltaFIFO's DeletedFinalStateUnknown;
//     changed ones onUpdate; new ones onAdd; unchanged ones nothing. An object replaced by a
//     new incarnation (same key, different uid) is a delete then an add, not an update.
//   - An event whose resourceVersion equals the stored one is a no-op (a replayed event does
//     not fire onUpdate); an event older than the stored object of the same uid is dropped.
//   - Every resyncPeriod, onUpdate(obj, obj) for every stored object (same pointer twice).
//
// Limits: stop() interrupts a watch or a backoff at once, but a list page in flight finishes
// first (Reader has no cancellation; the client's request timeout bounds it). An informer
// runs once: after stop() it cannot be started again.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/clock.h"
#include "kubeslurm/kube/object_store.h"

namespace kubeslurm::kube {

struct EventHandler {
  std::function<void(const ObjectPtr& object)> onAdd;
  // Also resync: then oldObject == newObject (the same pointer).
  std::function<void(const ObjectPtr& oldObject, const ObjectPtr& newObject)> onUpdate;
  // finalStateUnknown: the delete was inferred by a relist (the object vanished while the watch
  // was down); `last` is then the last state this informer saw, not the deleted object's.
  std::function<void(const ObjectPtr& last, bool finalStateUnknown)> onDelete;
};

// Applied to every listed or watched object before it is stored (client-go's TransformFunc),
// on the reflector thread. It must keep metadata.name/namespace/uid/resourceVersion.
using Transform = std::function<void(Json& object)>;

// The default transform: drops metadata.managedFields (server-side apply bookkeeping that
// controllers never read and that is often a third of an object's size).
void dropManagedFields(Json& object);

// Makes the pointer a transformed object is stored as, on the reflector thread. The default holds
// the object itself. A holder may store less JSON than it was given and carry the rest in a form
// of its own, in the pointer's deleter (std::get_deleter finds it): the SlurmJob cache holds each
// job decoded, and as JSON only what its codec does not model. What it points at must keep
// metadata whole (keys, indexes and handlers read it).
using Holder = std::function<ObjectPtr(Json&& object)>;

struct InformerOptions {
  std::string ns;  // "" = all namespaces (or a cluster-scoped type)
  std::string labelSelector;
  std::string fieldSelector;
  std::int64_t pageSize = 500;
  std::chrono::milliseconds resyncPeriod{0};  // 0: no resync
  // The watch's timeoutSeconds is drawn from [t, 2t) per watch (as client-go's reflector does)
  // so that many informers do not reconnect in lockstep.
  std::int64_t watchTimeoutSeconds = 300;
  std::chrono::milliseconds backoffBase{800};
  std::chrono::milliseconds backoffCap{30000};
  std::chrono::milliseconds backoffReset{120000};
  Transform transform = dropManagedFields;  // nullptr: store objects as received
  Holder holder;                            // nullptr: std::make_shared of the object
  // Every list/watch failure, on the reflector thread (client-go's WatchErrorHandler).
  std::function<void(const Status&)> onError;

  // Time: the healthy period that resets the backoff, the backoff waits (which stop() cuts
  // short) and the resync period. nullptr: steadyClock().
  Clock* clock = nullptr;
  // Test seam: the backoff's jitter, in [0, 1).
  std::function<double()> jitter;
};

struct InformerStats {
  std::uint64_t lists = 0;     // complete lists (all pages)
  std::uint64_t watches = 0;   // watch calls
  std::uint64_t relists = 0;   // lists caused by 410
  std::uint64_t failures = 0;  // list/watch errors that caused a backoff
  std::uint64_t events = 0;    // ADDED/MODIFIED/DELETED received
  std::uint64_t bookmarks = 0;
  std::uint64_t ignored = 0;  // replayed or stale events, objects without a name
  std::uint64_t resyncs = 0;
};

class Informer {
 public:
  Informer(Reader& reader, Watcher& watcher, ResourceType type, InformerOptions options = {});
  ~Informer();  // stop() and join
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Before run()/start(): kFailedPrecondition after (a late handler would miss the history).
  Status addEventHandler(EventHandler handler);
  Status addIndexer(std::string name, IndexFunc function);

  // Runs until stop(), on the caller's thread (see the diagram above). Once.
  void run();
  // run() on a thread the informer owns; joined by stop() or the destructor.
  void start();
  // Ends run() promptly; safe from any thread, a handler included, and more than once.
  void stop();

  bool hasSynced() const;
  // True when synced within `timeout` (false on timeout or stop).
  bool waitForSync(std::chrono::milliseconds timeout) const;

  const ObjectStore& store() const { return store_; }
  // The resourceVersion of the last list or watch event the reflector received.
  std::string lastSyncResourceVersion() const;
  InformerStats stats() const;

 private:
  struct Delta {
    enum class Kind { kReplace, kUpsert, kDelete };
    Kind kind = Kind::kUpsert;
    ObjectPtr object;                // kUpsert, kDelete
    std::vector<ObjectPtr> objects;  // kReplace
  };

  void loop();  // run()'s body
  void reflect();
  bool listOnce(std::string& resourceVersion);
  void backoff(const Status& failure);
  void push(Delta delta);
  ObjectPtr prepare(Json&& object);
  void setResumeVersion(const std::string& resourceVersion);

  void process(Delta& delta);
  void applyReplace(std::vector<ObjectPtr>& objects);
  // `fromList`: part of a relist, where an unchanged object is the normal case, not a replay.
  void applyUpsert(const ObjectPtr& object, bool fromList);
  void applyDelete(const ObjectPtr& object);
  void resync();
  void fireAdd(const ObjectPtr& object);
  void fireUpdate(const ObjectPtr& oldObject, const ObjectPtr& newObject);
  void fireDelete(const ObjectPtr& last, bool finalStateUnknown);
  Clock& clock() const;

  Reader& reader_;
  Watcher& watcher_;
  const ResourceType type_;
  const InformerOptions options_;
  ObjectStore store_;
  std::vector<EventHandler> handlers_;

  WatchStop watchStop_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> started_{false};

  // The delta FIFO between the two threads (and the stop signal for sleeps).
  mutable std::mutex mutex_;
  std::condition_variable wake_;    // run(): a delta arrived, or stop
  std::condition_variable stopCv_;  // the default backoff sleep: stop
  std::deque<Delta> queue_;
  std::string resumeVersion_;
  InformerStats stats_;

  // Synced flag; its own condition variable so waitForSync() callers are not woken per event.
  mutable std::mutex syncMutex_;
  mutable std::condition_variable syncCv_;
  bool synced_ = false;

  // Reflector-thread state.
  int failures_ = 0;
  std::chrono::steady_clock::time_point lastFailure_{};
  bool expiredInARow_ = false;

  std::mutex joinMutex_;
  std::thread ownThread_;
};

}  // namespace kubeslurm::kube

// The scheduling loop's assume cache: the gangs this leader started that its caches do not show
// whole yet. A plan's start is assumed at once — the rank pods the gang will make, each on its
// node, count in every later cycle's snapshot — while its admission (GangBinder::admit: the
// Service, the step Secret, the pods) runs on a worker thread. So a cycle never waits for an
// admission's round trips, and the next one neither plans the nodes twice nor waits for the pod
// informer (kube-scheduler's cache assumes a pod's binding the same way; client-go's
// ControllerExpectations covers the informer's lag for a controller's creates).
//
//   assume() ─> Assumed ──admission OK──> Admitted ──every pod in the caches────> gone (seen)
//                  │                         │
//                  │                         └──forget(): a status was written,
//                  │                            or `timeout` after its first look ─> gone
//                  └──admission failed, the fence closed, or never started ───────> gone
//
//  - Assumed: the admission is queued or runs. The plan's pods that the caches do not show
//    stand in for the gang, and the job is neither planned, nor given a status, nor swept as a
//    partial gang (the caches may show some of its pods already).
//  - never started: finishRunning() (a shutdown) drops the admissions still queued.
//  - Admitted: the pods as written (each bound), until the caches show them all. The timeout
//    runs from the first addUnseen() after the admission ended: the pods were deleted by
//    someone else, or the watch is far behind and will relist.
// finished() hands the caller each admission that ended since its last call, exactly once: the
// caller counts it and acts on it (an event, a backoff) on its own thread. An admission's
// outcome is decided on the worker; the state moves when finished() collects it.
//
// Not thread-safe itself: one thread (the scheduling loop) calls every member; the workers only
// run the admissions they were given.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controllers/shared_list.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"

namespace kubeslurm::controllers {

// What the scheduling loop started, and needs again when the admission ends.
struct StartedGang {
  std::string key;  // the job's "ns/name"
  std::vector<std::string> nodes;
  std::string partition;
  bool backfilled = false;
};

struct FinishedAdmission {
  StartedGang gang;
  Status result;  // kAborted when the fence closed before or during it
  double seconds = 0;
};

class AssumedGangs {
 public:
  // Writes the gang; on success fills `admitted` with its rank pods as written.
  using Admission = std::function<Status(std::vector<api::Pod>* admitted)>;

  // `workers`: admissions run at once (at least one). `ended`, when set, is called on the worker
  // after each admission's outcome is recorded (to wake the loop that collects it).
  explicit AssumedGangs(std::size_t workers, std::function<void()> ended = {});
  ~AssumedGangs();  // waits for the admissions that run
  AssumedGangs(const AssumedGangs&) = delete;
  AssumedGangs& operator=(const AssumedGangs&) = delete;

  // Assumed from now on with `pods` (the plan's: each with spec.nodeName set); `admission` runs
  // on a worker. A gang of the same key that is Admitted is replaced; the caller never assumes
  // a gang that is Assumed.
  void assume(StartedGang gang, std::vector<api::Pod> pods, Admission admission);

  // The admissions that ended since the last call, in the order they were assumed: succeeded
  // ones are Admitted from now on, failed ones are gone.
  std::vector<FinishedAdmission> finished();

  // Appends to `pods` every pod of a known gang that `pods` does not hold (by the rank pods' job
  // label and name), and first drops the Admitted gangs that `pods` shows whole or whose
  // `timeout` has passed.
  // The pods are shared with `pods`, not copied: a cycle's input is read-only.
  void addUnseen(SharedList<api::Pod>& pods, core::Time now, core::Duration timeout);

  bool contains(const std::string& key) const { return gangs_.contains(key); }
  // Its admission runs, or has ended and finished() has not collected it yet.
  bool admitting(const std::string& key) const;
  // An Admitted gang no longer expected (its job's status was written); an Assumed one stays.
  void forget(const std::string& key);
  // Until no admission runs.
  void waitIdle();
  // Lets the admissions that run finish; those still queued never start (they end kAborted,
  // having written nothing). For a shutdown: a queue of 200 starts would outlast the grace
  // period, and a SIGKILL mid-admission leaves a partial gang for the next leader.
  void finishRunning();
  // waitIdle(), then every gang forgotten and every uncollected outcome dropped (leadership
  // ended: what this leader expected belongs to no one now).
  void clear();

 private:
  // Written by the worker, read by the loop once `done` is set (under the pool's mutex).
  struct Outcome {
    bool done = false;
    Status result;
    std::vector<api::Pod> admitted;
    double seconds = 0;
  };
  struct Gang {
    StartedGang started;
    std::vector<std::shared_ptr<api::Pod>> pods;
    std::shared_ptr<Outcome> outcome;  // set while Assumed
    std::uint64_t order = 0;           // when it was assumed
    core::Time firstLook = 0;          // Admitted: the first addUnseen() after it, or 0
  };

  void work();
  static std::vector<std::shared_ptr<api::Pod>> share(std::vector<api::Pod> pods);

  std::function<void()> ended_;
  std::map<std::string, Gang> gangs_;
  std::uint64_t assumed_ = 0;

  std::mutex mutex_;  // guards what follows, and every Outcome
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> queue_;
  std::size_t running_ = 0;
  bool stopping_ = false;
  bool dropQueued_ = false;           // finishRunning(): queued admissions end without starting
  std::vector<std::thread> workers_;  // last: they start once the rest exists
};

}  // namespace kubeslurm::controllers

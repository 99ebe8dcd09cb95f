// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// tools/leaderelection/leaderelection.go, plus a fence for DESIGN.md's invariant 2 ("a replica
// that loses the lease stops writing before another can win it").
//
// Timing. Nobody compares clocks across machines. A candidate that sees a lease held by someone
// else notes, on its own monotonic clock, when the lease's spec last changed (observedTime);
// the lease is free for it once observedTime + leaseDurationSeconds has passed with no change.
// The holder renews every retryPeriod. Its fence is open until attemptStart + renewDeadline,
// where attemptStart is taken *before* the last successful renewal was sent: the server applied
// that renewal after attemptStart, and any rival observed it after that, so no rival can take
// the lease before attemptStart + leaseDuration. renewDeadline < leaseDuration leaves the gap
// for clock-rate drift and for a write already in flight when the fence closes.
//
//   candidate --acquired--> leader --renew ok--> leader
//       ^                     |  renewDeadline passed without a renewal, or the lease is
//       |                     |  seen held by another, or stop()
//       |                     v
//       +----(run() returns) stopped: fence closed, onStoppedLeading, then release
//
// Differences from client-go, each for the invariant: the fence and onStoppedLeading are driven
// by a watchdog on the clock, so a renewal request that hangs does not keep the leader "in";
// onStoppedLeading runs *before* the release (client-go releases first), because the release
// lets a rival take over at once and the callback is where writers are stopped; and seeing
// another holder while leading ends leadership at once instead of after renewDeadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/kube/clock.h"

namespace kubeslurm::kube {

struct LeaderElectionCallbacks {
  // Called on run()'s thread once the lease is ours; must return promptly (start workers).
  std::function<void()> onStartedLeading;
  // Called once when leadership ends, for whatever reason, before the lease is released. Stop
  // every writer before returning: the lease may belong to another replica right after.
  std::function<void()> onStoppedLeading;
  // The observed holder changed ("" once a holder released the lease).
  std::function<void(const std::string& identity)> onNewLeader;
};

struct LeaderElectionConfig {
  std::string leaseNamespace;
  std::string leaseName;
  std::string identity;  // unique per replica: pod name + a random suffix
  // client-go's defaults for kube-controller-manager: 15 s / 10 s / 2 s.
  Clock::Duration leaseDuration = std::chrono::seconds(15);
  Clock::Duration renewDeadline = std::chrono::seconds(10);
  Clock::Duration retryPeriod = std::chrono::seconds(2);
  // Give the lease up on stop() so that a rival need not wait leaseDuration.
  bool releaseOnCancel = true;
  // Candidates retry every retryPeriod * (1 + jitter * U[0,1)) (wait.JitterUntil, factor 1.2)
  // so that they do not hit the server in step.
  double acquireJitter = 1.2;
  LeaderElectionCallbacks callbacks;
};

class LeaderElector {
 public:
  // kInvalidArgument unless leaseDuration > renewDeadline > acquireJitter * retryPeriod > 0
  // (client-go's NewLeaderElector checks) and identity, namespace and name are set.
  static StatusOr<std::unique_ptr<LeaderElector>> create(Reader& reader, Writer& writer,
                                                         LeaderElectionConfig config,
                                                         Clock& clock = steadyClock());
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Campaigns until the lease is ours, leads until leadership is lost or stop() is called, then
  // closes the fence, calls onStoppedLeading and (releaseOnCancel, after stop()) releases.
  // Returns OK after stop(), kAborted when leadership was lost. Runs once per elector.
  Status run();
  // From any thread (not from a signal handler): ends run() promptly.
  void stop();

  // One step of the loops above (client-go's tryAcquireOrRenew): get the lease, create it when
  // absent, take it when free or expired by our observation, renew it when ours. True when we
  // hold it after this step. On success, the fence is pushed to attemptStart + renewDeadline.
  bool tryAcquireOrRenew();
  // Gives the lease up when we hold it: holderIdentity "" and leaseDurationSeconds 1. Closes the
  // fence first.
  Status release();

  // The last observed record names us.
  bool isLeader() const;
  // Writers call this before each write: we are leader and the fence is open (a renewal started
  // less than renewDeadline ago succeeded).
  bool canWrite() const;
  // When the open fence closes unless a renewal pushes it on; nullopt when canWrite() is false.
  // The operator's client ends each write there (ClientOptions::writeFence).
  std::optional<Clock::TimePoint> fenceEnd() const;
  // The holder in the last observed record ("" if none).
  std::string leader() const;
  // Why the last attempt failed (OK after a success), for logs.
  Status lastError() const;
  const LeaderElectionConfig& config() const { return config_; }

 private:
  LeaderElector(Reader& reader, Writer& writer, LeaderElectionConfig config, Clock& clock);

  // Takes `lease` (as the server returned it) as the observed record; observedTime moves only
  // when the record's spec differs from the last one seen.
  void observeLocked(const api::Lease& lease);
  Clock::Duration leaseDurationOf(const api::Lease& lease) const;
  void setError(Status status);
  void reportLeader();
  // Closes the fence and runs onStoppedLeading once per term.
  void stopLeading();
  // Waits until `deadline` or stop(); false when stopped.
  bool sleepUntil(Clock::TimePoint deadline);
  void watchdog();

  Reader& reader_;
  Writer& writer_;
  const LeaderElectionConfig config_;
  Clock& clock_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::optional<api::Lease> observed_;  // last record seen (from a get or our own write)
  Clock::TimePoint observedTime_{};     // when its spec last changed, on our clock
  Clock::TimePoint fenceUntil_{};       // writes allowed before this
  bool leading_ = false;                // between onStartedLeading and onStoppedLeading
  bool lost_ = false;
  bool stopped_ = false;
  bool watchdogExit_ = false;
  std::once_flag stoppedOnce_;
  std::string reportedLeader_;
  Status lastError_;
  std::mt19937_64 random_;
};

}  // namespace kubeslurm::kube

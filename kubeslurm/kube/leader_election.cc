#include "kubeslurm/kube/leader_election.h"

#include <algorithm>
#include <thread>
#include <tuple>
#include <utility>

namespace kubeslurm::kube {

namespace {

// The fields whose change means "the holder is alive" (client-go compares the whole record).
auto specOf(const api::Lease& lease) {
  return std::tie(lease.holderIdentity, lease.leaseDurationSeconds, lease.acquireTime,
                  lease.renewTime, lease.leaseTransitions);
}

std::int32_t wholeSeconds(Clock::Duration duration) {
  return static_cast<std::int32_t>(std::chrono::ceil<std::chrono::seconds>(duration).count());
}

}  // namespace

StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::create(Reader& reader, Writer& writer,
                                                               LeaderElectionConfig config,
                                                               Clock& clock) {
  if (config.identity.empty()) return invalidArgument("leader election: identity is empty");
  if (config.leaseNamespace.empty() || config.leaseName.empty()) {
    return invalidArgument("leader election: lease namespace and name are required");
  }
  if (config.retryPeriod <= Clock::Duration::zero()) {
    return invalidArgument("leader election: retryPeriod must be positive");
  }
  if (config.leaseDuration <= config.renewDeadline) {
    return invalidArgument("leader election: leaseDuration must be greater than renewDeadline");
  }
  const auto jittered =
      std::chrono::duration<double>(config.retryPeriod) * std::max(1.0, config.acquireJitter);
  if (std::chrono::duration<double>(config.renewDeadline) <= jittered) {
    return invalidArgument(
        "leader election: renewDeadline must be greater than retryPeriod * acquireJitter");
  }
  if (config.leaseDuration < std::chrono::seconds(1)) {
    return invalidArgument("leader election: leaseDuration must be at least 1 s");
  }
  return std::unique_ptr<LeaderElector>(
      new LeaderElector(reader, writer, std::move(config), clock));
}

LeaderElector::LeaderElector(Reader& reader, Writer& writer, LeaderElectionConfig config,
                             Clock& clock)
    : reader_(reader),
      writer_(writer),
      config_(std::move(config)),
      clock_(clock),
      fenceUntil_(Clock::TimePoint::min()),
      random_(std::random_device{}()) {}

LeaderElector::~LeaderElector() = default;

Clock::Duration LeaderElector::leaseDurationOf(const api::Lease& lease) const {
  // The holder's own promise wins (a released lease says 1 s); recent client-go reads it too.
  if (lease.leaseDurationSeconds && *lease.leaseDurationSeconds > 0) {
    return std::chrono::seconds(*lease.leaseDurationSeconds);
  }
  return config_.leaseDuration;
}

void LeaderElector::observeLocked(const api::Lease& lease) {
  if (!observed_ || specOf(*observed_) != specOf(lease)) observedTime_ = clock_.now();
  observed_ = lease;
}

void LeaderElector::setError(Status status) {
  const std::lock_guard lock(mutex_);
  lastError_ = std::move(status);
}

bool LeaderElector::tryAcquireOrRenew() {
  // Taken before anything is sent: see the header on why the fence counts from here.
  const auto attemptStart = clock_.now();
  const std::int64_t wall = clock_.wallMicros();
  const auto& type = resources::leases();

  auto got = reader_.get(type, config_.leaseNamespace, config_.leaseName);
  if (!got.isOk() && got.status().code() != StatusCode::kNotFound) {
    setError(got.status());
    return false;
  }
  if (!got.isOk()) {
    api::Lease lease;
    lease.metadata.name = config_.leaseName;
    lease.metadata.namespaceName = config_.leaseNamespace;
    lease.holderIdentity = config_.identity;
    lease.leaseDurationSeconds = wholeSeconds(config_.leaseDuration);
    lease.acquireTime = wall;
    lease.renewTime = wall;
    lease.leaseTransitions = 0;
    auto created = writer_.create(type, config_.leaseNamespace, api::encodeLease(lease));
    if (!created.isOk()) {  // another candidate created it first: kAlreadyExists
      setError(created.status());
      return false;
    }
    auto decoded = api::decodeLease(*created);
    const std::lock_guard lock(mutex_);
    observeLocked(decoded.isOk() ? *decoded : lease);
    if (!lost_ && !stopped_) fenceUntil_ = attemptStart + config_.renewDeadline;
    lastError_ = Status::ok();
    return true;
  }

  auto current = api::decodeLease(*got);
  if (!current.isOk()) {
    setError(current.status());
    return false;
  }
  bool wasOurs = false;
  {
    const std::lock_guard lock(mutex_);
    observeLocked(*current);
    const api::Lease& seen = *observed_;
    wasOurs = seen.holderIdentity == config_.identity;
    if (!seen.holderIdentity.empty() && !wasOurs &&
        clock_.now() < observedTime_ + leaseDurationOf(seen)) {
      lastError_ = Status(StatusCode::kFailedPrecondition,
                          "lease held by " + seen.holderIdentity + " and not expired");
      return false;
    }
  }

  api::Lease next = std::move(current).value();
  if (!wasOurs) {
    next.acquireTime = wall;
    next.leaseTransitions = next.leaseTransitions.value_or(0) + 1;
  }
  next.holderIdentity = config_.identity;
  next.leaseDurationSeconds = wholeSeconds(config_.leaseDuration);
  next.renewTime = wall;
  // metadata.resourceVersion from the get is the precondition: a rival's write in between is
  // kAborted (409) and we are not leader this round.
  auto updated = writer_.update(type, config_.leaseNamespace, api::encodeLease(next));
  if (!updated.isOk()) {
    setError(updated.status());
    return false;
  }
  auto decoded = api::decodeLease(*updated);
  const std::lock_guard lock(mutex_);
  observeLocked(decoded.isOk() ? *decoded : next);
  if (!lost_ && !stopped_) fenceUntil_ = attemptStart + config_.renewDeadline;
  lastError_ = Status::ok();
  cv_.notify_all();  // the watchdog re-arms on the new fence
  return true;
}

Status LeaderElector::release() {
  api::Lease lease;
  {
    const std::lock_guard lock(mutex_);
    // Writers stop before anyone else can take over.
    fenceUntil_ = Clock::TimePoint::min();
    if (!observed_ || observed_->holderIdentity != config_.identity) return Status::ok();
    lease = *observed_;
  }
  const std::int64_t wall = clock_.wallMicros();
  lease.holderIdentity.clear();
  lease.leaseDurationSeconds = 1;
  lease.acquireTime = wall;
  lease.renewTime = wall;
  auto updated =
      writer_.update(resources::leases(), config_.leaseNamespace, api::encodeLease(lease));
  if (!updated.isOk()) return updated.status();
  auto decoded = api::decodeLease(*updated);
  const std::lock_guard lock(mutex_);
  observeLocked(decoded.isOk() ? *decoded : lease);
  return Status::ok();
}

bool LeaderElector::isLeader() const {
  const std::lock_guard lock(mutex_);
  return observed_ && observed_->holderIdentity == config_.identity;
}

bool LeaderElector::canWrite() const {
  const std::lock_guard lock(mutex_);
  return observed_ && observed_->holderIdentity == config_.identity && !lost_ &&
         clock_.now() < fenceUntil_;
}

std::optional<Clock::TimePoint> LeaderElector::fenceEnd() const {
  const std::lock_guard lock(mutex_);
  const bool open = observed_ && observed_->holderIdentity == config_.identity && !lost_ &&
                    clock_.now() < fenceUntil_;
  if (!open) return std::nullopt;
  return fenceUntil_;
}

std::string LeaderElector::leader() const {
  const std::lock_guard lock(mutex_);
  return observed_ ? observed_->holderIdentity : std::string();
}

Status LeaderElector::lastError() const {
  const std::lock_guard lock(mutex_);
  return lastError_;
}

void LeaderElector::reportLeader() {
  std::string holder;
  {
    const std::lock_guard lock(mutex_);
    holder = observed_ ? observed_->holderIdentity : std::string();
    if (holder == reportedLeader_) return;
    reportedLeader_ = holder;
  }
  if (config_.callbacks.onNewLeader) config_.callbacks.onNewLeader(holder);
}

void LeaderElector::stop() {
  const std::lock_guard lock(mutex_);
  stopped_ = true;
  cv_.notify_all();
}

bool LeaderElector::sleepUntil(Clock::TimePoint deadline) {
  std::unique_lock lock(mutex_);
  while (!stopped_ && !lost_ && clock_.now() < deadline) clock_.waitUntil(cv_, lock, deadline);
  return !stopped_ && !lost_;
}

void LeaderElector::stopLeading() {
  // Whichever of the watchdog and run() gets here second waits for the first to finish the
  // callback: run() must not release the lease while writers may still be running.
  std::call_once(stoppedOnce_, [this] {
    {
      const std::lock_guard lock(mutex_);
      fenceUntil_ = Clock::TimePoint::min();
      leading_ = false;
    }
    if (config_.callbacks.onStoppedLeading) config_.callbacks.onStoppedLeading();
  });
}

void LeaderElector::watchdog() {
  bool expired = false;
  {
    std::unique_lock lock(mutex_);
    while (!stopped_ && !lost_ && !watchdogExit_) {
      if (clock_.now() >= fenceUntil_) {
        lost_ = true;
        expired = true;
        cv_.notify_all();
        break;
      }
      clock_.waitUntil(cv_, lock, fenceUntil_);
    }
  }
  // On time even when run()'s thread is stuck in a renewal request.
  if (expired) stopLeading();
}

Status LeaderElector::run() {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  while (true) {
    {
      const std::lock_guard lock(mutex_);
      if (stopped_) return Status::ok();
    }
    const auto start = clock_.now();
    const bool acquired = tryAcquireOrRenew();
    reportLeader();
    if (acquired) break;
    const auto pause = std::chrono::duration_cast<Clock::Duration>(
        std::chrono::duration<double>(config_.retryPeriod) *
        (1.0 + config_.acquireJitter * unit(random_)));
    if (!sleepUntil(start + pause)) return Status::ok();
  }

  {
    const std::lock_guard lock(mutex_);
    leading_ = true;
  }
  if (config_.callbacks.onStartedLeading) config_.callbacks.onStartedLeading();
  std::thread dog([this] { watchdog(); });

  auto lastStart = clock_.now();
  while (sleepUntil(lastStart + config_.retryPeriod)) {
    lastStart = clock_.now();
    const bool renewed = tryAcquireOrRenew();
    reportLeader();
    if (renewed) continue;
    const std::lock_guard lock(mutex_);
    if (observed_ && observed_->holderIdentity != config_.identity) {
      // Someone else holds it: we are certainly not leader, whatever the deadline says.
      lost_ = true;
      cv_.notify_all();
    }
    // Any other failure: retry every retryPeriod until the watchdog's deadline.
  }

  bool lost = false;
  {
    const std::lock_guard lock(mutex_);
    lost = lost_;
    watchdogExit_ = true;
    cv_.notify_all();
  }
  stopLeading();
  dog.join();
  if (!lost && config_.releaseOnCancel) {
    if (Status released = release(); !released.isOk()) setError(std::move(released));
    reportLeader();
  }
  if (lost) return {StatusCode::kAborted, "leader election: leadership lost"};
  return Status::ok();
}

}  // namespace kubeslurm::kube

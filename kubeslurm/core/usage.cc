// Fair-share usage: decay and accrual (Slurm's priority/multifactor decay thread).
//
// Usage decays with half-life H: after dt seconds it is multiplied by
//   d(dt) = 0.5^(dt / H) = exp(ln(0.5) * dt / H)
// computed exactly (Slurm's _init_decay_vars uses the first-order 1 - 0.693 / H per second).
//
// A job consuming b billing units per second between t0 and now adds, decayed to now,
//   integral from t0 to now of b * exp(-lambda * (now - t)) dt = b * (1 - exp(-lambda * dt)) /
//   lambda
// with lambda = ln(2) / H and dt = now - t0: every second of use is decayed by how long ago it
// was, rather than charging the whole interval at one end of it. Without a half-life (0), usage
// never decays and the job adds b * dt.
#include "kubeslurm/core/usage.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "kubeslurm/core/priority.h"

namespace kubeslurm::core {

namespace {

constexpr double kMillisPerCpu = 1000.0;

// What a running job holds over its nodes: an exclusive job holds their whole allocatable.
Resources heldResources(const Job& job, const Snapshot& snapshot) {
  Resources total;
  for (NodeIndex n : job.allocatedNodes) {
    if (n >= snapshot.nodes.size()) continue;
    const Resources held = job.exclusive ? snapshot.nodes[n].allocatable : job.perNodeAllocation();
    total.gpus += held.gpus;
    total.cpuMillis += held.cpuMillis;
  }
  return total;
}

// Billing units per second of a running job: billing-weighted GPUs and CPUs it holds.
double billingRate(const Job& job, const Snapshot& snapshot) {
  const PriorityConfig& c = snapshot.config.priority;
  const Resources held = heldResources(job, snapshot);
  return static_cast<double>(held.gpus) * c.billingWeightGpu +
         static_cast<double>(held.cpuMillis) / kMillisPerCpu * c.billingWeightCpu;
}

// What one unit of usage is worth `seconds` later (1 with no half-life: usage never decays).
double decayOver(Duration seconds, Duration halfLife) {
  if (halfLife <= 0) return 1.0;
  return std::exp(-std::numbers::ln2 * static_cast<double>(seconds) /
                  static_cast<double>(halfLife));
}

double decayedAccrual(double rate, Duration seconds, Duration halfLife) {
  if (seconds <= 0) return 0.0;
  const auto dt = static_cast<double>(seconds);
  if (halfLife <= 0) return rate * dt;
  const double lambda = std::numbers::ln2 / static_cast<double>(halfLife);
  return rate * -std::expm1(-lambda * dt) / lambda;
}

}  // namespace

std::vector<Account> advanceUsage(const Snapshot& snapshot, Time now) {
  std::vector<Account> accounts = snapshot.accounts;
  const Duration dt = now - snapshot.usageTime;
  if (dt <= 0 || accounts.empty()) return accounts;
  const Duration halfLife = snapshot.config.priority.decayHalfLife;
  const double decay = decayOver(dt, halfLife);
  for (Account& a : accounts) a.rawUsage *= decay;
  const FairShareTree tree(snapshot.accounts, false);
  for (const Job& job : snapshot.jobs) {
    if (job.phase != JobPhase::kRunning) continue;
    const auto assoc = tree.associationOf(job.account, job.user);
    if (!assoc || *assoc >= accounts.size()) continue;
    const Time from = std::max(job.startTime, snapshot.usageTime);
    accounts[*assoc].rawUsage += decayedAccrual(billingRate(job, snapshot), now - from, halfLife);
  }
  for (const EndedJob& ended : snapshot.ended) {
    const auto assoc = tree.associationOf(ended.job.account, ended.job.user);
    if (!assoc || *assoc >= accounts.size()) continue;
    const Time from = std::max(ended.job.startTime, snapshot.usageTime);
    const Time to = std::min(ended.endTime, now);
    if (to <= from) continue;
    // Its use from `from` to `to`, decayed to `to`, then decayed on to now.
    accounts[*assoc].rawUsage +=
        decayedAccrual(billingRate(ended.job, snapshot), to - from, halfLife) *
        decayOver(now - to, halfLife);
  }
  return accounts;
}

std::map<std::pair<std::string, std::string>, double> gpuSecondsHeld(const Snapshot& snapshot,
                                                                     Time since, Time now) {
  std::map<std::pair<std::string, std::string>, double> held;
  const auto charge = [&](const Job& job, Time to) {
    const Time from = std::max(job.startTime, since);
    const std::uint64_t gpus = heldResources(job, snapshot).gpus;
    if (to <= from || gpus == 0) return;
    held[{job.account, job.user}] += static_cast<double>(gpus) * static_cast<double>(to - from);
  };
  for (const Job& job : snapshot.jobs) {
    if (job.phase == JobPhase::kRunning) charge(job, now);
  }
  for (const EndedJob& ended : snapshot.ended) charge(ended.job, std::min(ended.endTime, now));
  return held;
}

}  // namespace kubeslurm::core

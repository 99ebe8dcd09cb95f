#include "kubeslurm/sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kubeslurm::sim {
namespace {

// Normalised shares of the leaves, as Slurm's classic fair-share computes them: an account's
// share of its siblings, times its parent's normalised share.
std::map<std::string, double> normalisedShares(const std::vector<core::Account>& accounts) {
  std::map<std::string, std::uint64_t> siblingTotal;
  std::map<std::string, const core::Account*> byName;
  for (const core::Account& account : accounts) {
    byName[account.name] = &account;
    siblingTotal[account.parent] += account.shares;
  }
  std::map<std::string, double> result;
  for (const core::Account& account : accounts) {
    double share = 1.0;
    const core::Account* current = &account;
    // Bounded walk: a malformed tree with a cycle stops after as many steps as there are nodes.
    for (std::size_t depth = 0; current != nullptr && depth <= accounts.size(); ++depth) {
      const std::uint64_t total = siblingTotal[current->parent];
      if (current->parent.empty()) break;
      share *= total == 0 ? 0.0 : static_cast<double>(current->shares) / static_cast<double>(total);
      const auto parent = byName.find(current->parent);
      current = parent == byName.end() ? nullptr : parent->second;
    }
    result[account.name] = share;
  }
  return result;
}

}  // namespace

double percentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank =
      std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

Distribution distribution(std::vector<double> values) {
  Distribution d;
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  d.p50 = percentile(values, 50);
  d.p95 = percentile(values, 95);
  d.p99 = percentile(values, 99);
  d.max = values.back();
  return d;
}

double boundedSlowdown(double wait, double run) {
  return std::max(1.0, (wait + run) / std::max(run, kSlowdownBound));
}

double jainIndex(std::span<const double> values) {
  double sum = 0;
  double squares = 0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  if (values.empty() || squares <= 0) return 1.0;
  return sum * sum / (static_cast<double>(values.size()) * squares);
}

Metrics computeMetrics(std::span<const JobOutcome> outcomes, const MetricsInputs& inputs) {
  Metrics m;
  m.jobs = outcomes.size();
  std::vector<double> waits;
  std::vector<double> slowdowns;
  std::int64_t firstSubmit = std::numeric_limits<std::int64_t>::max();
  std::int64_t lastEnd = std::numeric_limits<std::int64_t>::min();
  struct PerAccount {
    std::uint64_t jobs = 0;
    std::uint64_t started = 0;
    double gpuSeconds = 0;
    double waitSum = 0;
  };
  std::map<std::string, PerAccount> perAccount;
  for (const JobOutcome& job : outcomes) {
    firstSubmit = std::min(firstSubmit, job.submit);
    PerAccount& account = perAccount[job.account];
    ++account.jobs;
    account.gpuSeconds += job.gpuSeconds;
    m.gpuSeconds += job.gpuSeconds;
    m.requeues += job.restarts;
    switch (job.state) {
      case JobEnd::kCompleted:
        ++m.completed;
        break;
      case JobEnd::kTimeout:
        ++m.timedOut;
        break;
      case JobEnd::kCancelled:
        ++m.cancelled;
        break;
      case JobEnd::kNeverStarted:
        ++m.neverStarted;
        break;
    }
    if (job.start < 0) continue;
    ++m.started;
    if (job.backfilled) ++m.backfilled;
    const auto wait = static_cast<double>(job.start - job.submit);
    waits.push_back(wait);
    ++account.started;
    account.waitSum += wait;
    if (job.end >= 0) {
      lastEnd = std::max(lastEnd, job.end);
      slowdowns.push_back(boundedSlowdown(wait, static_cast<double>(job.end - job.start)));
    }
  }
  if (lastEnd >= firstSubmit && firstSubmit != std::numeric_limits<std::int64_t>::max()) {
    m.makespan = lastEnd - firstSubmit;
  }
  if (m.makespan > 0) {
    const auto span = static_cast<double>(m.makespan);
    if (inputs.clusterGpus > 0) {
      m.gpuUtilization = m.gpuSeconds / (static_cast<double>(inputs.clusterGpus) * span);
    }
    if (inputs.clusterNodes > 0) {
      m.nodeUtilization =
          inputs.busyNodeSeconds / (static_cast<double>(inputs.clusterNodes) * span);
    }
  }
  m.wait = distribution(std::move(waits));
  m.boundedSlowdown = distribution(std::move(slowdowns));

  const std::map<std::string, double> shares = normalisedShares(inputs.accounts);
  std::vector<double> ratios;
  for (const auto& [name, account] : perAccount) {
    AccountUsage usage;
    usage.account = name;
    usage.jobs = account.jobs;
    const auto share = shares.find(name);
    usage.share = share == shares.end() ? 0.0 : share->second;
    usage.gpuSeconds = account.gpuSeconds;
    usage.usage = m.gpuSeconds > 0 ? account.gpuSeconds / m.gpuSeconds : 0.0;
    usage.meanWait =
        account.started == 0 ? 0.0 : account.waitSum / static_cast<double>(account.started);
    if (usage.share > 0) ratios.push_back(usage.usage / usage.share);
    m.accounts.push_back(std::move(usage));
  }
  m.jainFairness = jainIndex(ratios);
  return m;
}

}  // namespace kubeslurm::sim

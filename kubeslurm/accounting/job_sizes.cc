#include "kubeslurm/accounting/job_sizes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "kubeslurm/base/arithmetic.h"
#include "kubeslurm/base/text.h"

namespace kubeslurm::accounting {

namespace {

constexpr std::uint32_t kNoUpperBound = std::numeric_limits<std::uint32_t>::max();

bool listed(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

// A run the report counts, with its size and elapsed time.
struct Run {
  const JobRecord* record = nullptr;
  std::uint64_t cpus = 0;
  std::uint64_t tresCount = 0;
  std::uint64_t elapsed = 0;
};

// slurmdbd's job query for the window, then the report's own cut: runs that ran, with CPUs.
std::vector<Run> runsOf(const std::vector<JobRecord>& records, const JobSizesQuery& query,
                        std::int64_t now) {
  std::vector<Run> runs;
  for (const JobRecord& r : records) {
    // An array's own record stands for its tasks, whose records hold their allocations.
    if (!r.arrayTasks.empty() || !r.startTime || r.allocTres.empty()) continue;
    const std::int64_t eligible = r.eligibleTime.value_or(r.submitTime.value_or(*r.startTime));
    if (eligible >= query.window.end || (r.endTime && *r.endTime < query.window.start)) continue;
    if (!listed(query.users, lowercaseAscii(r.user)) || !listed(query.partitions, r.partition)) {
      continue;
    }
    if (!query.jobIds.empty() &&
        std::find(query.jobIds.begin(), query.jobIds.end(), r.jobId) == query.jobIds.end()) {
      continue;
    }
    if (query.flatView && !listed(query.accounts, r.account)) continue;
    const std::int64_t end = r.endTime.value_or(now);
    if (end <= *r.startTime) continue;
    const std::map<std::string, std::uint64_t> counts = tresCounts(r.allocTres);
    const auto cpus = counts.find("cpu");
    if (cpus == counts.end()) continue;
    const auto tres = counts.find(query.tres);
    runs.push_back(Run{&r, cpus->second, tres == counts.end() ? 0 : tres->second,
                       static_cast<std::uint64_t>(end - *r.startTime)});
  }
  return runs;
}

std::vector<JobSizeBucket> bucketsOf(const std::vector<Run>& runs, const JobSizesQuery& query) {
  std::vector<JobSizeBucket> buckets;
  if (query.individual) {
    // One per size a run has (atoi of its printed count, as Slurm builds the list), ascending.
    std::set<std::uint32_t> sizes;
    for (const Run& run : runs) sizes.insert(static_cast<std::uint32_t>(run.cpus));
    for (const std::uint32_t size : sizes) buckets.push_back({size, size, false});
    return buckets;
  }
  const std::vector<std::uint32_t> defaults = {50, 250, 500, 1000};
  const std::vector<std::uint32_t>& grouping = query.grouping.empty() ? defaults : query.grouping;
  std::uint32_t last = 0;
  for (const std::uint32_t bound : grouping) {
    buckets.push_back({last, bound - 1U, false});  // 0 wraps to no upper bound, as in Slurm
    last = bound;
  }
  if (last != 0) buckets.push_back({last, kNoUpperBound, true});
  return buckets;
}

// The line (account) a run goes to, or nullopt for a run under none of the report's accounts.
class AccountLines {
 public:
  AccountLines(const std::vector<Run>& runs, const std::vector<AccountEdge>& edges,
               const JobSizesQuery& query)
      : flat_(query.flatView) {
    if (flat_) return;
    std::vector<std::string> runAccounts;
    runAccounts.reserve(runs.size());
    for (const Run& run : runs) runAccounts.push_back(run.record->account);
    parentOf_ = accountParents(edges, runAccounts);
    if (query.accountsAsParents) {
      const std::vector<std::string> rootOnly = {kRootAccount};
      const std::vector<std::string>& parents = query.accounts.empty() ? rootOnly : query.accounts;
      for (const auto& [name, parent] : parentOf_) {
        if (std::find(parents.begin(), parents.end(), parent) != parents.end()) {
          lines_.insert(name);
        }
      }
    } else if (!query.accounts.empty()) {
      for (const std::string& name : query.accounts) {
        if (name == kRootAccount || parentOf_.contains(name)) lines_.insert(name);
      }
    } else {
      lines_.insert(kRootAccount);  // root holds every run: it is the one line
    }
  }

  std::optional<std::string> lineOf(const std::string& account) const {
    if (flat_) return account;
    // The outermost line on the way up to root: the first in slurmdbd's lft order.
    std::optional<std::string> outermost;
    std::string at = account;
    for (std::size_t steps = 0; steps <= parentOf_.size() + 1; ++steps) {
      if (lines_.contains(at)) outermost = at;
      if (at == kRootAccount) break;
      const auto parent = parentOf_.find(at);
      if (parent == parentOf_.end()) break;
      at = parent->second;
    }
    return outermost;
  }

 private:
  bool flat_;
  std::map<std::string, std::string> parentOf_;
  std::set<std::string> lines_;
};

}  // namespace

JobSizesReport jobSizesByAccount(const std::vector<JobRecord>& records,
                                 const std::vector<AccountEdge>& accounts,
                                 const JobSizesQuery& query, std::int64_t now) {
  const std::vector<Run> runs = runsOf(records, query, now);
  JobSizesReport report;
  report.buckets = bucketsOf(runs, query);
  const AccountLines lines(runs, accounts, query);
  std::map<std::string, AccountJobSizes> byAccount;
  for (const Run& run : runs) {
    const std::optional<std::string> line = lines.lineOf(run.record->account);
    if (!line) continue;
    AccountJobSizes& sizes = byAccount[*line];
    if (sizes.runs.empty()) {
      sizes.account = *line;
      sizes.runs.assign(report.buckets.size(), 0);
      sizes.tresSeconds.assign(report.buckets.size(), 0);
    }
    const std::uint64_t used = saturatingProduct(run.tresCount, run.elapsed);
    // Every bucket that holds the size counts the run (Slurm's buckets overlap when Grouping=
    // is not ascending, and so do the totals then).
    for (std::size_t b = 0; b < report.buckets.size(); ++b) {
      if (run.cpus < report.buckets[b].min || run.cpus > report.buckets[b].max) continue;
      ++sizes.runs[b];
      sizes.tresSeconds[b] = saturatingSum(sizes.tresSeconds[b], used);
      ++sizes.totalRuns;
      sizes.totalTresSeconds = saturatingSum(sizes.totalTresSeconds, used);
      ++report.clusterRuns;
      report.clusterTresSeconds = saturatingSum(report.clusterTresSeconds, used);
    }
  }
  for (auto& [name, sizes] : byAccount) {
    if (sizes.totalRuns > 0) report.accounts.push_back(std::move(sizes));
  }
  return report;
}

}  // namespace kubeslurm::accounting

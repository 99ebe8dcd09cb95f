// sreport's `job SizesByAccount` over job records: the runs of a window bucketed by their size,
// per account, with what each bucket used.
//
// As Slurm 22.05.8 computes it (src/api/job_report_functions.c _process_grouped_report,
// src/sreport/job_reports.c):
//   - the runs are the records slurmdbd's job query returns for the window (eligible before its
//     end, and ended at or after its start or still running), every attempt of a requeued job
//     (JOBCOND_FLAG_DUP), and only those that ran (elapsed > 0);
//   - a run's size is its allocated CPUs, whatever TRES the report prints ("FIXME: This only
//     works for CPUS now": tres_id stays TRES_CPU there); a bucket holds sizes
//     [previous bound, bound - 1], the last one [last bound, infinity); with `individual`, one
//     bucket per size a run has;
//   - what a bucket used is the run's count of the report's TRES times its whole elapsed time
//     (not clipped to the window: slurmdb_transfer_tres_time(job->elapsed));
//   - the accounts: without FlatView, slurmdbd's associations, and a run goes to the first whose
//     lft..rgt range holds its association, in lft order, so to the outermost one that holds it:
//     every association (root holds every run, so the report is root's line), those of the
//     accounts named (Accounts=), or with AcctAsParent the sub-accounts of the named accounts
//     (of root when none). A run under none of them is left out. With FlatView each run's own
//     account is its line, and Accounts= selects runs by account.
//   - accounts (and the cluster) with no run are dropped; the rest are sorted by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/accounting/usage_report.h"

namespace kubeslurm::accounting {

struct JobSizesQuery {
  ReportWindow window;
  std::string tres = "cpu";  // what the buckets' usage counts
  // Bucket bounds as sreport's Grouping= lists them (in that order: Slurm does not sort them);
  // ignored with `individual`.
  std::vector<std::uint32_t> grouping = {50, 250, 500, 1000};
  bool individual = false;  // Grouping=individual
  bool flatView = false;
  bool accountsAsParents = false;  // AcctAsParent (ignored with FlatView)
  std::vector<std::string> accounts;
  std::vector<std::string> users;  // matched lower-cased, as sreport lower-cases Users=
  std::vector<std::string> partitions;
  std::vector<std::int64_t> jobIds;
};

struct JobSizeBucket {
  std::uint32_t min = 0;
  std::uint32_t max = 0;  // UINT32_MAX: no upper bound
  bool orMore = false;    // the bucket past the last bound (">= N")
};

struct AccountJobSizes {
  std::string account;
  std::vector<std::uint64_t> tresSeconds;  // per bucket
  std::vector<std::uint64_t> runs;         // per bucket
  std::uint64_t totalTresSeconds = 0;
  std::uint64_t totalRuns = 0;
  friend bool operator==(const AccountJobSizes&, const AccountJobSizes&) = default;
};

struct JobSizesReport {
  std::vector<JobSizeBucket> buckets;
  std::vector<AccountJobSizes> accounts;  // by name
  std::uint64_t clusterTresSeconds = 0;
  std::uint64_t clusterRuns = 0;
};

// The report over `records` (a run's record once: the store's or the live job's), with the
// account tree of the Account objects (an account none names, or in a cycle, hangs under root).
JobSizesReport jobSizesByAccount(const std::vector<JobRecord>& records,
                                 const std::vector<AccountEdge>& accounts,
                                 const JobSizesQuery& query, std::int64_t now);

}  // namespace kubeslurm::accounting

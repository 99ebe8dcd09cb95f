// sreport's arithmetic over job records: the report window as sreport rounds it, and each
// association's (user and account's) allocated TRES-seconds inside it.
//
// Slurm's sreport reads slurmdbd's hourly rollups, which charge each job's allocated TRES
// (AllocTRES: cpu=64,mem=500G,node=1,gres/gpu=8) times the seconds it held them within each hour
// to its association. Summed over the hours of a window that is the job's allocation times the
// overlap of its run with the window, which is what this computes from the records directly. A
// run still going counts up to `now`. Sources (Slurm 22.05.8): src/common/slurmdb_defs.c
// (slurmdb_report_set_start_end_time), src/sreport/common.c (sanity_check_endtime),
// src/api/user_report_functions.c (one entry per association with usage in the window).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/accounting/job_records.h"

namespace kubeslurm::accounting {

// [start, end) in Unix seconds.
struct ReportWindow {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

// sreport's window from its start= and end= (absent: not given), in local time (`utcOffset`
// seconds east of UTC): an end past `now` is `now`; each bound goes to the nearest hour (from
// :29:30 up, as slurmdb_report_set_start_end_time rounds seconds, then minutes); without an end,
// today's midnight, without a start, yesterday's; a window shorter than an hour is one hour from
// its start.
ReportWindow reportWindow(std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                          std::int64_t now, std::int32_t utcOffset);

// The counts of a TRES string as the rollup charges them: mem in MB ("500G" is 512000), the
// others as written. "gres/gpu" is the GPUs of every type when the string lists only typed ones
// ("gres/gpu:h100=8"). Items that do not parse are left out.
std::map<std::string, std::uint64_t> tresCounts(std::string_view tres);

// What one association used in a window: TRES name ("cpu", "gres/gpu") -> allocated seconds.
struct AssociationUsage {
  std::string user;
  std::string account;
  std::map<std::string, std::uint64_t> allocSeconds;
  friend bool operator==(const AssociationUsage&, const AssociationUsage&) = default;
};

// Every association whose runs held an allocation inside `window`, ordered by user, then
// account. Runs without AllocTRES (never started) hold none, nor does an array's own record
// (its tasks' records do).
std::vector<AssociationUsage> associationUsage(const std::vector<JobRecord>& records,
                                               const ReportWindow& window, std::int64_t now);

// An account of the association tree (the Account objects): its parent, "" for root's children.
struct AccountEdge {
  std::string name;
  std::string parent;
};

inline constexpr const char* kRootAccount = "root";

// Each account's parent, every chain ending at root ("root" itself has none): the Account
// objects' edges, and `extra` accounts (those runs were charged to) that no object names under
// root. An unknown parent, or a chain that does not reach root (a cycle), is cut to root.
std::map<std::string, std::string> accountParents(const std::vector<AccountEdge>& accounts,
                                                  const std::vector<std::string>& extra);

// A line of sreport's `cluster AccountUtilizationByUser`: an account (`user` empty) with what its
// whole subtree used, or one user's association under `account`.
struct AccountUsageRow {
  std::string account;
  std::string parent;  // an account row's parent ("" for root)
  std::string user;
  std::map<std::string, std::uint64_t> allocSeconds;
  friend bool operator==(const AccountUsageRow&, const AccountUsageRow&) = default;
};

// The association tree with usage, in slurmdbd's hierarchical order: root, then under each
// account its users (by name) before its sub-accounts (by name), depth first
// (slurmdb_get_hierarchical_sorted_assoc_list); an account's usage is its subtree's, as the
// rollups sum it up the tree. Only associations that used something appear. An account not in
// `accounts`, or whose parents do not lead to root (a cycle), hangs under root. `subtrees`
// (Accounts=, with their sub-accounts) keeps only the rows at or below the accounts it names.
std::vector<AccountUsageRow> accountUsageTree(const std::vector<AssociationUsage>& usage,
                                              const std::vector<AccountEdge>& accounts,
                                              const std::vector<std::string>& subtrees);

}  // namespace kubeslurm::accounting

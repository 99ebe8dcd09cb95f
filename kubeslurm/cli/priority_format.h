// `sprio` and `sshare` as Slurm 22.05 prints them, as pure functions of what the operator's
// query API returned (kubeslurm/rpc/query_state.h), the options and the caller: no I/O.
//
// Sources of truth (Slurm 22.05.8): src/sprio/{opts.c,print.c,sort.c,sprio.c} (default format
// built from the non-zero weights, %-field widths, "%.0f" factors, PRIORITY as the truncated sum
// of the factors, default sort by job id) and src/sshare/{sshare.c,process.c} with
// src/common/print_fields.c (fixed-width fields, '+' on truncation, Fair Tree's FairShare on
// user rows only); the reference outputs in ../shared/reference/slurm-22.05.md ("sprio,
// sshare, sdiag").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/cli/command_output.h"
#include "kubeslurm/rpc/query_state.h"

namespace kubeslurm::cli {

struct SprioOptions {
  bool noHeader = false;                          // -h
  bool longList = false;                          // -l
  bool normalized = false;                        // -n
  bool weights = false;                           // -w
  std::optional<std::string> format;              // -o
  std::string sort;                               // -S ("" = by job id)
  std::optional<std::vector<std::int64_t>> jobs;  // -j (empty list: every job)
  std::vector<std::string> partitions;            // -p
  std::vector<std::string> users;                 // -u
};

struct SprioParse {
  SprioOptions options;
  std::optional<CommandOutput> exit;  // --help, --version, or a bad argument
};
SprioParse parseSprioArgs(const std::vector<std::string>& args);

// `all`: the pending jobs the caller may see (one namespace, or all).
CommandOutput formatSprio(const std::vector<rpc::PendingJob>& all,
                          const rpc::PriorityWeights& weights, const SprioOptions& options);

struct SshareOptions {
  bool noHeader = false;              // -n / -h
  bool longList = false;              // -l
  bool allUsers = false;              // -a (or -u -1)
  bool usersOnly = false;             // -U
  int parsable = 0;                   // 0, 1 (-p: trailing '|'), 2 (-P)
  std::vector<std::string> users;     // -u
  std::vector<std::string> accounts;  // -A
  std::optional<std::string> format;  // -o
};

struct SshareParse {
  SshareOptions options;
  std::optional<CommandOutput> exit;
};
SshareParse parseSshareArgs(const std::vector<std::string>& args);

// `caller`: the Slurm user of the invocation; without -a/-u only their user rows are shown, as
// sshare shows the invoking user's.
CommandOutput formatSshare(const std::vector<rpc::FairShareRow>& rows, bool fairTree,
                           const SshareOptions& options, const std::string& caller);

}  // namespace kubeslurm::cli

// `sreport` as Slurm 22.05 prints it, as a pure function of the job records, the arguments and
// `now`: no I/O, no clock. sreport_cmd.cc reads the records and prints what this returns.
//
// Sources of truth (Slurm 22.05.8): src/sreport/sreport.c (options, the command words and their
// prefix lengths, -t and -T), src/sreport/user_reports.c (user TopUsage: its conditions, fields,
// header and order), src/sreport/common.c (slurmdb_report_print_time, the Used column's width,
// sort_user_dec), src/common/print_fields.c (fixed-width and parsable fields), and
// kubeslurm/accounting/usage_report.h for the window and the usage.
//
// Built: `user TopUsage`. The cluster, job and reservation reports answer that kubeslurm does
// not make them yet; the percentage time formats need the cluster's capacity over time, which
// kubeslurm does not record, and are refused.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/accounting/usage_report.h"
#include "kubeslurm/cli/command_output.h"

namespace kubeslurm::cli {

enum class SreportTime { kSeconds, kMinutes, kHours };

struct SreportOptions {
  bool noHeader = false;    // -n
  int parsable = 0;         // 1: -p (trailing '|'), 2: -P
  bool quiet = false;       // -Q
  bool sortByName = false;  // -s Name
  SreportTime time = SreportTime::kMinutes;
  std::vector<std::string> tres;  // -T (or $SREPORT_TRES), resolved; empty: cpu, "CPU" usage
};

// `user TopUsage`'s conditions.
struct SreportTopUsage {
  std::optional<std::int64_t> start;
  std::optional<std::int64_t> end;
  std::vector<std::string> users;     // Users= (lower-cased, as slurmdbd's user names are)
  std::vector<std::string> accounts;  // Accounts=
  std::uint32_t topCount = 10;        // TopCount=
  bool group = false;                 // group: one line per user, accounts joined
  std::vector<std::string> format;    // Format=
};

struct SreportContext {
  std::int64_t now = 0;
  std::int32_t utcOffsetSeconds = 0;
  std::string clusterName = "kubeslurm";
  std::optional<std::string> envTres;  // $SREPORT_TRES
};

struct SreportParse {
  SreportOptions options;
  std::optional<SreportTopUsage> topUsage;
  // Set when sreport stops before reading records: a bad option, help, a report kubeslurm does
  // not make.
  std::optional<CommandOutput> exit;
  // What sreport complains of and then reports anyway (an unknown condition or field, a bad
  // TopCount), and the exit code that leaves.
  std::string complaints;
  int exitCode = 0;
};
SreportParse parseSreportArgs(const std::vector<std::string>& args, const SreportContext& context);

// The window `user TopUsage` reports on.
accounting::ReportWindow topUsageWindow(const SreportTopUsage& report,
                                        const SreportContext& context);

// `user TopUsage` of `usage` (accounting::associationUsage over the window's records);
// `properNames` holds the login host's GECOS name of each user it knows.
CommandOutput formatTopUsage(const std::vector<accounting::AssociationUsage>& usage,
                             const SreportParse& parse, const SreportContext& context,
                             const std::map<std::string, std::string>& properNames);

}  // namespace kubeslurm::cli

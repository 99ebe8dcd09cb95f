// `sreport` as Slurm 22.05 prints it, as a pure function of the job records, the arguments and
// `now`: no I/O, no clock. sreport_cmd.cc reads the records and prints what this returns.
//
// Sources of truth (Slurm 22.05.8): src/sreport/sreport.c (options, the command words and their
// prefix lengths, -t and -T), src/sreport/user_reports.c (user TopUsage: its conditions, fields,
// header and order), src/sreport/common.c (slurmdb_report_print_time, the Used column's width,
// sort_user_dec), src/common/print_fields.c (fixed-width and parsable fields), and
// kubeslurm/accounting/usage_report.h for the window and the usage.
//
// Built: `user TopUsage`, `cluster AccountUtilizationByUser` and `cluster
// UserUtilizationByAccount` (src/sreport/cluster_reports.c, src/api/cluster_report_functions.c,
// slurmdb_tree_name_get), and `job SizesByAccount` (src/sreport/job_reports.c,
// kubeslurm/accounting/job_sizes.h). The other cluster and job reports and the reservation
// reports answer that kubeslurm does not make them yet; the percentage time formats need the
// cluster's capacity over time, which kubeslurm does not record, and are refused but for the job
// report, whose percentages are of its own totals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/accounting/usage_report.h"
#include "kubeslurm/cli/command_output.h"

namespace kubeslurm::cli {

// -t: the whole-number formats, and the percentage ones (of an account's or a line's total),
// which only the job report can print: the others need the cluster's capacity over time.
enum class SreportTime {
  kSeconds,
  kMinutes,
  kHours,
  kPercent,
  kSecondsPercent,
  kMinutesPercent,
  kHoursPercent,
};

struct SreportOptions {
  bool noHeader = false;    // -n
  int parsable = 0;         // 1: -p (trailing '|'), 2: -P
  bool quiet = false;       // -Q
  bool sortByName = false;  // -s Name
  SreportTime time = SreportTime::kMinutes;
  std::vector<std::string> tres;  // -T (or $SREPORT_TRES), resolved; empty: cpu, "CPU" usage
  // -T's first item as given, which the job report's header names ("TRES type is gres/gpu");
  // empty without -T.
  std::string tresText;
};

enum class SreportReport {
  kUserTop,                   // user TopUsage
  kAccountUtilizationByUser,  // cluster AccountUtilizationByUser
  kUserUtilizationByAccount,  // cluster UserUtilizationByAccount
  kJobSizesByAccount,         // job SizesByAccount
};

// A report and its conditions.
struct SreportRequest {
  SreportReport report = SreportReport::kUserTop;
  std::optional<std::int64_t> start;
  std::optional<std::int64_t> end;
  // Users=, lower-cased as sreport does; matched against user names lower-cased too, since
  // kubeslurm's (Kubernetes user names) keep their case where slurmdbd's are lower-case.
  std::vector<std::string> users;
  std::vector<std::string> accounts;  // Accounts= (with their sub-accounts in the account tree)
  std::uint32_t topCount = 10;        // TopCount= (user TopUsage)
  bool group = false;                 // group (user TopUsage): one line per user
  bool tree = false;                  // Tree (cluster reports): accounts indented by depth
  std::vector<std::string> format;    // Format=
  // job SizesByAccount's (job_reports.c _set_cond).
  std::vector<std::string> grouping;    // Grouping= items as given ("50", "250%20")
  bool individual = false;              // Grouping=individual
  bool flatView = false;                // FlatView
  bool accountsAsParents = false;       // AcctAsParent
  bool printJobCount = false;           // PrintJobCount
  std::vector<std::string> clusters;    // Clusters= (or a bare word), lower-cased
  std::vector<std::string> partitions;  // Partitions=
  std::vector<std::int64_t> jobIds;     // Jobs=
  bool wckeys = false;                  // Wckeys=: kubeslurm keeps none, so no run has one
};

struct SreportContext {
  std::int64_t now = 0;
  std::int32_t utcOffsetSeconds = 0;
  std::string clusterName = "kubeslurm";
  std::optional<std::string> envTres;  // $SREPORT_TRES
};

struct SreportParse {
  SreportOptions options;
  std::optional<SreportRequest> request;
  // Set when sreport stops before reading records: a bad option, help, a report kubeslurm does
  // not make.
  std::optional<CommandOutput> exit;
  // What sreport complains of and then reports anyway (an unknown condition or field, a bad
  // TopCount), and the exit code that leaves.
  std::string complaints;
  int exitCode = 0;
};
SreportParse parseSreportArgs(const std::vector<std::string>& args, const SreportContext& context);

// The window a report covers.
accounting::ReportWindow reportWindow(const SreportRequest& request, const SreportContext& context);

// What a report prints besides its options: each association's usage in the window
// (accounting::associationUsage), the account tree (the Account objects, for the cluster
// reports) and the login host's GECOS name of each user it knows.
struct SreportData {
  std::vector<accounting::AssociationUsage> usage;
  std::vector<accounting::AccountEdge> accounts;
  std::map<std::string, std::string> properNames;
  std::vector<accounting::JobRecord> records;  // the job report's runs (each run once)
};
CommandOutput formatSreport(const SreportData& data, const SreportParse& parse,
                            const SreportContext& context);

}  // namespace kubeslurm::cli

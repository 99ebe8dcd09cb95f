// `sacct` as Slurm 22.05 prints it, as a pure function of decoded SlurmJobs, the options and
// `now`: no I/O, no clock. sacct_cmd.cc lists the objects and prints what this returns.
//
// Sources of truth (Slurm 22.05.8): src/sacct/options.c (parse_command_line: options, the field
// list and its prefix matching, the default user), src/sacct/sacct.c (the field table with its
// widths), src/sacct/print.c (each field), src/common/print_fields.c (widths, '+' truncation,
// parsable output), src/common/slurmdb_defs.c (slurmdb_job_cond_def_start_end: the default time
// window), src/plugins/accounting_storage/mysql/as_mysql_jobacct_process.c (which jobs a window
// and a state list select), and ../shared/reference/slurm-22.05.md ("sacct").
//
// sacct prints job records (kubeslurm/accounting/job_records.h): the store's, or those of live
// SlurmJobs (accounting/slurmjob_records.h). A SlurmJob without status.jobId has none. An
// array's own record is not a row once its tasks exist; its tasks show as "A_T". Steps: srun's,
// as rank 0 reported them, and every batch job that started gets the "N.batch" line Slurm's
// batch step gives it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/command_output.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

// One -j entry: "N", "N_T" or "N.S" (a step: kubeslurm has only "batch").
struct SacctJobSelector {
  std::int64_t jobId = 0;
  std::optional<std::int64_t> taskId;
  std::optional<std::string> step;
};

struct SacctOptions {
  std::string fieldList;  // -o/--format values and -b/-l, each followed by ','
  bool formatGiven = false;
  bool noHeader = false;                     // -n
  int parsable = 0;                          // 1: -p (trailing delimiter), 2: -P
  std::optional<std::string> delimiter;      // --delimiter
  bool allocations = false;                  // -X
  bool duplicates = false;                   // -D: every run of a requeued job
  bool allUsers = false;                     // -a, -u -1
  std::vector<std::string> users;            // -u
  std::vector<std::string> accounts;         // -A
  std::vector<std::string> partitions;       // -r
  std::vector<std::string> names;            // --name
  std::vector<std::string> qos;              // -q
  std::vector<slurm::JobState> states;       // -s
  std::vector<SacctJobSelector> jobs;        // -j
  std::optional<slurm::EpochSeconds> start;  // -S
  std::optional<slurm::EpochSeconds> end;    // -E
};

// What sacct learns besides the jobs and the arguments.
struct SacctContext {
  slurm::EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
  std::string user;                      // the calling user: sacct's default -u
  std::optional<std::string> envFormat;  // $SACCT_FORMAT
  std::string clusterName = "kubeslurm";
  std::string defaultPartition;  // for a job that names none
  std::map<std::string, slurm::TimeLimit> partitionDefaultTime;
  std::map<std::string, api::PartitionMemory> partitionMemory;
  std::map<std::string, std::uint64_t> nodeMemoryMb;  // each partition's first node's
};

// Parses sacct's arguments (getopt_long rules) and the field list. `exit` is set when sacct
// stops before reading jobs: a bad option, time or field, --help, --helpformat.
struct SacctParse {
  SacctOptions options;
  // The resolved fields, as indexes into the field table, and their widths.
  std::vector<int> fields;
  std::map<int, int> widths;
  std::optional<CommandOutput> exit;
};
SacctParse parseSacctArgs(const std::vector<std::string>& args, const SacctContext& context);

// sacct over job records (the store's, or live jobs' through accounting/slurmjob_records.h).
CommandOutput formatSacct(const std::vector<accounting::JobRecord>& records,
                          const SacctParse& parse, const SacctContext& context);

// The records of live SlurmJobs (those with a job id), arrays' own objects told apart by label.
std::vector<accounting::JobRecord> liveJobRecords(const std::vector<api::SlurmJobObject>& jobs,
                                                  const SacctContext& context);

// sacct over live SlurmJobs: formatSacct of their liveJobRecords.
CommandOutput formatSacct(const std::vector<api::SlurmJobObject>& jobs, const SacctParse& parse,
                          const SacctContext& context);

}  // namespace kubeslurm::cli

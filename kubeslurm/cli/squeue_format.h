// `squeue` as Slurm 22.05 prints it, as a pure function of decoded SlurmJobs, the options and
// `now`: no I/O, no clock. squeue_cmd.cc lists the objects and prints what this returns.
//
// Sources of truth (Slurm 22.05.8): src/squeue/opts.c (options, -o/-O parsing, --start and -l
// defaults), src/squeue/squeue.c (the default -O format), src/squeue/print.c (_print_str's
// width and truncation rules, each field, _filter_job, _combine_pending_array_tasks),
// src/squeue/sort.c (sort keys and the default "P,t,-p" after a start-time pass), and the
// reference outputs in ../shared/reference/slurm-22.05.md.
//
// The job model (docs/cli.md): a SlurmJob without status.jobId is not shown (slurmctld has not
// accepted it yet). An array's own object (spec.array set, no kubeslurm.io/array-task label) is
// never a row; its tasks are child objects with status.arrayJobId/arrayTaskId. Without -r the
// PENDING tasks of one array (same name and partition) collapse into one row "A_[2-7%2]" with the
// throttle of the array's spec.array, as slurmctld's meta record prints. Jobs start in job id
// order, which is slurmctld's job list order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/command_output.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

// One -j entry: "A" (a job, or every task of array A) or "A_T".
struct SqueueJobSelector {
  std::int64_t jobId = 0;
  std::optional<std::int64_t> taskId;
};

struct SqueueOptions {
  std::optional<std::string> format;      // -o/--format
  std::optional<std::string> formatLong;  // -O/--Format
  bool noHeader = false;                  // -h
  bool array = false;                     // -r
  bool start = false;                     // --start
  bool longList = false;                  // -l
  bool allStates = false;                 // -t all
  std::vector<slurm::JobState> states;    // -t; empty: PD, R, S, CG (and SO)
  std::vector<std::string> users;         // -u
  std::vector<std::string> partitions;    // -p
  std::vector<std::string> names;         // -n
  std::vector<std::string> accounts;      // -A
  std::vector<std::string> qos;           // -q
  std::vector<SqueueJobSelector> jobs;    // -j
  std::optional<std::string> sort;        // -S
  // --me: the caller's jobs (squeue_cmd.cc fills `users` with the Slurm user sbatch records).
  // A later -u replaces it and a later --me replaces -u, as opts.c's last one wins.
  bool me = false;
  // -w/--nodelist: jobs whose NODELIST shares a host with this list (print.c _filter_job's
  // hostset_intersects). Pending jobs have no nodes, so they never match.
  std::optional<slurm::Hostlist> nodes;
  // -i/--iterate: seconds between reprints; 0 prints once. With it squeue prints the time
  // before each listing (squeue.c main: print_date() unless -h), as -l does.
  int iterate = 0;
};

// Parses squeue's arguments (getopt_long rules: bundled short options, attached values,
// unambiguous long-option prefixes, "-j" with its list as the next operand). A bad argument
// gives the CommandOutput squeue exits with.
struct SqueueParse {
  SqueueOptions options;
  std::optional<CommandOutput> exit;
};
SqueueParse parseSqueueArgs(const std::vector<std::string>& args);

// What squeue learns from slurmctld besides the jobs.
struct SqueueContext {
  slurm::EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
  std::string defaultPartition;  // shown for a job that names none
  // A job without --time gets its partition's default time (or max time) at submission.
  std::map<std::string, slurm::TimeLimit> partitionDefaultTime;
  // SCHEDNODES (%Y) by job id: the nodes the operator's last plan reserved for a pending job
  // (its query API); a job without an entry shows "(null)", as before slurmctld's backfill pass.
  std::map<std::int64_t, std::string> schedNodes;
};

// Whether the listing shows or sorts by what the operator's plan moves every cycle: the
// estimated start (%S, -O starttime), the priority (%p, %Q, -O priority, prioritylong) and
// SCHEDNODES (%Y, -O schednodes), in the format formatSqueue prints (--start's default
// included), or an -S key p, Q or S (--start's own sort is S).
bool showsPlanFigures(const SqueueOptions& options);

CommandOutput formatSqueue(const std::vector<api::SlurmJobObject>& jobs,
                           const SqueueOptions& options, const SqueueContext& context);

// The line squeue prints before a listing with -l or -i (print_date(): slurm_ctime2's
// "%a %b %d %T %Y" in local time, then a newline); formatSqueue adds it itself. "" with -h.
std::string squeueDateLine(const SqueueOptions& options, const SqueueContext& context);

}  // namespace kubeslurm::cli

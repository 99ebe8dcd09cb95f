// Dependency expressions (sbatch --dependency): afterok:ID[:ID][+time], "," = all, "?" = any.
//
// Source of truth (Slurm 22.05): sbatch passes --dependency through unchecked; slurmctld
// parses it in job_scheduler.c (update_job_dependency, _parse_dependency_jobid_new/_old,
// _xlate_array_dep) and shows it with _depend_list2str. A bad one fails the submission with
// ESLURM_DEPENDENCY.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/slurm/array_spec.h"

namespace kubeslurm::slurm {

enum class DependencyType { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };

std::string_view dependencyTypeName(DependencyType type);  // "afterok"

struct DependencyTarget {
  std::uint64_t jobId = 0;
  // nullopt: the whole job (or whole array); -1 below means "ID_*"; otherwise the task id.
  std::optional<std::int64_t> arrayTask;
  std::uint32_t delayMinutes = 0;  // "+time" for after/afterany/afterok/afternotok
  friend bool operator==(const DependencyTarget&, const DependencyTarget&) = default;
};
inline constexpr std::int64_t kAllArrayTasks = -1;

struct DependencyTerm {
  DependencyType type = DependencyType::kAfterOk;
  std::vector<DependencyTarget> targets;  // empty for singleton
  friend bool operator==(const DependencyTerm&, const DependencyTerm&) = default;
};

struct DependencySpec {
  std::vector<DependencyTerm> terms;
  bool anyOf = false;  // terms joined by '?' (any) instead of ',' (all)
  friend bool operator==(const DependencySpec&, const DependencySpec&) = default;
};

// The most jobs and tasks one dependency may name, brackets expanded: every task of a
// 10,000-task sweep with room to spare ("N_*" names any array whole, in one).
inline constexpr std::size_t kMaxDependencyTargets = 16384;

// What sbatch prints after "sbatch: error: " when the controller rejects the --dependency.
inline constexpr std::string_view kDependencyErrorMessage =
    "Batch job submission failed: Job dependency problem";

// Parses as slurmctld does:
//  - "" and "0" mean no dependency (an empty spec).
//  - type:ID[:ID...] with types after, afterany, afterok, afternotok, aftercorr
//    (case-insensitive), and singleton; a bare list of IDs ("12,13") is afterany each.
//  - an ID is N, N_T (one array task) or N_* (the whole array); N_[1-3,7] lists tasks,
//    each below maxArraySize (in brackets only, as _xlate_array_dep checks).
//  - "+M" after an ID delays by M minutes and, as in Slurm, carries on to the IDs after it in
//    the same term ("after:1+5:2" delays both).
//  - a state suffix as scontrol prints it ("afterok:9(unfulfilled)") is accepted and dropped.
//  - the same (type, ID, task) twice is kept once, the first one.
// Error message is what sbatch prints after "sbatch: error: " (kDependencyErrorMessage).
// Deviations from 22.05's parser, each where Slurm accepts garbage or silently changes the
// meaning: mixing ',' and '?' is an error (22.05 makes every term "any"; its man page says
// only one separator may be used, and Slurm 25.11 rejects it); text after "+M" or a state
// suffix is an error (22.05 ignores it); negative IDs, IDs above 2^32-1, "N_" without a
// task, and delays whose seconds overflow a C int are errors (22.05 wraps them);
// afterburstbuffer and expand are refused (no burst buffers or job expansion here); more than
// kMaxDependencyTargets jobs and tasks is an error (22.05 has no limit: here one object's
// dependency must not cost the operator a gigabyte or a minute), as is a set of brackets that
// names more than that many tasks, repeats counted, before they are expanded.
// Context checks are the caller's: a job depending on itself (ESLURM_DEPENDENCY), circular
// dependencies, and showing "N" as "N_*" when N turns out to be an array.
StatusOr<DependencySpec> parseDependency(std::string_view text);
StatusOr<DependencySpec> parseDependency(std::string_view text, std::uint32_t maxArraySize);

// Canonical text as scontrol/squeue show it, without the (unfulfilled) status suffix:
// one entry per target, "afterok:9", "afterok:5_*", "afterany:3+10", "singleton", joined by
// ',' or '?' ("afterok:1:2" shows as "afterok:1,afterok:2"). Empty for no dependency (which
// scontrol prints as "(null)").
std::string formatDependency(const DependencySpec& spec);

// One term per target, in order, duplicates dropped: what Slurm keeps and shows.
DependencySpec flattenDependency(const DependencySpec& spec);

enum class DependencyState { kUnfulfilled, kFulfilled, kFailed };

// As scontrol's Dependency= and squeue's %E: "afterok:9(unfulfilled)", "afterok:11(failed)",
// "singleton(unfulfilled)"; fulfilled entries are left out. `states` holds one state per
// entry of flattenDependency(spec), in order; missing ones count as unfulfilled. Empty when
// nothing is left (scontrol prints "(null)").
std::string formatDependencyWithState(const DependencySpec& spec,
                                      const std::vector<DependencyState>& states);

}  // namespace kubeslurm::slurm

// Job array specifications (sbatch --array): "0-999", "1,3,5-9", "0-15:4", "%N" throttle.
//
// Sources of truth (Slurm 22.05): sbatch does not check --array at all; slurmctld does, in
// job_mgr.c (_valid_array_inx, _parse_array_tok, the '%' throttle in _create_job_array), and
// a bad one fails the submission with ESLURM_INVALID_ARRAY. squeue and scontrol show the
// pending tasks as xlate_array_task_str (slurm_protocol_defs.c) formats them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::slurm {

// Slurm's default MaxArraySize: task ids must be below it.
inline constexpr std::uint32_t kDefaultMaxArraySize = 1001;
// The largest MaxArraySize slurm.conf accepts; larger arguments are clamped to it.
inline constexpr std::uint32_t kMaxMaxArraySize = 4'000'001;

// The most ids the tokens of one --array may name, each range counted in full and repeats
// included: twice the largest array there can be.
inline constexpr std::uint64_t kMaxArrayIdsNamed = 2 * std::uint64_t{kMaxMaxArraySize};

// What sbatch prints after "sbatch: error: " when the controller rejects the --array value.
inline constexpr std::string_view kInvalidArrayMessage =
    "Batch job submission failed: Invalid job array specification";

struct ArraySpec {
  std::vector<std::uint32_t> taskIds;       // ascending, unique
  std::optional<std::uint32_t> maxRunning;  // the %N throttle
  friend bool operator==(const ArraySpec&, const ArraySpec&) = default;
};

// Parses as slurmctld does: comma-separated tokens "N", "N-M", "N-M:S" (empty tokens are
// skipped, '[' / ']' around numbers tolerated), each task id below maxArraySize, the step
// positive and below maxArraySize. The throttle is the number after the first '%' anywhere
// in the text ("0-7%2"); "%0" or a non-number there means no throttle. Text after '%' in a
// token is ignored, as in Slurm ("1%2,5" is tasks 1 and 5, throttle 2). maxArraySize 0
// disables arrays.
// Error message is what sbatch prints after "sbatch: error: " (kInvalidArrayMessage).
// Deviation: a spec that names no task ("" or ",") is an error here; Slurm submits an
// ordinary job.
// Deviation: the tokens may name at most kMaxArrayIdsNamed ids, repeats counted (Slurm has no
// such limit): a text that names one range a hundred thousand times is refused instead of
// costing the parser a hundred thousand times MaxArraySize.
// Not modelled: SchedulerParameters=max_array_tasks (a cap on the task count).
StatusOr<ArraySpec> parseArraySpec(std::string_view text,
                                   std::uint32_t maxArraySize = kDefaultMaxArraySize);
// As above, and an error where the text names more than maxTasks distinct tasks: a reader that
// holds what it parses bounds its memory by what the cluster allows, whatever the ids' bound.
StatusOr<ArraySpec> parseArraySpec(std::string_view text, std::uint32_t maxArraySize,
                                   std::uint32_t maxTasks);

// Compact form as squeue prints pending tasks and scontrol's ArrayTaskId= shows them:
// "2-7%2", "1,3,5-9"; a regular stride of more than five tasks spanning more than ten ids
// is "0-30:3" (fewer print as a list: "0,4,8,12"). Longer lists are cut to 60 characters
// plus "..." (SLURM_BITSTR_LEN's default of 64). The caller adds squeue's brackets.
std::string formatArrayTasks(const std::vector<std::uint32_t>& taskIds,
                             std::optional<std::uint32_t> maxRunning);
// As above with SLURM_BITSTR_LEN = bitstrLen: 0 prints the whole list; other values are
// clamped to [4, 4096].
std::string formatArrayTasks(const std::vector<std::uint32_t>& taskIds,
                             std::optional<std::uint32_t> maxRunning, std::size_t bitstrLen);

// SLURM_ARRAY_TASK_STEP as slurmctld sets it: the number after the first ':' in the --array
// text, else 1.
std::int32_t arrayTaskStepEnv(std::string_view text);

}  // namespace kubeslurm::slurm

// sbatch --output/--error filename patterns: %j %A %a %x %N %n %t %u %%.
//
// Sources of truth (Slurm 22.05): src/slurmd/common/fname.c (fname_create,
// _create_batch_fname, _batch_path_check, remove_path_slashes), which names the batch
// step's files; src/api/job_info.c (_fname_format, slurm_get_job_stdout), which is a
// different and simpler expansion that scontrol uses for StdOut=/StdErr=; sbatch(1)
// "filename pattern".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kubeslurm::slurm {

struct FilenamePatternValues {
  std::uint64_t jobId = 0;                   // %j
  std::optional<std::uint64_t> arrayJobId;   // %A (falls back to %j)
  std::optional<std::uint32_t> arrayTaskId;  // %a (4294967294 / "" when not an array)
  std::string jobName;                       // %x
  std::string nodeName;                      // %N (first node)
  std::uint32_t nodeId = 0;                  // %n
  std::uint32_t taskId = 0;                  // %t
  std::string userName;                      // %u
  std::optional<std::uint32_t> stepId;       // %s and %J's ".step"; nullopt: batch step
};

// Expands as slurmstepd names the batch step's files, including zero-padding width
// ("%4j" -> "0042", at most 10; ignored for %x %N %u %s-of-batch) and "%%". Also %J (job id,
// plus ".step" for a step) and %s ("batch" for the batch step). Unknown letters stay as
// typed ("%z"); after a width Slurm keeps only the width's last digit ("%12z" -> "2z").
// %a outside an array prints Slurm's NO_VAL, 4294967294. A pattern with a backslash is not
// expanded at all: backslashes are dropped ("\\" keeps one). A pattern that is just a
// number selects one task's output; other tasks get "/dev/null".
// The result is relative to the job's working directory unless it starts with '/'.
std::string expandFilenamePattern(std::string_view pattern, const FilenamePatternValues& values);

// The pattern slurmstepd uses when --output is not given: "slurm-%J.out", or
// "slurm-%A_%a.out" for an array task.
std::string_view defaultOutputPattern(bool isArrayTask);

// scontrol's StdOut=/StdErr=/StdIn= path (slurm_get_job_stdout, _fname_format): only %A %a
// %j %u %x are replaced (no width, no "%%"), and a relative path is put under workDir. With
// no pattern, the default "slurm-<id>.out" or, for an array, "slurm-<A>_<a>.out".
std::string formatScontrolStdioPath(std::optional<std::string_view> pattern,
                                    const FilenamePatternValues& values, std::string_view workDir);

}  // namespace kubeslurm::slurm

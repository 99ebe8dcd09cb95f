// srun and salloc on a login host (issue 19): an interactive allocation (allocation.h), steps
// run on it through the operator's step proxy with the caller's own credentials, and the
// allocation released when they are done.
#pragma once

#include <string>
#include <vector>

#include "kubeslurm/cli/cli_io.h"

namespace kubeslurm::cli {

// `srun [options] command...` outside a job (no SLURM_JOB_ID), not --test-only: allocates as
// Slurm's srun does (src/srun/libsrun/allocate.c), runs one step on the allocation with the
// in-job srun's layout, output, signals and exit code, then releases the allocation with that
// exit code (slurm_complete_job), which the job ends with.
int runLoginSrun(const std::vector<std::string>& args, CliIo& io);

// `salloc [options] [command...]`: allocates as srun does (salloc.c: "Granted job allocation N"),
// runs the command (the user's shell without one) on this host with the job's SLURM_* variables
// and kAllocationVariable, so that srun in it runs steps on the allocation; then "Relinquishing
// job allocation N" and the release with the command's exit status, which salloc exits with.
// The job is named "interactive" unless -J names it (salloc/opt.c).
int runSalloc(const std::vector<std::string>& args, CliIo& io);

// srun inside salloc's shell (SLURM_JOB_ID and kAllocationVariable set, no step token): one step
// on the allocation through the step proxy; the allocation stays salloc's.
int runSrunInAllocation(const std::vector<std::string>& args, CliIo& io);

}  // namespace kubeslurm::cli

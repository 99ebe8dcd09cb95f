// The `kubeslurm` command line: one binary, dispatched by its first argument or by the name it
// was invoked as (a symlink named `sbatch`, `scontrol`, ...).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/cli/cli_io.h"

namespace kubeslurm::cli {

// argv0: the name the program was invoked as (its basename). args: everything after it.
// Returns the process exit code.
int runCli(std::string_view argv0, const std::vector<std::string>& args, CliIo& io);

// The Slurm commands this binary answers to when invoked through a symlink of that name.
const std::vector<std::string_view>& slurmCommandNames();

}  // namespace kubeslurm::cli

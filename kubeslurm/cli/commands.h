// Entry points of the CLI's commands; each takes the arguments after the command name.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kubeslurm/cli/cli_io.h"

namespace kubeslurm::cli {

int runScontrol(const std::vector<std::string>& args, CliIo& io);
int runSbatch(const std::vector<std::string>& args, CliIo& io);
int runSqueue(const std::vector<std::string>& args, CliIo& io);
int runScancel(const std::vector<std::string>& args, CliIo& io);
int runSinfo(const std::vector<std::string>& args, CliIo& io);
int runSacct(const std::vector<std::string>& args, CliIo& io);
int runSreport(const std::vector<std::string>& args, CliIo& io);
int runSacctmgr(const std::vector<std::string>& args, CliIo& io);
int runSprio(const std::vector<std::string>& args, CliIo& io);
int runSshare(const std::vector<std::string>& args, CliIo& io);
int runSdiag(const std::vector<std::string>& args, CliIo& io);
int runCompletion(const std::vector<std::string>& args, CliIo& io);

// srun's options as srun read them (kubeslurm/inpod/srun_options.h), by long name, each with its
// value when it took one.
using SrunOptions = std::vector<std::pair<std::string, std::optional<std::string>>>;
// `srun --test-only` from a login shell: a job of srun's allocation options, planned by the
// operator as sbatch --test-only is; `command` is what srun would run.
int runSrunTestOnly(const SrunOptions& options, const std::vector<std::string>& command, CliIo& io);

}  // namespace kubeslurm::cli

// Entry points of the CLI's commands; each takes the arguments after the command name.
#pragma once

#include <string>
#include <vector>

#include "kubeslurm/cli/cli_io.h"

namespace kubeslurm::cli {

int runScontrol(const std::vector<std::string>& args, CliIo& io);
int runSbatch(const std::vector<std::string>& args, CliIo& io);
int runSqueue(const std::vector<std::string>& args, CliIo& io);
int runScancel(const std::vector<std::string>& args, CliIo& io);
int runSinfo(const std::vector<std::string>& args, CliIo& io);
int runSacct(const std::vector<std::string>& args, CliIo& io);
int runSprio(const std::vector<std::string>& args, CliIo& io);
int runSshare(const std::vector<std::string>& args, CliIo& io);
int runSdiag(const std::vector<std::string>& args, CliIo& io);
int runCompletion(const std::vector<std::string>& args, CliIo& io);

}  // namespace kubeslurm::cli

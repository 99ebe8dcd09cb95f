#include "kubeslurm/cli/cli.h"

#include <algorithm>
#include <ostream>

#include "kubeslurm/cli/commands.h"
#include "kubeslurm/planner/planner.h"

namespace kubeslurm::cli {
namespace {

using CommandFn = int (*)(const std::vector<std::string>&, CliIo&);

// The planner's commands read files and write text; they never see the cluster's access.
template <int (*Run)(const std::vector<std::string>&, planner::PlannerIo&)>
int runPlannerCommand(const std::vector<std::string>& args, CliIo& io) {
  planner::PlannerIo plannerIo{io.out,          io.err, io.readFile, io.now, io.utcOffsetSeconds,
                               io.errIsTerminal};
  return Run(args, plannerIo);
}

struct Command {
  std::string_view name;
  CommandFn run;
  std::string_view summary;
};

const std::vector<Command>& commands() {
  static const std::vector<Command> kCommands = {
      {"sbatch", runSbatch, "submit a batch script (--dry-run=client -o yaml|json: print it)"},
      {"squeue", runSqueue, "list jobs as Slurm's squeue prints them"},
      {"scancel", runScancel, "cancel jobs, array tasks, or the jobs a filter selects"},
      {"sinfo", runSinfo, "list partitions and nodes as Slurm's sinfo prints them"},
      {"sacct", runSacct, "accounting: finished and live jobs as Slurm's sacct prints them"},
      {"sreport", runSreport, "accounting: usage by user and account, as Slurm's sreport"},
      {"sacctmgr", runSacctmgr,
       "accounting: the Account objects as Slurm's accounts and associations"},
      {"scontrol", runScontrol,
       "show job|partition|node|hostnames|hostlist, hold, release, update"},
      {"sprio", runSprio, "pending jobs' priority factors (from the operator's query API)"},
      {"sshare", runSshare, "the fair-share tree (from the operator's query API)"},
      {"sdiag", runSdiag, "the scheduler's statistics (from the operator's query API)"},
      {"plan", runPlannerCommand<planner::runPlan>,
       "what-if: what the scheduler would do with a scenario file"},
      {"simulate", runPlannerCommand<planner::runSimulate>,
       "replay a workload trace (SWF, Alibaba) through the scheduler"},
      {"completion", runCompletion, "bash completion: source <(kubeslurm completion bash)"},
  };
  return kCommands;
}

void printUsage(std::ostream& out) {
  out << "Usage: kubeslurm COMMAND [ARGS...]\n\nCommands:\n";
  for (const Command& command : commands()) {
    out << "  " << command.name << std::string(12 - command.name.size(), ' ') << command.summary
        << "\n";
  }
  out << "\nEach command also runs when this binary is invoked through a symlink of its name.\n";
}

const Command* findCommand(std::string_view name) {
  const auto& all = commands();
  auto it = std::find_if(all.begin(), all.end(), [&](const Command& c) { return c.name == name; });
  return it == all.end() ? nullptr : &*it;
}

}  // namespace

const std::vector<std::string_view>& slurmCommandNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const Command& command : commands()) names.push_back(command.name);
    return names;
  }();
  return kNames;
}

int runCli(std::string_view argv0, const std::vector<std::string>& args, CliIo& io) {
  if (const Command* command = findCommand(argv0)) return command->run(args, io);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    printUsage(args.empty() ? io.err : io.out);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    io.out << "kubeslurm 0.1.0 (compatible with slurm 22.05)\n";
    return 0;
  }
  if (const Command* command = findCommand(args[0])) {
    return command->run(std::vector<std::string>(args.begin() + 1, args.end()), io);
  }
  io.err << "kubeslurm: unknown command \"" << args[0] << "\"\n";
  printUsage(io.err);
  return 2;
}

}  // namespace kubeslurm::cli

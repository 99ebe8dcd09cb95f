// The Slurm commands' argument parsers and format strings (outside input: what a user types):
// sprio, sshare, sacct, sinfo, squeue (with --me, -w hostlists, -i), sdiag, sreport (and the
// TRES strings its usage reads, and job records for its job report), sacctmgr, sattach. The first
// byte picks the command (0 sprio, 1 sshare, 2 sacct, 3 sinfo, 5 sdiag, 6 sreport, 7 sacctmgr,
// 8 sattach, else squeue); the rest is the argument list, one argument per line. Each parse
// that succeeds is also formatted against a small fixed state, so -o/--format strings, sort keys
// and -w hostlists reach the formatters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kubeslurm/cli/priority_format.h"
#include "kubeslurm/cli/sacct_format.h"
#include "kubeslurm/cli/sacctmgr_change.h"
#include "kubeslurm/cli/sacctmgr_format.h"
#include "kubeslurm/cli/sattach_options.h"
#include "kubeslurm/cli/sdiag_format.h"
#include "kubeslurm/cli/sinfo_format.h"
#include "kubeslurm/cli/squeue_format.h"
#include "kubeslurm/cli/sreport_format.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using namespace kubeslurm;

using fuzz::splitLines;

std::vector<rpc::PendingJob> pendingJobs() {
  rpc::PendingJob a;
  a.jobId = 20;
  a.partition = "train";
  a.user = "alice";
  a.priority = {10, 3333.3, 127, 100, 0, 250, 0, 3810};
  rpc::PendingJob b = a;
  b.jobId = 21;
  b.user = "bob";
  b.priority.fairshare = 10000;
  return {a, b};
}

std::vector<rpc::FairShareRow> shareRows() {
  return {{"root", "", "", 0, 0, 0, 26622, 1, 0},
          {"ml-team", "", "root", 1, 60, 0.59, 26622, 1, 0},
          {"ml-team", "alice", "ml-team", 2, 1, 1, 26622, 1, 0.33}};
}

// Jobs on nodes, so that -w hostlists are compared against NODELISTs.
std::vector<api::SlurmJobObject> squeueJobs() {
  std::vector<api::SlurmJobObject> jobs;
  for (std::int64_t id = 1; id <= 3; ++id) {
    api::SlurmJobObject& job = jobs.emplace_back();
    job.name = "j" + std::to_string(id);
    job.namespaceName = "default";
    job.user = id == 1 ? "alice" : "bob";
    job.request.jobName = "x";
    job.status.emplace();
    job.status->jobId = id;
    job.status->state = id == 3 ? "PENDING" : "RUNNING";
    job.status->startTime = 1795235400 - id;
    if (id == 1) job.status->nodeList = "gpu-node-[001-004]";
    if (id == 2) job.status->nodeList = "n9,rack1-[07-12]";
  }
  return jobs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::vector<std::string> args = splitLines(data + 1, size - 1);
  switch (data[0] % 9) {
    case 0: {
      const cli::SprioParse parse = cli::parseSprioArgs(args);
      if (!parse.exit) {
        rpc::PriorityWeights weights{1000, 10000, 1000, 1000, 0, "GRES/gpu=1000"};
        (void)cli::formatSprio(pendingJobs(), weights, parse.options);
      }
      break;
    }
    case 1: {
      const cli::SshareParse parse = cli::parseSshareArgs(args);
      if (!parse.exit) (void)cli::formatSshare(shareRows(), true, parse.options, "alice");
      break;
    }
    case 2: {
      cli::SacctContext context;
      context.now = 1795235400;
      context.user = "alice";
      const cli::SacctParse parse = cli::parseSacctArgs(args, context);
      if (!parse.exit) (void)cli::formatSacct(std::vector<accounting::JobRecord>{}, parse, context);
      break;
    }
    case 3: {
      const cli::SinfoParse parse = cli::parseSinfoArgs(args);
      if (!parse.exit) (void)cli::formatSinfo({}, {}, {}, parse.options, cli::SinfoContext{});
      break;
    }
    case 5: {
      const cli::SdiagParse parse = cli::parseSdiagArgs(args);
      if (!parse.exit) {
        rpc::Statistics statistics;
        statistics.serverStart = 1795233600;
        statistics.cycles = 1800;
        statistics.meanCycleSeconds = 0.001;
        statistics.jobsByState = {{"PENDING", 2}};
        (void)cli::formatSdiag(statistics, cli::SdiagContext{1795235400, 3600, 1795235399});
      }
      break;
    }
    case 6: {
      cli::SreportContext context;
      context.now = 1795235400;
      const cli::SreportParse parse = cli::parseSreportArgs(args, context);
      if (!parse.exit && parse.request) {
        cli::SreportData data;
        data.usage = {{"alice", "a", {{"cpu", 1234567890}, {"gres/gpu", 7}}},
                      {"bob", "b", {{"cpu", 1}}}};
        for (const std::string& arg : args) {
          data.usage.push_back({"carol", arg, accounting::tresCounts(arg)});
          // The job report's runs: each argument as an account and as an allocation.
          accounting::JobRecord run;
          run.jobId = static_cast<std::int64_t>(data.records.size());
          run.user = "carol";
          run.account = arg;
          run.allocTres = arg + ",cpu=" + std::to_string(arg.size() * 97);
          run.startTime = context.now - 3600 * static_cast<std::int64_t>(arg.size());
          run.endTime = context.now - 60;
          data.records.push_back(std::move(run));
        }
        // A tree with a cycle and an unknown parent.
        data.accounts = {{"a", ""}, {"b", "a"}, {"c", "d"}, {"d", "c"}, {"e", "nowhere"}};
        data.properNames = {{"alice", "Alice"}};
        (void)cli::formatSreport(data, parse, context);
        (void)cli::reportWindow(*parse.request, context);
      }
      break;
    }
    case 7: {
      const cli::SacctmgrParse parse = cli::parseSacctmgrArgs(args);
      if (!parse.exit && (parse.request || parse.change)) {
        // A tree with a cycle, an unknown parent, a self-parent, and the arguments as users,
        // QOS names and limits.
        std::vector<api::Account> accounts(6);
        const char* names[] = {"root", "a", "b", "c", "d", "e"};
        const char* parents[] = {"", "", "a", "d", "c", "e"};
        for (std::size_t i = 0; i < accounts.size(); ++i) {
          accounts[i].metadata.name = names[i];
          accounts[i].spec.parent = parents[i];
          accounts[i].spec.users = args;
          accounts[i].spec.allowedQos = args;
        }
        api::AccountLimits limits;
        limits.maxNodesPerJob = 4;
        limits.grpTres = {{"mem", 3 << 20}, {"cpu", -1}};
        for (const std::string& arg : args) limits.maxTresPerJob[arg] = 1;
        accounts[1].spec.limits = limits;
        if (parse.change) {
          (void)cli::planSacctmgrChange(*parse.change, accounts, cli::SacctmgrContext{});
        } else {
          (void)cli::formatSacctmgr(accounts, parse, cli::SacctmgrContext{});
        }
      }
      break;
    }
    case 8:
      (void)cli::parseSattachArguments(args);
      break;
    default: {
      cli::SqueueParse parse = cli::parseSqueueArgs(args);
      if (!parse.exit) {
        cli::SqueueContext context;
        context.now = 1795235400;
        if (parse.options.me) parse.options.users = {"alice"};
        (void)cli::formatSqueue(squeueJobs(), parse.options, context);
      }
      break;
    }
  }
  return 0;
}

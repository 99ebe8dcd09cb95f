#include "kubeslurm/cli/sdiag_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <limits>

#include "kubeslurm/cli/getopt.h"

namespace kubeslurm::cli {
namespace {

constexpr std::array kSdiagLongOptions = {
    LongOptionSpec{"all", 0, 'a'},          LongOptionSpec{"help", 0, 'h'},
    LongOptionSpec{"reset", 0, 'r'},        LongOptionSpec{"sort-by-id", 0, 'i'},
    LongOptionSpec{"cluster", 1, 'M'},      LongOptionSpec{"clusters", 1, 'M'},
    LongOptionSpec{"sort-by-time", 0, 't'}, LongOptionSpec{"sort-by-time2", 0, 'T'},
    LongOptionSpec{"usage", 0, '\0'},       LongOptionSpec{"version", 0, 'V'},
};

// opts.c _help, with the options kubeslurm adds to reach the query API.
constexpr std::string_view kHelp =
    "Usage: sdiag [OPTIONS]\n"
    "  -a, --all           all statistics\n"
    "  -r, --reset         reset statistics\n"
    "  -M, --cluster       direct the request to a specific cluster\n"
    "  -i, --sort-by-id    sort RPCs by id\n"
    "  -t, --sort-by-time  sort RPCs by total run time\n"
    "  -T, --sort-by-time2 sort RPCs by average run time\n"
    "  -V, --version       display current version number\n"
    "\nHelp options:\n"
    "  --help          show this help message\n"
    "  --usage         display brief usage message\n"
    "kubeslurm: --scheduler HOST:PORT, --scheduler-ca FILE, --scheduler-server-name NAME,\n"
    "           --kubeconfig FILE, --context NAME\n";

// slurm_ctime2: "%a %b %d %T %Y" in local time.
std::string ctime2(std::int64_t when, std::int32_t utcOffsetSeconds) {
  const auto local = static_cast<std::time_t>(when + utcOffsetSeconds);
  std::tm tm{};
  gmtime_r(&local, &tm);
  std::array<char, 32> buffer{};
  (void)std::strftime(buffer.data(), buffer.size(), "%a %b %d %T %Y", &tm);
  return buffer.data();
}

// Slurm keeps cycle times as whole microseconds in a uint32_t.
std::uint32_t microseconds(double seconds) {
  if (!(seconds > 0)) return 0;  // also NaN
  const double micros = std::round(seconds * 1e6);
  if (micros >= static_cast<double>(std::numeric_limits<std::uint32_t>::max())) {
    return std::numeric_limits<std::uint32_t>::max();
  }
  return static_cast<std::uint32_t>(micros);
}

std::int64_t countOf(const rpc::Statistics& statistics, const std::string& state) {
  const auto it = statistics.jobsByState.find(state);
  return it == statistics.jobsByState.end() ? 0 : it->second;
}

}  // namespace

SdiagParse parseSdiagArgs(const std::vector<std::string>& args) {
  SdiagParse parse;
  bool reset = false;
  const GetoptResult got = getoptLong("sdiag", args, "ahiM:rtTV", kSdiagLongOptions);
  // opts.c acts on each option as getopt_long returns it: what precedes a bad word still acts.
  for (const ParsedOption& option : got.options) {
    switch (option.key) {
      case 'a':
      case 'i':
      case 't':
      case 'T':
        break;  // -a is the default; the others sort RPC tables kubeslurm does not print
      case 'h':
        parse.exit = CommandOutput{std::string(kHelp), "", 0};
        return parse;
      case 'M':
        parse.exit = CommandOutput{
            "", "sdiag: error: -M/--clusters: kubeslurm runs one cluster per operator\n", 1};
        return parse;
      case 'r':
        reset = true;  // acted on after the options, as sdiag.c main does
        break;
      case 'V':
        parse.exit = CommandOutput{"slurm-wlm 22.05.8\n", "", 0};
        return parse;
      default:  // --usage
        parse.exit = CommandOutput{"Usage: sdiag [-M cluster] [-aritT]\n", "", 0};
        return parse;
    }
  }
  if (got.error) {
    // case '?': glibc's complaint, then opts.c's line; operands are ignored, as sdiag does.
    parse.exit = CommandOutput{"", *got.error + "\nTry \"sdiag --help\" for more information\n", 1};
  } else if (reset) {
    // The operator's counters start with it and no client resets them.
    parse.exit = CommandOutput{"",
                               "sdiag: error: -r/--reset is not supported by kubeslurm: the "
                               "statistics count from the operator's start\n",
                               1};
  }
  return parse;
}

std::string formatSdiag(const rpc::Statistics& s, const SdiagContext& context) {
  const auto stamp = [&context](std::int64_t when) {
    return ctime2(when, context.utcOffsetSeconds) + " (" + std::to_string(when) + ")";
  };
  std::string out;
  out += "*******************************************************\n";
  out += "sdiag output at " + stamp(context.now) + "\n";
  out += "Data since      " + stamp(s.serverStart) + "\n";
  out += "*******************************************************\n";
  // Server threads, agents and the DBD queue: slurmctld internals kubeslurm has no match for.
  // Of the job counters the operator keeps only the starts.
  out += "Jobs started:   " + std::to_string(s.totalJobsStarted) + "\n\n";
  out += "Job states ts:  " + stamp(context.planTime) + "\n";
  out += "Jobs pending:   " + std::to_string(countOf(s, "PENDING")) + "\n";
  out += "Jobs running:   " + std::to_string(countOf(s, "RUNNING")) + "\n";

  out += "\nMain schedule statistics (microseconds):\n";
  out += "\tLast cycle:   " + std::to_string(microseconds(s.lastCycleSeconds)) + "\n";
  out += "\tMax cycle:    " + std::to_string(microseconds(s.maxCycleSeconds)) + "\n";
  out += "\tTotal cycles: " + std::to_string(static_cast<std::uint32_t>(s.cycles)) + "\n";
  if (s.cycles > 0) {
    out += "\tMean cycle:   " + std::to_string(microseconds(s.meanCycleSeconds)) + "\n";
  }
  const std::int64_t elapsed = context.now - s.serverStart;
  if (elapsed > 60) {
    // (uint32_t)(counter / ((req_time - req_time_start) / 60)), in integers.
    out += "\tCycles per minute: " +
           std::to_string(
               static_cast<std::uint32_t>(s.cycles / static_cast<std::uint64_t>(elapsed / 60))) +
           "\n";
  }

  // The operator's statistics are never reset, so "since last stats cycle start" (since the
  // last reset) is "since last slurm start" (the operator's start, "Data since").
  out += "\nBackfilling stats\n";
  out +=
      "\tTotal backfilled jobs (since last slurm start): " + std::to_string(s.totalJobsBackfilled) +
      "\n";
  out += "\tTotal backfilled jobs (since last stats cycle start): " +
         std::to_string(s.totalJobsBackfilled) + "\n";
  out += "\tLast depth cycle: " + std::to_string(s.backfillDepth) + "\n";
  return out;
}

}  // namespace kubeslurm::cli

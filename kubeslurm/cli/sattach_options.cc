#include "kubeslurm/cli/sattach_options.h"

#include <array>
#include <climits>
#include <cstdlib>

#include "kubeslurm/base/text.h"
#include "kubeslurm/cli/getopt.h"

namespace kubeslurm::cli {
namespace {

constexpr std::string_view kUsage = "Usage: sattach [options] <jobid.stepid>\n";
constexpr std::string_view kHelp =
    "      --input-filter=taskid  send stdin to only the specified task\n"
    "      --output-filter=taskid only print stdout from the specified task\n"
    "      --error-filter=taskid  only print stderr from the specified task\n"
    "  -l, --label        prepend task number to lines of stdout & stderr\n"
    "      --layout       print task layout info and exit (does not attach to tasks)\n"
    "  -Q, --quiet        quiet mode (suppress informational messages)\n"
    "  -v, --verbose      verbose mode (multiple -v's increase verbosity)\n"
    "  -V, --version      print the Slurm version and exit\n\n"
    "Help options:\n"
    "  -h, --help         print this help message\n"
    "  -u, --usage        print a brief usage message\n";

constexpr std::array kLongOptions = {
    LongOptionSpec{"help", 0, 'h'},          LongOptionSpec{"label", 0, 'l'},
    LongOptionSpec{"quiet", 0, 'Q'},         LongOptionSpec{"usage", 0, 'u'},
    LongOptionSpec{"verbose", 0, 'v'},       LongOptionSpec{"version", 0, 'V'},
    LongOptionSpec{"layout", 0, '\0'},       LongOptionSpec{"debugger-test", 0, '\0'},
    LongOptionSpec{"input-filter", 1, '\0'}, LongOptionSpec{"output-filter", 1, '\0'},
    LongOptionSpec{"error-filter", 1, '\0'}, LongOptionSpec{"pty", 0, '\0'},
};

SattachParse printed(std::string out) {
  SattachParse parse;
  parse.out = std::move(out);
  return parse;
}

SattachParse refused(std::string line, bool usage = false) {
  SattachParse parse;
  parse.err = "sattach: error: " + std::move(line) + "\n";
  if (usage) parse.out = std::string(kUsage);
  parse.exitCode = 1;
  return parse;
}

// opt.c _get_pos_int: strtol's number, trailing blanks allowed, not negative, at most INT_MAX.
std::optional<std::string> positiveInteger(const std::string& text, std::string_view what,
                                           std::uint32_t& value) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const long result = std::strtol(begin, &end, 10);
  bool blank = true;
  for (const char* p = end; *p != '\0'; ++p) {
    blank = blank && (*p == ' ' || (*p >= '\t' && *p <= '\r'));
  }
  if (end == begin || !blank || result < 0) {
    return "Invalid numeric value \"" + text + "\" for " + std::string(what) + ".";
  }
  if (result > INT_MAX) {
    return "Numeric argument " + std::to_string(result) + " to big for " + std::string(what) + ".";
  }
  value = static_cast<std::uint32_t>(result);
  return std::nullopt;
}

}  // namespace

SattachParse parseSattachArguments(const std::vector<std::string>& args) {
  const GetoptResult parsed = getoptLong("sattach", args, "+hlQuvV", kLongOptions);
  SattachOptions options;
  bool inputFilterSet = false;
  bool outputFilterSet = false;
  bool errorFilterSet = false;
  // getopt_long reports an error only when it reaches it: the options before it took effect.
  for (const ParsedOption& option : parsed.options) {
    const std::string_view name = option.longName;
    if (option.key == 'h') return printed(std::string(kUsage) + std::string(kHelp));
    if (option.key == 'u') return printed(std::string(kUsage));
    if (option.key == 'V') return printed("slurm 22.05.8\n");
    if (option.key == 'l') options.label = true;
    if (option.key == 'Q') ++options.quiet;
    if (option.key == 'v') ++options.verbose;
    if (name == "layout") options.layout = true;
    if (name == "pty") options.pty = true;
    if (name != "input-filter" && name != "output-filter" && name != "error-filter") continue;
    bool& set = name == "input-filter"    ? inputFilterSet
                : name == "output-filter" ? outputFilterSet
                                          : errorFilterSet;
    set = true;
    if (*option.value == "-") continue;
    std::uint32_t task = 0;
    if (auto refusal = positiveInteger(*option.value, name, task)) {
      return refused(std::move(*refusal));
    }
    if (name == "input-filter") options.inputFilter = task;
    if (name == "output-filter") options.outputFilter = task;
    if (name == "error-filter") options.errorFilter = task;
  }
  if (parsed.error) {
    SattachParse parse;
    parse.err = *parsed.error + "\nTry \"sattach --help\" for more information\n";
    parse.exitCode = 1;
    return parse;
  }
  if (parsed.operands.size() != 1) return refused("too many parameters", true);
  // slurm_parse_step_str: <jobid>.<stepid>; a job id alone has no step to attach to.
  const std::string& step = parsed.operands.front();
  const std::size_t dot = step.find('.');
  const auto jobId = parseInteger<std::int64_t>(step.substr(0, dot));
  const auto stepId =
      dot == std::string::npos ? std::nullopt : parseInteger<std::uint32_t>(step.substr(dot + 1));
  if (!jobId || *jobId <= 0 || !stepId) {
    return refused("Failed to parse stepid from command line options", true);
  }
  options.jobId = *jobId;
  options.stepId = *stepId;
  // _opt_verify
  if (options.quiet > 0 && options.verbose > 0) {
    return refused("don't specify both --verbose (-v) and --quiet (-Q)");
  }
  if (options.pty && (inputFilterSet || outputFilterSet || errorFilterSet)) {
    return refused("don't specify both --pty and I/O filtering");
  }
  if (!errorFilterSet && outputFilterSet) options.errorFilter = options.outputFilter;
  SattachParse parse;
  parse.options = options;
  return parse;
}

}  // namespace kubeslurm::cli

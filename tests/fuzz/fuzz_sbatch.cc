// Fuzzes sbatch's option parsing: #SBATCH directive scanning and the full parse of a script
// with a command line and SBATCH_* variables.
//
// Input: NUL-separated fields. The first is the script; each later field is a command-line word,
// except "NAME=value" fields whose NAME is one sbatch reads from the environment.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/slurm/sbatch_options.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::slurm::SbatchContext;
using kubeslurm::slurm::SbatchParseResult;

using kubeslurm::fuzz::check;

bool isInputEnvName(std::string_view name) {
  const auto& names = kubeslurm::slurm::sbatchInputEnvNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What a successful parse produced must be self-consistent and print back to what it parses.
void checkInvocation(const kubeslurm::slurm::SbatchInvocation& invocation) {
  namespace slurm = kubeslurm::slurm;
  const slurm::JobRequest& r = invocation.request;
  check(!invocation.script.empty());
  if (r.nodes && r.nodes->max) check(*r.nodes->max >= r.nodes->min);
  for (const auto* list : {&r.gres, &r.gpus, &r.gpusPerNode, &r.gpusPerTask}) {
    for (const slurm::GresRequest& g : *list) check(g.count != 0 && g.name == "gpu");
  }
  const auto gres = slurm::parseGresList(slurm::formatGresList(r.gres), false);
  check(gres && *gres == r.gres);
  if (r.signal) check(slurm::parseSignal(slurm::formatSignal(*r.signal)) == r.signal);
  if (r.mailType && *r.mailType != 0) {
    check(slurm::parseMailType(slurm::formatMailType(*r.mailType)) == r.mailType);
  }
  for (const auto& mb : {r.memPerNodeMb, r.memPerCpuMb, r.memPerGpuMb}) {
    if (mb) check(slurm::parseMegabytes(slurm::formatMegabytes(*mb)) == mb);
  }
  if (r.timeLimit && r.timeLimit->seconds) check(*r.timeLimit->seconds % 60 == 0);
}

void checkResult(const SbatchParseResult& result) {
  const int set = static_cast<int>(result.invocation.has_value()) +
                  static_cast<int>(result.exit.has_value()) +
                  static_cast<int>(result.scriptToRead.has_value());
  check(set == 1);
  if (result.exit) {
    check(!result.exit->err.empty() || !result.exit->out.empty());
    check(result.exit->exitCode != 0 || result.exit->err.empty());
  }
  if (result.invocation) checkInvocation(*result.invocation);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t nul = input.find('\0', start);
    fields.push_back(input.substr(start, nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  const std::string script(fields[0]);
  std::vector<std::string> argv;
  SbatchContext context;
  context.now = 1795235712;
  context.cwd = "/home/alice/jobs";
  for (std::size_t i = 1; i < fields.size() && argv.size() < 64; ++i) {
    const std::string_view field = fields[i];
    const std::size_t eq = field.find('=');
    if (eq != std::string_view::npos && isInputEnvName(field.substr(0, eq))) {
      context.env[std::string(field.substr(0, eq))] = std::string(field.substr(eq + 1));
    } else {
      argv.emplace_back(field);
    }
  }

  const std::vector<std::string> directives = kubeslurm::slurm::extractSbatchDirectives(script);
  for (const std::string& word : directives) check(!word.empty());
  for (std::size_t i = 0; i < argv.size(); ++i) {
    check(kubeslurm::slurm::sbatchOptionSpan(argv, i) <= 2);
  }
  checkResult(kubeslurm::slurm::parseSbatch(argv, std::nullopt, context));
  checkResult(kubeslurm::slurm::parseSbatch(argv, script, context));
  return 0;
}

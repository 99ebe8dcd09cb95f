// Fuzzes what the operator's step proxy reads of a caller before it lets the call through
// (rpc/step_proxy.h parseStepCall: the job and rank metadata, anyone's to write), and what a
// login host's srun reads of the rank-0 pod (cli/allocation.h jobVariablesOfPod). The input is
// the job metadata, a newline, the rank metadata, a newline, then a pod's JSON. Invariants:
// nothing crashes; an accepted call names a namespace and a job as the API server would allow
// them (no '/', bounded); only literal SLURM* variables come back from a pod.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kubeslurm/api/json_text.h"
#include "kubeslurm/cli/allocation.h"
#include "kubeslurm/rpc/step_proxy.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::fuzz::check;

std::string_view nextLine(std::string_view& rest) {
  const std::size_t newline = rest.find('\n');
  const std::string_view line = rest.substr(0, newline);
  rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  return line;
}

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view job = nextLine(rest);
  const std::string_view rank = nextLine(rest);
  const auto call = kubeslurm::rpc::parseStepCall(job, rank);
  if (call.isOk()) {
    check(!call->namespaceName.empty() && call->namespaceName.size() <= 63);
    check(!call->jobName.empty() && call->jobName.size() <= 253);
    check(call->namespaceName.find('/') == std::string::npos);
    check(call->jobName.find('/') == std::string::npos);
  }
  const auto pod = kubeslurm::api::parseJson(rest, {1U << 20U, 100});
  if (!pod.isOk()) return 0;
  for (const auto& [name, value] : kubeslurm::cli::jobVariablesOfPod(*pod)) {
    check(name.starts_with("SLURM"));
  }
  return 0;
}

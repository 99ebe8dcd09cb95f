// Fuzzes the --array parser. Invariants: nothing crashes; task ids come out ascending,
// unique and below MaxArraySize; and the compact form squeue prints (uncut) parses back to
// the same spec.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kubeslurm/slurm/array_spec.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::fuzz::check;

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks MaxArraySize; small ones make the limits reachable.
  constexpr std::array<std::uint32_t, 6> kMaxSizes = {1001, 0, 1, 10, 100, 5000};
  const std::uint32_t maxArraySize = kMaxSizes[data[0] % kMaxSizes.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const kubeslurm::StatusOr<kubeslurm::slurm::ArraySpec> spec =
      kubeslurm::slurm::parseArraySpec(text, maxArraySize);
  if (!spec.isOk()) return 0;
  check(!spec->taskIds.empty());
  for (std::size_t i = 0; i < spec->taskIds.size(); ++i) {
    check(spec->taskIds[i] < maxArraySize);
    if (i > 0) check(spec->taskIds[i - 1] < spec->taskIds[i]);
  }
  check(!spec->maxRunning.has_value() || *spec->maxRunning > 0);
  const std::string full = kubeslurm::slurm::formatArrayTasks(spec->taskIds, spec->maxRunning, 0);
  const kubeslurm::StatusOr<kubeslurm::slurm::ArraySpec> again =
      kubeslurm::slurm::parseArraySpec(full, maxArraySize);
  check(again.isOk() && *again == *spec);
  const std::string cut = kubeslurm::slurm::formatArrayTasks(spec->taskIds, spec->maxRunning);
  check(cut.size() <= full.size() + 3);
  (void)kubeslurm::slurm::arrayTaskStepEnv(text);
  return 0;
}

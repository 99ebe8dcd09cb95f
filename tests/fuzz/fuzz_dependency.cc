// Fuzzes the --dependency parser. Invariants: nothing crashes, and the text scontrol would
// show parses back to the same (flattened) dependencies.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/slurm/dependency.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::slurm::DependencySpec;

using kubeslurm::fuzz::check;

// '?' or ',' only matters between two entries.
DependencySpec normalised(DependencySpec spec) {
  if (spec.terms.size() < 2) spec.anyOf = false;
  return spec;
}

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const kubeslurm::StatusOr<DependencySpec> spec = kubeslurm::slurm::parseDependency(text);
  if (!spec.isOk()) return 0;
  const DependencySpec flat = kubeslurm::slurm::flattenDependency(*spec);
  check(kubeslurm::slurm::flattenDependency(flat) == flat);
  const std::string printed = kubeslurm::slurm::formatDependency(*spec);
  const kubeslurm::StatusOr<DependencySpec> again = kubeslurm::slurm::parseDependency(printed);
  check(again.isOk());
  check(normalised(*again) == normalised(flat));
  check(kubeslurm::slurm::formatDependency(*again) == printed);
  // States from the input bytes: printing with them must not crash.
  std::vector<kubeslurm::slurm::DependencyState> states;
  for (std::size_t i = 0; i < size && i < flat.terms.size(); ++i) {
    states.push_back(static_cast<kubeslurm::slurm::DependencyState>(data[i] % 3));
  }
  (void)kubeslurm::slurm::formatDependencyWithState(*spec, states);
  return 0;
}

// Fuzzes the decoder of the rank-0 pod's termination message (step/step_records.h), which the
// user's container can write. Invariants: nothing crashes, and what decodes encodes back to
// text that decodes to the same records.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kubeslurm/step/step_records.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::fuzz::check;

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto decoded = kubeslurm::step::decodeStepRecords(text);
  if (!decoded.isOk()) return 0;
  const auto again = kubeslurm::step::decodeStepRecords(
      kubeslurm::step::encodeStepRecords(decoded->steps, 1U << 30U));
  check(again.isOk());
  check(again->steps == decoded->steps);
  check(again->dropped == 0);
  return 0;
}

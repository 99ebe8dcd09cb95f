// Fuzzes Slurm's time parsers. Invariants: nothing crashes, and whatever parses prints in a
// form that parses back to the same value (time limits through every duration printer,
// begin times and timestamps through formatTimestamp).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kubeslurm/slurm/time_format.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using kubeslurm::StatusOr;
using kubeslurm::slurm::EpochSeconds;
using kubeslurm::slurm::TimeLimit;

// 2026-11-21T05:22:16 UTC.
constexpr EpochSeconds kNow = 1795238536;

using kubeslurm::fuzz::check;

void checkTimeLimit(std::string_view text) {
  const StatusOr<TimeLimit> limit = kubeslurm::slurm::parseTimeLimit(text);
  if (!limit.isOk()) return;
  check(limit->isUnlimited() || *limit->seconds > 0);
  const auto parsesBack = [&limit](const std::string& printed) {
    const StatusOr<TimeLimit> again = kubeslurm::slurm::parseTimeLimit(printed);
    check(again.isOk() && *again == *limit);
  };
  parsesBack(kubeslurm::slurm::formatPaddedDuration(*limit));
  parsesBack(kubeslurm::slurm::formatSinfoTimeLimit(*limit));  // "infinite" is INFINITE
  const std::string squeue = kubeslurm::slurm::formatSqueueDuration(*limit);
  if (squeue != "INVALID") parsesBack(squeue);
  const std::optional<std::int64_t> minutes = kubeslurm::slurm::timeLimitMinutes(*limit);
  check(minutes.has_value() != limit->isUnlimited());
}

// Whether formatTimestamp prints a four-digit year, the only kind the parsers read back.
bool fourDigitYear(const std::string& printed) {
  return printed.size() == 19 && printed[4] == '-' && printed[0] >= '1' && printed[0] <= '9';
}

void checkTimestampRoundTrip(EpochSeconds t, std::int32_t offset, bool viaBeginTime) {
  const std::string printed = kubeslurm::slurm::formatTimestamp(t, offset);
  if (!fourDigitYear(printed)) return;
  const StatusOr<EpochSeconds> again = kubeslurm::slurm::parseTimestamp(printed, offset);
  check(again.isOk() && *again == t);
  // parse_time reads the same ISO text; 0 and -1 are its failure values.
  if (viaBeginTime && t != 0 && t != -1) {
    const StatusOr<EpochSeconds> begin = kubeslurm::slurm::parseBeginTime(printed, kNow, offset);
    check(begin.isOk() && *begin == t);
  }
}

}  // namespace

// libFuzzer fixes the entry point's name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  checkTimeLimit(text);
  for (const std::int32_t offset : {0, 19800, -12600}) {
    const StatusOr<EpochSeconds> begin = kubeslurm::slurm::parseBeginTime(text, kNow, offset);
    if (begin.isOk()) checkTimestampRoundTrip(*begin, offset, true);
    const StatusOr<EpochSeconds> past = kubeslurm::slurm::parsePastTime(text, kNow, offset);
    if (past.isOk()) checkTimestampRoundTrip(*past, offset, true);
    const StatusOr<EpochSeconds> stamp = kubeslurm::slurm::parseTimestamp(text, offset);
    if (stamp.isOk()) checkTimestampRoundTrip(*stamp, offset, true);
  }
  // Any 8 bytes as an epoch, any 4 more as an offset: printing must not crash.
  if (size >= 12) {
    std::uint64_t raw = 0;
    std::uint32_t rawOffset = 0;
    for (std::size_t i = 0; i < 8; ++i) raw = (raw << 8) | data[i];
    for (std::size_t i = 8; i < 12; ++i) rawOffset = (rawOffset << 8) | data[i];
    const auto t = static_cast<EpochSeconds>(raw);
    const auto offset = static_cast<std::int32_t>(rawOffset);
    // Real offsets stay within a day; the parsers round-trip only those.
    checkTimestampRoundTrip(t, offset, false);
    checkTimestampRoundTrip(t, static_cast<std::int32_t>(offset % 86400), true);
    (void)kubeslurm::slurm::formatSqueueDuration(TimeLimit{t});
    (void)kubeslurm::slurm::formatSinfoTimeLimit(TimeLimit{t});
    (void)kubeslurm::slurm::formatPaddedDuration(TimeLimit{t});
  }
  return 0;
}

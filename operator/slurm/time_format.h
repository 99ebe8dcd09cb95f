// Slurm's time formats: durations (--time, TIME, TIME_LIMIT, Elapsed) and timestamps
// (SubmitTime=2026-11-21T04:35:12). Pure: the caller passes `now` and the UTC offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "operator/base/status.h"

namespace kubeslurm::slurm {

// Seconds since the Unix epoch, UTC.
using EpochSeconds = std::int64_t;

// A duration in whole seconds; nullopt means UNLIMITED/INFINITE.
struct TimeLimit {
  std::optional<std::int64_t> seconds;
  bool isUnlimited() const { return !seconds.has_value(); }
  friend bool operator==(const TimeLimit&, const TimeLimit&) = default;
};

// Parses a time limit as sbatch --time does (Slurm's time_str2secs): "M", "M:S", "H:M:S",
// "D-H", "D-H:M", "D-H:M:S", "UNLIMITED", "INFINITE" (case-insensitive), and "-1".
// Error message is what follows "sbatch: error: " for a bad --time.
StatusOr<TimeLimit> parseTimeLimit(std::string_view text);

// squeue's TIME / TIME_LIMIT column (secs2time_str): "0:00", "1:05", "1:00:00",
// "7-00:00:00"; unlimited prints "UNLIMITED".
std::string formatSqueueDuration(const TimeLimit& limit);
// sinfo's TIMELIMIT column: as squeue, but unlimited prints "infinite".
std::string formatSinfoTimeLimit(const TimeLimit& limit);
// scontrol's RunTime=/TimeLimit= and sacct's Elapsed: "00:00:03", "01:00:00", "7-00:00:00";
// unlimited prints "UNLIMITED".
std::string formatPaddedDuration(const TimeLimit& limit);

// "2026-11-21T04:35:12" for epoch + UTC offset (seconds east of UTC).
std::string formatTimestamp(EpochSeconds t, std::int32_t utcOffsetSeconds);
// Parses "2026-11-21T04:35:12" (and "2026-11-21T04:35", "2026-11-21") in local time.
StatusOr<EpochSeconds> parseTimestamp(std::string_view text, std::int32_t utcOffsetSeconds);
// sbatch --begin / --deadline forms (Slurm's parse_time): "now", "now+60", "now+1hour",
// "16:00", "16:00:30", "midnight", "noon", "fika", "teatime", "today", "tomorrow",
// "MM/DD[/YY]", "YYYY-MM-DD[THH:MM[:SS]]".
StatusOr<EpochSeconds> parseBeginTime(std::string_view text, EpochSeconds now,
                                      std::int32_t utcOffsetSeconds);

}  // namespace kubeslurm::slurm

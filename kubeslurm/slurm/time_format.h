// Slurm's time formats: durations (--time, TIME, TIME_LIMIT, Elapsed) and timestamps
// (SubmitTime=2026-11-21T04:35:12). Pure: the caller passes `now` and the UTC offset.
//
// Sources of truth (Slurm 22.05): src/common/parse_time.c (time_str2secs, time_str2mins,
// secs2time_str, mins2time_str, parse_time, slurm_make_time_str), src/squeue/print.c and
// src/sinfo/print.c (_print_secs), src/common/slurm_opt.c (arg_set_time_limit, arg_set_begin).
//
// Time zones: Slurm uses the process's local time zone (TZ, tzdata, DST). We take one fixed
// offset east of UTC instead, so a DST change between `now` and a parsed time is not modelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::slurm {

// Seconds since the Unix epoch, UTC.
using EpochSeconds = std::int64_t;

// A duration in whole seconds; nullopt means UNLIMITED/INFINITE.
struct TimeLimit {
  std::optional<std::int64_t> seconds;
  bool isUnlimited() const { return !seconds.has_value(); }
  friend bool operator==(const TimeLimit&, const TimeLimit&) = default;
};

// What sbatch prints after "sbatch: error: " for a --time it cannot parse.
inline constexpr std::string_view kInvalidTimeLimitMessage = "Invalid --time specification";

// Parses a time limit as sbatch --time does (Slurm's time_str2secs): "M", "M:S", "H:M:S",
// "D-H", "D-H:M", "D-H:M:S", "UNLIMITED", "INFINITE" (case-insensitive), and "-1".
// Components are not range-checked ("90" is 90 minutes, "0:90" is 90 seconds) and a total of
// zero means unlimited, both as in sbatch. Seconds are kept: "0:30" is 30 s here, while the
// controller stores whole minutes rounded up (see timeLimitMinutes).
// Error message is what follows "sbatch: error: " for a bad --time (kInvalidTimeLimitMessage).
// Deviations: a negative day count ("-5") and totals past 2^31-1 seconds, which overflow into
// garbage limits in sbatch, are rejected here.
StatusOr<TimeLimit> parseTimeLimit(std::string_view text);

// The limit in whole minutes as Slurm stores it (time_str2mins: seconds rounded up);
// nullopt when unlimited.
std::optional<std::int64_t> timeLimitMinutes(const TimeLimit& limit);

// squeue's TIME / TIME_LIMIT column (_print_secs): "0:00", "1:05", "1:00:00", "7-00:00:00";
// unlimited prints "UNLIMITED"; negative or above 365 days prints "INVALID" as squeue does.
std::string formatSqueueDuration(const TimeLimit& limit);
// sinfo's TIMELIMIT column: as squeue, but unlimited prints "infinite" and there is no
// INVALID check.
std::string formatSinfoTimeLimit(const TimeLimit& limit);
// scontrol's RunTime=/TimeLimit= and sacct's Elapsed (secs2time_str): "00:00:03",
// "01:00:00", "7-00:00:00"; unlimited prints "UNLIMITED", negative "INVALID".
// scontrol's TimeLimit= shows the stored minutes: round with timeLimitMinutes first.
std::string formatPaddedDuration(const TimeLimit& limit);

// "2026-11-21T04:35:12" for epoch + UTC offset (seconds east of UTC), as slurm_make_time_str
// prints with its default "%FT%T" format (the year is not zero-padded, as glibc's %Y).
// Slurm's special values (0 -> "Unknown", NO_VAL -> "None", "N/A" in some fields) are the
// caller's choice per field.
std::string formatTimestamp(EpochSeconds t, std::int32_t utcOffsetSeconds);
// Parses "2026-11-21T04:35:12" (and "2026-11-21T04:35", "2026-11-21") in local time: what
// formatTimestamp prints, strictly (four-digit year, two-digit fields, real calendar dates).
StatusOr<EpochSeconds> parseTimestamp(std::string_view text, std::int32_t utcOffsetSeconds);

// sbatch --begin / --deadline forms (Slurm's parse_time): "now", "now+60", "now+1hour",
// "now-5minutes", "16:00", "16:00:30", "4:00pm", "4:30 PM", "midnight", "noon", "fika",
// "teatime", "today", "tomorrow", "MMDD[YY]", "MM/DD[/YY]", "MM.DD[.YY]",
// "YYYY-MM-DD[THH:MM[:SS]]", combinations ("tomorrow 16:00", "12/25-08:00"), and "uts<epoch>".
// A time of day without a date is today if still ahead (by minute), else tomorrow; a date
// without a year is this year if still ahead, else next year.
// Error message: parse_time's diagnostic line, "Invalid time specification (pos=N): TEXT",
// which sbatch prints on stderr before "sbatch: error: Invalid --begin specification"; it is
// empty where Slurm prints no diagnostic (input that names no time, such as "" or "T").
StatusOr<EpochSeconds> parseBeginTime(std::string_view text, EpochSeconds now,
                                      std::int32_t utcOffsetSeconds);
// The same forms looking back, as sacct and sreport read -S/-E and Start=/End= (parse_time with
// `past` set): a time of day without a date is today's; a date without a year is last year's
// when its month is later than this one, else this year's.
StatusOr<EpochSeconds> parsePastTime(std::string_view text, EpochSeconds now,
                                     std::int32_t utcOffsetSeconds);

}  // namespace kubeslurm::slurm

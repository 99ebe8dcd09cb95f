#include "kubeslurm/slurm/time_format.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// Expected values were checked against the real sbatch 22.05.8 on this machine: `sbatch -v
// --time=X` prints the parsed limit ("time : 00:02:00") and `sbatch -v --begin=X` the parsed
// begin time, before it would contact the controller.

namespace kubeslurm::slurm {
namespace {

constexpr std::int64_t kMinute = 60;
constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kDay = 86400;
constexpr std::optional<std::int64_t> kUnlimited = std::nullopt;

// 2026-11-21T04:35:12 UTC, SubmitTime= in reference/slurm-22.05.md line 103.
constexpr EpochSeconds kSubmitTime = 1795235712;
// 2026-11-21T05:22:16 UTC (a Saturday): "now" for the --begin cases.
constexpr EpochSeconds kNow = 1795238536;

struct TimeLimitCase {
  std::string input;
  std::optional<std::int64_t> seconds;  // nullopt: unlimited
  std::string pins;
};

TEST(ParseTimeLimitTest, AcceptsEverySbatchFormAndKeepsSeconds) {
  const std::vector<TimeLimitCase> cases = {
      {"1", 1 * kMinute, "sbatch(1) --time: \"minutes\""},
      {"90", 90 * kMinute, "minutes are not range-checked (time_str2secs)"},
      {"1:2", 1 * kMinute + 2, "\"minutes:seconds\""},
      {"0:30", 30, "seconds kept; sbatch rounds this up to 1 minute"},
      {"0:90", 90, "seconds are not range-checked"},
      {"1:2:3", 1 * kHour + 2 * kMinute + 3, "\"hours:minutes:seconds\""},
      {"01:00:00", 1 * kHour, "--time=01:00:00, reference line 19"},
      {"99:99:99", 99 * kHour + 99 * kMinute + 99, "fields are not range-checked"},
      {"5-", 5 * kDay, "\"days-\" with nothing after (sscanf stops)"},
      {"1-2", 1 * kDay + 2 * kHour, "\"days-hours\""},
      {"1-2:3", 1 * kDay + 2 * kHour + 3 * kMinute, "\"days-hours:minutes\""},
      {"1-2:3:4", 1 * kDay + 2 * kHour + 3 * kMinute + 4, "\"days-hours:minutes:seconds\""},
      {"7-00:00:00", 7 * kDay, "MaxTime=7-00:00:00, reference line 346"},
      {"1-48", 1 * kDay + 48 * kHour, "hours past 23 are kept"},
      {"UNLIMITED", kUnlimited, "time_str2secs: \"UNLIMITED\""},
      {"unlimited", kUnlimited, "case-insensitive (xstrcasecmp)"},
      {"Infinite", kUnlimited, "\"INFINITE\", case-insensitive"},
      {"-1", kUnlimited, "\"-1\" is INFINITE"},
      {"0", kUnlimited, "sbatch(1): a time limit of zero requests no limit"},
      {"0:00", kUnlimited, "zero in any form is no limit (arg_set_time_limit)"},
      {"0-0:0:0", kUnlimited, "zero in the days form too"},
      {"-0", kUnlimited, "sscanf reads -0 days: zero, so no limit"},
      {"35791393", 35791393 * kMinute, "the largest minute count sbatch stores unwrapped"},
  };
  for (const TimeLimitCase& c : cases) {
    const StatusOr<TimeLimit> limit = parseTimeLimit(c.input);
    ASSERT_TRUE(limit.isOk()) << c.input << " (" << c.pins << "): " << limit.status().toString();
    EXPECT_EQ(limit->seconds, c.seconds) << c.input << " (" << c.pins << ")";
  }
}

TEST(ParseTimeLimitTest, RejectsWhatSbatchRejectsWithItsMessage) {
  // _is_valid_timespec: only digits, '-' and ':'; at most one '-' (before any ':') and two
  // ':'; enough digit groups for the separators.
  const std::vector<std::string> invalid = {
      "",        "xyz", "1 ",   " 1",   "1a",       "-",         "--",    ":",
      ":5",      "5:",  "1::2", "1:2:", "1-:2",     "1-2:",      "1:2-3", "1-2-3",
      "1:2:3:4", "+5",  "1.5",  "1h",   "infinity", "1-2:3:4:5",
  };
  for (const std::string& input : invalid) {
    const StatusOr<TimeLimit> limit = parseTimeLimit(input);
    ASSERT_FALSE(limit.isOk()) << input;
    EXPECT_EQ(limit.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(limit.status().message(), "Invalid --time specification") << input;
  }
}

TEST(ParseTimeLimitTest, RejectsNegativeAndOverflowingLimitsThatSbatchWraps) {
  // sbatch accepts these and sends a wrapped-around limit ("-5" shows as
  // "2982611-04:17:00"); a deliberate deviation.
  for (const std::string input :
       {"-5", "-01", "35791394", "24855-03:14:08", "2147483647", "99999999999", "0:2147483648"}) {
    EXPECT_FALSE(parseTimeLimit(input).isOk()) << input;
  }
}

TEST(ParseTimeLimitTest, StopsAtEmbeddedNul) {
  // Slurm's C strings end at the first NUL.
  EXPECT_EQ(parseTimeLimit(std::string("5\0xyz", 5))->seconds, 5 * kMinute);
}

TEST(TimeLimitMinutesTest, RoundsSecondsUpAsTimeStr2Mins) {
  EXPECT_EQ(timeLimitMinutes(TimeLimit{30}), 1);  // "0:30" is stored as 1 minute
  EXPECT_EQ(timeLimitMinutes(TimeLimit{60}), 1);
  EXPECT_EQ(timeLimitMinutes(TimeLimit{61}), 2);
  EXPECT_EQ(timeLimitMinutes(TimeLimit{kHour}), 60);
  EXPECT_EQ(timeLimitMinutes(TimeLimit{}), std::nullopt);
}

struct DurationCase {
  std::optional<std::int64_t> seconds;
  std::string expected;
  std::string pins;
};

TEST(FormatSqueueDurationTest, PrintsTheTimeColumnAsSqueue) {
  const std::vector<DurationCase> cases = {
      {0, "0:00", "reference line 82: a pending job's TIME"},
      {1, "0:01", "reference line 83"},
      {9, "0:09", "reference line 84"},
      {65, "1:05", "minutes:seconds below an hour (_print_secs)"},
      {kHour, "1:00:00", "hours unpadded"},
      {kHour + 61, "1:01:01", "hours:minutes:seconds"},
      {7 * kDay, "7-00:00:00", "days-hours:minutes:seconds"},
      {365 * kDay, "365-00:00:00", "a year is still printed"},
      {365 * kDay + 1, "INVALID", "_print_secs: more than YEAR_SECONDS"},
      {-1, "INVALID", "_print_secs: negative"},
      {kUnlimited, "UNLIMITED", "_print_job_time_limit: INFINITE"},
  };
  for (const DurationCase& c : cases) {
    EXPECT_EQ(formatSqueueDuration(TimeLimit{c.seconds}), c.expected) << c.pins;
  }
}

TEST(FormatSinfoTimeLimitTest, PrintsTheTimelimitColumnAsSinfo) {
  const std::vector<DurationCase> cases = {
      {7 * kDay, "7-00:00:00", "reference line 30: train's TIMELIMIT"},
      {kHour, "1:00:00", "reference line 31: debug's TIMELIMIT"},
      {30 * kMinute, "30:00", "minutes:seconds below an hour"},
      {kUnlimited, "infinite", "sinfo's _print_time: INFINITE"},
      {400 * kDay, "400-00:00:00", "sinfo has no INVALID check"},
  };
  for (const DurationCase& c : cases) {
    EXPECT_EQ(formatSinfoTimeLimit(TimeLimit{c.seconds}), c.expected) << c.pins;
  }
}

TEST(FormatPaddedDurationTest, PrintsScontrolAndSacctDurations) {
  const std::vector<DurationCase> cases = {
      {3, "00:00:03", "reference line 102: RunTime=00:00:03"},
      {kHour, "01:00:00", "reference line 102: TimeLimit=01:00:00"},
      {40, "00:00:40", "reference line 223: sacct Elapsed 00:00:40"},
      {0, "00:00:00", "reference line 115: DelayBoot=00:00:00"},
      {7 * kDay, "7-00:00:00", "secs2time_str: days-HH:MM:SS"},
      {1 * kDay + kHour + 61, "1-01:01:01", "secs2time_str"},
      {kUnlimited, "UNLIMITED", "secs2time_str/mins2time_str: INFINITE"},
      {-5, "INVALID", "secs2time_str: a negative field"},
  };
  for (const DurationCase& c : cases) {
    EXPECT_EQ(formatPaddedDuration(TimeLimit{c.seconds}), c.expected) << c.pins;
  }
}

TEST(FormatTimestampTest, PrintsIsoLocalTimeAsScontrol) {
  // reference line 103: SubmitTime=2026-11-21T04:35:12 (the rig ran in UTC).
  EXPECT_EQ(formatTimestamp(kSubmitTime, 0), "2026-11-21T04:35:12");
  // reference line 105: EndTime one hour later.
  EXPECT_EQ(formatTimestamp(kSubmitTime + kHour, 0), "2026-11-21T05:35:12");
  EXPECT_EQ(formatTimestamp(kSubmitTime, 9 * 3600), "2026-11-21T13:35:12");
  EXPECT_EQ(formatTimestamp(kSubmitTime, -5 * 3600), "2026-11-20T23:35:12");
  EXPECT_EQ(formatTimestamp(0, 0), "1970-01-01T00:00:00");
  EXPECT_EQ(formatTimestamp(-1, 0), "1969-12-31T23:59:59");
  EXPECT_EQ(formatTimestamp(951782400, 0), "2000-02-29T00:00:00");  // a leap day
  // glibc's %Y does not pad the year.
  EXPECT_EQ(formatTimestamp(-62135596800 - 86400, 0), "0-12-31T00:00:00");
}

TEST(ParseTimestampTest, ReadsBackWhatFormatTimestampPrints) {
  EXPECT_EQ(*parseTimestamp("2026-11-21T04:35:12", 0), kSubmitTime);
  EXPECT_EQ(*parseTimestamp("2026-11-21T13:35:12", 9 * 3600), kSubmitTime);
  EXPECT_EQ(*parseTimestamp("2026-11-21T04:35", 0), kSubmitTime - 12);
  EXPECT_EQ(*parseTimestamp("2026-11-21", 0), kSubmitTime - 4 * kHour - 35 * kMinute - 12);
  EXPECT_EQ(*parseTimestamp("2024-02-29T00:00:00", 0), 1709164800);
  // The last instant is 9999-12-31T23:59:59 at UTC+14, the furthest offset tried: later ones
  // print a five-digit year, which is not a timestamp Slurm reads back.
  constexpr EpochSeconds kLastFourDigitYear = 253402300799 - 14 * kHour;
  for (const EpochSeconds t : {EpochSeconds{0}, kSubmitTime, kLastFourDigitYear}) {
    for (const std::int32_t offset : {0, 3600, -12600, 50400}) {
      const auto parsed = parseTimestamp(formatTimestamp(t, offset), offset);
      ASSERT_TRUE(parsed.isOk()) << t << " " << offset << ": " << parsed.status().toString();
      EXPECT_EQ(*parsed, t) << t << " " << offset;
    }
  }
}

TEST(ParseTimestampTest, RejectsAnythingButTheExactForm) {
  for (const std::string input :
       {"", "2026-11-21T", "2026-11-21T04", "2026-11-21 04:35:12", "2026-1-21", "2026-11-1",
        "2026-13-01", "2026-00-01", "2026-02-29", "2026-04-31", "2026-11-21T24:00:00",
        "2026-11-21T23:60", "2026-11-21T23:59:60", "2026/11/21", "26-11-21", "2026-11-21T04:35:12Z",
        "x026-11-21"}) {
    EXPECT_FALSE(parseTimestamp(input, 0).isOk()) << input;
  }
}

struct BeginCase {
  std::string input;
  std::string expected;  // formatted local time, or "ERR <message>"
  std::string pins;
};

std::string shown(const StatusOr<EpochSeconds>& t, std::int32_t offset) {
  if (!t.isOk()) return "ERR " + t.status().message();
  return formatTimestamp(*t, offset);
}

std::string beginResult(const std::string& input, std::int32_t offset) {
  return shown(parseBeginTime(input, kNow, offset), offset);
}

TEST(ParseBeginTimeTest, ResolvesSlurmParseTimeFormsRelativeToNow) {
  // now = 2026-11-21T05:22:16 local (UTC).
  const std::vector<BeginCase> cases = {
      {"now", "2026-11-21T05:22:16", "sbatch(1) --begin: now"},
      {"now+60", "2026-11-21T05:23:16", "sbatch(1): now+60 (seconds by default)"},
      {"now+1hour", "2026-11-21T06:22:16", "sbatch(1): now+1hour"},
      {"now+1hours", "2026-11-21T06:22:16", "parse_time units: hours"},
      {"now+30minutes", "2026-11-21T05:52:16", "units: minutes"},
      {"now+5seconds", "2026-11-21T05:22:21", "units: seconds"},
      {"now+2days", "2026-11-23T05:22:16", "units: days"},
      {"now+1week", "2026-11-28T05:22:16", "units: weeks"},
      {"now + 1 hour", "2026-11-21T06:22:16", "blanks around the delta are skipped"},
      {"now-5", "2026-11-21T05:22:11", "now-count goes back"},
      {"NOW+1HOUR", "2026-11-21T06:22:16", "keywords are case-insensitive"},
      {"16:00", "2026-11-21T16:00:00", "sbatch(1): --begin=16:00, still ahead today"},
      {"16:00:30", "2026-11-21T16:00:30", "HH:MM:SS"},
      {"05:22", "2026-11-22T05:22:00", "not ahead by the minute: tomorrow"},
      {"05:23", "2026-11-21T05:23:00", "ahead by a minute: today"},
      {"04:00", "2026-11-22T04:00:00", "a past time of day rolls to tomorrow"},
      {"4:00pm", "2026-11-21T16:00:00", "HH:MM pm"},
      {"4:30 PM", "2026-11-21T16:30:00", "blank before AM/PM, case-insensitive"},
      {"12:00am", "2026-11-22T00:00:00", "12am is midnight"},
      {"12:00pm", "2026-11-21T12:00:00", "12pm is noon"},
      {"midnight", "2026-11-22T00:00:00", "midnight: the next one"},
      {"noon", "2026-11-21T12:00:00", "noon"},
      {"fika", "2026-11-21T15:00:00", "fika: 3 PM"},
      {"teatime", "2026-11-21T16:00:00", "teatime: 4 PM"},
      {"today", "2026-11-21T00:00:00", "a date alone is its midnight"},
      {"tomorrow", "2026-11-22T00:00:00", "tomorrow"},
      {"tomorrow 16:00", "2026-11-22T16:00:00", "date and time combine"},
      {"16:00 tomorrow", "2026-11-22T16:00:00", "in either order"},
      {"12/25", "2026-12-25T00:00:00", "MM/DD still ahead: this year"},
      {"11/20", "2027-11-20T00:00:00", "MM/DD already past: next year"},
      {"11/21", "2027-11-21T00:00:00", "today's date at 00:00 is past: next year"},
      {"12/25/27", "2027-12-25T00:00:00", "MM/DD/YY"},
      {"12.25.27", "2027-12-25T00:00:00", "MM.DD.YY"},
      {"1225", "2026-12-25T00:00:00", "MMDD"},
      {"122527", "2027-12-25T00:00:00", "MMDDYY"},
      {"12/25/00", "2026-12-25T00:00:00", "YY 00 counts as no year (_get_date)"},
      {"2/31", "2027-03-03T00:00:00", "day overflow runs into March as mktime does"},
      {"12/25-08:00", "2026-12-25T08:00:00", "MM/DD-HH:MM"},
      {"2026-11-21T04:35", "2026-11-21T04:35:00", "sbatch(1): YYYY-MM-DD[THH:MM[:SS]]"},
      {"2026-11-21T04:35:12", "2026-11-21T04:35:12", "with seconds"},
      {"2026-11-21", "2026-11-21T00:00:00", "a past date is kept as given"},
      {"2026-11-21 04:35", "2026-11-21T04:35:00", "a blank for the T"},
      {"2026-02-31", "2026-03-03T00:00:00", "ISO day overflow normalised too"},
      {"uts1234567", "1970-01-15T06:56:07", "uts<epoch>"},
  };
  for (const BeginCase& c : cases) {
    EXPECT_EQ(beginResult(c.input, 0), c.expected) << c.input << " (" << c.pins << ")";
  }
}

// sacct -S/-E and sreport Start=/End= call parse_time with `past` set (src/sacct/options.c,
// src/sreport/*_reports.c): a yearless date is last year's only when its month is later than
// this one (parse_time compares months, not days), and a time alone is today's.
TEST(ParsePastTimeTest, LooksBackAsSacctAndSreportDo) {
  // now = 2026-11-21T05:22:16 local (UTC).
  const std::vector<BeginCase> cases = {
      {"12/25", "2025-12-25T00:00:00", "a later month: last year"},
      {"01/05", "2026-01-05T00:00:00", "an earlier month: this year"},
      {"11/20", "2026-11-20T00:00:00", "this month: this year"},
      {"11/25", "2026-11-25T00:00:00", "this month, a later day: still this year"},
      {"1225", "2025-12-25T00:00:00", "MMDD as MM/DD"},
      {"12/25/27", "2027-12-25T00:00:00", "a year given is kept"},
      {"04:00", "2026-11-21T04:00:00", "a time alone: today, though past"},
      {"16:00", "2026-11-21T16:00:00", "a time alone: today, though ahead"},
      {"2026-10-01T08:00", "2026-10-01T08:00:00", "ISO as given"},
      {"now-2days", "2026-11-19T05:22:16", "now-N as sbatch reads it"},
  };
  for (const BeginCase& c : cases) {
    EXPECT_EQ(shown(parsePastTime(c.input, kNow, 0), 0), c.expected)
        << c.input << " (" << c.pins << ")";
  }
}

TEST(ParseBeginTimeTest, ResolvesInTheGivenUtcOffset) {
  // now = 2026-11-21T10:22:16 local at UTC+5.
  EXPECT_EQ(beginResult("now", 5 * 3600), "2026-11-21T10:22:16");
  EXPECT_EQ(beginResult("10:00", 5 * 3600), "2026-11-22T10:00:00");
  EXPECT_EQ(beginResult("11:00", 5 * 3600), "2026-11-21T11:00:00");
  EXPECT_EQ(*parseBeginTime("2026-11-21T10:00", kNow, 5 * 3600), kNow - 22 * kMinute - 16);
  // Crossing midnight at UTC-5: locally it is still 2026-11-21T00:22:16.
  EXPECT_EQ(beginResult("today", -5 * 3600), "2026-11-21T00:00:00");
  EXPECT_EQ(beginResult("00:10", -5 * 3600), "2026-11-22T00:10:00");
}

TEST(ParseBeginTimeTest, ReportsErrorsWithParseTimesPosition) {
  const std::vector<BeginCase> cases = {
      {"bogus", "ERR Invalid time specification (pos=0): bogus", "an unknown word"},
      {"now+1h", "ERR Invalid time specification (pos=4): now+1h", "'h' is no unit"},
      {"now+hour", "ERR Invalid time specification (pos=3): now+hour", "a unit without a count"},
      {"now+", "ERR Invalid time specification (pos=3): now+", "a sign without a count"},
      {"nowx", "ERR Invalid time specification (pos=3): nowx", "junk after now"},
      {"Today", "ERR Invalid time specification (pos=1): Today",
       "only an upper-case T is skipped, so 'Today' is not 'today'"},
      {"24:00", "ERR Invalid time specification (pos=0): 24:00", "hour above 23"},
      {"23:60", "ERR Invalid time specification (pos=3): 23:60", "minute above 59"},
      {"1:5", "ERR Invalid time specification (pos=3): 1:5", "minutes take two digits"},
      {"13:00pm", "ERR Invalid time specification (pos=5): 13:00pm", "13 PM"},
      {"13/1", "ERR Invalid time specification (pos=0): 13/1", "month above 12"},
      {"0/5", "ERR Invalid time specification (pos=-1): 0/5", "Slurm's own pos=-1"},
      {"12/32", "ERR Invalid time specification (pos=3): 12/32", "day above 31"},
      {"2026-13-01", "ERR Invalid time specification (pos=5): 2026-13-01", "ISO month 13"},
      {"5", "ERR Invalid time specification (pos=1): 5", "a lone number is a month"},
      {"uts123", "ERR Invalid time specification (pos=0): uts123", "uts below 1000000"},
      {"uts1234567x", "ERR Invalid time specification (pos=0): uts1234567x", "uts with junk"},
      {"today now", "ERR Invalid time specification (pos=15): today now",
       "a 'now' that does not open the text: Slurm's pos += i overshoots"},
      {"1970-01-01T00:00:00", "ERR ", "epoch 0 is parse_time's failure value: no diagnostic"},
      {"1969-12-31T23:59:59", "ERR Invalid time specification (pos=19): 1969-12-31T23:59:59",
       "mktime's -1"},
      {"", "ERR ", "nothing specified: no diagnostic, sbatch says Invalid --begin"},
      {" T-", "ERR ", "only separators"},
  };
  for (const BeginCase& c : cases) {
    EXPECT_EQ(beginResult(c.input, 0), c.expected) << c.input << " (" << c.pins << ")";
  }
}

}  // namespace
}  // namespace kubeslurm::slurm

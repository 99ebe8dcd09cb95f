#include "kubeslurm/slurm/time_format.h"

#include <array>
#include <cstddef>
#include <limits>
#include <string>

#include "kubeslurm/base/text.h"

namespace kubeslurm::slurm {
namespace {

constexpr std::int64_t kSecondsPerMinute = 60;
constexpr std::int64_t kSecondsPerHour = 3600;
constexpr std::int64_t kSecondsPerDay = 86400;
// squeue prints "INVALID" past this (YEAR_SECONDS in slurm_protocol_defs.h).
constexpr std::int64_t kYearSeconds = 365 * kSecondsPerDay;
// time_str2secs adds up the fields in a C int, and time_str2mins adds 59 to round up: past
// this sbatch silently wraps into a garbage limit.
constexpr std::int64_t kMaxLimitSeconds = std::numeric_limits<std::int32_t>::max() - 59;
// Bound on "now+N" so that later arithmetic cannot overflow; about 31,000 years.
constexpr std::int64_t kMaxDeltaSeconds = 1'000'000'000'000;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
int digitValue(char c) { return c - '0'; }
char toLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
// C's isblank and isspace in the "C" locale, which is what Slurm's clients run in.
bool isBlank(char c) { return c == ' ' || c == '\t'; }
bool isSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Slurm's C strings end at the first NUL; so does what we parse.
std::string_view untilNul(std::string_view text) {
  const std::size_t nul = text.find('\0');
  return nul == std::string_view::npos ? text : text.substr(0, nul);
}

// printf's "%2.2ld": a sign if negative, then at least two digits.
std::string pad2(std::int64_t value) {
  const bool negative = value < 0;
  // Magnitudes here are below 10^15, so negation cannot overflow.
  std::string digits = std::to_string(negative ? -value : value);
  if (digits.size() < 2) digits.insert(0, 2 - digits.size(), '0');
  return negative ? "-" + digits : digits;
}

// The four fields every Slurm duration printer derives, with C's truncating division.
struct DurationFields {
  std::int64_t days;
  std::int64_t hours;
  std::int64_t minutes;
  std::int64_t seconds;
};

DurationFields splitDuration(std::int64_t total) {
  return {total / kSecondsPerDay, (total / kSecondsPerHour) % 24, (total / kSecondsPerMinute) % 60,
          total % 60};
}

// _print_secs in squeue/sinfo: "D-HH:MM:SS", "H:MM:SS" or "M:SS".
std::string formatShortDuration(std::int64_t total) {
  const DurationFields f = splitDuration(total);
  if (f.days != 0) {
    return std::to_string(f.days) + "-" + pad2(f.hours) + ":" + pad2(f.minutes) + ":" +
           pad2(f.seconds);
  }
  if (f.hours != 0) return std::to_string(f.hours) + ":" + pad2(f.minutes) + ":" + pad2(f.seconds);
  return std::to_string(f.minutes) + ":" + pad2(f.seconds);
}

// ---- Calendar arithmetic (proleptic Gregorian), so that no TZ file or libc call is needed.

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 of the given civil date (month 1..12, day 1..31). Days past the end
// of the month run on into the next, as mktime normalises them.
std::int64_t daysFromCivil(std::int64_t year, int month, std::int64_t day) {
  // Count years from March so that the leap day is the last day of the counted year.
  const std::int64_t y = month <= 2 ? year - 1 : year;
  const std::int64_t era = floorDiv(y, 400);
  const std::int64_t yearOfEra = y - era * 400;                           // [0, 399]
  const std::int64_t monthFromMarch = month > 2 ? month - 3 : month + 9;  // [0, 11]
  // 153 days per five months (31+30+31+30+31) gives each month's first day from March.
  const std::int64_t dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1;
  const std::int64_t dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
  // 719468 days separate 0000-03-01 from 1970-01-01.
  return era * 146097 + dayOfEra - 719468;
}

struct CivilDate {
  std::int64_t year;
  int month;  // 1..12
  int day;    // 1..31
};

CivilDate civilFromDays(std::int64_t daysSinceEpoch) {
  const std::int64_t z = daysSinceEpoch + 719468;
  const std::int64_t era = floorDiv(z, 146097);
  const std::int64_t dayOfEra = z - era * 146097;  // [0, 146096]
  const std::int64_t yearOfEra =
      (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365;  // [0, 399]
  const std::int64_t dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
  const std::int64_t monthFromMarch = (5 * dayOfYear + 2) / 153;  // [0, 11]
  const auto day = static_cast<int>(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1);
  const auto month =
      static_cast<int>(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9);
  return {yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

// now + delta without overflow, for any `now` a caller may pass.
EpochSeconds addSeconds(EpochSeconds t, std::int64_t delta) {
  constexpr EpochSeconds kMax = std::numeric_limits<EpochSeconds>::max();
  constexpr EpochSeconds kMin = std::numeric_limits<EpochSeconds>::min();
  if (delta > 0 && t > kMax - delta) return kMax;
  if (delta < 0 && t < kMin - delta) return kMin;
  return t + delta;
}

bool isLeapYear(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int daysInMonth(std::int64_t year, int month) {
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && isLeapYear(year)) return 29;
  return kDays[static_cast<std::size_t>(month - 1)];
}

// Broken-down local time, the part of struct tm that parse_time uses.
struct LocalTime {
  std::int64_t year = 0;
  int month = 1;  // 1..12
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
};

LocalTime toLocalTime(EpochSeconds t, std::int32_t utcOffsetSeconds) {
  // Split before adding the offset, and without multiplying back, so that nothing
  // overflows even at the int64 extremes.
  std::int64_t days = t / kSecondsPerDay;
  std::int64_t secondOfDay = t % kSecondsPerDay;
  if (secondOfDay < 0) {
    secondOfDay += kSecondsPerDay;
    --days;
  }
  secondOfDay += utcOffsetSeconds;
  const std::int64_t carry = floorDiv(secondOfDay, kSecondsPerDay);
  days += carry;
  secondOfDay -= carry * kSecondsPerDay;
  const CivilDate date = civilFromDays(days);
  LocalTime local;
  local.year = date.year;
  local.month = date.month;
  local.day = date.day;
  local.hour = static_cast<int>(secondOfDay / kSecondsPerHour);
  local.minute = static_cast<int>((secondOfDay / kSecondsPerMinute) % 60);
  local.second = static_cast<int>(secondOfDay % 60);
  return local;
}

EpochSeconds fromLocalTime(std::int64_t year, int month, std::int64_t day, std::int64_t hour,
                           std::int64_t minute, std::int64_t second,
                           std::int32_t utcOffsetSeconds) {
  const std::int64_t days = daysFromCivil(year, month, 1) + day - 1;
  return days * kSecondsPerDay + hour * kSecondsPerHour + minute * kSecondsPerMinute + second -
         utcOffsetSeconds;
}

// ---- parse_time

// parse_time's relative-time units, tried in this order at each position after "now+".
struct DeltaUnit {
  std::string_view name;
  std::int64_t seconds;
};
constexpr std::array<DeltaUnit, 10> kDeltaUnits = {{
    {"seconds", 1},
    {"second", 1},
    {"minutes", kSecondsPerMinute},
    {"minute", kSecondsPerMinute},
    {"hours", kSecondsPerHour},
    {"hour", kSecondsPerHour},
    {"days", kSecondsPerDay},
    {"day", kSecondsPerDay},
    {"weeks", 7 * kSecondsPerDay},
    {"week", 7 * kSecondsPerDay},
}};

// One run of Slurm's parse_time (with past = 0). Positions are signed because Slurm reports
// pos=-1 for some bad dates ("0/5"), and its error line carries them.
class BeginTimeParser {
 public:
  BeginTimeParser(std::string_view text, EpochSeconds now, std::int32_t utcOffsetSeconds,
                  bool past = false)
      : text_(text),
        now_(now),
        offset_(utcOffsetSeconds),
        nowLocal_(toLocalTime(now, offset_)),
        past_(past) {}

  StatusOr<EpochSeconds> parse();

 private:
  char at(std::int64_t i) const {
    return (i >= 0 && static_cast<std::size_t>(i) < text_.size())
               ? text_[static_cast<std::size_t>(i)]
               : '\0';
  }
  bool endAt(std::int64_t i) const { return at(i) == '\0' || at(i) == '\n'; }
  // xstrncasecmp(text + pos, word, word.size()) == 0
  bool wordAt(std::int64_t pos, std::string_view word) const {
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (toLower(at(pos + static_cast<std::int64_t>(i))) != word[i]) return false;
    }
    return true;
  }
  Status problem(std::int64_t pos) const {
    return invalidArgument("Invalid time specification (pos=" + std::to_string(pos) +
                           "): " + std::string(text_));
  }

  StatusOr<EpochSeconds> parseUts() const;
  bool parseNow(std::int64_t& pos);
  bool parseDelta(std::int64_t& pos, std::int64_t& delta) const;
  bool parseTimeOfDay(std::int64_t& pos);
  bool parseDate(std::int64_t& pos);
  void setClock(int hour) {
    hour_ = hour;
    minute_ = 0;
    second_ = 0;
  }
  void setDate(const LocalTime& local) {
    month_ = local.month - 1;
    mday_ = local.day;
    year_ = local.year;
  }
  StatusOr<EpochSeconds> assemble(std::int64_t pos);

  std::string_view text_;
  EpochSeconds now_;
  std::int32_t offset_;
  LocalTime nowLocal_;
  bool past_ = false;  // parse_time's `past`: sacct and sreport look back
  // As parse_time's locals: -1 means "not given"; month is 0-based, year is the full year.
  int hour_ = -1;
  int minute_ = -1;
  int second_ = 0;
  int month_ = -1;
  int mday_ = -1;
  std::optional<std::int64_t> year_;
};

StatusOr<EpochSeconds> BeginTimeParser::parse() {
  if (wordAt(0, "uts")) return parseUts();
  std::int64_t pos = 0;
  for (;; ++pos) {
    // Only a misplaced "now" (see parseNow) takes pos past the end; Slurm then parses
    // whatever follows its buffer, in practice the next argument, and fails at once.
    if (pos > static_cast<std::int64_t>(text_.size())) return problem(pos);
    if (endAt(pos)) break;
    const char c = at(pos);
    // Only an upper-case 'T' is a separator, so "Today" does not parse, as in Slurm.
    if (isBlank(c) || c == '-' || c == 'T') continue;
    if (wordAt(pos, "today")) {
      setDate(nowLocal_);
      pos += 4;
    } else if (wordAt(pos, "tomorrow")) {
      setDate(toLocalTime(addSeconds(now_, kSecondsPerDay), offset_));
      pos += 7;
    } else if (wordAt(pos, "midnight")) {
      setClock(0);
      pos += 7;
    } else if (wordAt(pos, "noon")) {
      setClock(12);
      pos += 3;
    } else if (wordAt(pos, "fika")) {
      setClock(15);  // fika: 3 PM
      pos += 3;
    } else if (wordAt(pos, "teatime")) {
      setClock(16);  // teatime: 4 PM
      pos += 6;
    } else if (wordAt(pos, "now")) {
      if (!parseNow(pos)) return problem(pos);
    } else if (!isDigit(c)) {
      return problem(pos);
    } else if (at(pos + 1) == ':' || at(pos + 2) == ':') {
      if (!parseTimeOfDay(pos)) return problem(pos);
    } else if (!parseDate(pos)) {
      return problem(pos);
    }
  }
  return assemble(pos);
}

// "uts<seconds since the epoch>", read with strtol.
StatusOr<EpochSeconds> BeginTimeParser::parseUts() const {
  std::size_t i = 3;
  while (i < text_.size() && isSpace(text_[i])) ++i;
  bool negative = false;
  if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) negative = text_[i++] == '-';
  const std::size_t firstDigit = i;
  std::int64_t value = 0;
  bool saturated = false;
  for (; i < text_.size() && isDigit(text_[i]); ++i) {
    if (value > (std::numeric_limits<std::int64_t>::max() - digitValue(text_[i])) / 10) {
      saturated = true;
    } else {
      value = value * 10 + digitValue(text_[i]);
    }
  }
  // strtol stops at its first unread character; parse_time wants that to be the end.
  const bool trailing = (i == firstDigit) ? text_.size() > 3 : i != text_.size();
  if (negative) value = -value;
  // Slurm also refuses LONG_MAX, strtol's overflow value.
  if (saturated || trailing || value < 1'000'000 ||
      value == std::numeric_limits<std::int64_t>::max()) {
    return problem(0);
  }
  return value;
}

// "now[{+|-}count[unit]]": the position is that of the 'n' on entry, the last character
// consumed on success, and where it failed otherwise.
bool BeginTimeParser::parseNow(std::int64_t& pos) {
  // Slurm adds the scan index to pos (pos += i) although i already counts from the start of
  // the string, so a "now" that does not open the string resumes further on, or past the
  // end. We do the same, so that positions and results match.
  std::int64_t delta = 0;
  for (std::int64_t i = pos + 3;; ++i) {
    const char c = at(i);
    if (c == '+' || c == '-') {
      pos += i;
      if (!parseDelta(pos, delta)) return false;
      if (c == '-') delta = -delta;
      break;
    }
    if (isBlank(c)) continue;
    if (c == '\0' || c == '\n') {
      pos += i - 1;
      break;
    }
    pos += i;
    return false;
  }
  const LocalTime later = toLocalTime(addSeconds(now_, delta), offset_);
  setDate(later);
  hour_ = later.hour;
  minute_ = later.minute;
  second_ = later.second;
  return true;
}

// The count and optional unit after "now+" (parse_time's _get_delta).
bool BeginTimeParser::parseDelta(std::int64_t& pos, std::int64_t& delta) const {
  std::int64_t count = 0;
  int digits = 0;
  std::int64_t offset = pos + 1;
  for (; !endAt(offset); ++offset) {
    if (isSpace(at(offset))) continue;
    const DeltaUnit* unit = nullptr;
    for (const DeltaUnit& candidate : kDeltaUnits) {
      if (wordAt(offset, candidate.name)) {
        unit = &candidate;
        break;
      }
    }
    if (unit != nullptr) {
      offset += static_cast<std::int64_t>(unit->name.size());
      count *= unit->seconds;
      break;
    }
    if (!isDigit(at(offset))) {
      pos = offset - 1;
      return false;
    }
    count = count * 10 + digitValue(at(offset));
    ++digits;
    // Slurm's long would overflow (undefined behaviour); we stop well before.
    if (count > kMaxDeltaSeconds) {
      pos = offset - 1;
      return false;
    }
  }
  if (digits == 0) return false;  // no number: Slurm leaves pos at the sign
  if (count > kMaxDeltaSeconds) {
    pos = offset - 1;
    return false;
  }
  pos = offset - 1;
  delta = count;
  return true;
}

// "HH:MM[:SS] [AM|PM]" (parse_time's _get_time).
bool BeginTimeParser::parseTimeOfDay(std::int64_t& pos) {
  std::int64_t offset = pos;
  const auto fail = [&pos, &offset](std::int64_t back) {
    pos = offset - back;
    return false;
  };
  if (!isDigit(at(offset))) return fail(0);
  int hour = digitValue(at(offset++));
  if (at(offset) != ':') {
    if (!isDigit(at(offset))) return fail(0);
    hour = hour * 10 + digitValue(at(offset++));
  }
  if (hour > 23) return fail(2);
  if (at(offset) != ':') return fail(0);
  ++offset;
  if (!isDigit(at(offset))) return fail(0);
  int minute = digitValue(at(offset++));
  if (!isDigit(at(offset))) return fail(0);
  minute = minute * 10 + digitValue(at(offset++));
  if (minute > 59) return fail(2);
  int second = 0;
  if (at(offset) == ':') {
    ++offset;
    if (!isDigit(at(offset))) return fail(0);
    second = digitValue(at(offset++));
    if (!isDigit(at(offset))) return fail(0);
    second = second * 10 + digitValue(at(offset++));
    if (second > 59) return fail(2);
  }
  while (isSpace(at(offset))) ++offset;
  if (wordAt(offset, "pm")) {
    hour += 12;
    if (hour > 23) {
      if (hour != 24) return fail(0);
      hour = 12;  // 12pm is noon
    }
    offset += 2;
  } else if (wordAt(offset, "am")) {
    if (hour > 11) {
      if (hour != 12) return fail(0);
      hour = 0;  // 12am is midnight
    }
    offset += 2;
  }
  pos = offset - 1;
  hour_ = hour;
  minute_ = minute;
  second_ = second;
  return true;
}

// "YYYY-MM-DD", or "MMDD[YY]" with optional '/' or '.' separators (parse_time's _get_date).
// Like Slurm, the first month character of the ISO form is not checked to be a digit, and
// "YY" = "00" counts as no year.
bool BeginTimeParser::parseDate(std::int64_t& pos) {
  std::int64_t offset = pos;
  const auto fail = [&pos, &offset](std::int64_t back) {
    pos = offset - back;
    return false;
  };
  if (static_cast<std::int64_t>(text_.size()) >= offset + 7 && at(offset + 4) == '-' &&
      at(offset + 7) == '-') {
    int year = 0;
    for (int i = 0; i < 4; ++i) {
      if (!isDigit(at(offset))) return fail(0);
      year = year * 10 + digitValue(at(offset++));
    }
    ++offset;  // the '-'
    int month = digitValue(at(offset++));
    if (isDigit(at(offset))) month = month * 10 + digitValue(at(offset++));
    if (month < 1 || month > 12) return fail(2);
    ++offset;  // the '-'
    if (!isDigit(at(offset))) return fail(0);
    int day = digitValue(at(offset++));
    if (isDigit(at(offset))) day = day * 10 + digitValue(at(offset++));
    if (day < 1 || day > 31) return fail(2);
    pos = offset - 1;
    month_ = month - 1;
    mday_ = day;
    year_ = year;
    return true;
  }
  int month = digitValue(at(offset++));
  if (isDigit(at(offset))) month = month * 10 + digitValue(at(offset++));
  if (month < 1 || month > 12) return fail(2);
  if (at(offset) == '.' || at(offset) == '/') ++offset;
  if (!isDigit(at(offset))) return fail(0);
  int day = digitValue(at(offset++));
  if (isDigit(at(offset))) day = day * 10 + digitValue(at(offset++));
  if (day < 1 || day > 31) return fail(2);
  if (at(offset) == '.' || at(offset) == '/') ++offset;
  int year = 0;
  if (isDigit(at(offset))) {
    year = digitValue(at(offset++));
    if (!isDigit(at(offset))) return fail(0);
    year = year * 10 + digitValue(at(offset++));
  }
  pos = offset - 1;
  month_ = month - 1;
  mday_ = day;
  if (year != 0) year_ = 2000 + year;
  return true;
}

// Fills in what was not given, then converts as mktime would. `pos` is where the scan ended,
// which Slurm reports if the conversion fails.
StatusOr<EpochSeconds> BeginTimeParser::assemble(std::int64_t pos) {
  const LocalTime& now = nowLocal_;
  // Nothing specified: parse_time returns 0 without a diagnostic and sbatch rejects it.
  if (hour_ == -1 && month_ == -1) return invalidArgument("");
  if (hour_ == -1) {
    // A date alone means its midnight.
    hour_ = 0;
    minute_ = 0;
  } else if (month_ == -1) {
    // A time alone means the next such time: today if still ahead (to the minute), else
    // tomorrow. Looking back, it is today's.
    if (past_ || hour_ > now.hour || (hour_ == now.hour && minute_ > now.minute)) {
      setDate(now);
    } else {
      setDate(toLocalTime(addSeconds(now_, kSecondsPerDay), offset_));
    }
  }
  if (!year_.has_value() && past_) {
    // Looking back, a later month is last year's; this month or an earlier one is this year's
    // (parse_time compares months only: a later day of this month stays ahead).
    year_ = month_ > now.month - 1 ? now.year - 1 : now.year;
  }
  if (!year_.has_value()) {
    const int nowMonth = now.month - 1;
    const bool ahead =
        month_ > nowMonth || (month_ == nowMonth && mday_ > now.day) ||
        (month_ == nowMonth && mday_ == now.day && hour_ > now.hour) ||
        (month_ == nowMonth && mday_ == now.day && hour_ == now.hour && minute_ > now.minute);
    year_ = ahead ? now.year : now.year + 1;
  }
  const EpochSeconds result =
      fromLocalTime(*year_, month_ + 1, mday_, hour_, minute_, second_, offset_);
  // mktime's -1 is its error value, so Slurm rejects that second; 0 is parse_time's own
  // "nothing" and sbatch rejects it without a diagnostic.
  if (result == -1) return problem(pos);
  if (result == 0) return invalidArgument("");
  return result;
}

}  // namespace

StatusOr<TimeLimit> parseTimeLimit(std::string_view text) {
  text = untilNul(text);
  if (text == "-1" || equalsIgnoreCase(text, "INFINITE") || equalsIgnoreCase(text, "UNLIMITED")) {
    return TimeLimit{};
  }
  // Split into runs of digits the way _is_valid_timespec counts them.
  std::array<std::int64_t, 4> fields{};
  std::size_t fieldCount = 0;
  int dashes = 0;
  int colons = 0;
  bool inDigits = false;
  bool leadingDash = false;
  for (const char c : text) {
    if (isDigit(c)) {
      if (!inDigits) {
        if (fieldCount == fields.size())
          return invalidArgument(std::string(kInvalidTimeLimitMessage));
        ++fieldCount;
        inDigits = true;
      }
      std::int64_t& field = fields[fieldCount - 1];
      field = field * 10 + digitValue(c);
      // sscanf's %d would overflow here; so would the total.
      if (field > kMaxLimitSeconds) return invalidArgument(std::string(kInvalidTimeLimitMessage));
    } else if (c == '-') {
      if (colons != 0) return invalidArgument(std::string(kInvalidTimeLimitMessage));
      if (fieldCount == 0) leadingDash = true;
      inDigits = false;
      ++dashes;
    } else if (c == ':') {
      inDigits = false;
      ++colons;
    } else {
      return invalidArgument(std::string(kInvalidTimeLimitMessage));
    }
  }
  const auto groups = static_cast<int>(fieldCount);
  const bool valid = groups > 0 && dashes <= 1 && colons <= 2 &&
                     (dashes != 0 ? !((colons == 1 && groups < 3) || (colons == 2 && groups < 4))
                                  : !((colons == 1 && groups < 2) || (colons == 2 && groups < 3)));
  if (!valid) return invalidArgument(std::string(kInvalidTimeLimitMessage));

  std::int64_t total = 0;
  if (leadingDash) {
    // "-N": sscanf reads a negative day count. Only "-0" (= 0 = unlimited) is meaningful.
    if (fields[0] != 0) return invalidArgument(std::string(kInvalidTimeLimitMessage));
  } else if (dashes != 0) {
    // days-hours[:minutes[:seconds]]
    total = fields[0] * kSecondsPerDay + fields[1] * kSecondsPerHour +
            fields[2] * kSecondsPerMinute + fields[3];
  } else if (colons == 2) {
    total = fields[0] * kSecondsPerHour + fields[1] * kSecondsPerMinute + fields[2];
  } else {
    // minutes[:seconds]
    total = fields[0] * kSecondsPerMinute + fields[1];
  }
  if (total > kMaxLimitSeconds) return invalidArgument(std::string(kInvalidTimeLimitMessage));
  // arg_set_time_limit: a limit of zero minutes means no limit.
  if (total == 0) return TimeLimit{};
  return TimeLimit{total};
}

std::optional<std::int64_t> timeLimitMinutes(const TimeLimit& limit) {
  if (limit.isUnlimited()) return std::nullopt;
  // time_str2mins rounds up; C's division truncates toward zero, so do the same.
  return (*limit.seconds + 59) / 60;
}

std::string formatSqueueDuration(const TimeLimit& limit) {
  if (limit.isUnlimited()) return "UNLIMITED";
  if (*limit.seconds < 0 || *limit.seconds > kYearSeconds) return "INVALID";
  return formatShortDuration(*limit.seconds);
}

std::string formatSinfoTimeLimit(const TimeLimit& limit) {
  if (limit.isUnlimited()) return "infinite";
  return formatShortDuration(*limit.seconds);
}

std::string formatPaddedDuration(const TimeLimit& limit) {
  if (limit.isUnlimited()) return "UNLIMITED";
  if (*limit.seconds < 0) return "INVALID";
  const DurationFields f = splitDuration(*limit.seconds);
  std::string out;
  if (f.days != 0) out = std::to_string(f.days) + "-";
  return out + pad2(f.hours) + ":" + pad2(f.minutes) + ":" + pad2(f.seconds);
}

std::string formatTimestamp(EpochSeconds t, std::int32_t utcOffsetSeconds) {
  const LocalTime local = toLocalTime(t, utcOffsetSeconds);
  return std::to_string(local.year) + "-" + pad2(local.month) + "-" + pad2(local.day) + "T" +
         pad2(local.hour) + ":" + pad2(local.minute) + ":" + pad2(local.second);
}

StatusOr<EpochSeconds> parseTimestamp(std::string_view text, std::int32_t utcOffsetSeconds) {
  const auto bad = [text]() { return invalidArgument("Invalid timestamp: " + std::string(text)); };
  // Reads exactly `width` digits at `pos`.
  const auto number = [text](std::size_t pos, std::size_t width) -> std::optional<int> {
    if (pos + width > text.size()) return std::nullopt;
    int value = 0;
    for (std::size_t i = pos; i < pos + width; ++i) {
      if (!isDigit(text[i])) return std::nullopt;
      value = value * 10 + digitValue(text[i]);
    }
    return value;
  };
  // YYYY-MM-DD, then optionally THH:MM, then optionally :SS.
  if (text.size() != 10 && text.size() != 16 && text.size() != 19) return bad();
  if (text[4] != '-' || text[7] != '-') return bad();
  const std::optional<int> year = number(0, 4);
  const std::optional<int> month = number(5, 2);
  const std::optional<int> day = number(8, 2);
  if (!year || !month || !day || *month < 1 || *month > 12 || *day < 1 ||
      *day > daysInMonth(*year, *month)) {
    return bad();
  }
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (text.size() >= 16) {
    if (text[10] != 'T' || text[13] != ':') return bad();
    const std::optional<int> h = number(11, 2);
    const std::optional<int> m = number(14, 2);
    if (!h || !m || *h > 23 || *m > 59) return bad();
    hour = *h;
    minute = *m;
    if (text.size() == 19) {
      const std::optional<int> s = number(17, 2);
      if (text[16] != ':' || !s || *s > 59) return bad();
      second = *s;
    }
  }
  return fromLocalTime(*year, *month, *day, hour, minute, second, utcOffsetSeconds);
}

StatusOr<EpochSeconds> parseBeginTime(std::string_view text, EpochSeconds now,
                                      std::int32_t utcOffsetSeconds) {
  return BeginTimeParser(untilNul(text), now, utcOffsetSeconds).parse();
}

StatusOr<EpochSeconds> parsePastTime(std::string_view text, EpochSeconds now,
                                     std::int32_t utcOffsetSeconds) {
  return BeginTimeParser(untilNul(text), now, utcOffsetSeconds, /*past=*/true).parse();
}

}  // namespace kubeslurm::slurm

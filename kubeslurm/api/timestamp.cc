#include "kubeslurm/api/timestamp.h"

#include <array>
#include <optional>

#include "kubeslurm/base/text.h"

namespace kubeslurm::api {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// --- RFC 3339 ---------------------------------------------------------------------------------

constexpr std::int64_t kSecondsPerDay = 86400;

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

Civil civilFromDays(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {m <= 2 ? y + 1 : y, m, d};
}

bool isLeap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned daysInMonth(std::int64_t y, unsigned m) {
  static constexpr std::array<unsigned, 12> kDays = {31, 28, 31, 30, 31, 30,
                                                     31, 31, 30, 31, 30, 31};
  return m == 2 && isLeap(y) ? 29 : kDays[m - 1];
}

struct Instant {
  std::int64_t seconds;  // Unix seconds, floor
  std::int64_t nanos;    // [0, 1e9)
};

std::optional<unsigned> fixedDigits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!isDigit(text[i])) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return value;
}

// What Go's time.Parse(time.RFC3339, s) accepts: "2006-01-02T15:04:05" with any number of
// fractional digits, then "Z" or "+hh:mm"/"-hh:mm". Upper-case T and Z only, as Go.
StatusOr<Instant> parseRfc3339(std::string_view text) {
  const Status bad = invalidArgument("invalid RFC 3339 time " + quoteForDiagnostic(text, 64) +
                                     " (want 2006-01-02T15:04:05Z)");
  auto sep = [&](std::size_t at, char c) { return at < text.size() && text[at] == c; };
  const auto year = fixedDigits(text, 0, 4);
  const auto month = fixedDigits(text, 5, 2);
  const auto day = fixedDigits(text, 8, 2);
  const auto hour = fixedDigits(text, 11, 2);
  const auto minute = fixedDigits(text, 14, 2);
  const auto second = fixedDigits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !sep(4, '-') || !sep(7, '-') ||
      !sep(10, 'T') || !sep(13, ':') || !sep(16, ':')) {
    return bad;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > daysInMonth(*year, *month) || *hour > 23 ||
      *minute > 59 || *second > 59) {
    return bad;
  }
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (sep(pos, '.')) {
    ++pos;
    const std::size_t start = pos;
    std::int64_t scale = 100'000'000;
    while (pos < text.size() && isDigit(text[pos])) {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad;
  }
  std::int64_t offset = 0;
  if (sep(pos, 'Z')) {
    ++pos;
  } else if (sep(pos, '+') || sep(pos, '-')) {
    const bool minus = text[pos] == '-';
    const auto oh = fixedDigits(text, pos + 1, 2);
    const auto om = fixedDigits(text, pos + 4, 2);
    if (!oh || !om || !sep(pos + 3, ':') || *oh > 23 || *om > 59) return bad;
    offset = static_cast<std::int64_t>(*oh * 3600 + *om * 60) * (minus ? -1 : 1);
    pos += 6;
  } else {
    return bad;
  }
  if (pos != text.size()) return bad;
  const std::int64_t days = daysFromCivil(*year, *month, *day);
  const std::int64_t seconds = days * kSecondsPerDay + std::int64_t{*hour} * 3600 +
                               std::int64_t{*minute} * 60 + *second - offset;
  return Instant{seconds, nanos};
}

std::string pad(std::int64_t value, int width) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  if (static_cast<int>(digits.size()) < width) {
    digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
  }
  return value < 0 ? "-" + digits : digits;
}

std::string formatCivil(std::int64_t unixSeconds) {
  std::int64_t days = unixSeconds / kSecondsPerDay;
  std::int64_t rest = unixSeconds % kSecondsPerDay;
  if (rest < 0) {
    rest += kSecondsPerDay;
    --days;
  }
  const Civil c = civilFromDays(days);
  return pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2) + "T" + pad(rest / 3600, 2) +
         ":" + pad(rest / 60 % 60, 2) + ":" + pad(rest % 60, 2);
}

}  // namespace

StatusOr<std::int64_t> parseTimestamp(std::string_view text) {
  StatusOr<Instant> t = parseRfc3339(text);
  if (!t.isOk()) return t.status();
  return t->seconds;
}

std::string formatTimestamp(std::int64_t unixSeconds) { return formatCivil(unixSeconds) + "Z"; }

StatusOr<std::int64_t> parseMicroTime(std::string_view text) {
  StatusOr<Instant> t = parseRfc3339(text);
  if (!t.isOk()) return t.status();
  return t->seconds * 1'000'000 + t->nanos / 1000;
}

std::string formatMicroTime(std::int64_t unixMicros) {
  std::int64_t seconds = unixMicros / 1'000'000;
  std::int64_t micros = unixMicros % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  return formatCivil(seconds) + "." + pad(micros, 6) + "Z";
}

}  // namespace kubeslurm::api

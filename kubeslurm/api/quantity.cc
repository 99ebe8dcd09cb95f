#include "kubeslurm/api/quantity.h"

#include <array>
#include <limits>

#include "kubeslurm/base/text.h"

namespace kubeslurm::api {
namespace {

// --- resource.Quantity ------------------------------------------------------------------------
//
// The grammar and its quirks are those of parseQuantityString and ParseQuantity in
// k8s.io/apimachinery/pkg/api/resource/quantity.go (v0.20): an optional sign, digits with an
// optional '.' (either side may be empty: ".5", "1.", even "." is zero), then a suffix from
// "eEinumkKMGTP" optionally followed by a signed run of digits. The suffix must be one of
// n u m "" k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E with an integer exponent. A suffix with no
// number in front ("Mi") is zero there, not an error (kubernetes/apimachinery#165).

struct QuantityParts {
  bool negative = false;
  std::string_view num;    // integer digits, leading zeros stripped
  std::string_view denom;  // fraction digits
  std::int64_t exponent10 = 0;
  int exponent2 = 0;
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isSuffixChar(char c) {
  return std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos;
}

Status quantityError(std::string_view text, std::string_view problem) {
  return invalidArgument("quantity " + quoteForDiagnostic(text, 64) + ": " + std::string(problem));
}

StatusOr<QuantityParts> splitQuantity(std::string_view str) {
  if (str.empty()) return quantityError(str, "empty");
  QuantityParts parts;
  std::size_t pos = 0;
  const std::size_t end = str.size();
  if (str[0] == '-' || str[0] == '+') {
    parts.negative = str[0] == '-';
    ++pos;
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos == end) return parts;  // "0", "+", "-000": zero
  std::size_t start = pos;
  while (pos < end && isDigit(str[pos])) ++pos;
  parts.num = str.substr(start, pos - start);
  if (pos < end && str[pos] == '.') {
    ++pos;
    start = pos;
    while (pos < end && isDigit(str[pos])) ++pos;
    parts.denom = str.substr(start, pos - start);
  }
  const std::size_t suffixStart = pos;
  while (pos < end && isSuffixChar(str[pos])) ++pos;
  if (pos < end && (str[pos] == '+' || str[pos] == '-')) ++pos;
  while (pos < end && isDigit(str[pos])) ++pos;
  if (pos != end)
    return quantityError(str,
                         "quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  const std::string_view suffix = str.substr(suffixStart);

  struct Unit {
    std::string_view suffix;
    int exponent10;
    int exponent2;
  };
  static constexpr std::array<Unit, 16> kUnits = {{
      {"", 0, 0},
      {"n", -9, 0},
      {"u", -6, 0},
      {"m", -3, 0},
      {"k", 3, 0},
      {"M", 6, 0},
      {"G", 9, 0},
      {"T", 12, 0},
      {"P", 15, 0},
      {"E", 18, 0},
      {"Ki", 0, 10},
      {"Mi", 0, 20},
      {"Gi", 0, 30},
      {"Ti", 0, 40},
      {"Pi", 0, 50},
      {"Ei", 0, 60},
  }};
  for (const Unit& unit : kUnits) {
    if (unit.suffix == suffix) {
      parts.exponent10 = unit.exponent10;
      parts.exponent2 = unit.exponent2;
      return parts;
    }
  }
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    // strconv.ParseInt(suffix[1:], 10, 64), then int32(...): Go keeps the low 32 bits.
    const std::optional<std::int64_t> value = parseInteger<std::int64_t>(suffix.substr(1));
    if (value) {
      parts.exponent10 = static_cast<std::int32_t>(static_cast<std::uint32_t>(*value));
      return parts;
    }
  }
  return quantityError(str, "unable to parse quantity's suffix");
}

// ceil(|q| * 10^scale) with q's sign, exactly: the digits are kept as text so that a long
// fraction or a binary suffix on a fraction ("1.5Ki") loses nothing.
StatusOr<std::int64_t> scaledQuantity(std::string_view text, int scale) {
  StatusOr<QuantityParts> parsed = splitQuantity(text);
  if (!parsed.isOk()) return parsed.status();
  const QuantityParts& q = *parsed;
  std::string digits;
  digits.reserve(q.num.size() + q.denom.size());
  digits.append(q.num).append(q.denom);
  const std::size_t firstNonZero = digits.find_first_not_of('0');
  if (firstNonZero == std::string::npos) return std::int64_t{0};
  digits.erase(0, firstNonZero);
  std::int64_t exponent10 = q.exponent10 - static_cast<std::int64_t>(q.denom.size()) + scale;
  auto stripTrailingZeros = [&] {
    while (digits.size() > 1 && digits.back() == '0') {
      digits.pop_back();
      ++exponent10;
    }
  };
  stripTrailingZeros();
  const Status tooLarge =
      outOfRange("quantity " + quoteForDiagnostic(text, 64) + " does not fit in a 64-bit integer");
  // Without leading zeros the value is at least 10^(intDigits-1); a binary factor only grows it.
  auto integerDigits = [&] { return static_cast<std::int64_t>(digits.size()) + exponent10; };
  if (integerDigits() > 19) return tooLarge;
  for (int doubling = 0; doubling < q.exponent2; ++doubling) {
    int carry = 0;
    for (std::size_t i = digits.size(); i-- > 0;) {
      const int d = (digits[i] - '0') * 2 + carry;
      digits[i] = static_cast<char>('0' + d % 10);
      carry = d / 10;
    }
    if (carry != 0) digits.insert(digits.begin(), static_cast<char>('0' + carry));
  }
  stripTrailingZeros();
  if (integerDigits() > 19) return tooLarge;
  std::uint64_t magnitude = 0;
  bool fraction = false;
  if (integerDigits() <= 0) {
    fraction = true;  // digits are not all zero, so 0 < |q| < 1
  } else {
    const auto intDigits = static_cast<std::size_t>(integerDigits());
    for (std::size_t i = 0; i < intDigits; ++i) {
      magnitude = magnitude * 10 + (i < digits.size() ? static_cast<unsigned>(digits[i] - '0') : 0);
    }
    fraction = intDigits < digits.size();
  }
  if (fraction) ++magnitude;  // Quantity rounds away from zero (inf.RoundUp, ScaledValue)
  if (magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return tooLarge;
  }
  const auto value = static_cast<std::int64_t>(magnitude);
  return q.negative ? -value : value;
}

}  // namespace

StatusOr<std::int64_t> parseQuantityMilli(std::string_view text) { return scaledQuantity(text, 3); }

StatusOr<std::int64_t> parseQuantityValue(std::string_view text) { return scaledQuantity(text, 0); }

}  // namespace kubeslurm::api

#include "kubeslurm/slurm/hostlist.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

namespace kubeslurm::slurm {
namespace {

// Slurm's MAX_RANGE: a range of more hosts "will be assumed to be an error".
constexpr std::uint64_t kMaxRangeHosts = std::uint64_t{64} * 1024;
// Slurm's MAX_PREFIX_CNT: values across a bracket group that has another group after it.
constexpr std::uint64_t kMaxPrefixCount = std::uint64_t{64} * 1024;
// Slurm's MAX_RANGES: ranges inside one bracket; the next one is fatal.
constexpr std::size_t kMaxRanges = std::size_t{256} * 1024;
constexpr std::uint64_t kULongMax = std::numeric_limits<std::uint64_t>::max();

// hostlist_create() splits on these (and never on newlines).
bool isSeparator(char c) { return c == '\t' || c == ',' || c == ' '; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
// isspace() in the C locale, which strtoul() and strnatcmp() use.
bool isCSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Past the end reads as the NUL that ends the C strings Slurm works on.
char charAt(std::string_view s, std::size_t i) { return i < s.size() ? s[i] : '\0'; }

// What C's strtoul(s, &end, 10) gives: leading white space and a sign are accepted, overflow
// saturates, a minus sign negates modulo 2^64.
struct ParsedNumber {
  std::uint64_t value = 0;
  std::size_t end = 0;  // chars consumed; 0 when nothing was converted
  bool converted = false;
};

ParsedNumber parseUnsignedLong(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && isCSpace(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    negative = s[i] == '-';
    ++i;
  }
  const std::size_t digitsStart = i;
  std::uint64_t value = 0;
  bool overflow = false;
  for (; i < s.size() && isDigit(s[i]); ++i) {
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (value > (kULongMax - digit) / 10) {
      overflow = true;
    } else {
      value = value * 10 + digit;
    }
  }
  if (i == digitsStart) return {};
  if (overflow) {
    value = kULongMax;
  } else if (negative) {
    value = 0 - value;
  }
  return {value, i, true};
}

// printf("%0*lu", width, value).
void appendPadded(std::string& out, std::uint64_t value, int width) {
  std::array<char, 20> digits{};
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (int pad = width - static_cast<int>(n); pad > 0; --pad) out.push_back('0');
  while (n > 0) out.push_back(digits[--n]);
}

int decimalDigits(std::uint64_t value) {
  int n = 1;
  while ((value /= 10) != 0) ++n;
  return n;
}

// How many zeros "%0*lu" puts in front of `value` at `width`.
int zeroPadding(std::uint64_t value, int width) {
  const int n = decimalDigits(value);
  return width > n ? width - n : 0;
}

// Two widths are equivalent when they are equal, or when giving both numbers either width
// changes the padding of neither; then the one that differs is adjusted in place (Slurm's
// _width_equiv, whose side effect decides how merged ranges print).
bool widthsEquivalent(std::uint64_t n, int& wn, std::uint64_t m, int& wm) {
  if (wn == wm) return true;
  const int npad = zeroPadding(n, wn);
  const int nmpad = zeroPadding(n, wm);
  const int mpad = zeroPadding(m, wm);
  const int mnpad = zeroPadding(m, wn);
  if (npad != nmpad && mpad != mnpad) return false;
  if (npad != nmpad) {
    wm = wn;
  } else {
    wn = wm;
  }
  return true;
}

bool widthCombine(HostRange& a, HostRange& b) {
  return widthsEquivalent(a.lo, a.width, b.lo, b.width);
}

std::uint64_t rangeCount(const HostRange& r) { return r.single ? 1 : r.hi - r.lo + 1; }

// Empty after hosts were taken off its front; a range ending at 2^64-1 counts as empty too.
bool rangeEmpty(const HostRange& r) { return r.hi < r.lo || r.hi == kULongMax; }

int prefixCompare(const HostRange& a, const HostRange& b) {
  const int natural = naturalCompare(a.prefix, b.prefix);
  return natural == 0 ? static_cast<int>(b.single) - static_cast<int>(a.single) : natural;
}

// Slurm sorts by prefix, then by the low number, and truncates the difference of two
// unsigned longs to an int (so numbers 2^31 apart can sort "backwards"; kept on purpose).
int rangeCompare(HostRange& a, HostRange& b) {
  int result = prefixCompare(a, b);
  if (result == 0) {
    result = widthCombine(a, b) ? static_cast<int>(a.lo - b.lo) : a.width - b.width;
  }
  return result;
}

// Would a and b share one bracket? Same prefix, both with numbers.
bool sameBracket(const HostRange& a, const HostRange& b) {
  return prefixCompare(a, b) == 0 && !a.single && !b.single;
}

// glibc 2.36's qsort() is a top-down merge sort; Slurm's comparator is neither transitive nor
// free of side effects (it adjusts widths), so the exact sequence of comparisons matters.
void mergeSort(HostRange** base, std::size_t n, HostRange** tmp) {
  if (n <= 1) return;
  std::size_t n1 = n / 2;
  std::size_t n2 = n - n1;
  HostRange** b1 = base;
  HostRange** b2 = base + n1;
  mergeSort(b1, n1, tmp);
  mergeSort(b2, n2, tmp);
  HostRange** out = tmp;
  while (n1 > 0 && n2 > 0) {
    if (rangeCompare(**b1, **b2) <= 0) {
      *out++ = *b1++;
      --n1;
    } else {
      *out++ = *b2++;
      --n2;
    }
  }
  out = std::copy(b1, b1 + n1, out);
  std::copy(tmp, out, base);
}

enum class ParseResult { kOk, kInvalid, kFatal, kUnsupported, kTooLarge };

}  // namespace

int naturalCompare(std::string_view a, std::string_view b) {
  // Comparisons are on plain (signed) chars, as in Slurm's C.
  auto compareRight = [](std::string_view x, std::size_t i, std::string_view y, std::size_t j) {
    int bias = 0;
    for (;; ++i, ++j) {
      const char cx = charAt(x, i);
      const char cy = charAt(y, j);
      if (!isDigit(cx) && !isDigit(cy)) return bias;
      if (!isDigit(cx)) return -1;
      if (!isDigit(cy)) return +1;
      if (cx < cy) {
        if (bias == 0) bias = -1;
      } else if (cx > cy) {
        if (bias == 0) bias = +1;
      }
    }
  };
  auto compareLeft = [](std::string_view x, std::size_t i, std::string_view y, std::size_t j) {
    for (;; ++i, ++j) {
      const char cx = charAt(x, i);
      const char cy = charAt(y, j);
      if (!isDigit(cx) && !isDigit(cy)) return 0;
      if (!isDigit(cx)) return -1;
      if (!isDigit(cy)) return +1;
      if (cx < cy) return -1;
      if (cx > cy) return +1;
    }
  };
  std::size_t ai = 0;
  std::size_t bi = 0;
  while (true) {
    char ca = charAt(a, ai);
    char cb = charAt(b, bi);
    while (isCSpace(ca)) ca = charAt(a, ++ai);
    while (isCSpace(cb)) cb = charAt(b, ++bi);
    if (isDigit(ca) && isDigit(cb)) {
      const bool fractional = ca == '0' || cb == '0';
      const int result = fractional ? compareLeft(a, ai, b, bi) : compareRight(a, ai, b, bi);
      if (result != 0) return result;
    }
    if (ca == '\0' && cb == '\0') return 0;
    if (ca < cb) return -1;
    if (ca > cb) return +1;
    ++ai;
    ++bi;
  }
}

namespace {

// Slurm's bracketed-hostlist parser, one dimension.
class HostlistParser {
 public:
  HostlistParser(Hostlist& list, std::vector<std::string>* diagnostics, std::size_t maxRanges)
      : list_(list), diagnostics_(diagnostics), maxRanges_(maxRanges) {}

  ParseResult parse(std::string_view expr) {
    // Slurm reads a C string: anything after a NUL is not there.
    const std::string text(expr.substr(0, expr.find('\0')));
    // Expanding a bracket group in a prefix costs one step per value, and a list of R ranges
    // needs fewer than 2R steps plus one per group; beyond that the expression only burns time
    // (inner groups that fail are retried for every outer value, as in Slurm).
    maxSteps_ = 2 * maxRanges_ + text.size();
    std::size_t pos = 0;
    std::string_view token;
    while (nextToken(text, pos, token)) {
      const ParseResult result = parseToken(token);
      if (result != ParseResult::kOk) return result;
      if (list_.ranges().size() > maxRanges_) return ParseResult::kTooLarge;
    }
    return ParseResult::kOk;
  }

  const std::string& lastDiagnostic() const { return lastDiagnostic_; }

 private:
  struct NumberRange {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    int width = 0;
  };

  void diagnose(std::string message) {
    if (diagnostics_ != nullptr) diagnostics_->push_back(message);
    lastDiagnostic_ = std::move(message);
  }

  // One token: separators split tokens except inside a [...] pair.
  static bool nextToken(std::string_view text, std::size_t& pos, std::string_view& token) {
    const std::size_t n = text.size();
    while (pos < n && isSeparator(text[pos])) ++pos;
    if (pos == n) return false;
    const std::size_t start = pos;
    std::size_t parse = start;
    std::size_t end = pos;
    while (true) {
      while (end < n && !isSeparator(text[end])) ++end;
      bool extended = false;
      while (true) {
        const std::size_t open = text.find('[', parse);
        if (open == std::string_view::npos || open > end) break;
        const std::size_t close = text.find(']', parse);
        if (close == std::string_view::npos || close < open) break;
        if (close < end) {
          parse = close + 1;
          continue;
        }
        end = close;
        extended = true;
        break;
      }
      if (!extended) break;
    }
    token = text.substr(start, end - start);
    pos = end;
    while (pos < n && isSeparator(text[pos])) ++pos;
    return true;
  }

  ParseResult parseToken(std::string_view token) {
    const std::size_t open = token.rfind('[');
    if (open == std::string_view::npos) {
      list_.pushHost(token);
      return ParseResult::kOk;
    }
    const std::string_view prefix = token.substr(0, open);
    const std::string_view rest = token.substr(open + 1);
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) {
      // An unmatched '[': Slurm "tacks one on the end" of what came before it.
      if (!prefix.empty()) {
        list_.pushHost(std::string(prefix) + "]");
      } else {
        list_.pushHost(rest);
      }
      return ParseResult::kOk;
    }
    if (close + 1 < rest.size() && rest[close + 1] != ',') return ParseResult::kInvalid;
    std::vector<NumberRange> ranges;
    const ParseResult parsed = parseRangeList(rest.substr(0, close), ranges);
    if (parsed != ParseResult::kOk) return parsed;
    return pushRangeList(std::string(prefix), ranges);
  }

  ParseResult parseRangeList(std::string_view text, std::vector<NumberRange>& out) {
    std::size_t start = 0;
    while (true) {
      if (out.size() == kMaxRanges) {
        lastDiagnostic_ = "_parse_range_list: Too many ranges, can't process entire list";
        return ParseResult::kFatal;
      }
      const std::size_t comma = text.find(',', start);
      NumberRange range;
      if (!parseSingleRange(text.substr(start, comma - start), range)) {
        return ParseResult::kInvalid;
      }
      out.push_back(range);
      if (comma == std::string_view::npos) return ParseResult::kOk;
      start = comma + 1;
    }
  }

  bool parseSingleRange(std::string_view piece, NumberRange& range) {
    auto invalid = [&] {
      diagnose("_parse_single_range: Invalid range: `" + std::string(piece) + "'");
      return false;
    };
    // Boxes ("0x1") are for multi-dimensional clusters only.
    if (piece.find('x') != std::string_view::npos) return invalid();
    std::string_view loText = piece;
    std::optional<std::string_view> hiText;
    if (const std::size_t dash = piece.find('-'); dash != std::string_view::npos) {
      loText = piece.substr(0, dash);
      hiText = piece.substr(dash + 1);
      if (!hiText->empty() && hiText->front() == '-') return invalid();
    }
    range.width = static_cast<int>(loText.size());
    const ParsedNumber lo = parseUnsignedLong(loText);
    if (!lo.converted) return invalid();
    range.lo = lo.value;
    if (hiText && !hiText->empty()) {
      // Slurm checks only the high bound for trailing characters: "1a-3" is 1-3, width 2.
      const ParsedNumber hi = parseUnsignedLong(*hiText);
      if (!hi.converted || hi.end != hiText->size()) return invalid();
      range.hi = hi.value;
    } else {
      if (lo.end != loText.size()) return invalid();
      range.hi = range.lo;
    }
    if (range.lo > range.hi) return invalid();
    if (range.hi - range.lo + 1 > kMaxRangeHosts) {
      diagnose("_parse_single_range: Too many hosts in range `" + std::string(piece) + "'");
      return false;
    }
    return true;
  }

  // Pushes prefix+range for every range; a bracket group inside the prefix is expanded first,
  // its last group outermost. Like Slurm, a failure below the first level is reported but
  // does not fail the list (the hosts of that branch are simply missing).
  ParseResult pushRangeList(const std::string& prefix, const std::vector<NumberRange>& ranges) {
    const std::size_t open = prefix.rfind('[');
    const std::size_t close = prefix.rfind(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      for (const NumberRange& range : ranges) {
        if (!push(prefix, range)) return ParseResult::kTooLarge;
      }
      return ParseResult::kOk;
    }
    const std::string_view head = std::string_view(prefix).substr(0, open);
    const std::string_view groupText = std::string_view(prefix).substr(open + 1, close - open - 1);
    const std::string_view tail = std::string_view(prefix).substr(close + 1);
    const bool recurse = head.find('[') != std::string_view::npos;
    std::vector<NumberRange> group;
    const ParseResult parsed = parseRangeList(groupText, group);
    if (parsed != ParseResult::kOk) return parsed;
    std::uint64_t values = 0;
    std::string expanded;
    for (const NumberRange& value : group) {
      values += value.hi - value.lo + 1;
      if (values > kMaxPrefixCount) return ParseResult::kInvalid;
      // Slurm 22.05 counts j up to hi inclusive in an unsigned long: with hi = 2^64-1 it
      // never stops.
      if (value.hi == kULongMax) return ParseResult::kUnsupported;
      for (std::uint64_t j = value.lo; j <= value.hi; ++j) {
        if (++steps_ > maxSteps_) return ParseResult::kTooLarge;
        expanded.assign(head);
        appendPadded(expanded, j, value.width);
        expanded.append(tail);
        if (recurse) {
          const ParseResult inner = pushRangeList(expanded, ranges);
          if (inner != ParseResult::kOk && inner != ParseResult::kInvalid) return inner;
        } else {
          for (const NumberRange& range : ranges) {
            if (!push(expanded, range)) return ParseResult::kTooLarge;
          }
        }
      }
    }
    return ParseResult::kOk;
  }

  // Appends a range, or says the list has grown past its limit.
  bool push(const std::string& prefix, const NumberRange& range) {
    list_.pushRange(HostRange{prefix, range.lo, range.hi, range.width, false});
    return list_.ranges().size() <= maxRanges_;
  }

  Hostlist& list_;
  std::vector<std::string>* diagnostics_;
  std::size_t maxRanges_;
  std::size_t maxSteps_ = 0;
  std::size_t steps_ = 0;
  std::string lastDiagnostic_;
};

}  // namespace

StatusOr<Hostlist> Hostlist::parse(std::string_view expr, std::vector<std::string>* diagnostics,
                                   std::size_t maxRanges) {
  Hostlist list;
  HostlistParser parser(list, diagnostics, maxRanges);
  switch (parser.parse(expr)) {
    case ParseResult::kOk:
      return list;
    case ParseResult::kInvalid:
      return invalidArgument(parser.lastDiagnostic());
    case ParseResult::kFatal:
      return Status(StatusCode::kResourceExhausted, parser.lastDiagnostic());
    case ParseResult::kTooLarge:
      return outOfRange("hostlist expression makes more than " + std::to_string(maxRanges) +
                        " ranges");  // or would take as long as that many
    case ParseResult::kUnsupported:
      break;
  }
  return outOfRange("a bracket value of 18446744073709551615 before another bracket group");
}

void Hostlist::pushHost(std::string_view host) {
  std::size_t digits = host.size();
  while (digits > 0 && isDigit(host[digits - 1])) --digits;
  if (digits == host.size()) {
    pushRange(HostRange{std::string(host), 0, 0, 0, true});
    return;
  }
  const std::string_view suffix = host.substr(digits);
  const std::uint64_t number = parseUnsignedLong(suffix).value;
  pushRange(HostRange{std::string(host.substr(0, digits)), number, number,
                      static_cast<int>(suffix.size()), false});
}

void Hostlist::pushRange(HostRange range) {
  // Slurm adds to a C int; the sum wraps modulo 2^32.
  count_ = static_cast<std::int32_t>(static_cast<std::uint32_t>(count_) +
                                     static_cast<std::uint32_t>(rangeCount(range)));
  if (!ranges_.empty()) {
    HostRange& tail = ranges_.back();
    if (tail.hi == range.lo - 1 && prefixCompare(tail, range) == 0 && widthCombine(tail, range)) {
      tail.hi = range.hi;
      return;
    }
  }
  ranges_.push_back(std::move(range));
}

void Hostlist::sort() {
  if (ranges_.size() <= 1) return;
  std::vector<HostRange*> order(ranges_.size());
  for (std::size_t i = 0; i < ranges_.size(); ++i) order[i] = &ranges_[i];
  std::vector<HostRange*> scratch(ranges_.size());
  mergeSort(order.data(), order.size(), scratch.data());
  std::vector<HostRange> sorted;
  sorted.reserve(ranges_.size());
  for (HostRange* range : order) sorted.push_back(std::move(*range));
  ranges_ = std::move(sorted);

  // Overlapping neighbours are split into single hosts (Slurm's hostlist_coalesce). Only the
  // pair just changed and those left of it can newly overlap, so the scan resumes to the right
  // of the change instead of from the end as Slurm does; the pairs skipped were already seen
  // not to overlap, and that check has no side effects.
  std::vector<HostRange>& r = ranges_;
  for (std::size_t i = r.size() - 1; i > 0; --i) {
    HostRange& prev = r[i - 1];
    HostRange& next = r[i];
    if (prev.single || next.single) continue;
    if (!(prev.hi > next.lo && prefixCompare(prev, next) == 0 && widthCombine(prev, next))) {
      continue;
    }
    // Slurm splits the overlap host by host. An overlap wider than one range may hold
    // (MAX_RANGE) only comes from saturated numbers, where the real scontrol runs out of memory:
    // leave those ranges as they are rather than allocate per host without bound.
    if (std::min(next.hi, prev.hi) - next.lo >= kMaxRangeHosts) continue;
    const std::string prefix = prev.prefix;
    const int width = prev.width;
    const std::uint64_t overlapLo = next.lo;
    const std::uint64_t overlapHi = std::min(next.hi, prev.hi);
    if (overlapHi < prev.hi) next.hi = prev.hi;
    prev.hi = overlapLo;
    next.lo = overlapHi;
    const std::uint64_t prevHi = prev.hi;
    const std::uint64_t nextLo = next.lo;
    bool nextKept = true;
    if (rangeEmpty(prev)) {
      // Slurm deletes the *next* range here and then reads it after free(); glibc hands the
      // freed block straight back for each temporary range, so the read sees the value being
      // inserted and the second test below is always false. Emulated, not guessed: this is
      // what "n3000000000,n5" sorts to on the real scontrol (n[3000000000]).
      r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
      nextKept = false;
    }
    std::vector<HostRange> inserted;
    for (std::uint64_t v = overlapLo; v <= overlapHi; ++v) {
      if (v > prevHi) inserted.push_back(HostRange{prefix, v, v, width, false});
      if (nextKept && v < nextLo) inserted.push_back(HostRange{prefix, v, v, width, false});
      if (v == overlapHi) break;
    }
    r.insert(r.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(inserted.begin()),
             std::make_move_iterator(inserted.end()));
    const std::size_t changedEnd = i + inserted.size();  // index of `next`, or past the change
    i = std::min(changedEnd + 2, r.size());
  }

  // Adjacent ranges merge (Slurm's hostlist_collapse), right to left.
  std::vector<HostRange> collapsed;
  collapsed.reserve(r.size());
  HostRange current = std::move(r.back());
  for (std::size_t i = r.size() - 1; i > 0; --i) {
    HostRange& prev = r[i - 1];
    if (prev.hi == current.lo - 1 && prefixCompare(prev, current) == 0 &&
        widthCombine(prev, current)) {
      prev.hi = current.hi;
    } else {
      collapsed.push_back(std::move(current));
    }
    current = std::move(prev);
  }
  collapsed.push_back(std::move(current));
  std::reverse(collapsed.begin(), collapsed.end());
  ranges_ = std::move(collapsed);
}

std::string Hostlist::ranged() const {
  std::string out;
  const std::vector<HostRange>& r = ranges_;
  std::size_t i = 0;
  while (i < r.size()) {
    if (i > 0) out.push_back(',');
    const bool bracket = rangeCount(r[i]) > 1 || (i + 1 < r.size() && sameBracket(r[i], r[i + 1]));
    out.append(r[i].prefix);
    if (bracket) out.push_back('[');
    const std::size_t first = i;
    do {
      if (i > first) out.push_back(',');
      if (!r[i].single) {
        appendPadded(out, r[i].lo, r[i].width);
        if (r[i].lo < r[i].hi) {
          out.push_back('-');
          appendPadded(out, r[i].hi, r[i].width);
        }
      }
    } while (++i < r.size() && sameBracket(r[i], r[i - 1]));
    if (bracket) out.push_back(']');
  }
  return out;
}

void Hostlist::forEachHost(const std::function<bool(std::string_view)>& emit) const {
  std::int32_t remaining = count_;
  std::size_t index = 0;
  std::uint64_t lo = index < ranges_.size() ? ranges_[0].lo : 0;
  std::string host;
  while (remaining > 0) {
    // Slurm 22.05 would dereference a missing range here (a range ending at 2^64-1 is
    // dropped early) and crash; we stop.
    if (index >= ranges_.size()) return;
    const HostRange& range = ranges_[index];
    bool produced = true;
    if (range.single) {
      host = range.prefix;
      ++lo;
    } else if (range.hi - lo + 1 > 0) {
      host = range.prefix;
      appendPadded(host, lo, range.width);
      // Slurm formats into prefix + width + 16 bytes; a number wider than its width by more
      // than 15 digits (possible only after ranges with 20-digit numbers merge) is cut short.
      const std::size_t limit = range.prefix.size() + static_cast<std::size_t>(range.width) + 15;
      if (host.size() > limit) host.resize(limit);
      ++lo;
    } else {
      produced = false;
    }
    --remaining;
    if (range.hi < lo || range.hi == kULongMax) {
      ++index;
      if (index < ranges_.size()) lo = ranges_[index].lo;
    }
    if (!produced) return;
    if (!emit(host)) return;
  }
}

std::int64_t countHosts(std::string_view expr) {
  auto list = Hostlist::parse(expr);
  return list.isOk() ? list->count() : 0;
}

StatusOr<std::vector<std::string>> expandHostlist(std::string_view expr) {
  StatusOr<Hostlist> list = Hostlist::parse(expr);
  if (!list.isOk()) return list.status();
  if (list->count() > kMaxExpandedHosts) {
    return Status(StatusCode::kResourceExhausted,
                  "hostlist expands to " + std::to_string(list->count()) + " hosts, more than " +
                      std::to_string(kMaxExpandedHosts));
  }
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<std::size_t>(std::max(list->count(), 0)));
  list->forEachHost([&](std::string_view host) {
    hosts.emplace_back(host);
    return true;
  });
  return hosts;
}

std::string compressHostlist(std::span<const std::string> hosts) {
  Hostlist list;
  for (const std::string& host : hosts) list.pushHost(host);
  return list.ranged();
}

std::string compressHostlistSorted(std::span<const std::string> hosts) {
  Hostlist list;
  for (const std::string& host : hosts) list.pushHost(host);
  list.sort();
  return list.ranged();
}

}  // namespace kubeslurm::slurm

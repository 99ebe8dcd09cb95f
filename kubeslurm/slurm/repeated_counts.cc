#include "kubeslurm/slurm/repeated_counts.h"

#include "kubeslurm/base/text.h"

namespace kubeslurm::slurm {

std::string formatRepeatedCounts(std::span<const std::uint32_t> counts) {
  std::string text;
  std::size_t at = 0;
  while (at < counts.size()) {
    std::size_t end = at + 1;
    while (end < counts.size() && counts[end] == counts[at]) ++end;
    if (!text.empty()) text += ',';
    text += std::to_string(counts[at]);
    if (end - at > 1) text += "(x" + std::to_string(end - at) + ")";
    at = end;
  }
  return text;
}

StatusOr<std::vector<std::uint32_t>> parseRepeatedCounts(std::string_view text) {
  std::vector<std::uint32_t> counts;
  // Bounds the expansion: no allocation holds more ranks than this.
  constexpr std::uint64_t kMaxExpanded = std::uint64_t{1} << 24;
  const auto bad = [&] {
    return invalidArgument("invalid count list " + quoteForDiagnostic(text, 64));
  };
  if (text.empty()) return bad();
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t comma = text.find(',', at);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(at, comma - at);
    std::uint64_t repeat = 1;
    if (const std::size_t open = item.find("(x"); open != std::string_view::npos) {
      if (item.back() != ')') return bad();
      auto times = parseInteger<std::uint64_t>(item.substr(open + 2, item.size() - open - 3));
      if (!times || *times == 0) return bad();
      repeat = *times;
      item = item.substr(0, open);
    }
    auto value = parseInteger<std::uint32_t>(item);
    if (!value) return bad();
    if (counts.size() + repeat > kMaxExpanded) {
      return outOfRange("count list " + quoteForDiagnostic(text, 64) +
                        " expands to too many values");
    }
    counts.insert(counts.end(), repeat, *value);
    if (comma == text.size()) break;
    at = comma + 1;
  }
  return counts;
}

}  // namespace kubeslurm::slurm

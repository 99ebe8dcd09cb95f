// Small text helpers the trace parsers share. Internal to kubeslurm/sim.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/text.h"

namespace kubeslurm::sim::internal {

// Calls `fn(lineNumber, line)` for every line, lineNumber from 1, "\r\n" endings accepted.
template <typename Fn>
void forEachLine(std::string_view text, Fn&& fn) {
  std::size_t lineNumber = 0;
  while (!text.empty()) {
    ++lineNumber;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(lineNumber, line);
  }
}

std::string_view trim(std::string_view text);
// Splits on runs of spaces and tabs.
std::vector<std::string_view> splitWhitespace(std::string_view text);
// Splits on every `sep`, empty fields kept.
std::vector<std::string_view> splitOn(std::string_view text, char sep);

// A decimal number, fraction and exponent allowed ("12", "-1", "3.5", "1e3").
std::optional<double> parseNumber(std::string_view text);

// Quoted for diagnostics, cut to a readable length.
inline std::string quoteForError(std::string_view text) { return quoteForDiagnostic(text, 40); }

}  // namespace kubeslurm::sim::internal

#include "kubeslurm/cli/print_fields.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "kubeslurm/cli/getopt.h"

namespace kubeslurm::cli {

namespace {

// printf("%*.*s ") for kCut, "%*s " for kKeep: padded to |width|, right-aligned when positive.
void aligned(std::string& out, std::string_view text, int width) {
  const auto abs = static_cast<std::size_t>(std::abs(width));
  const std::size_t fill = text.size() < abs ? abs - text.size() : 0;
  if (width >= 0) out.append(fill, ' ');
  out += text;
  if (width < 0) out.append(fill, ' ');
  out += ' ';
}

}  // namespace

FormatItem splitFormatItem(std::string_view item) {
  FormatItem out{std::string(item), 0};
  if (const std::size_t percent = out.name.find('%'); percent != std::string::npos) {
    out.width = static_cast<int>(std::clamp<long>(
        std::strtol(out.name.c_str() + percent + 1, nullptr, 10), -kMaxFieldWidth, kMaxFieldWidth));
    out.name.resize(percent);
  }
  return out;
}

void FieldPrinter::header(std::string& out, std::span<const PrintColumn> columns) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    cell(out, columns[i].width, Overflow::kCut, std::string(columns[i].name),
         i + 1 == columns.size());
  }
  out += '\n';
  if (parsable_ != 0) return;
  for (const PrintColumn& column : columns) {
    out.append(static_cast<std::size_t>(std::abs(column.width)), '-');
    out += ' ';
  }
  out += '\n';
}

void FieldPrinter::cell(std::string& out, int width, Overflow overflow,
                        const std::optional<std::string>& value, bool last) const {
  if (parsable_ != 0) {
    if (value) out += *value;
    if (!(parsable_ == 2 && last)) out += delimiter_;
    return;
  }
  // No value prints as one blank, which the cutting forms cut like any other text.
  std::string_view text = value ? std::string_view(*value) : std::string_view(" ");
  const auto abs = static_cast<std::size_t>(std::abs(width));
  if (overflow == Overflow::kKeep || text.size() <= abs) return aligned(out, text, width);
  text = text.substr(0, abs);
  if (overflow == Overflow::kCut || !value || abs == 0) return aligned(out, text, width);
  std::string marked(text);
  marked.back() = '+';
  aligned(out, marked, width);
}

}  // namespace kubeslurm::cli

// Columns as Slurm's accounting tools print them (src/common/print_fields.c), shared by sacct,
// sshare and sreport: a header and a dashed rule, values padded to each column's width and
// followed by one space; `-p` ends every value with the delimiter, `-P` all but the last.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace kubeslurm::cli {

// A column: its header and width (negative: left-aligned, as "%-*s").
struct PrintColumn {
  std::string_view name;
  int width = 0;
};

// How a value wider than its column is printed.
enum class Overflow {
  kMark,  // print_fields_str: cut to the width, its last character replaced by '+'
  kCut,   // "%*.*s" (slurm_make_time_str's buffer, slurmdb_report_print_time): cut, no mark
  kKeep,  // "%*u", "%*f": printed whole, pushing the rest of the line right
};

// "Name%width" as the accounting tools read a format item: the name before '%', and the width
// after it as atoi reads it (negative: left-aligned; 0 when absent), capped at kMaxFieldWidth.
struct FormatItem {
  std::string name;
  int width = 0;
};
FormatItem splitFormatItem(std::string_view item);

class FieldPrinter {
 public:
  // `parsable`: 0, 1 (-p) or 2 (-P).
  explicit FieldPrinter(int parsable, std::string delimiter = "|")
      : parsable_(parsable), delimiter_(std::move(delimiter)) {}

  // print_fields_header: the names (cut to their widths, no mark) and a rule of dashes under
  // them; only the names when parsable.
  void header(std::string& out, std::span<const PrintColumn> columns) const;

  // One value of a line; `value` nullopt when there is none (blank, or nothing when parsable).
  // `last`: the line's last column, which -P leaves without a delimiter.
  void cell(std::string& out, int width, Overflow overflow, const std::optional<std::string>& value,
            bool last) const;

 private:
  int parsable_;
  std::string delimiter_;
};

}  // namespace kubeslurm::cli

// getopt_long(3) as glibc runs it for Slurm's commands: bundled short options ("-hl"), attached
// values ("-j5", "--jobs=5"), a required value taken from the next word, optional values only
// when attached, unambiguous long-option prefixes, operands in any position (GNU permutation),
// and "--" ending the options. The messages are glibc's, with the program name in front.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kubeslurm::cli {

struct LongOptionSpec {
  std::string_view name;
  int argument = 0;  // 0: none, 1: required, 2: optional (attached with '=')
  char key = '\0';   // the short option it stands for; '\0' for long-only options
};

struct ParsedOption {
  char key = '\0';            // '\0' for a long-only option
  std::string_view longName;  // "" when given in short form
  std::optional<std::string> value;
};

struct GetoptResult {
  std::vector<ParsedOption> options;  // in command-line order
  std::vector<std::string> operands;
  // glibc's complaint ("sprio: invalid option -- 'x'"), without a newline; options parsed
  // before it are kept.
  std::optional<std::string> error;
};

// `shortSpec` in getopt's syntax: "hj::lo:" (':' a required value, '::' an optional one; a
// leading '+' ends the options at the first operand, as glibc does for "+...").
GetoptResult getoptLong(std::string_view program, const std::vector<std::string>& args,
                        std::string_view shortSpec, std::span<const LongOptionSpec> longOptions);

// The widest field a format string may ask for. Slurm prints whatever width is given; a width
// of millions is a typo (or an attack on a shared login node) that would print or allocate that
// many spaces, so widths are capped here.
inline constexpr int kMaxFieldWidth = 4096;

// Reads the decimal digits at text[i...] as a field width, advancing `i` past all of them; the
// value is capped at kMaxFieldWidth (and never overflows).
int consumeFieldWidth(std::string_view text, std::size_t& i);

// How Slurm's commands match their words: xstrncasecmp(word, name, MAX(strlen(word), minimum))
// == 0, so `word` is a prefix of `name` of at least `minimum` characters, or shorter and the
// whole of `name` (both end there: "Time" with a minimum of 6); a longer word never matches.
bool abbreviates(std::string_view word, std::string_view name, std::size_t minimum);

// "a,b,,c" -> {"a", "b", "c"}: Slurm's comma lists drop empty items.
std::vector<std::string> splitCommaList(std::string_view text);

// {"a", "b"} -> "a,b": a list as the commands print one back.
std::string joinCommaList(const std::vector<std::string>& items);

// Whether `list` (a filter the user gave) names `value`, compared as given or without regard to
// case, as the command's own filter compares it.
bool listHas(const std::vector<std::string>& list, std::string_view value, bool caseless);

}  // namespace kubeslurm::cli

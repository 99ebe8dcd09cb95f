// Small text helpers every parser of outside input needs: whole-token integers and quoting a
// piece of input for an error message.
#pragma once

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace kubeslurm {

// The whole of `text` as a base-10 integer of type T ("+" allowed in front); nullopt for
// anything else, including out-of-range values.
template <typename T>
std::optional<T> parseInteger(std::string_view text) {
  T value{};
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || first == last) return std::nullopt;
  return value;
}

// ASCII case-insensitive equality and prefix, as Slurm's strcasecmp/strncasecmp compare in the C
// locale (option names, state and reason names, keywords).
bool equalsIgnoreCase(std::string_view a, std::string_view b);
bool startsWithIgnoreCase(std::string_view text, std::string_view prefix);

// `text` with A-Z made a-z and every other byte as it was (the C locale's tolower).
std::string lowercaseAscii(std::string_view text);

// strerror(error)'s text, made thread-safe (strerror_r): the in-pod tools describe system errors
// from several threads at once.
std::string errnoText(int error);

// "\"text\"" cut to `maxShown` characters ("..." marks the cut), control and non-ASCII bytes
// shown as '?', so that hostile input cannot garble a terminal through an error message.
std::string quoteForDiagnostic(std::string_view text, std::size_t maxShown);

}  // namespace kubeslurm

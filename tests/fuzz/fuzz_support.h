// What the fuzz targets share: a failed invariant, and turning the fuzzer's bytes into a
// command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace kubeslurm::fuzz {

// A broken invariant: abort, which libFuzzer reports as a crash with the input that caused it.
inline void check(bool condition) {
  if (!condition) std::abort();
}

// One argument per line: the bytes split on '\n' (an empty input is one empty argument).
inline std::vector<std::string> splitLines(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  return args;
}

}  // namespace kubeslurm::fuzz

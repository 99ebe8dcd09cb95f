// sattach's command line (src/sattach/opt.c, 22.05): "+hlQuvV" and its long options, one
// <jobid.stepid> operand. PURE: what sattach prints and how it exits come back as data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kubeslurm::cli {

struct SattachOptions {
  std::int64_t jobId = 0;
  std::uint32_t stepId = 0;
  bool label = false;   // -l/--label
  bool layout = false;  // --layout: print the step's layout and exit
  int quiet = 0;        // -Q, each one
  int verbose = 0;      // -v, each one
  // --output-filter / --error-filter: only that task's stdout / stderr ("-" is every task); the
  // error filter follows the output filter when only that is given (_opt_verify).
  std::optional<std::uint32_t> outputFilter;
  std::optional<std::uint32_t> errorFilter;
  // --input-filter: sattach's stdin to that task only ("-" or none: every task that reads it).
  std::optional<std::uint32_t> inputFilter;
  bool pty = false;  // --pty: the local terminal raw while attached, for a --pty step's task 0
};

// Either options to attach with, or what sattach prints (stdout, stderr: whole lines) and the
// status it exits with: --help, --usage and --version exit 0; everything refused exits 1
// (error_exit), with opt.c's and glibc's words.
struct SattachParse {
  std::optional<SattachOptions> options;
  std::string out;
  std::string err;
  int exitCode = 0;
};

SattachParse parseSattachArguments(const std::vector<std::string>& args);

}  // namespace kubeslurm::cli

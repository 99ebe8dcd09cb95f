// The reference captures of the real Slurm tools (tests/integration/slurm_diff/*/capture.sh
// write them): "### <command> (rc=N)" sections, each its stdout, then "--- stderr", then its
// stderr, then one blank line; "######## " lines split the capture into parts.
#pragma once

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace kubeslurm::cli::testing {

struct Captured {
  int code = 0;
  std::string out;
  std::string err;
};

// The sections of the capture at `path` (relative to the source tree), by command; a command
// run more than once (before and after a change) has a section per run.
inline std::map<std::string, std::vector<Captured>> loadCapture(const std::string& path) {
  std::ifstream file(std::string(KUBESLURM_SOURCE_DIR) + "/" + path);
  std::map<std::string, std::vector<Captured>> sections;
  std::string line;
  std::string command;
  Captured current;
  bool inErr = false;
  const auto finish = [&] {
    if (command.empty()) return;
    // The blank line that ends a section is the capture's, not the command's.
    std::string& last = inErr ? current.err : current.out;
    if (!last.empty() && last.back() == '\n') last.pop_back();
    sections[command].push_back(current);
    command.clear();
  };
  while (std::getline(file, line)) {
    if (line.rfind("### ", 0) == 0) {
      finish();
      const std::size_t rc = line.rfind(" (rc=");
      command = line.substr(4, rc - 4);
      current = Captured{std::stoi(line.substr(rc + 5)), "", ""};
      inErr = false;
    } else if (line.rfind("######## ", 0) == 0) {
      finish();
    } else if (!command.empty() && line == "--- stderr") {
      inErr = true;
    } else if (!command.empty()) {
      (inErr ? current.err : current.out) += line + "\n";
    }
  }
  finish();
  return sections;
}

}  // namespace kubeslurm::cli::testing

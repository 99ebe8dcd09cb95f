// Failure injection: which simulated nodes are failed, kept in a control file.
//
// The file is the whole state, one failed node name per line, so that it is level-triggered:
// the running simulator re-reads it when it changes (polling its mtime, size and inode) and a
// simulator started later picks up the same failures. `kubeslurm-nodesim ctl fail NODE` and
// `... recover NODE` rewrite it atomically (write to a temporary file, rename) under an
// exclusive flock, so concurrent ctl calls do not lose each other's changes.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::nodesim {

// Missing file: no node failed.
StatusOr<std::set<std::string>> readFailedNodes(const std::string& path);

// Adds (fail) or removes (recover) nodes; returns the new set.
StatusOr<std::set<std::string>> updateFailedNodes(const std::string& path,
                                                  const std::vector<std::string>& nodes,
                                                  bool failed);

// Watches the file for changes by stat(); poll() returns the new set when it changed since the
// last call (the first call always reads).
class ControlWatcher {
 public:
  explicit ControlWatcher(std::string path) : path_(std::move(path)) {}
  std::optional<std::set<std::string>> poll();

 private:
  std::string path_;
  bool first_ = true;
  std::int64_t mtimeNs_ = -1;
  std::int64_t size_ = -1;
  std::uint64_t inode_ = 0;
};

}  // namespace kubeslurm::nodesim

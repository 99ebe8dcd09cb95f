#include "kubeslurm/nodesim/control.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kubeslurm::nodesim {

namespace {

Status errnoStatus(const std::string& what) {
  return {StatusCode::kUnavailable, what + ": " + std::strerror(errno)};  // NOLINT
}

// Holds an exclusive flock on PATH.lock for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

StatusOr<std::set<std::string>> readFailedNodes(const std::string& path) {
  std::set<std::string> nodes;
  std::ifstream in(path);
  if (!in) {
    if (::access(path.c_str(), F_OK) != 0) return nodes;
    return errnoStatus("cannot read " + path);
  }
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line[start] == '#') continue;
    nodes.insert(line.substr(start));
  }
  return nodes;
}

StatusOr<std::set<std::string>> updateFailedNodes(const std::string& path,
                                                  const std::vector<std::string>& nodes,
                                                  bool failed) {
  const FileLock lock(path);
  if (!lock.ok()) return errnoStatus("cannot lock " + path + ".lock");
  auto current = readFailedNodes(path);
  if (!current.isOk()) return current.status();
  for (const std::string& node : nodes) {
    if (failed) {
      current->insert(node);
    } else {
      current->erase(node);
    }
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return errnoStatus("cannot write " + tmp);
    out << "# failed nodes (kubeslurm-nodesim ctl)\n";
    for (const std::string& node : *current) out << node << '\n';
    if (!out.flush()) return errnoStatus("cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return errnoStatus("cannot rename " + tmp);
  return current;
}

std::optional<std::set<std::string>> ControlWatcher::poll() {
  struct stat st {};
  std::int64_t mtime = -1;
  std::int64_t size = -1;
  std::uint64_t inode = 0;
  if (::stat(path_.c_str(), &st) == 0) {
    mtime = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    size = st.st_size;
    inode = st.st_ino;
  }
  if (!first_ && mtime == mtimeNs_ && size == size_ && inode == inode_) return std::nullopt;
  auto nodes = readFailedNodes(path_);
  if (!nodes.isOk()) return std::nullopt;  // try again on the next poll
  first_ = false;
  mtimeNs_ = mtime;
  size_ = size;
  inode_ = inode;
  return *nodes;
}

}  // namespace kubeslurm::nodesim

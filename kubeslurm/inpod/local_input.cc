#include "kubeslurm/inpod/local_input.h"

#include <cerrno>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace kubeslurm::inpod {

LocalInput::LocalInput(int fd) : fd_(fd) {
  if (fd >= 0 && ::pipe2(stepOver_.data(), O_CLOEXEC) != 0) stepOver_ = {-1, -1};
}

void LocalInput::start(std::function<void(std::string_view)> send, std::function<void()> ended) {
  if (!usable() || thread_.joinable()) return;
  thread_ = std::thread([this, send = std::move(send), ended = std::move(ended)] {
    std::vector<char> buffer(std::size_t{64} * 1024);
    while (true) {
      std::array<pollfd, 2> waitFor = {pollfd{fd_, POLLIN, 0}, pollfd{stepOver_[0], POLLIN, 0}};
      const int ready = ::poll(waitFor.data(), waitFor.size(), -1);
      if (ready < 0 && errno == EINTR) continue;
      if (ready > 0 && waitFor[1].revents != 0) return;
      const ssize_t n = ready < 0 ? -1 : ::read(fd_, buffer.data(), buffer.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;  // the end of stdin, or an error reading it: the tasks' end too
      send(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    }
    ended();
  });
}

LocalInput::~LocalInput() {
  stop();
  for (const int end : stepOver_) {
    if (end >= 0) ::close(end);
  }
}

void LocalInput::stop() {
  if (!thread_.joinable()) return;
  const char over = 1;
  (void)!::write(stepOver_[1], &over, 1);
  thread_.join();
}

RawTerminal::RawTerminal(int fd) {
  if (fd < 0 || ::isatty(fd) == 0 || tcgetattr(fd, &saved_) != 0) return;
  termios raw = saved_;
  cfmakeraw(&raw);
  if (tcsetattr(fd, TCSANOW, &raw) == 0) fd_ = fd;
}

RawTerminal::~RawTerminal() {
  if (fd_ >= 0) tcsetattr(fd_, TCSANOW, &saved_);
}

}  // namespace kubeslurm::inpod

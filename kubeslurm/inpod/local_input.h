// What srun and sattach read for a step's tasks on the caller's side: their own stdin, on a
// thread of its own, and a terminal put in raw mode for a --pty task (srun.c, sattach.c: their
// own cfmakeraw).
#pragma once

#include <array>
#include <functional>
#include <string_view>
#include <thread>

#include <termios.h>

namespace kubeslurm::inpod {

// Reads `fd` until it ends, handing each chunk to `send` as it comes and then calling `ended`
// (src/api/step_io.c _file_read: the tasks get an eof message). stop() (or the destructor) ends
// the wait at once without calling `ended`: a step that is over does not wait for a terminal
// nobody types in. Both callbacks run on the reading thread.
class LocalInput {
 public:
  explicit LocalInput(int fd);
  ~LocalInput();
  LocalInput(const LocalInput&) = delete;
  LocalInput& operator=(const LocalInput&) = delete;

  // False when it cannot be read (no fd, or no wake-up pipe for stop()): start() reads nothing.
  bool usable() const { return fd_ >= 0 && stepOver_[1] >= 0; }
  void start(std::function<void(std::string_view)> send, std::function<void()> ended);
  void stop();

 private:
  int fd_ = -1;
  std::array<int, 2> stepOver_ = {-1, -1};
  std::thread thread_;
};

// `fd`'s terminal in raw mode while this lives (nothing when `fd` is not a terminal), so that
// Ctrl-C, Ctrl-Z and Ctrl-\ reach the task's terminal as keystrokes.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  int fd_ = -1;
  termios saved_{};
};

}  // namespace kubeslurm::inpod

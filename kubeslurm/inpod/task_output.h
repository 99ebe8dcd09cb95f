// A step's task output as srun and sattach print it: as it comes, or with -l each line prefixed
// "%*d: ", the width of the step's largest task id (src/api/step_io.c _wid,
// src/common/write_labelled_message.c), a task's unfinished last line ended by a newline of
// Slurm's own when the task ends.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

namespace kubeslurm::inpod {

class TaskOutput {
 public:
  // `mutex` guards `out` and `err`, which the caller also writes its own messages to.
  TaskOutput(std::ostream& out, std::ostream& err, std::mutex& mutex, bool label,
             std::uint32_t stepTasks);

  // Thread-safe, as both are.
  void write(std::uint32_t task, bool isStdout, std::string_view data);
  void taskEnded(std::uint32_t task);

 private:
  void writeLocked(std::uint32_t task, bool isStdout, std::string_view data);

  std::ostream& out_;
  std::ostream& err_;
  std::mutex& mutex_;
  const bool label_;
  std::size_t width_ = 1;
  std::map<std::pair<std::uint32_t, bool>, std::string> partial_;  // (task, stdout): -l's
};

}  // namespace kubeslurm::inpod

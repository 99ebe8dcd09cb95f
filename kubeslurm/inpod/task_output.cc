#include "kubeslurm/inpod/task_output.h"

namespace kubeslurm::inpod {

TaskOutput::TaskOutput(std::ostream& out, std::ostream& err, std::mutex& mutex, bool label,
                       std::uint32_t stepTasks)
    : out_(out), err_(err), mutex_(mutex), label_(label) {
  for (std::uint32_t n = stepTasks > 0 ? stepTasks - 1 : 0; n >= 10; n /= 10) ++width_;
}

void TaskOutput::write(std::uint32_t task, bool isStdout, std::string_view data) {
  const std::lock_guard lock(mutex_);
  writeLocked(task, isStdout, data);
}

void TaskOutput::taskEnded(std::uint32_t task) {
  if (!label_) return;
  const std::lock_guard lock(mutex_);
  for (const bool isStdout : {true, false}) {
    const auto found = partial_.find({task, isStdout});
    if (found == partial_.end()) continue;
    std::string pending = std::move(found->second);
    partial_.erase(found);
    // Slurm ends a labelled partial line with a newline of its own (write_labelled_message).
    if (!pending.empty()) writeLocked(task, isStdout, pending + "\n");
  }
}

void TaskOutput::writeLocked(std::uint32_t task, bool isStdout, std::string_view data) {
  std::ostream& stream = isStdout ? out_ : err_;
  if (!label_) {
    stream << data << std::flush;
    return;
  }
  std::string& pending = partial_[{task, isStdout}];
  pending += data;
  const std::string label = std::to_string(task);
  std::size_t start = 0;
  for (auto newline = pending.find('\n'); newline != std::string::npos;
       newline = pending.find('\n', start)) {
    stream << std::string(width_ > label.size() ? width_ - label.size() : 0, ' ') << label << ": "
           << std::string_view(pending).substr(start, newline + 1 - start);
    start = newline + 1;
  }
  pending.erase(0, start);
  stream << std::flush;
}

}  // namespace kubeslurm::inpod

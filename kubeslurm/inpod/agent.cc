#include "kubeslurm/inpod/agent.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/inpod/task_process.h"
#include "kubeslurm/step/step.grpc.pb.h"

namespace kubeslurm::inpod {
namespace {

namespace v1 = kubeslurm::step::v1;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
constexpr int kPollMs = 100;
// After a task has exited, how long output its own children still write is waited for: a
// daemon it left behind holding the pipe open must not hold the step open with it.
constexpr auto kDrainAfterExit = std::chrono::seconds(1);

// `expected` is never empty (startAgent refuses an empty token).
bool sameSecret(std::string_view presented, std::string_view expected) {
  // Compare every byte whatever the first difference: the time taken says nothing of the token.
  unsigned difference = presented.size() == expected.size() ? 0U : 1U;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    const auto want = static_cast<unsigned char>(expected[i % expected.size()]);
    difference |= static_cast<unsigned>(static_cast<unsigned char>(presented[i]) ^ want);
  }
  return difference == 0;
}

struct RunningTask {
  std::uint32_t taskId = 0;
  TaskProcess process;
  bool reaped = false;
  int waitStatus = 0;
  Clock::time_point reapedAt;
  bool exitSent = false;
};

// Where one task's stdin is written: a pipe, or its pty's master side.
struct TaskInput {
  std::uint32_t taskId = 0;
  int fd = -1;  // non-blocking, owned by the step's input
  bool pty = false;
};

// The stdin of a step's tasks on this rank, which its srun and every sattach that writes input
// share (slurmstepd io.c: each client's stdin messages to the tasks, an eof message from any
// of them closing it). One writer at a time, so that two writers' chunks do not interleave.
// A task that stops reading holds its writer back, never the agent: writes wait in poll and
// give up once the step is over.
class StepInput {
 public:
  explicit StepInput(std::vector<TaskInput> inputs) : inputs_(std::move(inputs)) {}
  ~StepInput() {
    for (const auto& input : inputs_) {
      if (input.fd >= 0) ::close(input.fd);
    }
  }
  StepInput(const StepInput&) = delete;
  StepInput& operator=(const StepInput&) = delete;

  // To every task that reads stdin here, or to `task` only; given up once `abandoned` is set
  // (its writer is leaving) or the step is over.
  void write(std::optional<std::uint32_t> task, std::string_view data,
             const std::atomic<bool>& abandoned) {
    const std::lock_guard lock(mutex_);
    for (auto& input : inputs_) {
      if (!task || *task == input.taskId) write(input, data, abandoned);
    }
  }
  // The end of the writer's stdin: the tasks' too (a pty's own stays open: it is also its
  // output).
  void close(std::optional<std::uint32_t> task) {
    const std::lock_guard lock(mutex_);
    for (auto& input : inputs_) {
      if ((task && *task != input.taskId) || input.pty || input.fd < 0) continue;
      ::close(input.fd);
      input.fd = -1;
    }
  }
  void resize(unsigned rows, unsigned columns) {
    const std::lock_guard lock(mutex_);
    for (const auto& input : inputs_) {
      if (input.pty && input.fd >= 0) setWindowSize(input.fd, rows, columns);
    }
  }
  // The step is over here: every task's stdin closed, a pty's with it, and input still on its
  // way to them dropped (a process they left behind holding their stdin reads nothing more).
  void end() {
    stopping_ = true;
    const std::lock_guard lock(mutex_);
    for (auto& input : inputs_) {
      if (input.fd >= 0) ::close(input.fd);
      input.fd = -1;
    }
  }

 private:
  void write(TaskInput& input, std::string_view data, const std::atomic<bool>& abandoned) {
    while (input.fd >= 0 && !data.empty() && !stopping_ && !abandoned) {
      const ssize_t n = ::write(input.fd, data.data(), data.size());
      if (n > 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd ready{input.fd, POLLOUT, 0};
        ::poll(&ready, 1, kPollMs);
        continue;
      }
      // The task closed its stdin or ended (EPIPE, EIO): what it did not read is dropped.
      ::close(input.fd);
      input.fd = -1;
    }
  }

  std::mutex mutex_;
  std::vector<TaskInput> inputs_;
  std::atomic<bool> stopping_{false};
};

// Carries the later messages of a Launch (srun) or Attach (sattach) stream into the tasks, on a
// thread of its own: stdin, and a --pty task's new window size. The end of srun's stream closes
// the stdin of the tasks (srun half-closes when its stdin ends; srun gone, the tasks are killed
// anyway); an attacher closes it with `input_ended`, and its stream's end alone closes nothing
// (a detached sattach leaves the step as it was). The stream's flow control holds a caller back
// while its tasks do not read.
template <typename Request>
class InputFeed {
 public:
  InputFeed(grpc::ServerReaderWriter<v1::TaskEvent, Request>& stream,
            std::shared_ptr<StepInput> input, std::optional<std::uint32_t> task)
      : input_(std::move(input)), task_(task), thread_([this, &stream] { run(stream); }) {}
  ~InputFeed() {
    abandoned_ = true;
    if (thread_.joinable()) thread_.join();
  }
  InputFeed(const InputFeed&) = delete;
  InputFeed& operator=(const InputFeed&) = delete;

  // Once the tasks have ended, the caller half-closes when it has their ends; one that does not
  // within a few seconds has its call cancelled, so no thread waits on it for ever.
  void finish(grpc::ServerContext& context) {
    abandoned_ = true;
    std::unique_lock lock(mutex_);
    if (!ended_.wait_for(lock, kInputGrace, [this] { return done_; })) context.TryCancel();
  }

 private:
  static constexpr auto kInputGrace = std::chrono::seconds(5);

  void run(grpc::ServerReaderWriter<v1::TaskEvent, Request>& stream) {
    Request message;
    while (stream.Read(&message)) {
      if constexpr (std::is_same_v<Request, v1::LaunchRequest>) {
        if (message.has_window()) {
          input_->resize(message.window().rows(), message.window().columns());
        }
      }
      if (!message.input().empty()) input_->write(task_, message.input(), abandoned_);
      if constexpr (std::is_same_v<Request, v1::AttachRequest>) {
        if (message.input_ended()) input_->close(task_);
      }
    }
    if constexpr (std::is_same_v<Request, v1::LaunchRequest>) input_->close(task_);
    const std::lock_guard lock(mutex_);
    done_ = true;
    ended_.notify_all();
  }

  std::shared_ptr<StepInput> input_;
  const std::optional<std::uint32_t> task_;
  std::atomic<bool> abandoned_{false};
  std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  std::thread thread_;
};

// One sattach's view of a step: the events since it attached, up to a bound. An attacher that
// falls behind loses output (counted, and told in a `dropped` event), never holds the step back.
class Watcher {
 public:
  enum class Next { kEvent, kIdle, kEnded };

  void offer(const v1::TaskEvent& event) {
    const std::size_t size = event.stdout().size() + event.stderr().size();
    {
      const std::lock_guard lock(mutex_);
      if (ended_) return;
      if (size > 0 && buffered_ + size > kBufferLimit) {
        dropped_ += size;
        return;
      }
      if (dropped_ > 0) {
        v1::TaskEvent lost;
        lost.set_dropped(dropped_);
        queue_.push_back(std::move(lost));
        dropped_ = 0;
      }
      buffered_ += size;
      queue_.push_back(event);
    }
    changed_.notify_one();
  }

  // The step's tasks here have all ended: what is queued is still handed out.
  void end() {
    {
      const std::lock_guard lock(mutex_);
      ended_ = true;
    }
    changed_.notify_one();
  }

  Next next(v1::TaskEvent& event, std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, wait, [this] { return !queue_.empty() || ended_; });
    if (!queue_.empty()) {
      event = std::move(queue_.front());
      queue_.pop_front();
      buffered_ -= event.stdout().size() + event.stderr().size();
      return Next::kEvent;
    }
    if (ended_ && dropped_ > 0) {
      event.Clear();
      event.set_dropped(dropped_);
      dropped_ = 0;
      return Next::kEvent;
    }
    return ended_ ? Next::kEnded : Next::kIdle;
  }

 private:
  static constexpr std::size_t kBufferLimit = std::size_t{1} << 20;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<v1::TaskEvent> queue_;
  std::size_t buffered_ = 0;
  std::uint64_t dropped_ = 0;
  bool ended_ = false;
};

// A running step's output as this rank's tasks write it, handed to its launching srun (by the
// Launch call itself) and to every sattach watching it.
class StepBroadcast {
 public:
  static constexpr std::size_t kMaxWatchers = 16;  // sattachs of one step at once, on one rank

  StepBroadcast(std::uint32_t stepTasks, const std::vector<std::uint32_t>& taskIds)
      : stepTasks_(stepTasks), running_(taskIds.begin(), taskIds.end()) {}

  void publish(const v1::TaskEvent& event) {
    const std::lock_guard lock(mutex_);
    if (event.has_exit()) running_.erase(event.task_id());
    for (const auto& watcher : watchers_) watcher->offer(event);
  }

  // Null when the step is over here (`full` false) or kMaxWatchers already watch it (true).
  std::shared_ptr<Watcher> watch(v1::TaskEvent& attached, bool& full) {
    const std::lock_guard lock(mutex_);
    full = !ended_ && watchers_.size() >= kMaxWatchers;
    if (ended_ || full) return nullptr;
    attached.mutable_attached()->set_step_tasks(stepTasks_);
    for (const std::uint32_t id : running_) attached.mutable_attached()->add_task_ids(id);
    return watchers_.emplace_back(std::make_shared<Watcher>());
  }
  void unwatch(const std::shared_ptr<Watcher>& watcher) {
    const std::lock_guard lock(mutex_);
    std::erase(watchers_, watcher);
  }
  void end() {
    const std::lock_guard lock(mutex_);
    ended_ = true;
    for (const auto& watcher : watchers_) watcher->end();
  }

 private:
  const std::uint32_t stepTasks_;
  std::mutex mutex_;
  std::set<std::uint32_t> running_;
  std::vector<std::shared_ptr<Watcher>> watchers_;
  bool ended_ = false;
};

// A running step as sattach reaches it: its output, and its tasks' stdin.
struct WatchedStep {
  std::shared_ptr<StepBroadcast> output;
  std::shared_ptr<StepInput> input;
};

class Service final : public v1::StepAgent::Service {
 public:
  Service(std::string token, std::chrono::milliseconds killWait, std::function<void(int)> onRelease)
      : token_(std::move(token)), killWait_(killWait), onRelease_(std::move(onRelease)) {}

  void beginStop() { stopping_ = true; }

  grpc::Status Launch(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::TaskEvent, v1::LaunchRequest>* stream) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    v1::LaunchRequest request;
    if (!stream->Read(&request) || request.argv().empty()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "a step needs a command"};
    }
    const std::vector<std::string> argv(request.argv().begin(), request.argv().end());
    std::vector<RunningTask> tasks;
    std::vector<v1::TaskEvent> early;  // start-up messages and failures, sent once all started
    std::vector<TaskInput> inputs;
    for (const auto& task : request.tasks()) {
      std::map<std::string, std::string> environment(request.environment().begin(),
                                                     request.environment().end());
      for (const auto& [name, value] : task.environment()) environment[name] = value;
      auto started = startTask(argv, environment, request.working_directory(),
                               TaskIo{.input = task.reads_input(),
                                      .pty = task.pty(),
                                      .rows = request.window().rows(),
                                      .columns = request.window().columns()});
      if (!started.isOk()) {
        v1::TaskEvent message;
        message.set_task_id(task.task_id());
        message.set_stderr("slurmstepd: error: " + started.status().message() + "\n");
        early.push_back(std::move(message));
        v1::TaskEvent ended;
        ended.set_task_id(task.task_id());
        ended.mutable_exit()->set_exit_code(1);
        early.push_back(std::move(ended));
        continue;
      }
      if (!started->startMessages.empty()) {
        v1::TaskEvent message;
        message.set_task_id(task.task_id());
        message.set_stderr(started->startMessages);
        early.push_back(std::move(message));
      }
      if (started->inputFd >= 0) {
        inputs.push_back({.taskId = task.task_id(), .fd = started->inputFd, .pty = task.pty()});
      }
      RunningTask running;
      running.taskId = task.task_id();
      running.process = std::move(*started);
      tasks.push_back(std::move(running));
    }
    std::vector<std::uint32_t> taskIds;
    taskIds.reserve(tasks.size());
    for (const auto& task : tasks) taskIds.push_back(task.taskId);
    auto stepTasks = static_cast<std::uint32_t>(request.tasks_size());
    if (!request.tasks().empty()) {
      const auto& variables = request.tasks(0).environment();
      const auto found = variables.find("SLURM_STEP_NUM_TASKS");
      if (found != variables.end()) {
        stepTasks = parseInteger<std::uint32_t>(found->second).value_or(stepTasks);
      }
    }
    const auto broadcast = std::make_shared<StepBroadcast>(stepTasks, taskIds);
    const auto input = std::make_shared<StepInput>(std::move(inputs));
    registerStep(request.step_id(), tasks, {broadcast, input});
    // First, that the tasks run: a stream that breaks after this lost a running step, not a
    // launch.
    v1::TaskEvent started;
    for (const auto& task : request.tasks()) {
      started.mutable_attached()->add_task_ids(task.task_id());
    }
    started.mutable_attached()->set_step_tasks(stepTasks);
    bool clientGone = !stream->Write(started);
    {
      InputFeed<v1::LaunchRequest> feed(*stream, input, std::nullopt);
      for (const auto& event : early) clientGone = clientGone || !stream->Write(event);
      clientGone = !pump(tasks, *context, *stream, *broadcast, clientGone) || clientGone;
      feed.finish(*context);
    }
    input->end();
    broadcast->end();
    unregisterStep(request.step_id(), tasks, broadcast);
    if (clientGone) return {grpc::StatusCode::CANCELLED, "srun went away; the tasks were killed"};
    return grpc::Status::OK;
  }

  grpc::Status Attach(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::TaskEvent, v1::AttachRequest>* stream) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    v1::AttachRequest request;
    if (!stream->Read(&request)) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "an attach names a step"};
    }
    WatchedStep step;
    {
      const std::lock_guard lock(mutex_);
      const auto found = watched_.find(request.step_id());
      if (found != watched_.end()) step = found->second;
    }
    v1::TaskEvent attached;
    bool full = false;
    const std::shared_ptr<Watcher> watcher =
        step.output ? step.output->watch(attached, full) : nullptr;
    if (full) {
      return {
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          "at most " + std::to_string(StepBroadcast::kMaxWatchers) + " attach to a step at once"};
    }
    if (!watcher) {
      return {grpc::StatusCode::NOT_FOUND,
              "no step " + std::to_string(request.step_id()) + " runs on this node"};
    }
    std::optional<InputFeed<v1::AttachRequest>> feed;
    if (request.writes_input()) {
      const std::optional<std::uint32_t> task =
          request.has_input_task() ? std::optional(request.input_task()) : std::nullopt;
      feed.emplace(*stream, step.input, task);
    }
    bool open = stream->Write(attached);
    while (open && !context->IsCancelled() && !stopping_) {
      v1::TaskEvent event;
      const Watcher::Next next = watcher->next(event, std::chrono::milliseconds(kPollMs));
      if (next == Watcher::Next::kEnded) break;
      if (next == Watcher::Next::kEvent) open = stream->Write(event);
    }
    if (feed) feed->finish(*context);
    step.output->unwatch(watcher);
    return grpc::Status::OK;
  }

  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::SignalReply* reply) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    std::lock_guard lock(mutex_);
    std::uint32_t signalled = 0;
    const auto found = steps_.find(request->step_id());
    if (found != steps_.end()) {
      for (const pid_t group : found->second) {
        if (::kill(-group, request->signal()) == 0) ++signalled;
      }
    }
    reply->set_tasks_signalled(signalled);
    return grpc::Status::OK;
  }

  grpc::Status NextStepId(grpc::ServerContext* context, const v1::NextStepIdRequest* /*request*/,
                          v1::NextStepIdReply* reply) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    reply->set_step_id(nextStepId_++);
    return grpc::Status::OK;
  }

  grpc::Status RecordStep(grpc::ServerContext* context, const v1::StepRecord* record,
                          v1::RecordStepReply* /*reply*/) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    step::StepRecord r;
    r.stepId = record->step_id();
    r.name = record->name();
    r.nodelist = record->nodelist();
    r.nnodes = record->nnodes();
    r.ntasks = record->ntasks();
    r.cpus = record->cpus();
    r.startTime = record->start_time();
    r.endTime = record->end_time();
    r.exitCode = record->exit_code();
    r.signal = record->signal();
    r.state = record->state();
    const std::lock_guard lock(mutex_);
    records_.push_back(std::move(r));
    return grpc::Status::OK;
  }

  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::ReleaseReply* /*reply*/) override {
    if (auto denied = authenticate(*context); !denied.ok()) return denied;
    if (!onRelease_) {
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "this job runs a batch script, which it ends with: only an interactive allocation "
              "is released"};
    }
    onRelease_(request->exit_code());
    return grpc::Status::OK;
  }

  std::vector<step::StepRecord> records() const {
    const std::lock_guard lock(mutex_);
    auto sorted = records_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.stepId < b.stepId; });
    return sorted;
  }

 private:
  grpc::Status authenticate(const grpc::ServerContext& context) const {
    const auto& metadata = context.client_metadata();
    const auto found = metadata.find("authorization");
    if (found == metadata.end()) {
      return {grpc::StatusCode::UNAUTHENTICATED, "no step token presented"};
    }
    const std::string_view presented(found->second.data(), found->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (!presented.starts_with(kBearer) || !sameSecret(presented.substr(kBearer.size()), token_)) {
      return {grpc::StatusCode::UNAUTHENTICATED, "the step token is not this job's"};
    }
    return grpc::Status::OK;
  }

  // A second launch of a step already running here (a caller's own doing) is signalled with it
  // but not watched: sattach sees the first.
  void registerStep(std::uint32_t stepId, const std::vector<RunningTask>& tasks,
                    WatchedStep watched) {
    std::lock_guard lock(mutex_);
    auto& groups = steps_[stepId];
    for (const auto& task : tasks) groups.insert(task.process.pid);
    watched_.emplace(stepId, std::move(watched));
  }
  void unregisterStep(std::uint32_t stepId, const std::vector<RunningTask>& tasks,
                      const std::shared_ptr<StepBroadcast>& broadcast) {
    std::lock_guard lock(mutex_);
    if (const auto watched = watched_.find(stepId);
        watched != watched_.end() && watched->second.output == broadcast) {
      watched_.erase(watched);
    }
    auto found = steps_.find(stepId);
    if (found == steps_.end()) return;
    for (const auto& task : tasks) found->second.erase(task.process.pid);
    if (found->second.empty()) steps_.erase(found);
  }

  // Streams output and exits until every task has ended. Returns false when the client went
  // away (the tasks were then killed and reaped all the same).
  bool pump(std::vector<RunningTask>& tasks, grpc::ServerContext& context,
            grpc::internal::WriterInterface<v1::TaskEvent>& writer, StepBroadcast& broadcast,
            bool clientGone) {
    std::optional<Clock::time_point> killAt;
    bool killed = false;
    std::array<char, kReadChunk> buffer{};
    auto send = [&](const v1::TaskEvent& event) {
      broadcast.publish(event);
      if (!clientGone && !writer.Write(event)) clientGone = true;
    };
    while (true) {
      const auto now = Clock::now();
      if (!killAt && (clientGone || context.IsCancelled() || stopping_)) {
        clientGone = clientGone || context.IsCancelled();
        for (const auto& task : tasks) {
          if (!task.reaped) ::kill(-task.process.pid, SIGTERM);
        }
        killAt = now + killWait_;
      }
      if (killAt && !killed && now >= *killAt) {
        for (const auto& task : tasks) {
          if (!task.reaped) ::kill(-task.process.pid, SIGKILL);
        }
        killed = true;
      }

      std::vector<pollfd> fds;
      std::vector<std::pair<RunningTask*, bool>> owners;  // task, is-stdout
      for (auto& task : tasks) {
        for (const bool isStdout : {true, false}) {
          int& fd = isStdout ? task.process.stdoutFd : task.process.stderrFd;
          if (fd < 0) continue;
          if (task.reaped && now - task.reapedAt > kDrainAfterExit) {
            ::close(fd);
            fd = -1;
            continue;
          }
          fds.push_back(pollfd{fd, POLLIN, 0});
          owners.emplace_back(&task, isStdout);
        }
      }
      if (!fds.empty()) {
        const int ready = ::poll(fds.data(), fds.size(), kPollMs);
        for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i) {
          if (fds[i].revents == 0) continue;
          auto [task, isStdout] = owners[i];
          int& fd = isStdout ? task->process.stdoutFd : task->process.stderrFd;
          const ssize_t n = ::read(fd, buffer.data(), buffer.size());
          if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
          if (n <= 0) {
            ::close(fd);
            fd = -1;
            continue;
          }
          v1::TaskEvent event;
          event.set_task_id(task->taskId);
          if (isStdout) {
            event.set_stdout(buffer.data(), static_cast<std::size_t>(n));
          } else {
            event.set_stderr(buffer.data(), static_cast<std::size_t>(n));
          }
          send(event);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs / 10));
      }

      bool allDone = true;
      for (auto& task : tasks) {
        if (!task.reaped) {
          const pid_t done = ::waitpid(task.process.pid, &task.waitStatus, WNOHANG);
          if (done == task.process.pid || (done < 0 && errno == ECHILD)) {
            task.reaped = true;
            task.reapedAt = Clock::now();
          }
        }
        if (task.reaped && !task.exitSent && task.process.stdoutFd < 0 &&
            task.process.stderrFd < 0) {
          v1::TaskEvent event;
          event.set_task_id(task.taskId);
          auto* exit = event.mutable_exit();
          if (WIFSIGNALED(task.waitStatus)) {
            exit->set_signal(WTERMSIG(task.waitStatus));
            exit->set_core_dumped(WCOREDUMP(task.waitStatus));
          } else {
            exit->set_exit_code(WEXITSTATUS(task.waitStatus));
          }
          send(event);
          task.exitSent = true;
        }
        allDone = allDone && task.exitSent;
      }
      if (allDone) return !clientGone;
    }
  }

  const std::string token_;
  const std::chrono::milliseconds killWait_;
  const std::function<void(int)> onRelease_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> nextStepId_{0};
  mutable std::mutex mutex_;
  std::map<std::uint32_t, std::set<pid_t>> steps_;  // step id -> the task process groups
  std::map<std::uint32_t, WatchedStep> watched_;    // what sattach attaches to
  std::vector<step::StepRecord> records_;           // finished steps srun reported
};

class GrpcAgent final : public Agent {
 public:
  GrpcAgent(std::unique_ptr<Service> service, std::unique_ptr<grpc::Server> server, int port,
            std::chrono::milliseconds killWait)
      : service_(std::move(service)),
        server_(std::move(server)),
        port_(port),
        killWait_(killWait) {}
  ~GrpcAgent() override { stop(); }

  int port() const override { return port_; }
  std::vector<step::StepRecord> steps() const override { return service_->records(); }
  void stop() override {
    std::call_once(stopped_, [this] {
      service_->beginStop();
      // Handlers see the stop at their next poll, signal their tasks and wait up to killWait.
      server_->Shutdown(std::chrono::system_clock::now() + killWait_ + std::chrono::seconds(2));
      server_->Wait();
    });
  }

 private:
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_;
  std::chrono::milliseconds killWait_;
  std::once_flag stopped_;
};

}  // namespace

StatusOr<std::uint16_t> agentPort(const std::map<std::string, std::string>& environment) {
  const auto found = environment.find(std::string(kPortVariable));
  if (found == environment.end()) return kDefaultAgentPort;
  const auto port = parseInteger<std::uint16_t>(found->second);
  if (!port || *port == 0) {
    return invalidArgument(std::string(kPortVariable) + " is not a port: " + found->second);
  }
  return *port;
}

StatusOr<std::unique_ptr<Agent>> startAgent(const AgentOptions& options,
                                            std::function<void(int)> onRelease) {
  if (options.token.empty()) {
    return invalidArgument(std::string("the step agent needs a token (") +
                           std::string(kTokenVariable) + ")");
  }
  // A task that closed its stdin makes the input feed's next write fail with EPIPE; without this
  // it would kill the agent (the tasks start with the default disposition again).
  (void)std::signal(SIGPIPE, SIG_IGN);  // NOLINT(concurrency-mt-unsafe): before the server starts
  auto service = std::make_unique<Service>(options.token, options.killWait, std::move(onRelease));
  grpc::ServerBuilder builder;
  int port = 0;
  // Plain HTTP/2 inside the job's pod network; the token authenticates srun (docs/runtime.md).
  builder.AddListeningPort(options.listenAddress, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(service.get());
  auto server = builder.BuildAndStart();
  if (!server || port == 0) {
    return Status(StatusCode::kUnavailable,
                  "the step agent cannot listen on " + options.listenAddress);
  }
  return std::unique_ptr<Agent>(
      std::make_unique<GrpcAgent>(std::move(service), std::move(server), port, options.killWait));
}

}  // namespace kubeslurm::inpod

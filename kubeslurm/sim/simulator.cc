#include "kubeslurm/sim/simulator.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>

#include "kubeslurm/core/usage.h"

namespace kubeslurm::sim {
namespace {

// A budget-limited pass that started jobs may leave more startable ones; Slurm would reach them
// on its next pass moments later. Bounded so that a core which keeps reporting an exhausted
// budget cannot stall the replay at one instant.
constexpr int kMaxPassesPerInstant = 8;
constexpr std::size_t kMaxDiagnostics = 10;
constexpr core::Time kNever = std::numeric_limits<core::Time>::max();
constexpr std::size_t kAbsent = std::numeric_limits<std::size_t>::max();

enum class Phase { kNotSubmitted, kPending, kRunning, kDone };

struct NodeBooks {
  core::Resources used;
  std::uint32_t jobs = 0;
  bool exclusive = false;
  core::Time busySince = 0;
};

struct JobBooks {
  Phase phase = Phase::kNotSubmitted;
  std::uint32_t generation = 0;  // bumped at every start; older completion events are stale
  core::Time runStart = 0;
  core::Resources perNode;
  std::size_t position = kAbsent;  // index in the snapshot's job list
};

struct Completion {
  core::Time time = 0;
  std::size_t job = 0;
  std::uint32_t generation = 0;
  friend bool operator>(const Completion& a, const Completion& b) {
    return a.time != b.time ? a.time > b.time : a.job > b.job;
  }
};

core::Resources freeOf(const core::Node& node) {
  const core::Resources& a = node.allocatable;
  const core::Resources& f = node.foreignUsed;
  return {a.gpus > f.gpus ? a.gpus - f.gpus : 0,
          a.cpuMillis > f.cpuMillis ? a.cpuMillis - f.cpuMillis : 0,
          a.memoryBytes > f.memoryBytes ? a.memoryBytes - f.memoryBytes : 0};
}

// What one node holds for one rank of `job`: everything left on it when exclusive.
core::Resources allocationOn(const core::Job& job, const core::Node& node) {
  if (job.exclusive) return freeOf(node);
  return {job.gpusPerNode, job.cpuMillisPerNode, job.memoryBytesPerNode};
}

bool fitsBeside(const core::Resources& used, const core::Resources& add,
                const core::Resources& capacity) {
  return add.gpus <= capacity.gpus && used.gpus <= capacity.gpus - add.gpus &&
         add.cpuMillis <= capacity.cpuMillis &&
         used.cpuMillis <= capacity.cpuMillis - add.cpuMillis &&
         add.memoryBytes <= capacity.memoryBytes &&
         used.memoryBytes <= capacity.memoryBytes - add.memoryBytes;
}

class Replay {
 public:
  Replay(const Workload& workload, const SimulationOptions& options)
      : workload_(workload), options_(options), snapshot_(workload.cluster) {
    const std::size_t n = workload.jobs.size();
    books_.resize(n);
    nodes_.resize(snapshot_.nodes.size());
    result_.jobs.resize(n);
    index_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const core::Job& job = workload.jobs[i].job;
      index_.emplace(job.id, i);
      JobOutcome& outcome = result_.jobs[i];
      outcome.id = job.id;
      outcome.account = job.account;
      outcome.submit = job.submitTime - workload.epoch;
      hasTimers_ = hasTimers_ || job.beginTime > 0 || job.switchesWait > 0;
      keepFinished_ = keepFinished_ || job.dependency.has_value();
    }
    for (const core::Partition& partition : snapshot_.partitions) {
      std::vector<bool>& members = partitionNodes_[partition.name];
      members.assign(snapshot_.nodes.size(), false);
      for (core::NodeIndex node : partition.nodes) {
        if (node < members.size()) members[node] = true;
      }
    }
  }

  SimulationResult run() {
    const std::vector<SimJob>& jobs = workload_.jobs;
    while (true) {
      dropStaleCompletions();
      core::Time t = kNever;
      if (nextSubmit_ < jobs.size()) t = jobs[nextSubmit_].job.submitTime;
      if (!completions_.empty()) t = std::min(t, completions_.top().time);
      if (pending_ > 0) {
        const bool canChange = nextSubmit_ < jobs.size() || !completions_.empty();
        if (options_.scheduleInterval > 0 && canChange) {
          t = std::min(t, lastInstant_ + options_.scheduleInterval);
        }
        if (hasTimers_) t = std::min(t, nextTimer(lastInstant_));
      }
      if (t == kNever) break;
      instant(t);
    }
    finish();
    return std::move(result_);
  }

 private:
  void instant(core::Time t) {
    if (t > snapshot_.usageTime) {
      snapshot_.accounts = core::advanceUsage(snapshot_, t);
      snapshot_.usageTime = t;
    }
    completeUntil(t);
    submitUntil(t);
    compact();
    for (int pass = 0; pass < kMaxPassesPerInstant && pending_ > 0; ++pass) {
      const core::Plan plan = core::plan(snapshot_, t, options_.budget);
      ++result_.planCalls;
      const std::size_t started = apply(plan, t);
      compact();
      if (started == 0 || !plan.stats.budgetExhausted) break;
    }
    lastInstant_ = t;
    if (options_.progress) {
      options_.progress(Progress{finished_, workload_.jobs.size(), pending_, running_,
                                 t - workload_.epoch, result_.planCalls});
    }
  }

  void dropStaleCompletions() {
    while (!completions_.empty()) {
      const Completion& top = completions_.top();
      const JobBooks& books = books_[top.job];
      if (books.phase == Phase::kRunning && books.generation == top.generation) return;
      completions_.pop();
    }
  }

  void completeUntil(core::Time t) {
    while (!completions_.empty() && completions_.top().time <= t) {
      const Completion event = completions_.top();
      completions_.pop();
      JobBooks& books = books_[event.job];
      if (books.phase != Phase::kRunning || books.generation != event.generation) continue;
      const SimJob& sim = workload_.jobs[event.job];
      const core::Job& job = snapshot_.jobs[books.position];
      const bool killed = sim.runTime > job.timeLimit;
      stopRun(event.job, t);
      JobOutcome& outcome = result_.jobs[event.job];
      outcome.end = t - workload_.epoch;
      outcome.state = killed ? JobEnd::kTimeout : JobEnd::kCompleted;
      leave(event.job, t, killed ? slurm::JobState::kTimeout : slurm::JobState::kCompleted);
    }
  }

  void submitUntil(core::Time t) {
    const std::vector<SimJob>& jobs = workload_.jobs;
    while (nextSubmit_ < jobs.size() && jobs[nextSubmit_].job.submitTime <= t) {
      const std::size_t w = nextSubmit_++;
      books_[w].phase = Phase::kPending;
      books_[w].position = snapshot_.jobs.size();
      snapshot_.jobs.push_back(jobs[w].job);
      slots_.push_back(w);
      ++pending_;
    }
  }

  // The job leaves the system: out of the snapshot at the next compaction.
  void leave(std::size_t w, core::Time t, slurm::JobState state) {
    JobBooks& books = books_[w];
    const core::Job& job = snapshot_.jobs[books.position];
    if (keepFinished_) {
      core::FinishedJob finished;
      finished.id = job.id;
      finished.arrayJobId = job.arrayJobId;
      finished.arrayTaskId = job.arrayTaskId;
      finished.state = state;
      finished.exitCode = state == slurm::JobState::kCompleted ? 0 : 1;
      finished.startTime = job.startTime;
      finished.endTime = t;
      finished.name = job.name;
      finished.user = job.user;
      snapshot_.finished.push_back(std::move(finished));
    }
    books.phase = Phase::kDone;
    dirty_ = true;
    ++finished_;
  }

  void compact() {
    if (!dirty_) return;
    dirty_ = false;
    std::size_t out = 0;
    for (std::size_t in = 0; in < slots_.size(); ++in) {
      const std::size_t w = slots_[in];
      if (books_[w].phase == Phase::kDone) {
        books_[w].position = kAbsent;
        continue;
      }
      if (out != in) {
        snapshot_.jobs[out] = std::move(snapshot_.jobs[in]);
        slots_[out] = w;
      }
      books_[w].position = out++;
    }
    snapshot_.jobs.resize(out);
    slots_.resize(out);
  }

  std::size_t apply(const core::Plan& plan, core::Time t) {
    for (const core::Preemption& preemption : plan.preemptions) preempt(preemption, t);
    std::size_t started = 0;
    for (const core::Start& start : plan.starts) {
      if (auto problem = checkStart(start)) {
        ++result_.rejectedStarts;
        if (result_.diagnostics.size() < kMaxDiagnostics) {
          result_.diagnostics.push_back("t=" + std::to_string(t - workload_.epoch) +
                                        ": start of job " + std::to_string(start.jobId) +
                                        " refused: " + *problem);
        }
        continue;
      }
      begin(index_.find(start.jobId)->second, start, t);
      ++started;
    }
    return started;
  }

  std::optional<std::string> checkStart(const core::Start& start) const {
    const auto it = index_.find(start.jobId);
    if (it == index_.end()) return "unknown job";
    const JobBooks& books = books_[it->second];
    if (books.phase != Phase::kPending) return "job is not pending";
    const core::Job& job = snapshot_.jobs[books.position];
    const std::size_t count = start.nodes.size();
    if (count < job.minNodes || count > job.maxNodes) {
      return std::to_string(count) + " nodes for a request of " + std::to_string(job.minNodes) +
             "-" + std::to_string(job.maxNodes);
    }
    const auto partition = partitionNodes_.find(job.partition);
    std::vector<bool> seen(snapshot_.nodes.size(), false);
    for (core::NodeIndex index : start.nodes) {
      if (index >= snapshot_.nodes.size()) return "node index " + std::to_string(index);
      const core::Node& node = snapshot_.nodes[index];
      if (seen[index]) return "node " + node.name + " given twice";
      seen[index] = true;
      if (node.state != core::NodeState::kUp) return "node " + node.name + " is not up";
      if (partition == partitionNodes_.end() || !partition->second[index]) {
        return "node " + node.name + " is outside partition " + job.partition;
      }
      const NodeBooks& used = nodes_[index];
      if (job.exclusive ? used.jobs > 0 : used.exclusive) {
        return "node " + node.name + " is shared with an exclusive job";
      }
      if (!fitsBeside(used.used, allocationOn(job, node), freeOf(node))) {
        return "node " + node.name + " lacks room (capacity exceeded)";
      }
    }
    return std::nullopt;
  }

  void begin(std::size_t w, const core::Start& start, core::Time t) {
    JobBooks& books = books_[w];
    core::Job& job = snapshot_.jobs[books.position];
    // Exclusive jobs may differ per node; GPU-seconds sum what each node gave.
    std::uint64_t gpus = 0;
    for (core::NodeIndex index : start.nodes) {
      const core::Resources alloc = allocationOn(job, snapshot_.nodes[index]);
      NodeBooks& node = nodes_[index];
      if (node.jobs == 0) node.busySince = t;
      ++node.jobs;
      node.exclusive = node.exclusive || job.exclusive;
      node.used.gpus += alloc.gpus;
      node.used.cpuMillis += alloc.cpuMillis;
      node.used.memoryBytes += alloc.memoryBytes;
      gpus += alloc.gpus;
    }
    job.phase = core::JobPhase::kRunning;
    job.allocatedNodes = start.nodes;
    job.startTime = t;
    books.phase = Phase::kRunning;
    books.runStart = t;
    ++books.generation;
    const SimJob& sim = workload_.jobs[w];
    const core::Duration runs = std::min(sim.runTime, job.timeLimit);
    completions_.push({runs >= kNever - t ? kNever - 1 : t + runs, w, books.generation});
    JobOutcome& outcome = result_.jobs[w];
    outcome.start = t - workload_.epoch;
    outcome.nodeList = start.nodes;
    outcome.gpus = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(gpus, std::numeric_limits<std::uint32_t>::max()));
    outcome.backfilled = start.backfilled;
    --pending_;
    ++running_;
  }

  // Releases the nodes of a running job at `t` and books what it held.
  void stopRun(std::size_t w, core::Time t) {
    JobBooks& books = books_[w];
    core::Job& job = snapshot_.jobs[books.position];
    double gpuSeconds = 0;
    for (core::NodeIndex index : job.allocatedNodes) {
      const core::Resources alloc = allocationOn(job, snapshot_.nodes[index]);
      NodeBooks& node = nodes_[index];
      node.used.gpus -= alloc.gpus;
      node.used.cpuMillis -= alloc.cpuMillis;
      node.used.memoryBytes -= alloc.memoryBytes;
      if (job.exclusive) node.exclusive = false;
      if (--node.jobs == 0) busyNodeSeconds_ += static_cast<double>(t - node.busySince);
      gpuSeconds += static_cast<double>(alloc.gpus) * static_cast<double>(t - books.runStart);
    }
    result_.jobs[w].gpuSeconds += gpuSeconds;
    --running_;
  }

  void preempt(const core::Preemption& preemption, core::Time t) {
    const auto it = index_.find(preemption.victim);
    if (it == index_.end() || books_[it->second].phase != Phase::kRunning) return;
    const std::size_t w = it->second;
    stopRun(w, t);
    ++result_.preemptions;
    JobOutcome& outcome = result_.jobs[w];
    core::Job& job = snapshot_.jobs[books_[w].position];
    if (preemption.mode == core::PreemptMode::kCancel || !job.requeue) {
      outcome.end = t - workload_.epoch;
      outcome.state = JobEnd::kCancelled;
      leave(w, t, slurm::JobState::kCancelled);
      return;
    }
    job.phase = core::JobPhase::kPending;
    job.allocatedNodes.clear();
    job.startTime = 0;
    ++job.restarts;
    books_[w].phase = Phase::kPending;
    outcome.start = -1;
    outcome.backfilled = false;
    ++outcome.restarts;
    ++pending_;
  }

  // The earliest instant after `after` when a waiting job's --begin or --switches wait expires.
  core::Time nextTimer(core::Time after) const {
    core::Time next = kNever;
    for (const core::Job& job : snapshot_.jobs) {
      if (job.phase != core::JobPhase::kPending) continue;
      if (job.beginTime > after) next = std::min(next, job.beginTime);
      if (job.switchesWait > 0) {
        const core::Time eligible = job.eligibleTime != 0 ? job.eligibleTime : job.submitTime;
        const core::Time expiry = std::max(eligible, job.beginTime) + job.switchesWait;
        if (expiry > after) next = std::min(next, expiry);
      }
    }
    return next;
  }

  void finish() {
    const core::Time end = lastInstant_;
    std::uint64_t gpus = 0;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      gpus += freeOf(snapshot_.nodes[i]).gpus;
      // Only jobs that never end are still running here; their time so far counts.
      if (nodes_[i].jobs > 0) busyNodeSeconds_ += static_cast<double>(end - nodes_[i].busySince);
    }
    MetricsInputs inputs;
    inputs.clusterGpus = gpus;
    inputs.clusterNodes = snapshot_.nodes.size();
    inputs.busyNodeSeconds = busyNodeSeconds_;
    inputs.accounts = snapshot_.accounts;
    result_.metrics = computeMetrics(result_.jobs, inputs);
  }

  const Workload& workload_;
  const SimulationOptions& options_;
  core::Snapshot snapshot_;
  std::vector<std::size_t> slots_;  // workload index of each snapshot job
  std::vector<JobBooks> books_;
  std::vector<NodeBooks> nodes_;
  std::unordered_map<core::JobId, std::size_t> index_;
  std::unordered_map<std::string, std::vector<bool>> partitionNodes_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  SimulationResult result_;
  std::size_t nextSubmit_ = 0;
  std::size_t pending_ = 0;
  std::size_t running_ = 0;
  std::size_t finished_ = 0;
  core::Time lastInstant_ = 0;
  double busyNodeSeconds_ = 0;
  bool dirty_ = false;
  bool hasTimers_ = false;
  bool keepFinished_ = false;
};

}  // namespace

StatusOr<SimulationResult> simulate(const Workload& workload, const SimulationOptions& options) {
  if (options.scheduleInterval < 0) return invalidArgument("schedule interval must be >= 0");
  for (const SimJob& job : workload.jobs) {
    if (job.runTime < 0) {
      return invalidArgument("job " + std::to_string(job.job.id) + " has a negative run time");
    }
    if (job.job.phase != core::JobPhase::kPending) {
      return invalidArgument("job " + std::to_string(job.job.id) + " is not pending");
    }
  }
  std::unordered_map<core::JobId, bool> ids;
  for (const SimJob& job : workload.jobs) {
    if (!ids.emplace(job.job.id, true).second) {
      return invalidArgument("duplicate job id " + std::to_string(job.job.id));
    }
  }
  if (!std::is_sorted(
          workload.jobs.begin(), workload.jobs.end(),
          [](const SimJob& a, const SimJob& b) { return a.job.submitTime < b.job.submitTime; })) {
    return invalidArgument("workload jobs are not in submit order");
  }
  Replay replay(workload, options);
  return replay.run();
}

}  // namespace kubeslurm::sim

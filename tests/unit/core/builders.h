// Test builders for the scheduling core, in the style of kube-scheduler's
// pkg/scheduler/testing/wrappers.go: MakeJob("train").nodes(4).gpus(8).obj().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core::testing {

inline constexpr Time kT0 = 1795000000;  // a fixed "now" for tests
inline constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
inline constexpr Duration kHour = 3600;
inline constexpr Duration kDay = 86400;

inline std::string nodeName(std::size_t i, const std::string& prefix = "gpu-node-") {
  std::string digits = std::to_string(i);
  if (digits.size() < 3) digits.insert(0, 3 - digits.size(), '0');
  return prefix + digits;
}

class MakeJob {
 public:
  explicit MakeJob(std::string partition = "train") {
    job_.partition = std::move(partition);
    job_.name = "x";
    job_.user = "root";
    job_.account = "root";
    job_.cpuMillisPerNode = 1000;
    job_.timeLimit = kHour;
    job_.submitTime = kT0;
  }
  MakeJob& id(JobId v) {
    job_.id = v;
    return *this;
  }
  MakeJob& name(std::string v) {
    job_.name = std::move(v);
    return *this;
  }
  MakeJob& user(std::string v) {
    job_.user = std::move(v);
    return *this;
  }
  MakeJob& account(std::string v) {
    job_.account = std::move(v);
    return *this;
  }
  MakeJob& nodes(std::uint32_t n) {
    job_.minNodes = job_.maxNodes = n;
    return *this;
  }
  MakeJob& nodeRange(std::uint32_t lo, std::uint32_t hi) {
    job_.minNodes = lo;
    job_.maxNodes = hi;
    return *this;
  }
  MakeJob& gpus(std::uint32_t perNode) {
    job_.gpusPerNode = perNode;
    return *this;
  }
  MakeJob& cpuMillis(std::uint64_t v) {
    job_.cpuMillisPerNode = v;
    return *this;
  }
  MakeJob& memory(std::uint64_t v) {
    job_.memoryBytesPerNode = v;
    return *this;
  }
  MakeJob& tasks(std::uint32_t v) {
    job_.tasksPerNode = v;
    return *this;
  }
  MakeJob& time(Duration v) {
    job_.timeLimit = v;
    return *this;
  }
  MakeJob& exclusive() {
    job_.exclusive = true;
    return *this;
  }
  MakeJob& contiguous() {
    job_.contiguous = true;
    return *this;
  }
  MakeJob& submit(Time t) {
    job_.submitTime = t;
    return *this;
  }
  MakeJob& eligible(Time t) {
    job_.eligibleTime = t;
    return *this;
  }
  MakeJob& begin(Time t) {
    job_.beginTime = t;
    return *this;
  }
  MakeJob& held() {
    job_.held = true;
    return *this;
  }
  MakeJob& nice(std::int32_t v) {
    job_.nice = v;
    return *this;
  }
  MakeJob& adminPriority(std::uint32_t v) {
    job_.adminPriority = v;
    return *this;
  }
  MakeJob& qos(std::uint32_t priority) {
    job_.qosPriority = priority;
    return *this;
  }
  MakeJob& qosName(std::string v) {
    job_.qos = std::move(v);
    return *this;
  }
  MakeJob& alsoPartitions(std::vector<std::string> v) {
    job_.otherPartitions = std::move(v);
    return *this;
  }
  MakeJob& require(std::vector<std::string> v) {
    job_.requiredNodes = std::move(v);
    return *this;
  }
  MakeJob& exclude(std::vector<std::string> v) {
    job_.excludedNodes = std::move(v);
    return *this;
  }
  MakeJob& constraint(std::string f) {
    job_.constraints.push_back(std::move(f));
    return *this;
  }
  MakeJob& tolerate(std::string key) {
    job_.tolerations.push_back({std::move(key), "", ""});
    return *this;
  }
  MakeJob& switches(std::uint32_t n, Duration wait) {
    job_.maxSwitches = n;
    job_.switchesWait = wait;
    return *this;
  }
  MakeJob& arrayTask(JobId arrayId, std::uint32_t task,
                     std::optional<std::uint32_t> throttle = {}) {
    job_.arrayJobId = arrayId;
    job_.arrayTaskId = task;
    job_.arrayMaxRunning = throttle;
    return *this;
  }
  MakeJob& dependency(slurm::DependencySpec spec) {
    job_.dependency = std::move(spec);
    return *this;
  }
  MakeJob& noRequeue() {
    job_.requeue = false;
    return *this;
  }
  // Running since `start` on `nodes` (rank order).
  MakeJob& running(Time start, std::vector<NodeIndex> nodes) {
    job_.phase = JobPhase::kRunning;
    job_.startTime = start;
    job_.minNodes = job_.maxNodes = static_cast<std::uint32_t>(nodes.size());
    job_.allocatedNodes = std::move(nodes);
    return *this;
  }
  Job obj() const { return job_; }
  operator Job() const { return job_; }  // NOLINT(google-explicit-constructor)

 private:
  Job job_;
};

// A GPU cluster: `count` nodes gpu-node-001.. with 8 GPUs, 64 CPUs and 500 GiB each.
class MakeCluster {
 public:
  explicit MakeCluster(std::size_t count, std::uint32_t gpus = 8) {
    for (std::size_t i = 1; i <= count; ++i) {
      Node n;
      n.name = nodeName(i);
      n.allocatable = {gpus, 64000, 500 * kGiB};
      s_.nodes.push_back(std::move(n));
    }
    s_.usageTime = kT0;
  }
  // A partition over all nodes (or [first, last], 1-based inclusive).
  MakeCluster& partition(std::string name, std::uint32_t jobFactor = 1, Duration maxTime = 7 * kDay,
                         std::uint32_t tier = 1, PreemptMode mode = PreemptMode::kOff) {
    Partition p;
    p.name = std::move(name);
    for (std::size_t i = 0; i < s_.nodes.size(); ++i) p.nodes.push_back(static_cast<NodeIndex>(i));
    p.priorityJobFactor = jobFactor;
    p.maxTime = maxTime;
    p.priorityTier = tier;
    p.preemptMode = mode;
    s_.partitions.push_back(std::move(p));
    return *this;
  }
  Partition& lastPartition() { return s_.partitions.back(); }
  // Leaf switch over nodes [first, last] (1-based).
  MakeCluster& leaf(std::string name, std::size_t first, std::size_t last) {
    slurm::TopologySwitch sw;
    sw.name = std::move(name);
    for (std::size_t i = first; i <= last; ++i) sw.nodes.push_back(nodeName(i));
    s_.topology.switches.push_back(std::move(sw));
    return *this;
  }
  MakeCluster& spine(std::string name, std::vector<std::string> children) {
    slurm::TopologySwitch sw;
    sw.name = std::move(name);
    sw.children = std::move(children);
    s_.topology.switches.push_back(std::move(sw));
    return *this;
  }
  MakeCluster& state(std::size_t node, NodeState st) {
    s_.nodes[node - 1].state = st;
    return *this;
  }
  MakeCluster& foreign(std::size_t node, Resources used) {
    s_.nodes[node - 1].foreignUsed = used;
    return *this;
  }
  MakeCluster& job(Job j) {
    if (j.id == 0) j.id = nextId_;
    nextId_ = std::max(nextId_, j.id) + 1;
    s_.jobs.push_back(std::move(j));
    return *this;
  }
  MakeCluster& account(std::string name, std::string parent, std::uint32_t shares, double usage = 0,
                       std::string user = "") {
    s_.accounts.push_back({std::move(name), std::move(parent), shares, usage, std::move(user)});
    return *this;
  }
  // Limits of the association added last.
  MakeCluster& limits(AssociationLimits l) {
    s_.accounts.back().limits = l;
    return *this;
  }
  MakeCluster& qos(Qos q) {
    s_.qos.push_back(std::move(q));
    return *this;
  }
  Snapshot& ref() { return s_; }
  Snapshot obj() const { return s_; }

 private:
  Snapshot s_;
  JobId nextId_ = 1;
};

// The reference rig (reference/slurm-22.05.md): 8 nodes, leaf1 = 001-004, leaf2 = 005-008,
// spine above; partitions train (default, PriorityJobFactor 1, MaxTime 7-0) and debug (10,
// 1:00:00).
inline MakeCluster referenceCluster() {
  MakeCluster c(8);
  c.partition("train", 1, 7 * kDay).partition("debug", 10, kHour);
  c.ref().partitions[0].isDefault = true;
  c.leaf("leaf1", 1, 4).leaf("leaf2", 5, 8).spine("spine", {"leaf1", "leaf2"});
  return c;
}

inline NodeIndex idx(std::size_t oneBased) { return static_cast<NodeIndex>(oneBased - 1); }

inline std::vector<NodeIndex> range(std::size_t first, std::size_t last) {
  std::vector<NodeIndex> v;
  for (std::size_t i = first; i <= last; ++i) v.push_back(idx(i));
  return v;
}

inline const Start* findStart(const Plan& p, JobId id) {
  for (const Start& s : p.starts) {
    if (s.jobId == id) return &s;
  }
  return nullptr;
}

inline const PendingDecision* findPending(const Plan& p, JobId id) {
  for (const PendingDecision& d : p.pending) {
    if (d.jobId == id) return &d;
  }
  return nullptr;
}

// The job's pending decision; a test failure (and an empty decision) when it is not pending.
inline const PendingDecision& pendingOf(const Plan& p, JobId id) {
  static const PendingDecision kMissing{};
  if (const PendingDecision* d = findPending(p, id)) return *d;
  ADD_FAILURE() << "job " << id << " is not pending";
  return kMissing;
}

inline slurm::DependencySpec dep(slurm::DependencyType type, const std::vector<JobId>& ids,
                                 bool anyOf = false) {
  slurm::DependencySpec spec;
  slurm::DependencyTerm term;
  term.type = type;
  for (JobId id : ids) term.targets.push_back({id, std::nullopt, 0});
  spec.terms.push_back(std::move(term));
  spec.anyOf = anyOf;
  return spec;
}

}  // namespace kubeslurm::core::testing

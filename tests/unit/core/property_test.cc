// Invariants checked after every plan over random clusters and queues (fixed seeds):
//   - no node is oversubscribed (GPUs, CPU, memory) now or at any future moment once starts,
//     running jobs and reservations are laid out: so no backfilled job delays a reservation;
//   - no partial gang: a start has exactly the job's node count, distinct usable nodes of its
//     partition;
//   - foreign load is never preempted and never overbooked;
//   - fair-share factors stay in [0, 1] and never rise with usage.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/priority.h"
#include "tests/unit/core/builders.h"

namespace kubeslurm::core {
namespace {

using testing::kT0;
using testing::MakeJob;

struct Hold {
  Time from;
  Time to;
  Resources amount;
  bool exclusive;
};

class RandomCluster {
 public:
  explicit RandomCluster(std::uint32_t seed) : rng_(seed) {}

  Snapshot make() {
    Snapshot s;
    const std::size_t nodes = pick(4, 40);
    for (std::size_t i = 1; i <= nodes; ++i) {
      Node n;
      n.name = testing::nodeName(i);
      n.allocatable = {chance(0.3) ? 4u : 8u, 64000, 512 * testing::kGiB};
      if (chance(0.1)) n.state = chance(0.5) ? NodeState::kDown : NodeState::kDrain;
      if (chance(0.15))
        n.foreignUsed = {static_cast<std::uint32_t>(pick(1, n.allocatable.gpus)), 4000, 0};
      if (chance(0.3)) n.features = {"ib"};
      if (chance(0.2)) n.features.push_back("nvlink");
      if (chance(0.05)) n.taints = {{"dedicated", "x", "NoSchedule"}};
      s.nodes.push_back(n);
    }
    if (chance(0.7)) {
      const std::size_t leafSize = pick(2, 8);
      std::vector<std::string> leaves;
      for (std::size_t first = 1; first <= nodes; first += leafSize) {
        slurm::TopologySwitch sw;
        sw.name = "leaf" + std::to_string(leaves.size());
        for (std::size_t i = first; i < first + leafSize && i <= nodes; ++i) {
          sw.nodes.push_back(testing::nodeName(i));
        }
        leaves.push_back(sw.name);
        s.topology.switches.push_back(sw);
      }
      s.topology.switches.push_back({"spine", {}, leaves, 1});
    }
    Partition low;
    low.name = "low";
    for (std::size_t i = 0; i < nodes; ++i) low.nodes.push_back(static_cast<NodeIndex>(i));
    low.preemptMode = chance(0.5) ? PreemptMode::kRequeue : PreemptMode::kCancel;
    Partition high = low;
    high.name = "high";
    high.priorityTier = 2;
    high.preemptMode = PreemptMode::kOff;
    high.nodes.resize(std::max<std::size_t>(1, nodes / 2));
    s.partitions = {low, high};
    s.config.preemption = chance(0.5);
    if (chance(0.4)) {  // association limits over two accounts
      s.accounts = {{"root", "", 1, 0, ""}, {"a0", "root", 1, 0, ""}, {"a1", "root", 1, 0, ""}};
      s.accounts[1].limits.grpTres.gpus = pick(4, 40);
      if (chance(0.5)) s.accounts[2].limits.grpJobs = static_cast<std::uint32_t>(pick(1, 5));
      accounts_ = true;
    }
    addRunning(s);
    addPending(s);
    return s;
  }

 private:
  std::size_t pick(std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  Job randomShape(const std::string& partition) {
    Job j = MakeJob(partition)
                .nodes(static_cast<std::uint32_t>(chance(0.5) ? 1 : pick(1, 6)))
                .gpus(static_cast<std::uint32_t>(chance(0.5) ? 8 : pick(0, 4)))
                .time(static_cast<Duration>(pick(1, 20)) * 1800)
                .obj();
    if (chance(0.15)) j.exclusive = true;
    if (accounts_) j.account = chance(0.5) ? "a0" : "a1";
    return j;
  }

  void addRunning(Snapshot& s) {
    std::vector<Resources> free;
    for (const Node& n : s.nodes) {
      free.push_back({n.allocatable.gpus - n.foreignUsed.gpus,
                      n.allocatable.cpuMillis - n.foreignUsed.cpuMillis,
                      n.allocatable.memoryBytes});
    }
    std::vector<std::uint8_t> exclusive(s.nodes.size(), 0);
    std::vector<std::uint8_t> used(s.nodes.size(), 0);
    const std::size_t count = pick(0, 25);
    for (std::size_t k = 0; k < count; ++k) {
      Job j = randomShape(chance(0.7) ? "low" : "high");
      const auto& part = j.partition == "low" ? s.partitions[0] : s.partitions[1];
      std::vector<NodeIndex> nodes;
      for (NodeIndex n : part.nodes) {
        if (nodes.size() == j.minNodes) break;
        const bool fitsNode = exclusive[n] == 0 && free[n].gpus >= j.gpusPerNode &&
                              free[n].cpuMillis >= j.cpuMillisPerNode &&
                              (!j.exclusive || used[n] == 0);
        if (fitsNode && chance(0.6)) nodes.push_back(n);
      }
      if (nodes.size() != j.minNodes) continue;
      for (NodeIndex n : nodes) {
        if (j.exclusive) {
          exclusive[n] = 1;
          free[n] = {};
        } else {
          free[n].gpus -= j.gpusPerNode;
          free[n].cpuMillis -= j.cpuMillisPerNode;
        }
        used[n] = 1;
      }
      j.id = nextId_++;
      j.phase = JobPhase::kRunning;
      j.allocatedNodes = nodes;
      j.startTime = kT0 - static_cast<Time>(pick(0, 20)) * 600;
      s.jobs.push_back(j);
    }
  }

  void addPending(Snapshot& s) {
    const std::size_t count = pick(1, 30);
    for (std::size_t k = 0; k < count; ++k) {
      Job j = randomShape(chance(0.8) ? "low" : "high");
      j.id = nextId_++;
      j.submitTime = kT0 - static_cast<Time>(pick(0, 5000));
      if (chance(0.3)) j.adminPriority = static_cast<std::uint32_t>(pick(1, 1000));
      if (chance(0.1)) j.maxSwitches = 1, j.switchesWait = 600;
      if (chance(0.1)) j.otherPartitions = {j.partition == "low" ? "high" : "low"};
      sprinkle(s, j);
      s.jobs.push_back(j);
    }
  }

  // The less common request features, now and then: -w, -x, -C, tolerations, node ranges,
  // unlimited or zero time limits, arrays with a throttle, begin times, holds, dependencies.
  void sprinkle(const Snapshot& s, Job& j) {
    const std::size_t nodes = s.nodes.size();
    if (chance(0.05)) j.requiredNodes = {s.nodes[pick(0, nodes - 1)].name};
    if (chance(0.05)) j.excludedNodes = {s.nodes[pick(0, nodes - 1)].name, "no-such-node"};
    if (chance(0.03)) j.constraints = {"ib"};
    if (chance(0.03)) j.constraintAnyOf = {{"ib", "nvlink"}};  // -C "ib|nvlink
    if (chance(0.03)) j.matchingOneOf = {"nvlink", "ib"};      // -C "[nvlink|ib]""
    if (chance(0.03)) j.tolerations = {{"dedicated", "", ""}};
    if (chance(0.05)) j.maxNodes = j.minNodes + static_cast<std::uint32_t>(pick(0, 3));
    if (chance(0.03)) j.timeLimit = chance(0.5) ? kUnlimited : 0;
    if (chance(0.05)) {
      j.arrayJobId = 5000 + pick(0, 2);
      j.arrayTaskId = 0;
      j.arrayMaxRunning = 1;
    }
    if (chance(0.03)) j.beginTime = kT0 + 3600;
    if (chance(0.03)) j.held = true;
    if (chance(0.05) && nextId_ > 2) {
      slurm::DependencySpec d;
      const auto type =
          chance(0.5) ? slurm::DependencyType::kAfterOk : slurm::DependencyType::kAfterAny;
      d.terms.push_back({type, {{pick(1, nextId_ - 1), std::nullopt, 0}}});
      j.dependency = d;
    }
  }

  std::mt19937 rng_;
  JobId nextId_ = 1;
  bool accounts_ = false;
};

Resources holdOn(const Snapshot& s, const Job& j, NodeIndex n) {
  if (!j.exclusive) return j.perNodeAllocation();
  const Node& node = s.nodes[n];
  return {node.allocatable.gpus - node.foreignUsed.gpus,
          node.allocatable.cpuMillis - node.foreignUsed.cpuMillis,
          node.allocatable.memoryBytes - node.foreignUsed.memoryBytes};
}

Time endAfter(Time start, Duration limit) {
  return limit >= kUnlimited ? kUnlimited : start + limit;
}

void checkNoOverbooking(const Snapshot& s, const Plan& plan, Time now) {
  std::map<JobId, const Job*> byId;
  for (const Job& j : s.jobs) byId[j.id] = &j;
  std::set<JobId> victims;
  std::set<JobId> preemptors;
  for (const Preemption& p : plan.preemptions) {
    victims.insert(p.victim);
    preemptors.insert(p.preemptor);
  }
  std::vector<std::vector<Hold>> holds(s.nodes.size());
  for (const Job& j : s.jobs) {
    if (j.phase != JobPhase::kRunning) continue;
    const Time end =
        victims.contains(j.id) ? now + 1 : std::max(endAfter(j.startTime, j.timeLimit), now + 1);
    for (NodeIndex n : j.allocatedNodes)
      holds[n].push_back({now, end, holdOn(s, j, n), j.exclusive});
  }
  for (const Start& st : plan.starts) {
    const Job& j = *byId.at(st.jobId);
    for (NodeIndex n : st.nodes) {
      holds[n].push_back({now, endAfter(now, j.timeLimit), holdOn(s, j, n), j.exclusive});
    }
  }
  for (const PendingDecision& d : plan.pending) {
    if (!d.estimatedStart) continue;
    const Job& j = *byId.at(d.jobId);
    const Time from = preemptors.contains(d.jobId) ? now + 1 : *d.estimatedStart;
    for (NodeIndex n : d.estimatedNodes) {
      holds[n].push_back({from, endAfter(from, j.timeLimit), holdOn(s, j, n), j.exclusive});
    }
  }
  for (std::size_t n = 0; n < s.nodes.size(); ++n) {
    const Node& node = s.nodes[n];
    for (const Hold& at : holds[n]) {
      std::uint64_t gpus = node.foreignUsed.gpus;
      std::uint64_t cpu = node.foreignUsed.cpuMillis;
      int holders = 0;
      bool anyExclusive = false;
      for (const Hold& h : holds[n]) {
        if (h.from <= at.from && at.from < h.to) {
          gpus += h.amount.gpus;
          cpu += h.amount.cpuMillis;
          ++holders;
          anyExclusive = anyExclusive || h.exclusive;
        }
      }
      ASSERT_LE(gpus, node.allocatable.gpus) << "node " << n << " at " << at.from - now;
      ASSERT_LE(cpu, node.allocatable.cpuMillis) << "node " << n;
      if (anyExclusive) {
        ASSERT_EQ(holders, 1) << "exclusive node " << n << " shared";
      }
    }
  }
}

void checkGangs(const Snapshot& s, const Plan& plan) {
  std::map<JobId, const Job*> byId;
  for (const Job& j : s.jobs) byId[j.id] = &j;
  for (const Start& st : plan.starts) {
    const Job& j = *byId.at(st.jobId);
    ASSERT_EQ(j.phase, JobPhase::kPending);
    ASSERT_GE(st.nodes.size(), j.minNodes) << "partial gang for job " << j.id;
    ASSERT_LE(st.nodes.size(), std::max(j.minNodes, j.maxNodes));
    std::set<NodeIndex> distinct(st.nodes.begin(), st.nodes.end());
    ASSERT_EQ(distinct.size(), st.nodes.size());
    const Partition& part = st.partition == "low" ? s.partitions[0] : s.partitions[1];
    for (NodeIndex n : st.nodes) {
      ASSERT_NE(std::find(part.nodes.begin(), part.nodes.end(), n), part.nodes.end());
      const Node& node = s.nodes[n];
      ASSERT_EQ(node.state, NodeState::kUp);
      ASSERT_TRUE(toleratesAll(node.taints, j.tolerations)) << "job " << j.id;
      for (const std::string& f : j.constraints) {
        ASSERT_NE(std::find(node.features.begin(), node.features.end(), f), node.features.end());
      }
      for (const std::vector<std::string>& clause : j.constraintAnyOf) {
        ASSERT_TRUE(std::any_of(clause.begin(), clause.end(),
                                [&](const std::string& f) {
                                  return std::find(node.features.begin(), node.features.end(), f) !=
                                         node.features.end();
                                }))
            << "job " << j.id;
      }
      ASSERT_EQ(std::find(j.excludedNodes.begin(), j.excludedNodes.end(), node.name),
                j.excludedNodes.end());
    }
    // A matching OR: one of its features on every node the job takes.
    if (!j.matchingOneOf.empty()) {
      ASSERT_TRUE(
          std::any_of(j.matchingOneOf.begin(), j.matchingOneOf.end(),
                      [&](const std::string& f) {
                        return std::all_of(st.nodes.begin(), st.nodes.end(), [&](NodeIndex n) {
                          const auto& features = s.nodes[n].features;
                          return std::find(features.begin(), features.end(), f) != features.end();
                        });
                      }))
          << "job " << j.id;
    }
    for (const std::string& name : j.requiredNodes) {
      ASSERT_TRUE(std::any_of(st.nodes.begin(), st.nodes.end(),
                              [&](NodeIndex n) { return s.nodes[n].name == name; }));
    }
  }
  for (const Preemption& p : plan.preemptions) {
    ASSERT_EQ(byId.at(p.victim)->phase, JobPhase::kRunning);  // a job, never foreign load
  }
}

// Each job starts at most once, in one of its partitions; and starts never take an account past a
// GrpTRES gres/gpu or GrpJobs limit (running jobs alone may already be past it).
void checkStartsAndLimits(const Snapshot& s, const Plan& plan) {
  std::map<JobId, const Job*> byId;
  for (const Job& j : s.jobs) byId[j.id] = &j;
  std::set<JobId> started;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> gpus;  // running, started
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> jobs;
  for (const Job& j : s.jobs) {
    if (j.phase != JobPhase::kRunning) continue;
    gpus[j.account].first += std::uint64_t{j.gpusPerNode} * j.allocatedNodes.size();
    ++jobs[j.account].first;
  }
  for (const Start& st : plan.starts) {
    ASSERT_TRUE(started.insert(st.jobId).second) << "job " << st.jobId << " started twice";
    const Job& j = *byId.at(st.jobId);
    ASSERT_TRUE(st.partition == j.partition ||
                std::find(j.otherPartitions.begin(), j.otherPartitions.end(), st.partition) !=
                    j.otherPartitions.end());
    gpus[j.account].second += std::uint64_t{j.gpusPerNode} * st.nodes.size();
    ++jobs[j.account].second;
  }
  for (const Account& a : s.accounts) {
    if (a.limits.grpTres.gpus && gpus[a.name].second > 0) {
      ASSERT_LE(gpus[a.name].first + gpus[a.name].second, *a.limits.grpTres.gpus) << a.name;
    }
    if (a.limits.grpJobs && jobs[a.name].second > 0) {
      ASSERT_LE(jobs[a.name].first + jobs[a.name].second, *a.limits.grpJobs) << a.name;
    }
  }
}

TEST(Properties, RandomClustersKeepEveryInvariant) {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(seed);
    RandomCluster gen(seed);
    const Snapshot s = gen.make();
    Budget budget;
    budget.resolution = seed % 2 == 0 ? 60 : 300;
    budget.maxReservations = seed % 3 == 0 ? 2 : 64;
    const Plan plan = core::plan(s, kT0, budget);
    checkGangs(s, plan);
    checkNoOverbooking(s, plan, kT0);
    checkStartsAndLimits(s, plan);
    std::size_t pendingCount = 0;
    for (const Job& j : s.jobs) pendingCount += j.phase == JobPhase::kPending ? 1u : 0u;
    ASSERT_EQ(plan.pending.size() + plan.starts.size(), pendingCount);
    for (const PendingDecision& d : plan.pending) {
      ASSERT_NE(d.reason, slurm::PendingReason::kNone);
      if (d.estimatedStart) {
        ASSERT_GE(*d.estimatedStart, kT0);
      }
    }
    if (HasFatalFailure()) return;
  }
}

TEST(Properties, PlanningIsDeterministic) {
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    RandomCluster gen(seed);
    const Snapshot s = gen.make();
    const Plan a = core::plan(s, kT0, Budget{});
    const Plan b = core::plan(s, kT0, Budget{});
    ASSERT_EQ(a.starts.size(), b.starts.size());
    for (std::size_t i = 0; i < a.starts.size(); ++i) {
      ASSERT_EQ(a.starts[i].jobId, b.starts[i].jobId);
      ASSERT_EQ(a.starts[i].nodes, b.starts[i].nodes);
    }
  }
}

std::vector<Account> randomAccounts(std::mt19937& rng, bool users) {
  std::uniform_int_distribution<std::uint32_t> shares(0, 10);
  std::uniform_real_distribution<double> usage(0, 1000);
  std::vector<Account> a = {{"root", "", 1, 0, ""}};
  for (int i = 0; i < 3; ++i) {
    const std::string name = "a" + std::to_string(i);
    a.push_back({name, "root", shares(rng), usage(rng), ""});
    for (int k = 0; k < 2; ++k) {
      const std::string child = name + "-" + std::to_string(k);
      a.push_back({child, name, shares(rng), usage(rng), ""});
      if (users) a.push_back({child, "", 1, usage(rng), "u" + std::to_string(k)});
    }
  }
  return a;
}

TEST(Properties, FairShareFactorsAreInRangeAndFallWithUsage) {
  std::mt19937 rng(7);  // NOLINT(cert-msc32-c,cert-msc51-cpp): fixed seeds make failures replayable
  for (int iter = 0; iter < 200; ++iter) {
    const bool fairTree = iter % 2 == 0;
    std::vector<Account> accounts = randomAccounts(rng, iter % 4 < 2);
    const FairShareTree before(accounts, fairTree);
    for (const FairShareRow& r : before.rows()) {
      ASSERT_GE(r.fairShare, 0.0);
      ASSERT_LE(r.fairShare, 1.0);
    }
    // More usage on one leaf never raises its factor.
    std::size_t leaf = accounts.size() - 1;
    const auto assoc = *before.associationOf(accounts[leaf].name, accounts[leaf].user);
    std::vector<Account> more = accounts;
    more[leaf].rawUsage += 500;
    const FairShareTree after(more, fairTree);
    ASSERT_LE(after.factor(assoc), before.factor(assoc) + 1e-12) << "iteration " << iter;
  }
}

}  // namespace
}  // namespace kubeslurm::core

// Synthetic clusters and queues for the core benchmarks, declared like scheduler_perf's
// workloads: N nodes x 8 GPUs under a two-level tree (125 nodes per leaf: 40 leaves at 5,000),
// running jobs filling most of it, and a pending queue of mixed sizes from 1 GPU to 64 nodes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core::bench {

inline constexpr Time kNow = 1795000000;
inline constexpr std::size_t kNodesPerLeaf = 125;

struct WorkloadSpec {
  std::size_t nodes = 5000;
  std::size_t running = 2000;
  std::size_t pending = 10000;
  std::uint32_t seed = 42;
};

inline std::string benchNodeName(std::size_t i) {
  std::string digits = std::to_string(i);
  if (digits.size() < 5) digits.insert(0, 5 - digits.size(), '0');
  return "gpu-" + digits;
}

class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(const WorkloadSpec& spec) : spec_(spec), rng_(spec.seed) {}

  Snapshot build() {
    Snapshot s;
    addNodes(s);
    addRunning(s);
    addPending(s);
    return s;
  }

  // A pending job of the benchmark's size mix, ready for placement.
  Job pendingJob() {
    Job j = shape(false);
    j.id = nextId_++;
    j.submitTime = kNow - static_cast<Time>(uniform(0, 86400));
    j.account = "team" + std::to_string(uniform(0, 7));
    j.user = "u" + std::to_string(uniform(0, 40));
    return j;
  }

 private:
  std::size_t uniform(std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng_);
  }

  void addNodes(Snapshot& s) const {
    Partition train;
    train.name = "train";
    train.isDefault = true;
    std::vector<std::string> leaves;
    for (std::size_t i = 0; i < spec_.nodes; ++i) {
      Node n;
      n.name = benchNodeName(i);
      n.allocatable = {8, 128000, 1024ull << 30};
      if (i % 97 == 13) n.foreignUsed = {2, 8000, 64ull << 30};  // inference beside training
      if (i % 211 == 7) n.state = NodeState::kDrain;
      s.nodes.push_back(std::move(n));
      train.nodes.push_back(static_cast<NodeIndex>(i));
      if (i % kNodesPerLeaf == 0) {
        leaves.push_back("leaf" + std::to_string(leaves.size()));
        s.topology.switches.push_back({leaves.back(), {}, {}, 1});
      }
      s.topology.switches.back().nodes.push_back(s.nodes.back().name);
    }
    s.topology.switches.push_back({"spine", {}, leaves, 1});
    Partition debug = train;
    debug.name = "debug";
    debug.isDefault = false;
    debug.maxTime = 3600;
    debug.priorityJobFactor = 10;
    debug.nodes.resize(std::min<std::size_t>(spec_.nodes, 256));
    s.partitions = {train, debug};
    s.accounts.push_back({"root", "", 1, 0, ""});
    for (int t = 0; t < 8; ++t) {
      s.accounts.push_back({"team" + std::to_string(t), "root", static_cast<std::uint32_t>(10 + t),
                            1e6 * (t + 1), ""});
    }
    s.usageTime = kNow;
  }

  // Sizes: running jobs are mostly small; pending ones reach 64 nodes.
  Job shape(bool running) {
    Job j;
    j.partition = "train";
    j.cpuMillisPerNode = 8000;
    j.memoryBytesPerNode = 64ull << 30;
    const std::size_t r = uniform(0, 99);
    if (r < (running ? 60u : 45u)) {
      j.minNodes = 1;
      j.gpusPerNode = static_cast<std::uint32_t>(1u << uniform(0, 2));  // 1, 2 or 4 GPUs
    } else if (r < (running ? 90u : 80u)) {
      j.minNodes = static_cast<std::uint32_t>(uniform(1, 4));
      j.gpusPerNode = 8;
    } else if (r < (running ? 100u : 95u)) {
      j.minNodes = static_cast<std::uint32_t>(uniform(8, 16));
      j.gpusPerNode = 8;
    } else {
      j.minNodes = static_cast<std::uint32_t>(uniform(32, 64));
      j.gpusPerNode = 8;
    }
    j.maxNodes = j.minNodes;
    j.timeLimit = static_cast<Duration>(uniform(1, 48)) * 1800;
    if (!running && uniform(0, 99) < 3) j.partition = "debug", j.timeLimit = 1800;
    return j;
  }

  void addRunning(Snapshot& s) {
    std::vector<std::int64_t> freeGpus(s.nodes.size());
    for (std::size_t n = 0; n < s.nodes.size(); ++n) {
      freeGpus[n] = s.nodes[n].allocatable.gpus - s.nodes[n].foreignUsed.gpus;
    }
    std::size_t cursor = 0;
    for (std::size_t placed = 0, tries = 0; placed < spec_.running && tries < spec_.running * 4;
         ++tries) {
      Job j = shape(true);
      std::vector<NodeIndex> nodes;
      for (std::size_t k = 0; k < s.nodes.size() && nodes.size() < j.minNodes; ++k) {
        const std::size_t n = (cursor + k) % s.nodes.size();
        if (freeGpus[n] >= j.gpusPerNode) nodes.push_back(static_cast<NodeIndex>(n));
      }
      if (nodes.size() < j.minNodes) continue;
      for (NodeIndex n : nodes) freeGpus[n] -= j.gpusPerNode;
      cursor = (nodes.back() + 1 + uniform(0, 40)) % s.nodes.size();
      j.id = nextId_++;
      j.phase = JobPhase::kRunning;
      j.allocatedNodes = std::move(nodes);
      j.startTime = kNow - static_cast<Time>(uniform(0, static_cast<std::size_t>(j.timeLimit)));
      j.account = "team" + std::to_string(uniform(0, 7));
      j.user = "u" + std::to_string(uniform(0, 40));
      s.jobs.push_back(std::move(j));
      ++placed;
    }
  }

  void addPending(Snapshot& s) {
    for (std::size_t i = 0; i < spec_.pending; ++i) s.jobs.push_back(pendingJob());
  }

  WorkloadSpec spec_;
  std::mt19937 rng_;
  JobId nextId_ = 1;
};

inline Snapshot makeWorkload(const WorkloadSpec& spec) { return WorkloadBuilder(spec).build(); }

}  // namespace kubeslurm::core::bench

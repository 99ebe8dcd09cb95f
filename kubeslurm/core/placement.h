// Gang placement: every rank of a job, or none.
//
// Which leaves: Slurm's topology/tree (select/cons_tres _eval_nodes_topo, 22.05):
//   1. The top switch is the highest-level switch with enough usable nodes; nothing outside it
//      is considered.
//   2. Leaves are then taken one at a time. A leaf that can hold what is still needed beats one
//      that cannot; among those that can, the one with the fewest usable nodes (best fit); among
//      those that cannot, their parents are compared the same way, then the leaf with the most
//      usable nodes. After the first pick, a leaf closer (in hops) to those already picked is
//      preferred when it is at least as good. So a job spans leaves only when no single leaf
//      (then no single parent) can hold it, and spanning takes from the fullest leaves first.
// Which nodes in a leaf: whole-node requests take the leaf's nodes in index order (as Slurm
// does); partial-node requests pack onto the most-used nodes that fit (fewest free GPUs, then
// CPU, memory, index) so whole nodes stay free for gangs. Ranks are numbered leaf by leaf in
// switch order, nodes ascending within a leaf: neighbours share switches, rank 0 comes first.
//
// Block topology (topology/block), as Slurm's eval_nodes_block and _choose_best_bblock do it
// (slurm-24-11-7-1 src/plugins/topology/block/eval_nodes_block.c; the same in 24.05-25.11). With
// N the job's node count (required nodes included) and S the base block size:
//   1. Level: the smallest configured level of at least ceil(log2(ceil(N / S))) base blocks; none
//      (a job larger than the largest block size): one aggregate of every base block. The job's
//      size alone fixes the level: a busy cluster never moves it to a larger one.
//   2. Spread limit: with L the largest configured level below that need (0 when N <= S), the
//      job may use at most ceil(N / (L * S)) groups of L base blocks, unless the aggregate is
//      exactly that many groups.
//   3. Aggregate: runs of base blocks aligned to the level, the last one possibly short. With
//      required nodes: the first aggregate holding one of them, which must hold them all. Else
//      among those whose usable nodes suffice (under the spread limit: in its fullest allowed
//      groups) the one with the fewest usable nodes, the last on a tie.
//   4. In it, the required nodes' base blocks are used first; then base blocks one at a time:
//      under the spread limit a group already used beats a new one, then a group that holds the
//      rest (the tightest) beats one that does not (the fullest); then a base block that holds
//      the rest (the tightest) beats one that does not (the fullest), the last on a tie. A pick
//      that adds nothing, or a new group past the limit, fails the job.
//   Nodes outside every block are never used; a job requiring one does not start. Ranks follow
//   node order (Slurm's allocation is a node bitmap).
//
// --contiguous (Slurm 22.05's cons_tres _eval_nodes with details->contiguous): the job's nodes
// are consecutive in the cluster's node order (the natural order of their names, as sinfo lists
// them; a node outside the partition, or one that cannot take a rank, ends a run), and the
// topology is not consulted (_eval_nodes_topo is skipped for such jobs, --switches with it).
//   1. Runs: the maximal sequences of consecutive usable nodes.
//   2. With required nodes (-w): they must all lie in one run, and the job takes a window of it
//      that starts at the first of them and grows upward, then downward at the run's end.
//   3. Otherwise the run that holds the job's minimum with the fewest free CPUs (the tightest
//      fit), the first on a tie; none: the job waits ("no hole large enough"). The job takes the
//      run's first nodes, up to its maximum.
//   A one-node job without -w is contiguous wherever it goes, and is placed as any job is.
// Where Slurm can hand out a set that is not consecutive we keep it consecutive: required
// nodes apart in a run (its upward walk from the first skips over the later ones), and a node
// range whose run holds fewer than the maximum (its next pass takes the rest from another run).
// Slurm may also prefer, for its tightest-fit rule, a run too small over one that suffices;
// here a run that suffices always wins.
//
// The same code places jobs now (main pass, free capacity) and at a future time (backfill
// profile): the caller supplies which nodes fit and how full they are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <tuple>
#include <vector>

#include "kubeslurm/core/capacity_index.h"
#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/topology.h"

namespace kubeslurm::core {

struct LeafTake {
  std::uint32_t leaf = 0;
  std::uint32_t take = 0;
};

// Step 1 and 2 above, over per-leaf counts of usable nodes. Keeps its buffers between calls, so
// a warmed chooser allocates nothing.
class LeafChooser {
 public:
  explicit LeafChooser(const Topology& topology);
  // leafAvail[leaf]: nodes usable for the job under each leaf, excluding required nodes.
  // requiredLeaves: leaves that already hold required ranks; they are filled first and count as
  // picked. Appends to `out` in pick order; false when `nodes` cannot be placed.
  // requiredNodes: how many required nodes the job already holds (block topology counts them in
  // the job's size).
  bool choose(std::span<const std::uint32_t> leafAvail, std::uint32_t nodes,
              std::span<const std::uint32_t> requiredLeaves, std::vector<LeafTake>& out,
              std::uint32_t requiredNodes = 0);

 private:
  bool chooseBlocks(std::span<const std::uint32_t> leafAvail, std::uint32_t nodes,
                    std::uint32_t requiredNodes, std::span<const std::uint32_t> requiredLeaves,
                    std::vector<LeafTake>& out);
  std::int64_t blockSum(std::uint32_t first, std::uint32_t last) const;
  std::int64_t topGroupsSum(std::uint32_t first, std::uint32_t last, std::uint32_t groupShift,
                            std::int64_t maxGroups);
  int compare(std::uint32_t a, std::uint32_t b, std::int64_t remaining) const;
  void consider(std::uint32_t leaf, std::int64_t remaining, std::int64_t& best) const;
  bool restrictToTop(std::uint32_t nodes, std::span<const std::uint32_t> requiredLeaves);
  void addDistances(std::uint32_t leaf);

  const Topology& topology_;
  std::vector<std::int64_t> count_;       // per switch: usable nodes under it
  std::vector<std::uint64_t> distance_;   // per leaf: summed hops to the leaves picked so far
  std::vector<std::uint8_t> blockUsed_;   // block topology, per base block: picked or required
  std::vector<std::int64_t> groupCount_;  // per group of the spread limit: usable nodes
  std::vector<std::uint8_t> groupUsed_;   // per group: holds a used base block
  std::vector<std::int64_t> groupScratch_;
};

// A node that can take a rank, and how full it is at the time of placement: the packing order
// (fewest free GPUs, then CPU, memory, index).
struct PackKey {
  Amount free;
  NodeIndex node = 0;
  friend bool operator<(const PackKey& a, const PackKey& b) {
    if (a.free.gpus != b.free.gpus) return a.free.gpus < b.free.gpus;
    if (a.free.cpuMillis != b.free.cpuMillis) return a.free.cpuMillis < b.free.cpuMillis;
    if (a.free.memoryBytes != b.free.memoryBytes) return a.free.memoryBytes < b.free.memoryBytes;
    return a.node < b.node;
  }
};

struct PlacementScratch {
  std::vector<std::uint32_t> leafAvail;
  std::vector<std::uint32_t> requiredLeaves;
  std::vector<LeafTake> takes;
  std::vector<PackKey> fitting;     // every fitting node, when counted here
  std::vector<PackKey> candidates;  // one leaf's; for --contiguous, every usable node
};

// How many nodes to take: minNodes, or up to maxNodes when that many are usable.
std::uint32_t targetNodes(const JobView& job, std::uint64_t usable);

// Puts the chosen nodes in rank order: leaf by leaf in switch order, ascending in a leaf; for a
// block topology ascending node order, as Slurm's node bitmap.
void sortRankOrder(const Topology& topology, std::vector<NodeIndex>& nodes);

// The order of one-node candidates: most used first (fewest free GPUs), then the tree's choice
// (the leaf with the fewest usable nodes, then switch order), then CPU, memory and index. For
// whole-node requests every candidate is equally idle and this is exactly Slurm's pick (Goal C:
// "001,002 busy, 1 node -> 003").
// A leaf's usable nodes as one-node placement orders leaves (best fit). Block topologies do not
// use the one-node shortcuts: they go through the block chooser.
inline std::uint32_t leafRankKey(std::span<const std::uint32_t> leafAvail, std::uint32_t leaf) {
  return leafAvail[leaf];
}
using SingleRank =
    std::tuple<std::int64_t, std::uint32_t, std::uint32_t, std::int64_t, std::int64_t, NodeIndex>;
inline SingleRank singleRank(const Topology& topo, const JobView& job,
                             std::span<const std::uint32_t> leafAvail, const PackKey& k) {
  const std::uint32_t leaf = topo.leafOf(k.node);
  const std::uint32_t avail = leafRankKey(leafAvail, leaf);
  if (job.request.exclusive) return {0, avail, leaf, 0, 0, k.node};
  return {k.free.gpus, avail, leaf, k.free.cpuMillis, k.free.memoryBytes, k.node};
}

// Picks `take` nodes of `candidates` (one leaf's), most used first; whole nodes in index order.
void pickPacked(const JobView& job, std::vector<PackKey>& candidates, std::uint32_t take,
                std::vector<NodeIndex>& out);

// Whether the leaves chosen (and those of required nodes) are within --switches=N; always for a
// block topology, which does not enforce it.
bool withinSwitchLimit(const Topology& topology, const JobView& job, const PlacementScratch& s);

// The required nodes (-w) first: all must fit. Records their leaves.
template <class Fit>
bool takeRequired(const Topology& topo, const JobView& job, PlacementScratch& s, Fit& fit,
                  std::vector<NodeIndex>& out) {
  s.requiredLeaves.clear();
  Amount unused;
  for (NodeIndex r : job.required) {
    if (!fit(r, unused)) return false;
    out.push_back(r);
    const std::uint32_t leaf = topo.leafOf(r);
    if (std::find(s.requiredLeaves.begin(), s.requiredLeaves.end(), leaf) ==
        s.requiredLeaves.end()) {
      s.requiredLeaves.push_back(leaf);
    }
  }
  return true;
}

// Tests every node of the partition once: the fitting ones, and their count per leaf.
template <class Fit>
void countFitting(const ClusterState& state, const JobView& job, PlacementScratch& s, Fit& fit) {
  const Topology& topo = state.topology();
  s.leafAvail.assign(topo.leafCount(), 0);
  s.fitting.clear();
  for (NodeIndex n : state.partition(job.partition).nodes) {
    PackKey key{{}, n};
    if (isRequired(job, n) || !fit(n, key.free)) continue;
    s.fitting.push_back(key);
    ++s.leafAvail[topo.leafOf(n)];
  }
}

// The chosen leaves' nodes: from the leaf's node list tested with `fit`, or from the fitting
// nodes already collected.
template <class Fit>
bool pickFromLeaves(const ClusterState& state, const JobView& job, PlacementScratch& s,
                    bool countsReady, Fit& fit, std::vector<NodeIndex>& out) {
  const Topology& topo = state.topology();
  for (const LeafTake& t : s.takes) {
    s.candidates.clear();
    if (countsReady) {
      for (NodeIndex n : state.partitionLeafNodes(job.partition, t.leaf)) {
        PackKey key{{}, n};
        if (!isRequired(job, n) && fit(n, key.free)) s.candidates.push_back(key);
      }
    } else {
      for (const PackKey& k : s.fitting) {
        if (topo.leafOf(k.node) == t.leaf) s.candidates.push_back(k);
      }
    }
    if (s.candidates.size() < t.take) return false;
    pickPacked(job, s.candidates, t.take, out);
  }
  return true;
}

// --contiguous (above), once `required` holds the required nodes and `fitting` every other node
// that fits, both ascending. Fills `out` ascending.
bool placeContiguous(const JobView& job, PlacementScratch& s, std::vector<NodeIndex>& out);

// Places `job` given `fit(n, free)`: whether node n can take a rank, and (out) how much is free
// on it for packing. When `countsReady` (the capacity index counted), scratch.leafAvail already
// holds the per-leaf counts of fitting non-required nodes and leaves are scanned with `fit` only
// where ranks are taken; otherwise every node of the partition is tested once here. Fills `out`
// in rank order; false (and `out` unspecified) when the job cannot be placed whole.
template <class Fit>
bool placeJob(const ClusterState& state, const JobView& job, LeafChooser& chooser,
              PlacementScratch& s, bool countsReady, Fit&& fit, std::vector<NodeIndex>& out) {
  const Topology& topo = state.topology();
  out.clear();
  if (!takeRequired(topo, job, s, fit, out)) return false;
  if (!countsReady) countFitting(state, job, s, fit);
  if (job.contiguous && (job.maxNodes > 1 || !out.empty())) {
    // Contiguous jobs are never `simple`, so the fitting nodes were counted here.
    return !countsReady && placeContiguous(job, s, out);
  }
  std::uint64_t usable = out.size();
  for (std::uint32_t c : s.leafAvail) usable += c;
  const std::uint32_t target = targetNodes(job, usable);
  if (usable < target) return false;
  const auto need = static_cast<std::uint32_t>(target - std::min<std::size_t>(target, out.size()));
  if (need == 1 && out.empty() && !countsReady && !topo.isBlock()) {
    auto best = std::min_element(
        s.fitting.begin(), s.fitting.end(), [&](const PackKey& a, const PackKey& b) {
          return singleRank(topo, job, s.leafAvail, a) < singleRank(topo, job, s.leafAvail, b);
        });
    out.push_back(best->node);
    return true;
  }
  s.takes.clear();
  // A block topology checks required nodes even when they make the whole job.
  if ((need > 0 || topo.isBlock()) && !chooser.choose(s.leafAvail, need, s.requiredLeaves, s.takes,
                                                      static_cast<std::uint32_t>(out.size()))) {
    return false;
  }
  if (!withinSwitchLimit(topo, job, s) || !pickFromLeaves(state, job, s, countsReady, fit, out)) {
    return false;
  }
  sortRankOrder(topo, out);
  return true;
}

// Main-pass placement against free capacity now, using the capacity index for plain jobs.
class Placer {
 public:
  Placer(ClusterState& state, CapacityIndex& index);
  // Where the job would go now (nothing changes); false if it cannot start now.
  bool placeNow(const JobView& job, std::vector<NodeIndex>& out);
  // Takes the nodes: free capacity and the index follow.
  void commit(const JobView& job, std::span<const NodeIndex> nodes);
  // Places against other free capacity (preemption's what-if): `free` replaces the state's.
  bool placeWith(const JobView& job, std::span<const NodeFree> free, std::vector<NodeIndex>& out);

  CapacityIndex& index() { return index_; }

 private:
  bool placeSingle(const JobView& job, std::vector<NodeIndex>& out);
  bool bestInLeaf(const JobView& job, std::uint32_t leaf, std::int64_t bucket, NodeIndex& best);

  ClusterState& state_;
  CapacityIndex& index_;
  LeafChooser chooser_;
  PlacementScratch scratch_;
  std::vector<std::uint32_t> leafOrder_;
};

}  // namespace kubeslurm::core

// Slurm's priority/multifactor plugin (doc/html/priority_multifactor.shtml, 22.05):
//
//   priority = wAge * age + wFairshare * fairshare + wJobSize * jobsize + wPartition * partition
//            + wQOS * qos + sum(wTRES_i * tres_i) - nice
//
// every factor in [0, 1], the sum truncated to an integer (and at least 1; 0 means held).
//   age       = min(time eligible, PriorityMaxAge) / PriorityMaxAge
//   jobsize   = (nodes / cluster nodes + CPUs / cluster CPUs) / 2   (PriorityFavorSmall: 1 - each)
//   partition = PriorityJobFactor / the largest PriorityJobFactor of any partition
//   qos       = QOS Priority / the largest QOS Priority
//   tres_gpu  = GPUs requested / GPUs in the job's partition
//   fairshare = Fair Tree rank / user associations, or classic 2^(-EffectvUsage / NormShares)
//
// The reference cluster's sprio (reference/slurm-22.05.md) is reproduced by the unit tests.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kubeslurm/core/model.h"

namespace kubeslurm::core {

// The association tree of Snapshot::accounts, with fair-share computed.
class FairShareTree {
 public:
  FairShareTree(std::span<const Account> accounts, bool fairTree);

  // The association a job is charged to: (account, user) if that user association exists, else
  // the account. nullopt for an unknown account.
  std::optional<std::uint32_t> associationOf(std::string_view account, std::string_view user) const;
  double factor(std::uint32_t association) const { return factor_[association]; }
  std::size_t size() const { return factor_.size(); }
  bool empty() const { return factor_.empty(); }
  // The tree walked upward for Grp* limits: an association's record (nullptr for a synthetic
  // root) and its parent (nullopt at the root).
  const Account* accountOf(std::uint32_t association) const { return assoc_[association].account; }
  std::optional<std::uint32_t> parentOf(std::uint32_t association) const {
    return association == root_ ? std::nullopt : std::optional(assoc_[association].parent);
  }
  // sshare's rows: the tree depth-first from the root, users before sub-accounts, by name.
  std::vector<FairShareRow> rows() const;

 private:
  struct Assoc {
    const Account* account = nullptr;  // nullptr for a synthetic root
    std::uint32_t parent = 0;          // the root is its own parent
    std::vector<std::uint32_t> children;
    double totalUsage = 0;          // own + descendants
    std::uint64_t levelShares = 0;  // shares of it and its siblings
    double normShares = 0;
    double effectiveUsage = 0;
    double levelFairShare = 0;  // Fair Tree's S / U
  };
  void link(std::span<const Account> accounts);
  void sumUsage(std::uint32_t a);
  void computeClassic(std::uint32_t a);
  void computeFairTree();
  void rankFairTree(std::vector<std::uint32_t> siblings, bool parentTied, std::uint32_t& rank,
                    std::uint32_t& remaining);
  bool isUser(std::uint32_t a) const { return assoc_[a].children.empty(); }
  double shareOf(std::uint32_t a) const;
  void appendRows(std::uint32_t a, std::uint32_t depth, std::vector<FairShareRow>& out) const;
  std::vector<std::uint32_t> sortedChildren(std::uint32_t a) const;

  bool fairTree_;
  std::uint32_t root_ = 0;
  std::vector<Assoc> assoc_;
  std::vector<double> factor_;
  std::unordered_map<std::string_view, std::uint32_t> accountByName_;
  std::unordered_map<std::string, std::uint32_t> userAssoc_;  // "account\0user"
};

// Cluster-wide inputs of the factors, computed once per cycle.
struct PriorityContext {
  const PriorityConfig* config = nullptr;
  std::uint64_t clusterNodes = 0;
  std::uint64_t clusterCpuMillis = 0;
  std::uint32_t maxPartitionFactor = 0;
  std::uint32_t maxQosPriority = 0;
};

// What a job's factors are computed from besides the job itself.
struct PriorityInputs {
  const Partition* partition = nullptr;
  std::uint64_t partitionGpus = 0;  // the GPU count of the job's partition
  double fairShare = 0;             // the factor of its association (0 without accounting)
  std::uint32_t qosPriority = 0;    // its QOS's Priority
  bool accruing = true;  // whether its age counts (not while held, dependent or before --begin)
};

// The weighted factors and the total, as sprio shows them.
PriorityFactors computePriority(const Job& job, const PriorityInputs& inputs,
                                const PriorityContext& context, Time now);

}  // namespace kubeslurm::core

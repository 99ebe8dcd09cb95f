#include "kubeslurm/core/priority.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace kubeslurm::core {

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr double kInfinite = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kMillisPerCpu = 1000;

std::string userKey(std::string_view account, std::string_view user) {
  std::string key;
  key.reserve(account.size() + 1 + user.size());
  key.append(account).push_back('\0');
  key.append(user);
  return key;
}

}  // namespace

FairShareTree::FairShareTree(std::span<const Account> accounts, bool fairTree)
    : fairTree_(fairTree) {
  if (accounts.empty()) return;
  link(accounts);
  sumUsage(root_);
  for (std::uint32_t a = 0; a < assoc_.size(); ++a) {
    if (a == root_) continue;
    for (std::uint32_t sibling : assoc_[assoc_[a].parent].children) {
      if (assoc_[sibling].account != nullptr)
        assoc_[a].levelShares += assoc_[sibling].account->shares;
    }
  }
  factor_.assign(assoc_.size(), 0.0);
  if (fairTree_) {
    computeFairTree();
  } else {
    computeClassic(root_);
  }
}

double FairShareTree::shareOf(std::uint32_t a) const {
  return assoc_[a].account != nullptr ? static_cast<double>(assoc_[a].account->shares) : 0.0;
}

// Parents by name: a user association hangs under its account, an account under `parent`. Every
// association without a resolvable parent (and any caught in a cycle) hangs under the root: the
// single parentless account when there is exactly one, else a synthetic root.
void FairShareTree::link(std::span<const Account> accounts) {
  const auto n = static_cast<std::uint32_t>(accounts.size());
  assoc_.resize(n);
  for (std::uint32_t a = 0; a < n; ++a) {
    assoc_[a].account = &accounts[a];
    if (accounts[a].user.empty()) {
      accountByName_.emplace(accounts[a].name, a);
    } else {
      userAssoc_.emplace(userKey(accounts[a].name, accounts[a].user), a);
    }
  }
  std::vector<std::uint32_t> parentless;
  for (std::uint32_t a = 0; a < n; ++a) {
    const Account& acc = accounts[a];
    const std::string_view parentName =
        acc.user.empty() ? std::string_view(acc.parent) : std::string_view(acc.name);
    auto it = parentName.empty() ? accountByName_.end() : accountByName_.find(parentName);
    assoc_[a].parent = (it == accountByName_.end() || it->second == a) ? kNone : it->second;
  }
  // Break cycles: a chain that does not end within n steps is cut at its start.
  for (std::uint32_t a = 0; a < n; ++a) {
    std::uint32_t cur = a;
    std::uint32_t steps = 0;
    while (cur != kNone && steps <= n) {
      cur = assoc_[cur].parent;
      ++steps;
    }
    if (cur != kNone) assoc_[a].parent = kNone;
  }
  for (std::uint32_t a = 0; a < n; ++a) {
    if (assoc_[a].parent == kNone) parentless.push_back(a);
  }
  if (parentless.size() == 1 && accounts[parentless[0]].user.empty()) {
    root_ = parentless[0];
  } else {
    root_ = n;
    assoc_.emplace_back();
  }
  assoc_[root_].parent = root_;
  for (std::uint32_t a = 0; a < n; ++a) {
    if (a == root_) continue;
    if (assoc_[a].parent == kNone) assoc_[a].parent = root_;
    assoc_[assoc_[a].parent].children.push_back(a);
  }
}

void FairShareTree::sumUsage(std::uint32_t a) {
  Assoc& node = assoc_[a];
  node.totalUsage = node.account != nullptr ? std::max(node.account->rawUsage, 0.0) : 0.0;
  for (std::uint32_t c : node.children) {
    sumUsage(c);
    node.totalUsage += assoc_[c].totalUsage;
  }
}

// Classic fair-share (priority_multifactor.c _set_usage_efctv, assoc_mgr's traditional shares):
//   NormShares   = product, from the root down, of shares / shares of it and its siblings
//   UsageNorm    = usage / the root's usage
//   EffectvUsage = UsageNorm for children of the root, else
//                  UsageNorm + (parent's EffectvUsage - UsageNorm) * shares / sibling shares
//   factor       = 2^(-EffectvUsage / NormShares)
void FairShareTree::computeClassic(std::uint32_t a) {
  Assoc& node = assoc_[a];
  const double rootUsage = assoc_[root_].totalUsage;
  const double norm = rootUsage > 0 ? std::min(node.totalUsage / rootUsage, 1.0) : 0.0;
  if (a == root_) {
    node.normShares = 1.0;
    node.effectiveUsage = norm;
  } else {
    const Assoc& parent = assoc_[node.parent];
    const double ratio =
        node.levelShares > 0 ? shareOf(a) / static_cast<double>(node.levelShares) : 0.0;
    node.normShares = (node.parent == root_ ? 1.0 : parent.normShares) * ratio;
    if (node.parent == root_) {
      node.effectiveUsage = norm;
    } else if (node.levelShares == 0) {
      node.effectiveUsage = parent.effectiveUsage;
    } else {
      node.effectiveUsage = norm + (parent.effectiveUsage - norm) * ratio;
    }
    factor_[a] = node.normShares > 0 ? std::exp2(-(node.effectiveUsage / node.normShares)) : 0.0;
  }
  for (std::uint32_t c : node.children) computeClassic(c);
}

// Fair Tree (doc/html/fair_tree.shtml, fair_tree.c): at every level, S = shares / sibling shares
// and U = usage / parent's usage give LevelFS = S / U (infinite for no usage, 0 for no shares).
// Siblings are visited in LevelFS order, users before accounts on ties, accounts recursively;
// each user takes the next rank (counting down from the number of users) unless it ties with
// the one before, and its factor is rank / users.
void FairShareTree::computeFairTree() {
  for (std::uint32_t a = 0; a < assoc_.size(); ++a) {
    Assoc& node = assoc_[a];
    if (a == root_) {
      node.normShares = 0.0;
      node.effectiveUsage = node.totalUsage > 0 ? 1.0 : 0.0;
      continue;
    }
    const double parentUsage = assoc_[node.parent].totalUsage;
    node.normShares =
        node.levelShares > 0 ? shareOf(a) / static_cast<double>(node.levelShares) : 0.0;
    node.effectiveUsage = parentUsage > 0 ? node.totalUsage / parentUsage : 0.0;
    if (node.normShares == 0.0) {
      node.levelFairShare = 0.0;
    } else {
      node.levelFairShare =
          node.effectiveUsage == 0.0 ? kInfinite : node.normShares / node.effectiveUsage;
    }
  }
  std::uint32_t users = 0;
  for (std::uint32_t a = 0; a < assoc_.size(); ++a) {
    if (a != root_ && isUser(a)) ++users;
  }
  if (users == 0) return;
  std::uint32_t rank = users;
  std::uint32_t remaining = users;
  rankFairTree(sortedChildren(root_), false, rank, remaining);
  for (std::uint32_t a = 0; a < assoc_.size(); ++a) {
    if (a != root_ && isUser(a)) factor_[a] /= static_cast<double>(users);
  }
}

void FairShareTree::rankFairTree(std::vector<std::uint32_t> siblings, bool parentTied,
                                 std::uint32_t& rank, std::uint32_t& remaining) {
  std::stable_sort(siblings.begin(), siblings.end(), [&](std::uint32_t x, std::uint32_t y) {
    const double fx = assoc_[x].levelFairShare;
    const double fy = assoc_[y].levelFairShare;
    if (fx != fy) return fx > fy;
    return isUser(x) && !isUser(y);
  });
  double previous = -1.0;
  for (std::size_t i = 0; i < siblings.size(); ++i) {
    const std::uint32_t a = siblings[i];
    const bool tied = i == 0 ? parentTied : previous == assoc_[a].levelFairShare;
    if (isUser(a)) {
      if (!tied) rank = remaining;
      factor_[a] = rank;  // divided by the user count at the end
      --remaining;
    } else {
      // Slurm 22.05 does not merge tied accounts (its _count_tied_accounts stops at the first
      // account), but the first child of a tied account inherits the tie.
      rankFairTree(sortedChildren(a), tied, rank, remaining);
    }
    previous = assoc_[a].levelFairShare;
  }
}

std::vector<std::uint32_t> FairShareTree::sortedChildren(std::uint32_t a) const {
  std::vector<std::uint32_t> out = assoc_[a].children;
  auto key = [&](std::uint32_t x) {
    const Account* acc = assoc_[x].account;
    if (acc == nullptr) return std::make_pair(true, std::string_view("root"));
    const bool user = !acc->user.empty();
    return std::make_pair(!user, std::string_view(user ? acc->user : acc->name));
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return key(x) < key(y); });
  return out;
}

std::optional<std::uint32_t> FairShareTree::associationOf(std::string_view account,
                                                          std::string_view user) const {
  if (!userAssoc_.empty()) {
    auto it = userAssoc_.find(userKey(account, user));
    if (it != userAssoc_.end()) return it->second;
  }
  auto it = accountByName_.find(account);
  if (it == accountByName_.end()) return std::nullopt;
  return it->second;
}

std::vector<FairShareRow> FairShareTree::rows() const {
  std::vector<FairShareRow> out;
  if (!assoc_.empty()) appendRows(root_, 0, out);
  return out;
}

void FairShareTree::appendRows(std::uint32_t a, std::uint32_t depth,
                               std::vector<FairShareRow>& out) const {
  const Assoc& node = assoc_[a];
  FairShareRow& row = out.emplace_back();  // filled before the recursion can reallocate `out`
  if (node.account != nullptr) {
    row.account = node.account->name;
    row.user = node.account->user;
    row.parent = node.account->user.empty() ? node.account->parent : node.account->name;
    row.rawShares = node.account->shares;
  } else {
    row.account = "root";
  }
  row.depth = depth;
  row.normShares = node.normShares;
  row.rawUsage = node.totalUsage;
  row.effectiveUsage = node.effectiveUsage;
  row.fairShare = factor_[a];
  for (std::uint32_t c : sortedChildren(a)) appendRows(c, depth + 1, out);
}

PriorityFactors computePriority(const Job& job, const PriorityInputs& inputs,
                                const PriorityContext& context, Time now) {
  PriorityFactors f;
  if (job.adminPriority) {  // a priority set by an administrator replaces the formula
    f.priority = *job.adminPriority;
    return f;
  }
  const PriorityConfig& c = *context.config;
  if (inputs.accruing && c.maxAge > 0) {
    const Time since =
        std::max(job.eligibleTime != 0 ? job.eligibleTime : job.submitTime, job.beginTime);
    const Duration waited = now > since ? now - since : 0;
    const double age =
        waited >= c.maxAge ? 1.0 : static_cast<double>(waited) / static_cast<double>(c.maxAge);
    f.age = age * c.weightAge;
  }
  f.fairshare = inputs.fairShare * c.weightFairshare;
  if (context.clusterNodes > 0) {
    const double nodes = static_cast<double>(std::max<std::uint32_t>(job.minNodes, 1));
    const double perNodeCpu = static_cast<double>(
        std::max(job.cpuMillisPerNode, std::uint64_t{job.tasksPerNode} * kMillisPerCpu));
    const auto clusterNodes = static_cast<double>(context.clusterNodes);
    const auto clusterCpu = static_cast<double>(context.clusterCpuMillis);
    double size = c.favorSmall ? (clusterNodes - nodes) / clusterNodes : nodes / clusterNodes;
    if (clusterCpu > 0) {
      const double cpu = perNodeCpu * nodes;
      size += c.favorSmall ? (clusterCpu - cpu) / clusterCpu : cpu / clusterCpu;
      size /= 2;
    }
    f.jobSize = std::clamp(size, 0.0, 1.0) * c.weightJobSize;
  }
  if (inputs.partition != nullptr && context.maxPartitionFactor > 0) {
    f.partition = static_cast<double>(inputs.partition->priorityJobFactor) /
                  static_cast<double>(context.maxPartitionFactor) * c.weightPartition;
  }
  if (context.maxQosPriority > 0) {
    f.qos = static_cast<double>(inputs.qosPriority) / static_cast<double>(context.maxQosPriority) *
            c.weightQos;
  }
  if (inputs.partitionGpus > 0) {
    const double gpus =
        static_cast<double>(job.gpusPerNode) * std::max<std::uint32_t>(job.minNodes, 1);
    f.tresGpu = gpus / static_cast<double>(inputs.partitionGpus) * c.weightTresGpu;
  }
  f.nice = job.nice;
  const double total = f.age + f.fairshare + f.jobSize + f.partition + f.qos + f.tresGpu -
                       static_cast<double>(job.nice);
  // Slurm truncates the sum to an integer, keeps it at least 1 (0 means held), at most 2^32 - 1.
  f.priority = static_cast<std::uint32_t>(std::clamp(total, 1.0, 4294967295.0));
  return f;
}

}  // namespace kubeslurm::core

#include "controllers/snapshot.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controllers/arrays.h"
#include "controllers/job_object.h"
#include "controllers/job_request.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "kubeslurm/slurm/hostlist.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/topology_conf.h"

namespace kubeslurm::controllers {

namespace {

std::uint64_t nonNegative(const StatusOr<std::int64_t>& value) {
  return value.isOk() && *value > 0 ? static_cast<std::uint64_t>(*value) : 0;
}

// Allocatable as the scheduler's NodeInfo reads it: whole GPUs, cpu in millis, memory in bytes.
// A quantity that does not parse offers nothing rather than a guess.
core::Resources allocatableOf(const api::ResourceList& list) {
  core::Resources r;
  auto find = [&list](std::string_view name) -> const std::string* {
    auto it = list.find(std::string(name));
    return it == list.end() ? nullptr : &it->second;
  };
  if (const std::string* gpu = find(podspec::kGpuResource)) {
    r.gpus = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(nonNegative(api::parseQuantityValue(*gpu)), UINT32_MAX));
  }
  if (const std::string* cpu = find("cpu"))
    r.cpuMillis = nonNegative(api::parseQuantityMilli(*cpu));
  if (const std::string* mem = find("memory")) {
    r.memoryBytes = nonNegative(api::parseQuantityValue(*mem));
  }
  return r;
}

// The pod's requests as the scheduler's fit plugin adds them up (podRequest: containers, init
// containers, overhead).
core::Resources requestOf(const api::Pod& pod) {
  core::Resources r;
  r.gpus = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      nonNegative(api::podRequest(pod, podspec::kGpuResource)), UINT32_MAX));
  r.cpuMillis = nonNegative(api::podRequestMilli(pod, "cpu"));
  r.memoryBytes = nonNegative(api::podRequest(pod, "memory"));
  return r;
}

void add(core::Resources& into, const core::Resources& more) {
  into.gpus += more.gpus;
  into.cpuMillis += more.cpuMillis;
  into.memoryBytes += more.memoryBytes;
}

core::NodeState nodeState(const api::Node& node) {
  // A node whose kubelet stopped reporting is down whatever its cordon says; a cordoned Ready
  // node is DRAIN (scontrol update state=drain), which the core keeps running jobs on.
  if (api::nodeReadyStatus(node) != "True") return core::NodeState::kNotReady;
  if (node.unschedulable) return core::NodeState::kDrain;
  return core::NodeState::kUp;
}

std::vector<std::string> splitCommaList(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

// The node as the core reads it. Its labels are left to buildTopology, which keeps only the
// levels of the tree: a kubelet's node carries twenty-odd labels, and copying them all into
// every cycle's snapshot was a third of the time the nodes took, for labels nothing read.
core::Node coreNode(const api::Node& node) {
  core::Node out;
  out.name = node.metadata.name;
  out.allocatable = allocatableOf(node.allocatable);
  for (const api::Taint& taint : node.taints) {
    out.taints.push_back(core::Taint{taint.key, taint.value, taint.effect});
  }
  out.state = nodeState(node);
  out.features = nodeFeatures(node);
  return out;
}

core::PreemptMode preemptMode(std::string_view text) {
  if (equalsIgnoreCase(text, "REQUEUE")) return core::PreemptMode::kRequeue;
  if (equalsIgnoreCase(text, "CANCEL")) return core::PreemptMode::kCancel;
  return core::PreemptMode::kOff;
}

core::PartitionState partitionState(std::string_view text) {
  if (equalsIgnoreCase(text, "DOWN")) return core::PartitionState::kDown;
  if (equalsIgnoreCase(text, "DRAIN")) return core::PartitionState::kDrain;
  if (equalsIgnoreCase(text, "INACTIVE")) return core::PartitionState::kInactive;
  return core::PartitionState::kUp;
}

core::Duration durationSeconds(const slurm::TimeLimit& limit) {
  return limit.seconds.value_or(core::kUnlimited);
}

// The Account CRD's limits as the core enforces them. The TRES a GPU scheduler tracks are limited:
// "gres/gpu" and "node" (MaxNodes= is MaxTRES=node; the smaller wins when both are set).
core::AssociationLimits associationLimits(const api::AccountLimits& limits) {
  auto count = [](std::optional<std::int32_t> v) -> std::optional<std::uint32_t> {
    if (!v) return std::nullopt;
    return static_cast<std::uint32_t>(std::max(*v, 0));
  };
  auto tres = [](const std::map<std::string, std::int64_t>& byName, core::TresLimit& out) {
    auto get = [&](const char* name) -> std::optional<std::uint64_t> {
      auto it = byName.find(name);
      if (it == byName.end()) return std::nullopt;
      return static_cast<std::uint64_t>(std::max<std::int64_t>(it->second, 0));
    };
    out.gpus = get("gres/gpu");
    out.nodes = get("node");
  };
  core::AssociationLimits out;
  out.grpJobs = count(limits.grpJobs);
  out.maxJobs = count(limits.maxJobs);
  tres(limits.grpTres, out.grpTres);
  tres(limits.maxTresPerJob, out.maxTresPerJob);
  if (const auto nodes = count(limits.maxNodesPerJob)) {
    out.maxTresPerJob.nodes =
        std::min<std::uint64_t>(out.maxTresPerJob.nodes.value_or(*nodes), *nodes);
  }
  if (limits.maxWallDurationPerJob) {
    const core::Duration wall = durationSeconds(limits.maxWallDurationPerJob->limit);
    if (wall < core::kUnlimited) out.maxWallPerJob = wall;
  }
  return out;
}

std::uint32_t positive(std::optional<std::int32_t> value, std::uint32_t fallback) {
  if (!value) return fallback;
  return *value < 0 ? 0 : static_cast<std::uint32_t>(*value);
}

// "N:M" (exit status : signal), as sacct prints ExitCode. The code is what afterok tests.
std::int32_t exitStatusOf(std::string_view text) {
  const std::size_t colon = text.find(':');
  return parseInteger<std::int32_t>(text.substr(0, colon)).value_or(0);
}

}  // namespace

std::vector<std::string> nodeFeatures(const api::Node& node) {
  std::vector<std::string> features;
  const auto& labels = node.metadata.labels;
  if (auto it = labels.find(std::string(kFeaturesLabel)); it != labels.end()) {
    features = splitCommaList(it->second);
  }
  const auto product = labels.find(std::string(kGpuProductLabel));
  if (product != labels.end() && !product->second.empty()) {
    if (std::find(features.begin(), features.end(), product->second) == features.end()) {
      features.push_back(product->second);
    }
  }
  const auto types = labels.find(std::string(kGpuTypeLabel));
  for (std::string& feature :
       gpuTypeFeatures(types == labels.end() ? std::string_view() : types->second,
                       product == labels.end() ? std::string_view() : product->second)) {
    features.push_back(std::move(feature));
  }
  return features;
}

// The nodes translated, by the record's address. An entry holds its record, so no other record
// can have that address while the entry lives. A build stamps the entries it uses; those it did
// not use (the node changed or went away) are dropped at its end.
struct SnapshotMemo::Nodes {
  struct Entry {
    std::shared_ptr<const api::Node> record;
    core::Node node;
    std::uint64_t build = 0;
  };
  std::unordered_map<const api::Node*, Entry> entries;
  // The list the last build read and the order it sorted it into: the same records in the same
  // places sort the same way, without 60,000 natural-order comparisons at 5,000 nodes. Held, so
  // that no other record can take one of their addresses while they are compared.
  std::vector<std::shared_ptr<const api::Node>> listed;
  std::vector<std::size_t> order;
  std::uint64_t build = 0;
  std::size_t used = 0;  // entries this build found or added
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;

  void startBuild() {
    ++build;
    used = 0;
    hits = 0;
    misses = 0;
  }
  const core::Node* find(const api::Node* record) {
    auto it = entries.find(record);
    if (it == entries.end()) {
      ++misses;
      return nullptr;
    }
    ++hits;
    if (it->second.build != build) ++used;
    it->second.build = build;
    return &it->second.node;
  }
  const core::Node& add(std::shared_ptr<const api::Node> record, core::Node node) {
    const api::Node* key = record.get();
    ++used;
    return entries.insert_or_assign(key, Entry{std::move(record), std::move(node), build})
        .first->second.node;
  }
  // A build that used every entry (nothing changed) skips the sweep, which visits them all.
  void endBuild() {
    if (used < entries.size()) {
      std::erase_if(entries, [this](const auto& entry) { return entry.second.build != build; });
    }
  }
};

JobKeys::JobKeys(std::initializer_list<value_type> keys) : keys_(keys) {
  std::ranges::stable_sort(keys_, {}, &value_type::first);
  // std::unique, not std::ranges::unique: clang 14 (the fuzz build) cannot use the subrange the
  // latter returns with libstdc++ 12.
  keys_.erase(
      std::unique(keys_.begin(), keys_.end(),
                  [](const value_type& a, const value_type& b) { return a.first == b.first; }),
      keys_.end());
}

JobKeys::const_iterator JobKeys::find(core::JobId id) const {
  const auto it = std::ranges::lower_bound(keys_, id, {}, &value_type::first);
  return it != keys_.end() && it->first == id ? it : keys_.end();
}

const std::string& JobKeys::at(core::JobId id) const {
  const auto it = find(id);
  if (it == end()) throw std::out_of_range("JobKeys::at: no job " + std::to_string(id));
  return it->second;
}

void JobKeys::append(core::JobId id, std::string key) { keys_.emplace_back(id, std::move(key)); }

void JobKeys::erase(const std::vector<core::JobId>& ids) {
  std::erase_if(
      keys_, [&ids](const value_type& key) { return std::ranges::binary_search(ids, key.first); });
}

SnapshotMemo::SnapshotMemo() : nodes_(std::make_unique<Nodes>()) {}
SnapshotMemo::~SnapshotMemo() = default;
std::uint64_t SnapshotMemo::lastHits() const { return nodes_->hits; }
std::uint64_t SnapshotMemo::lastMisses() const { return nodes_->misses; }

namespace {

// The walk by id visits 50,000 records of 2 KB each, scattered over the heap in the order the
// informer decoded them: each record's first touch stalled on memory for most of the walk's time.
// Asking for the record a few steps ahead overlaps those stalls (at 5,000 nodes and 50,000 jobs
// the build went from ~70 ms to ~60: operator_cache_bench).
constexpr std::size_t kPrefetchAhead = 8;
constexpr std::size_t kCacheLine = 64;

void prefetchRecord(const api::SlurmJobObject* record) {
  const auto* bytes = reinterpret_cast<const char*>(record);  // NOLINT: addresses, not access
  for (std::size_t offset = 0; offset < sizeof(api::SlurmJobObject); offset += kCacheLine) {
    __builtin_prefetch(bytes + offset);
  }
}

class Builder {
 public:
  Builder(const ClusterObjects& objects, const SnapshotOptions& options, core::Time now,
          const JobHolds& holds, SnapshotMemo* memo)
      : objects_(objects),
        options_(options),
        now_(now),
        holds_(holds),
        memo_(memo != nullptr ? &memo->nodes() : nullptr) {}

  SnapshotIndex build() {
    out_.snapshot.config = options_.config;
    if (memo_ != nullptr) memo_->startBuild();
    buildNodes();
    buildPartitions();
    buildTopology();
    buildAccounts();
    indexPods();
    buildJobs();
    enforceSubmitLimits();
    chargeForeignPods();
    if (memo_ != nullptr) memo_->endBuild();
    return std::move(out_);
  }

 private:
  // The node at `at` in ClusterObjects::nodes as the core reads it: copied from the memo when
  // the build before translated this record.
  core::Node translatedNode(std::size_t at) {
    const api::Node& node = objects_.nodes[at];
    if (memo_ == nullptr) return coreNode(node);
    if (const core::Node* seen = memo_->find(&node)) return *seen;
    return memo_->add(objects_.nodes.shared(at), coreNode(node));
  }

  // ClusterObjects::nodes by name, in natural order ("gpu-2" before "gpu-10").
  std::vector<std::size_t> nodesByName() {
    const auto& list = objects_.nodes;
    if (memo_ != nullptr && memo_->listed.size() == list.size() &&
        std::ranges::equal(memo_->listed, list, [](const auto& held, const api::Node& node) {
          return held.get() == &node;
        })) {
      return memo_->order;
    }
    std::vector<std::size_t> nodes(list.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i] = i;
    std::sort(nodes.begin(), nodes.end(), [&list](std::size_t a, std::size_t b) {
      return slurm::naturalCompare(list[a].metadata.name, list[b].metadata.name) < 0;
    });
    if (memo_ != nullptr) {
      memo_->listed.clear();
      memo_->listed.reserve(list.size());
      for (std::size_t i = 0; i < list.size(); ++i) memo_->listed.push_back(list.shared(i));
      memo_->order = nodes;
    }
    return nodes;
  }

  void buildNodes() {
    const std::vector<std::size_t> nodes = nodesByName();
    out_.snapshot.nodes.reserve(nodes.size());
    out_.nodeNames.reserve(nodes.size());
    nodeIndex_.reserve(nodes.size());
    for (const std::size_t at : nodes) {
      const api::Node& node = objects_.nodes[at];
      const auto index = static_cast<core::NodeIndex>(out_.snapshot.nodes.size());
      if (!nodeIndex_.emplace(node.metadata.name, index).second) continue;
      out_.snapshot.nodes.push_back(translatedNode(at));
      out_.nodeNames.push_back(node.metadata.name);
      nodeObjects_.push_back(&node);
    }
  }

  void partitionProblem(const api::Partition& partition, std::string reason, std::string message) {
    out_.partitionProblems.push_back(
        JobProblem{partition.metadata.name, std::move(reason), std::move(message)});
  }

  void buildPartitions() {
    for (const api::Partition* p : sortedPartitions()) {
      const api::PartitionSpec& spec = p->spec;
      core::Partition part;
      part.name = p->metadata.name;
      std::optional<std::set<std::string>> listed;
      if (!spec.nodes.empty()) {
        auto hosts = slurm::expandHostlist(spec.nodes);
        if (hosts.isOk()) {
          listed.emplace(hosts->begin(), hosts->end());
        } else {
          // A partition whose Nodes= does not parse gets no nodes: slurmctld refuses such a
          // slurm.conf outright, and guessing members could run jobs where they do not belong.
          partitionProblem(*p, "InvalidNodes",
                           "spec.nodes: " + std::string(hosts.status().message()));
          listed.emplace();
        }
      }
      for (core::NodeIndex i = 0; i < out_.snapshot.nodes.size(); ++i) {
        const core::Node& node = out_.snapshot.nodes[i];
        // Nodes= and a selector together: a member must match both (the CRD's contract).
        if (listed && listed->count(node.name) == 0) continue;
        if (spec.nodeSelector &&
            !api::labelSelectorMatches(*spec.nodeSelector, nodeObjects_[i]->metadata.labels)) {
          continue;
        }
        if (!listed && !spec.nodeSelector) continue;  // a partition names its nodes
        part.nodes.push_back(i);
      }
      part.isDefault = spec.isDefault;
      part.maxTime = durationSeconds(api::partitionMaxTime(spec));
      if (spec.defaultTime) part.defaultTime = durationSeconds(spec.defaultTime->limit);
      part.priorityTier = positive(spec.priorityTier, 1);
      part.priorityJobFactor = positive(spec.priorityJobFactor, 1);
      part.preemptMode = preemptMode(spec.preemptMode);
      if (spec.maxNodesPerJob) part.maxNodesPerJob = positive(spec.maxNodesPerJob, 0);
      const api::PartitionMemory memory = api::partitionMemory(spec);
      if (memory.maxPerNode > 0) part.maxMemoryBytesPerNode = memory.maxPerNode << 20;
      // slurmctld reads such a slurm.conf, logs this and keeps the per-node figure.
      if (memory.bothDefaults) {
        partitionProblem(*p, "InvalidMemory",
                         "DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode");
      }
      if (memory.bothLimits) {
        partitionProblem(*p, "InvalidMemory",
                         "MaxMemPerCPU ignored, since it's mutually exclusive with MaxMemPerNode");
      }
      part.allowedAccounts = spec.allowedAccounts;
      part.tolerations = partitionTolerations(*p);
      part.state = partitionState(spec.state);
      if (std::string bad = podspec::allowedMountsProblem(spec.allowedMounts); !bad.empty()) {
        partitionProblem(*p, "InvalidAllowedMounts", std::move(bad));
      }
      out_.snapshot.partitions.push_back(std::move(part));
    }
  }

  void buildTopology() {
    chooseTopology();
    // What of the nodes' labels the snapshot keeps: the tree's levels (core/topology.h reads
    // them, and admission's SLURM_TOPOLOGY_ADDR).
    const std::vector<std::string>& levels = out_.snapshot.topologyLabels;
    if (levels.empty()) return;
    for (core::NodeIndex i = 0; i < out_.snapshot.nodes.size(); ++i) {
      const auto& labels = nodeObjects_[i]->metadata.labels;
      for (const std::string& level : levels) {
        if (auto it = labels.find(level); it != labels.end()) {
          out_.snapshot.nodes[i].labels.emplace(it->first, it->second);
        }
      }
    }
  }

  void chooseTopology() {
    // The snapshot has one tree, as slurm.conf has one topology.conf: the first partition (by
    // name) that describes one gives it.
    for (const api::Partition* p : sortedPartitions()) {
      if (!p->spec.topology) continue;
      const api::PartitionTopology& topology = *p->spec.topology;
      if (!topology.conf.empty()) {
        auto conf = slurm::parseTopologyConf(topology.conf);
        if (!conf.isOk()) {
          partitionProblem(*p, "InvalidTopology", std::string(conf.status().message()));
          continue;
        }
        out_.snapshot.topology = std::move(conf).value();
        return;
      }
      if (!topology.labelKeys.empty()) {
        // The CRD lists levels outermost first; the core wants the leaf first.
        out_.snapshot.topologyLabels.assign(topology.labelKeys.rbegin(), topology.labelKeys.rend());
        return;
      }
    }
    bool leaf = false;
    bool spine = false;
    for (const api::Node* node : nodeObjects_) {
      leaf = leaf || node->metadata.labels.contains(std::string(kLeafLabel));
      spine = spine || node->metadata.labels.contains(std::string(kSpineLabel));
    }
    if (leaf) out_.snapshot.topologyLabels.emplace_back(kLeafLabel);
    if (leaf && spine) out_.snapshot.topologyLabels.emplace_back(kSpineLabel);
  }

  std::vector<const api::Partition*> sortedPartitions() const {
    std::vector<const api::Partition*> sorted;
    sorted.reserve(objects_.partitions.size());
    for (const api::Partition& p : objects_.partitions) sorted.push_back(&p);
    std::sort(sorted.begin(), sorted.end(), [](const api::Partition* a, const api::Partition* b) {
      return a->metadata.name < b->metadata.name;
    });
    return sorted;
  }

  // A setting sacctmgr inherits down the tree (DefaultQOS, QOS, MaxSubmitJobs): the nearest
  // account from `name` up to root that sets it.
  template <typename Get>
  auto inherited(std::string name, Get get) const -> decltype(get(api::Account{})) {
    for (std::size_t depth = 0; depth <= accountByName_.size() && !name.empty(); ++depth) {
      auto it = accountByName_.find(name);
      if (it == accountByName_.end()) break;
      if (auto value = get(*it->second)) return value;
      const std::string& parent = it->second->spec.parent;
      name = parent.empty() && name != "root" ? "root" : parent;
    }
    return {};
  }

  void buildAccounts() {
    for (const api::Account& a : objects_.accounts) accountByName_.emplace(a.metadata.name, &a);
    // The CRD's empty parent means "child of root" (sacctmgr's tree always has root); without
    // an Account named root, the core's tree gets one so top-level accounts stay siblings.
    bool haveRoot = false;
    std::optional<core::Time> oldestDecay;
    for (const api::Account& a : objects_.accounts) {
      haveRoot = haveRoot || a.metadata.name == "root";
      if (a.status.lastDecay) {
        oldestDecay =
            oldestDecay ? std::min(*oldestDecay, *a.status.lastDecay) : *a.status.lastDecay;
      }
    }
    if (!objects_.accounts.empty() && !haveRoot) {
      out_.snapshot.accounts.push_back(core::Account{"root", "", 1, 0.0, ""});
    }
    std::vector<const api::Account*> accounts;
    for (const api::Account& a : objects_.accounts) accounts.push_back(&a);
    std::sort(accounts.begin(), accounts.end(), [](const api::Account* a, const api::Account* b) {
      return a->metadata.name < b->metadata.name;
    });
    for (const api::Account* a : accounts) {
      core::Account account;
      account.name = a->metadata.name;
      account.parent = a->spec.parent.empty() && account.name != "root" ? "root" : a->spec.parent;
      account.shares = static_cast<std::uint32_t>(std::max(api::accountShares(a->spec), 0));
      account.rawUsage = std::max(a->status.rawUsage.value_or(0.0), 0.0);
      if (a->spec.limits) account.limits = associationLimits(*a->spec.limits);
      out_.snapshot.accounts.push_back(std::move(account));
    }
    out_.snapshot.usageTime = oldestDecay.value_or(now_);
  }

  void indexPods() {
    for (const api::Pod& pod : objects_.pods) {
      if (!isRankPod(pod)) continue;
      podsByJob_[pod.metadata.namespaceName + "/" + podJobName(pod)].push_back(&pod);
    }
  }

  void problem(const std::string& key, std::string reason, std::string message) {
    out_.problems.push_back(JobProblem{key, std::move(reason), std::move(message)});
  }

  // Account spec.limits.maxSubmitJobs (MaxSubmitJobs=: pending plus running jobs per user,
  // inherited from the nearest account that sets it). Slurm refuses such a submission
  // (ESLURM_ACCOUNTING_POLICY); here the SlurmJob already exists, so the jobs past the limit, by
  // id, wait outside the plan with Slurm's reason and message until earlier ones end.
  void enforceSubmitLimits() {
    if (std::none_of(objects_.accounts.begin(), objects_.accounts.end(), [](const api::Account& a) {
          return a.spec.limits && a.spec.limits->maxSubmitJobs;
        })) {
      return;
    }
    auto limitOf = [&](const std::string& account) {
      return inherited(account, [](const api::Account& a) -> std::optional<std::int32_t> {
        if (!a.spec.limits || !a.spec.limits->maxSubmitJobs) return std::nullopt;
        return std::max(*a.spec.limits->maxSubmitJobs, 0);
      });
    };
    auto userKey = [](const core::Job& j) { return j.account + '\0' + j.user; };
    std::map<std::string, std::int64_t> live;
    for (const core::Job& j : out_.snapshot.jobs) {
      if (j.phase == core::JobPhase::kRunning) ++live[userKey(j)];
    }
    std::vector<core::Job> kept;
    kept.reserve(out_.snapshot.jobs.size());
    std::vector<core::JobId> overLimit;  // ascending, as the jobs are
    for (core::Job& j : out_.snapshot.jobs) {
      if (j.phase == core::JobPhase::kPending) {
        const auto limit = limitOf(j.account);
        std::int64_t& count = live[userKey(j)];
        if (limit && count >= *limit) {
          auto key = out_.jobKeys.find(j.id);
          if (key != out_.jobKeys.end()) {
            out_.problems.push_back(JobProblem{
                key->second,
                std::string(
                    slurm::pendingReasonName(slurm::PendingReason::kAssocMaxSubmitJobLimit)),
                "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
                "limits)"});
            overLimit.push_back(j.id);
          }
          out_.snapshot.unplanned.push_back({j.id, j.arrayJobId, j.arrayTaskId, false});
          continue;
        }
        ++count;
      }
      kept.push_back(std::move(j));
    }
    out_.snapshot.jobs = std::move(kept);
    out_.jobKeys.erase(overLimit);
  }

  // A job left out of the plan still exists: its dependants must keep waiting for it.
  void unplanned(const api::SlurmJobObject& job, core::JobId id, bool starting = false) {
    core::UnplannedJob u;
    u.id = id;
    u.starting = starting;
    if (job.status->arrayJobId && *job.status->arrayJobId > 0) {
      u.arrayJobId = static_cast<core::JobId>(*job.status->arrayJobId);
    }
    if (job.status->arrayTaskId && *job.status->arrayTaskId >= 0) {
      u.arrayTaskId = static_cast<std::uint32_t>(*job.status->arrayTaskId);
    }
    out_.snapshot.unplanned.push_back(u);
  }

  std::vector<const api::Pod*> currentAttempt(const api::SlurmJobObject& job,
                                              const std::string& key) const {
    std::vector<const api::Pod*> pods;
    auto it = podsByJob_.find(key);
    if (it == podsByJob_.end()) return pods;
    const auto attempt = static_cast<std::uint32_t>(job.status->restarts.value_or(0));
    for (const api::Pod* pod : it->second) {
      if (podspec::bookkeepingNumber(pod->metadata.labels, podspec::kAttemptLabel) == attempt)
        pods.push_back(pod);
    }
    return pods;
  }

  void buildJobs() {
    // (id, job): sorting the ids beside the pointers keeps 50,000 comparisons in cache.
    std::vector<std::pair<std::int64_t, const api::SlurmJobObject*>> jobs;
    jobs.reserve(objects_.jobs.size());
    // The arrays, and the tasks with ids of each (by namespace and array name): read once per
    // job, as a cycle with 100 pending arrays has tens of thousands of tasks.
    std::vector<const api::SlurmJobObject*> arrays;
    MadeTasks madeTasks;
    for (const api::SlurmJobObject& job : objects_.jobs) {
      if (!job.status || !job.status->jobId) continue;
      if (job.request.array) {
        std::optional<ArrayTaskRef> task = arrayTaskOf(job);
        // An array's own object is never scheduled: its tasks are (controllers/arrays.h).
        if (!task) {
          arrays.push_back(&job);
          continue;
        }
        madeTasks[{job.namespaceName, std::move(task->arrayName)}].push_back(task->taskId);
      }
      jobs.emplace_back(*job.status->jobId, &job);
    }
    if (!arrays.empty()) addUnmaterializedTasks(arrays, madeTasks);
    out_.snapshot.jobs.reserve(jobs.size());
    out_.jobKeys.reserve(jobs.size());
    // Oldest id first: of two objects claiming one id (which invariant 5 forbids) the one seen
    // first keeps it, whatever order the informer listed them in.
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return jobKey(*a.second) < jobKey(*b.second);
    });
    std::optional<std::int64_t> previous;  // sorted: a used id is the one just before
    for (std::size_t at = 0; at < jobs.size(); ++at) {
      if (at + kPrefetchAhead < jobs.size()) prefetchRecord(jobs[at + kPrefetchAhead].second);
      const auto& [rawId, job] = jobs[at];
      if (rawId <= 0) {
        problem(jobKey(*job), "InvalidJobId", "status.jobId must be positive");
        continue;
      }
      const auto id = static_cast<core::JobId>(rawId);
      if (previous == rawId) {
        problem(jobKey(*job), "DuplicateJobId",
                "job id " + std::to_string(id) + " is already used by another SlurmJob");
        continue;
      }
      previous = rawId;
      const std::string& stateText = job->status->state;
      const std::optional<slurm::JobState> state = stateText.empty()
                                                       ? std::optional(slurm::JobState::kPending)
                                                       : slurm::parseJobState(stateText);
      if (!state) {
        problem(jobKey(*job), "InvalidState",
                "unknown job state " + quoteForDiagnostic(stateText, 40));
        unplanned(*job, id);
        continue;
      }
      switch (*state) {
        case slurm::JobState::kPending:
        case slurm::JobState::kRequeued:
          addPending(*job, id, jobKey(*job));
          break;
        case slurm::JobState::kRunning:
          addRunning(*job, id, jobKey(*job));
          break;
        default:
          if (slurm::isFinished(*state)) addFinished(*job, id, *state);
          // Other states (COMPLETING, SUSPENDED...) hold their nodes through their pods, which
          // chargeForeignPods counts.
          break;
      }
    }
  }

  // Tasks of an array that have no job with an id yet (not made, being created, or waiting for
  // an id) are pending as far as a dependency on the array can tell: `afterok:<ArrayJobId>` must
  // not see a partly made array as the whole of it, nor a missing task as one that is gone.
  using MadeTasks = std::map<std::pair<std::string_view, std::string>, std::vector<std::uint32_t>>;
  void addUnmaterializedTasks(const std::vector<const api::SlurmJobObject*>& arrays,
                              MadeTasks& madeTasks) {
    for (const api::SlurmJobObject* array : arrays) {
      if (*array->status->jobId <= 0) continue;
      const auto arrayId = static_cast<core::JobId>(*array->status->jobId);
      std::vector<std::uint32_t>& made = madeTasks[{array->namespaceName, array->name}];
      std::ranges::sort(made);
      for (const std::uint32_t task : array->request.array->taskIds) {
        if (std::ranges::binary_search(made, task)) continue;
        core::UnplannedJob u;
        u.id = arrayId;
        u.arrayJobId = arrayId;
        u.arrayTaskId = task;
        out_.snapshot.unplanned.push_back(u);
      }
    }
  }

  // Account spec.defaultQos for a job that names none (else "normal", Slurm's default QOS), and
  // spec.allowedQos (sacctmgr QOS=, inherited): Slurm refuses a job of any other QOS with
  // ESLURM_INVALID_QOS, "Invalid qos specification".
  bool qosAllowed(core::Job& job) const {
    if (job.qos.empty()) {
      job.qos = inherited(job.account, [](const api::Account& a) -> std::optional<std::string> {
                  if (a.spec.defaultQos.empty()) return std::nullopt;
                  return a.spec.defaultQos;
                }).value_or("normal");
    }
    const auto allowed = inherited(
        job.account, [](const api::Account& a) -> std::optional<std::vector<std::string>> {
          if (a.spec.allowedQos.empty()) return std::nullopt;
          return a.spec.allowedQos;
        });
    return !allowed || std::find(allowed->begin(), allowed->end(), job.qos) != allowed->end();
  }

  std::string defaultAccount(const std::string& ns) const {
    return defaultAccountFor(objects_.accounts, ns);
  }

  std::string userOf(const api::SlurmJobObject& job) const {
    return job.user.empty() ? options_.defaultUser : job.user;
  }

  void setArray(const api::SlurmJobStatus& status, core::Job& job) const {
    if (status.arrayJobId && *status.arrayJobId > 0) {
      job.arrayJobId = static_cast<core::JobId>(*status.arrayJobId);
    }
    if (status.arrayTaskId && *status.arrayTaskId >= 0) {
      job.arrayTaskId = static_cast<std::uint32_t>(*status.arrayTaskId);
    }
    job.restarts =
        static_cast<std::uint32_t>(std::max<std::int64_t>(status.restarts.value_or(0), 0));
  }

  core::Time submitTimeOf(const api::SlurmJobObject& job) const {
    if (job.status->submitTime) return *job.status->submitTime;
    return jobMetadata(job).creationTimestamp.value_or(now_);
  }

  void addPending(const api::SlurmJobObject& job, core::JobId id, std::string key) {
    std::string message;
    std::vector<const api::Partition*> partitions =
        jobPartitions(job.request, objects_.partitions, &message);
    if (partitions.empty()) {
      problem(key, "InvalidPartition", message);
      unplanned(job, id);
      return;
    }
    // A gang of this attempt exists (being bound, or rolled back and not yet deleted): planning
    // the job again would make a second gang with the same pod names.
    if (!currentAttempt(job, key).empty()) {
      out_.gangsInFlight.insert(key);
      unplanned(job, id, /*starting=*/true);
      return;
    }
    // Held by the job controller: its pods cannot be made as written.
    if (const auto held = holds_.invalid.find(key); held != holds_.invalid.end()) {
      problem(key, held->second.reason, held->second.message);
      unplanned(job, id);
      return;
    }
    // Pyxis mounts a partition does not allow: the job could never start there, so it waits
    // outside the plan with the reason until its spec or the partition changes. A job that
    // names several partitions must be one each of them accepts (AdmissionHolds' rule).
    if (!job.request.container.mounts.empty()) {
      for (const api::Partition* partition : partitions) {
        auto mounts = containerMounts(job.request, *partition);
        if (!mounts.isOk()) {
          problem(key, "InvalidContainerMounts", std::string(mounts.status().message()));
          unplanned(job, id);
          return;
        }
      }
    }
    auto core = plannedJob(job.request, partitions, id, userOf(job), submitTimeOf(job),
                           objects_.nodes.size());
    if (!core.isOk()) {
      problem(key, "InvalidRequest", std::string(core.status().message()));
      unplanned(job, id);
      return;
    }
    // A failed admission's backoff: planned as a job that may not begin before then.
    if (const auto retry = holds_.retryAfter.find(key); retry != holds_.retryAfter.end()) {
      core->beginTime = std::max(core->beginTime, retry->second);
    }
    // A gang start timeout's backoff, which the job's status carries across leaders.
    if (job.status->retryStartAfter) {
      core->beginTime = std::max(core->beginTime, *job.status->retryStartAfter);
    }
    if (core->account.empty()) core->account = defaultAccount(job.namespaceName);
    if (!qosAllowed(*core)) {
      problem(key, std::string(slurm::pendingReasonName(slurm::PendingReason::kInvalidQOS)),
              "Invalid qos specification");
      unplanned(job, id);
      return;
    }
    setArray(*job.status, *core);
    core->phase = core::JobPhase::kPending;
    // buildJobs goes by ascending id: each key goes at the end.
    out_.jobKeys.append(id, std::move(key));
    out_.snapshot.jobs.push_back(std::move(core).value());
  }

  void addRunning(const api::SlurmJobObject& job, core::JobId id, std::string key) {
    // The allocation is where its ranks are bound: rank order, one node each. Ranks that
    // finished no longer hold their nodes.
    std::vector<std::pair<std::uint32_t, const api::Pod*>> ranks;
    std::vector<std::pair<std::uint32_t, const api::Pod*>> endedRanks;
    std::optional<core::Time> endTime;
    for (const api::Pod* pod : currentAttempt(job, key)) {
      const auto rank = podspec::bookkeepingNumber(pod->metadata.labels, podspec::kRankLabel);
      if (!rank || pod->spec.nodeName.empty()) continue;
      if (!nodeIndex_.contains(pod->spec.nodeName)) continue;
      if (!api::podIsTerminal(*pod)) {
        ranks.emplace_back(*rank, pod);
        continue;
      }
      endedRanks.emplace_back(*rank, pod);
      for (const api::ContainerStatus& c : pod->status.containerStatuses) {
        if (c.state.finishedAt) endTime = std::max(endTime.value_or(0), *c.state.finishedAt);
      }
    }
    const auto byRank = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(ranks.begin(), ranks.end(), byRank);
    std::sort(endedRanks.begin(), endedRanks.end(), byRank);

    // The partition it runs in, which a job of several names on its pods.
    const api::Pod* anyRank = !ranks.empty()        ? ranks.front().second
                              : !endedRanks.empty() ? endedRanks.front().second
                                                    : nullptr;
    // Counted in the partition it runs in; a limit it did not ask for is defaultTimeLimit's.
    std::string runsIn;
    const api::Partition* running = runningPartition(
        job, anyRank != nullptr ? admittedPartition(*anyRank) : "", objects_.partitions, runsIn);
    api::Partition fallback;  // a deleted partition still has jobs running in it
    fallback.metadata.name = runsIn;
    const api::Partition* first = jobPartition(job.request, objects_.partitions, nullptr);
    auto core = coreJob(job.request, running != nullptr ? *running : fallback, id, userOf(job),
                        submitTimeOf(job), objects_.nodes.size());
    if (!core.isOk()) {  // its pods stay charged as foreign load
      unplanned(job, id);
      return;
    }
    if (!job.request.timeLimit) core->timeLimit = defaultTimeLimit(first, running);
    if (core->account.empty()) core->account = defaultAccount(job.namespaceName);
    setArray(*job.status, *core);
    core->phase = core::JobPhase::kRunning;
    core->startTime = job.status->startTime.value_or(now_);
    // Nothing held: its ranks ended and the job controller is about to write how. Until then
    // the job exists and has not finished, so its dependants must wait (left out, an
    // `afterok` on it would see it gone and start, even after a failure). What it used up to
    // its end is still charged.
    if (ranks.empty()) {
      unplanned(job, id);
      if (!endedRanks.empty() && job.status->startTime) {
        for (const auto& [rank, pod] : endedRanks) {
          core->allocatedNodes.push_back(nodeIndex_.at(pod->spec.nodeName));
        }
        out_.snapshot.ended.push_back({std::move(core).value(), endTime.value_or(now_)});
      }
      return;
    }
    for (const auto& [rank, pod] : ranks) {
      core->allocatedNodes.push_back(nodeIndex_.at(pod->spec.nodeName));
      chargedByJob_.insert(pod);
    }
    out_.jobKeys.append(id, std::move(key));
    out_.snapshot.jobs.push_back(std::move(core).value());
  }

  void addFinished(const api::SlurmJobObject& job, core::JobId id, slurm::JobState state) {
    const api::SlurmJobStatus& status = *job.status;
    core::FinishedJob finished;
    finished.id = id;
    if (status.arrayJobId && *status.arrayJobId > 0) {
      finished.arrayJobId = static_cast<core::JobId>(*status.arrayJobId);
    }
    if (status.arrayTaskId && *status.arrayTaskId >= 0) {
      finished.arrayTaskId = static_cast<std::uint32_t>(*status.arrayTaskId);
    }
    finished.state = state;
    finished.exitCode = exitStatusOf(status.exitCode);
    finished.startTime = status.startTime.value_or(0);
    finished.endTime = status.endTime.value_or(0);
    finished.name = job.request.jobName;
    finished.user = userOf(job);
    out_.snapshot.finished.push_back(std::move(finished));
  }

  void chargeForeignPods() {
    for (const api::Pod& pod : objects_.pods) {
      if (pod.spec.nodeName.empty() || api::podIsTerminal(pod)) continue;
      if (chargedByJob_.contains(&pod)) continue;
      auto it = nodeIndex_.find(pod.spec.nodeName);
      if (it == nodeIndex_.end()) continue;
      add(out_.snapshot.nodes[it->second].foreignUsed, requestOf(pod));
    }
  }

  const ClusterObjects& objects_;
  const SnapshotOptions& options_;
  core::Time now_;
  const JobHolds& holds_;
  SnapshotMemo::Nodes* memo_;  // null: every node translated afresh
  SnapshotIndex out_;
  // Looked up once per rank pod and per pending job: hashed, not ordered.
  std::unordered_map<std::string, core::NodeIndex> nodeIndex_;
  std::vector<const api::Node*> nodeObjects_;  // by NodeIndex
  std::unordered_map<std::string, std::vector<const api::Pod*>> podsByJob_;
  std::map<std::string, const api::Account*, std::less<>> accountByName_;
  std::set<const api::Pod*> chargedByJob_;
};

}  // namespace

SnapshotIndex buildSnapshot(const ClusterObjects& objects, const SnapshotOptions& options,
                            core::Time now, const JobHolds& holds, SnapshotMemo* memo) {
  return Builder(objects, options, now, holds, memo).build();
}

}  // namespace kubeslurm::controllers

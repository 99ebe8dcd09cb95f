#include "kubeslurm/sim/workload.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_set>

#include "kubeslurm/sim/text_util.h"

namespace kubeslurm::sim {
namespace {

constexpr std::string_view kRootAccount = "root";
// Far above any real cluster; keeps a corrupt header ("MaxProcs: 4000000000") from allocating
// billions of nodes.
constexpr std::uint64_t kMaxClusterNodes = 1000000;

struct FieldName {
  std::string_view name;
  AccountField field;
};
constexpr std::array<FieldName, 7> kFields = {{
    {"none", AccountField::kNone},
    {"user", AccountField::kUser},
    {"group", AccountField::kGroup},
    {"queue", AccountField::kQueue},
    {"partition", AccountField::kPartition},
    {"qos", AccountField::kQos},
    {"job", AccountField::kJob},
}};

std::string_view fieldName(AccountField field) {
  for (const FieldName& f : kFields) {
    if (f.field == field) return f.name;
  }
  return "none";
}

std::string fieldValue(AccountField field, const TraceJob& job) {
  switch (field) {
    case AccountField::kNone:
      return "";
    case AccountField::kUser:
      return job.user;
    case AccountField::kGroup:
      return job.group;
    case AccountField::kQueue:
      return job.queue;
    case AccountField::kPartition:
      return job.partition;
    case AccountField::kQos:
      return job.qos;
    case AccountField::kJob:
      return std::to_string(job.id);
  }
  return "";
}

// FNV-1a then splitmix64: a fixed, documented mix so that account buckets are the same on every
// platform and every run (std::hash is neither).
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

std::string defaultNodeName(std::uint32_t index, std::uint32_t count) {
  const std::size_t width = std::max<std::size_t>(3, std::to_string(count).size());
  std::string digits = std::to_string(index + 1);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return "node-" + digits;
}

struct Shape {
  std::uint32_t nodes = 1;
  std::uint32_t gpusPerNode = 0;
};

// One processor = one GPU; see workload.h.
Shape swfShape(std::uint32_t procs, std::uint32_t gpusPerNode) {
  if (gpusPerNode <= 1) return {procs, gpusPerNode};
  if (procs <= gpusPerNode) return {1, procs};
  const std::uint32_t nodes = (procs + gpusPerNode - 1) / gpusPerNode;
  return {nodes, (procs + nodes - 1) / nodes};
}

core::Duration timeLimitFor(const TraceJob& job, double factor) {
  if (job.requestedTime && *job.requestedTime > 0) return *job.requestedTime;
  const double limit = std::ceil(static_cast<double>(job.runTime) * factor);
  // A zero limit means nothing in Slurm; a job that ran 0 s still occupies its nodes for an
  // instant, so give it the smallest limit there is.
  return std::max<core::Duration>(1, limit >= static_cast<double>(core::kUnlimited)
                                         ? core::kUnlimited
                                         : static_cast<core::Duration>(limit));
}

// The SWF machine's size in nodes: given, else the header's, else the largest job's.
std::uint64_t swfNodeCount(const Trace& trace, const ClusterShape& shape,
                           std::uint32_t gpusPerNode) {
  if (!shape.nodeNames.empty()) return shape.nodeNames.size();
  if (shape.nodeCount != 0) return shape.nodeCount;
  std::uint64_t procs = trace.maxProcs != 0 ? trace.maxProcs : trace.maxNodes;
  if (procs == 0) {
    for (const TraceJob& job : trace.jobs) procs = std::max<std::uint64_t>(procs, job.procs);
  }
  return (procs + gpusPerNode - 1) / gpusPerNode;
}

std::vector<core::Node> swfNodes(const ClusterShape& shape, std::uint32_t count,
                                 std::uint32_t gpusPerNode) {
  std::vector<core::Node> nodes(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    nodes[i].name = shape.nodeNames.empty() ? defaultNodeName(i, count) : shape.nodeNames[i];
    nodes[i].allocatable = {gpusPerNode, shape.cpuMillisPerNode, shape.memoryBytesPerNode};
  }
  return nodes;
}

std::vector<core::Node> traceNodes(const Trace& trace) {
  std::vector<core::Node> nodes;
  nodes.reserve(trace.nodes.size());
  for (const TraceNode& t : trace.nodes) {
    core::Node node;
    node.name = t.name;
    node.allocatable = {t.gpus, t.cpuMillis, t.memoryBytes};
    if (!t.model.empty()) {
      node.labels.emplace("nvidia.com/gpu.product", t.model);
      node.features.push_back(t.model);
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

// Whether at least job.minNodes nodes could each hold one rank of `job` on an empty cluster.
class FitChecker {
 public:
  explicit FitChecker(const std::vector<core::Node>& nodes) : nodes_(nodes) {}

  bool fits(const core::Job& job) {
    if (job.minNodes > nodes_.size()) return false;
    const Key key{job.minNodes, job.gpusPerNode, job.cpuMillisPerNode, job.memoryBytesPerNode,
                  job.constraints.empty() ? std::string() : job.constraints.front()};
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::uint32_t holders = 0;
    for (const core::Node& node : nodes_) {
      if (node.allocatable.gpus >= job.gpusPerNode &&
          node.allocatable.cpuMillis >= job.cpuMillisPerNode &&
          node.allocatable.memoryBytes >= job.memoryBytesPerNode &&
          std::all_of(job.constraints.begin(), job.constraints.end(), [&](const std::string& c) {
            return std::find(node.features.begin(), node.features.end(), c) != node.features.end();
          })) {
        ++holders;
      }
    }
    const bool result = holders >= job.minNodes;
    cache_.emplace(key, result);
    return result;
  }

 private:
  using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint64_t, std::uint64_t, std::string>;
  const std::vector<core::Node>& nodes_;
  std::map<Key, bool> cache_;
};

core::Job makeJob(const TraceJob& t, const Trace& trace, const WorkloadOptions& options,
                  std::uint32_t gpusPerNode) {
  core::Job job;
  job.id = t.id;
  job.name = t.name.empty() ? "job-" + std::to_string(t.id) : t.name;
  job.user = t.user.empty() ? "unknown" : "user-" + t.user;
  job.account = accountFor(options.accounts, t);
  job.partition = options.partition;
  if (trace.format == TraceFormat::kSwf) {
    const Shape shape = swfShape(t.procs, gpusPerNode);
    job.minNodes = job.maxNodes = shape.nodes;
    job.gpusPerNode = shape.gpusPerNode;
  } else {
    job.minNodes = job.maxNodes = 1;
    job.gpusPerNode = t.gpus;
    job.cpuMillisPerNode = t.cpuMillis;
    job.memoryBytesPerNode = t.memoryBytes;
    // A single model is a constraint the nodes' features answer; "A|B" alternatives would need
    // OR-constraints, which the core's model (all required) does not have: left unconstrained.
    if (!t.gpuSpec.empty() && t.gpuSpec.find('|') == std::string::npos) {
      job.constraints.push_back(t.gpuSpec);
    }
  }
  job.timeLimit = timeLimitFor(t, options.timeLimitFactor);
  job.submitTime = options.epoch + t.submit;
  job.eligibleTime = job.submitTime;
  job.phase = core::JobPhase::kPending;
  return job;
}

core::Account makeAccount(std::string name, std::string parent) {
  core::Account account;
  account.name = std::move(name);
  account.parent = std::move(parent);
  account.shares = 1;
  return account;
}

std::vector<core::Account> makeAccounts(const std::vector<SimJob>& jobs) {
  std::set<std::string> names;
  for (const SimJob& job : jobs) names.insert(job.job.account);
  std::vector<core::Account> accounts;
  accounts.push_back(makeAccount(std::string(kRootAccount), ""));
  for (const std::string& name : names) {
    if (name == kRootAccount) continue;
    accounts.push_back(makeAccount(name, std::string(kRootAccount)));
  }
  return accounts;
}

}  // namespace

StatusOr<AccountRule> parseAccountRule(std::string_view text) {
  AccountRule rule;
  rule.text = std::string(text);
  std::string_view rest = text;
  std::string_view fieldText = rest.substr(0, rest.find_first_of("%@"));
  rest.remove_prefix(fieldText.size());
  const auto* found = std::find_if(kFields.begin(), kFields.end(),
                                   [&](const FieldName& f) { return f.name == fieldText; });
  if (found == kFields.end()) {
    return invalidArgument("account rule " + internal::quoteForError(text) +
                           ": expected none, user, group, queue, partition, qos or job, "
                           "optionally followed by %N[@SEED]");
  }
  rule.field = found->field;
  if (!rest.empty() && rest.front() == '%') {
    rest.remove_prefix(1);
    const std::string_view count = rest.substr(0, rest.find('@'));
    rest.remove_prefix(count.size());
    const auto buckets = parseInteger<std::uint64_t>(count);
    if (!buckets || *buckets == 0 || *buckets > 1000000) {
      return invalidArgument("account rule " + internal::quoteForError(text) +
                             ": %N needs a bucket count from 1 to 1000000");
    }
    rule.buckets = static_cast<std::uint32_t>(*buckets);
  }
  if (!rest.empty() && rest.front() == '@') {
    rest.remove_prefix(1);
    const auto seed = parseInteger<std::uint64_t>(rest);
    if (!seed || rule.buckets == 0) {
      return invalidArgument("account rule " + internal::quoteForError(text) +
                             ": @SEED needs a number and comes after %N");
    }
    rule.seed = *seed;
    rest = {};
  }
  if (!rest.empty()) {
    return invalidArgument("account rule " + internal::quoteForError(text) + ": unexpected " +
                           internal::quoteForError(rest));
  }
  if (rule.field == AccountField::kNone && rule.buckets != 0) {
    return invalidArgument("account rule " + internal::quoteForError(text) + ": none takes no %N");
  }
  if (rule.field == AccountField::kJob && rule.buckets == 0) {
    return invalidArgument("account rule " + internal::quoteForError(text) +
                           ": job needs %N (one account per job is not a fair-share study)");
  }
  return rule;
}

std::string accountFor(const AccountRule& rule, const TraceJob& job) {
  if (rule.field == AccountField::kNone) return "all";
  const std::string value = fieldValue(rule.field, job);
  if (rule.buckets != 0) {
    const std::uint64_t bucket = splitmix64(fnv1a(value) + rule.seed) % rule.buckets;
    return "acct-" + std::to_string(bucket);
  }
  return std::string(fieldName(rule.field)) + "-" + (value.empty() ? "unknown" : value);
}

StatusOr<Workload> buildWorkload(const Trace& trace, const WorkloadOptions& options) {
  if (!(options.timeLimitFactor > 0) || !std::isfinite(options.timeLimitFactor)) {
    return invalidArgument("time limit factor must be a positive number");
  }
  const ClusterShape& shape = options.cluster;
  const std::uint32_t gpusPerNode = shape.gpusPerNode == 0 ? 1 : shape.gpusPerNode;
  Workload workload;
  workload.epoch = options.epoch;
  workload.accountRule = options.accounts.text;
  workload.notes = trace.notes;

  const bool fromTrace =
      trace.format == TraceFormat::kAlibaba && shape.useTraceNodes && !trace.nodes.empty();
  if (!fromTrace) {
    const std::uint64_t count = swfNodeCount(trace, shape, gpusPerNode);
    if (count > kMaxClusterNodes) {
      return invalidArgument("a cluster of " + std::to_string(count) +
                             " nodes is too large (at most " + std::to_string(kMaxClusterNodes) +
                             ")");
    }
    workload.cluster.nodes = swfNodes(shape, static_cast<std::uint32_t>(count), gpusPerNode);
  } else {
    workload.cluster.nodes = traceNodes(trace);
  }
  if (trace.format == TraceFormat::kAlibaba && !fromTrace && shape.nodeNames.empty() &&
      shape.nodeCount == 0) {
    return invalidArgument("an Alibaba pod list needs its node list, or a node count");
  }
  if (workload.cluster.nodes.empty()) return invalidArgument("the cluster has no nodes");
  {
    std::unordered_set<std::string> seen;
    for (const core::Node& node : workload.cluster.nodes) {
      if (!seen.insert(node.name).second) {
        return invalidArgument("duplicate node name \"" + node.name + "\"");
      }
    }
  }
  workload.cluster.topology = shape.topology;
  workload.cluster.config = options.config;

  core::Partition partition;
  partition.name = options.partition;
  partition.isDefault = true;
  partition.nodes.resize(workload.cluster.nodes.size());
  for (std::size_t i = 0; i < partition.nodes.size(); ++i) {
    partition.nodes[i] = static_cast<core::NodeIndex>(i);
  }
  workload.cluster.partitions.push_back(std::move(partition));

  FitChecker checker(workload.cluster.nodes);
  std::unordered_set<core::JobId> ids;
  std::uint64_t tooLarge = 0;
  workload.jobs.reserve(trace.jobs.size());
  for (const TraceJob& t : trace.jobs) {
    if (t.id == 0) return invalidArgument("job id 0 is reserved");
    if (!ids.insert(t.id).second) {
      return invalidArgument("duplicate job id " + std::to_string(t.id));
    }
    SimJob job{makeJob(t, trace, options, gpusPerNode), t.runTime, t.gpuMilli};
    if (!checker.fits(job.job)) {
      ++tooLarge;
      continue;
    }
    workload.jobs.push_back(std::move(job));
  }
  if (tooLarge != 0) {
    workload.dropped = tooLarge;
    workload.notes.push_back(std::to_string(tooLarge) +
                             " jobs dropped: larger than any node set of this cluster");
  }
  std::stable_sort(
      workload.jobs.begin(), workload.jobs.end(),
      [](const SimJob& a, const SimJob& b) { return a.job.submitTime < b.job.submitTime; });
  workload.cluster.accounts = makeAccounts(workload.jobs);
  workload.cluster.usageTime =
      workload.jobs.empty() ? options.epoch : workload.jobs.front().job.submitTime;
  return workload;
}

}  // namespace kubeslurm::sim

#include "controllers/job_request.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kubeslurm/base/arithmetic.h"
#include "kubeslurm/base/text.h"
#include "kubeslurm/slurm/hostlist.h"

namespace kubeslurm::controllers {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

Status invalidGres() { return invalidArgument("Invalid generic resource (gres) specification"); }

// A --nodelist or --exclude as node names, resolved against a cluster of `clusterNodes` nodes
// without ever making more names than it has: a list of more hosts names at least one node that
// does not exist, which slurmctld refuses as ESLURM_INVALID_NODE_NAME. The parse is bounded the
// same way (Hostlist::parse's work grows with the ranges it may make), so a 17-byte
// "a[0-65535]b[0-63]" costs a few microseconds, not 4 million names.
StatusOr<std::vector<std::string>> expand(const std::string& hostlist, const char* option,
                                          std::size_t clusterNodes) {
  if (hostlist.empty()) return std::vector<std::string>{};
  const std::size_t limit = std::max<std::size_t>(clusterNodes, 1);
  auto parsed = slurm::Hostlist::parse(hostlist, nullptr, limit);
  if (!parsed.isOk()) {
    if (parsed.status().code() == StatusCode::kOutOfRange) {
      return invalidArgument(std::string(kInvalidNodeName));
    }
    return invalidArgument(std::string(option) + ": " + std::string(parsed.status().message()));
  }
  if (parsed->count() < 0 || static_cast<std::size_t>(parsed->count()) > limit) {
    return invalidArgument(std::string(kInvalidNodeName));
  }
  std::vector<std::string> hosts;
  hosts.reserve(static_cast<std::size_t>(parsed->count()));
  parsed->forEachHost([&hosts](std::string_view host) {
    hosts.emplace_back(host);
    return true;
  });
  return hosts;
}

// Names in the order first added, each once. A job's GPU types come from lists a tenant writes,
// as long as the object may be: a set keeps the work proportional to them, not to their square.
class FirstSeen {
 public:
  void add(std::string value) {
    if (!value.empty() && seen_.insert(value).second) order_.push_back(std::move(value));
  }
  std::vector<std::string> take() { return std::move(order_); }

 private:
  std::unordered_set<std::string> seen_;
  std::vector<std::string> order_;
};

// The conjunctive form of a well-formed expression without brackets or counts, or none. A
// parenthesis holds one level (build_feature_list refuses a second '('), so the expression is
// operands (a feature, or a group of features with its own operators) joined by operators.
std::optional<std::vector<std::vector<std::string>>> conjunctiveForm(std::string_view text) {
  struct Operand {
    std::vector<std::string> features;
    char joinedBy = 0;  // the operators inside a group: '&', '|', or 0 for one feature
  };
  std::vector<Operand> operands;
  std::vector<char> operators;
  const auto isOperator = [](char c) { return c == '&' || c == ',' || c == '|'; };
  std::size_t i = 0;
  while (i < text.size()) {
    Operand operand;
    if (text[i] == '(') {
      const std::size_t close = text.find(')', i);
      std::string_view group = text.substr(i + 1, close - i - 1);
      std::string feature;
      for (const char c : group) {
        if (!isOperator(c)) {
          feature += c;
          continue;
        }
        const char op = c == '|' ? '|' : '&';
        if (operand.joinedBy != 0 && operand.joinedBy != op) return std::nullopt;
        operand.joinedBy = op;
        operand.features.push_back(std::move(feature));
        feature.clear();
      }
      operand.features.push_back(std::move(feature));
      i = close + 1;
      // build_feature_list skips what follows ')' up to the next operator; that is not planned.
      if (i < text.size() && !isOperator(text[i])) return std::nullopt;
    } else {
      std::size_t end = i;
      while (end < text.size() && !isOperator(text[end])) ++end;
      operand.features.emplace_back(text.substr(i, end - i));
      i = end;
    }
    operands.push_back(std::move(operand));
    if (i < text.size()) operators.push_back(text[i] == '|' ? '|' : '&');
    ++i;
  }
  // A trailing '&' (which slurmctld takes) leaves no operand after it.
  if (operators.size() == operands.size() && !operators.empty()) operators.pop_back();
  const bool anyOr = std::ranges::count(operators, '|') > 0;
  const bool anyAnd = std::ranges::count(operators, '&') > 0;
  std::vector<std::vector<std::string>> clauses;
  if (anyOr && anyAnd) return std::nullopt;  // left to right in Slurm: not conjunctive
  if (anyOr) {
    // a|b|c: one clause, whose groups may only be ORs themselves.
    clauses.emplace_back();
    for (Operand& operand : operands) {
      if (operand.joinedBy == '&') return std::nullopt;
      for (std::string& f : operand.features) clauses.back().push_back(std::move(f));
    }
    return clauses;
  }
  for (Operand& operand : operands) {
    if (operand.joinedBy == '|') {
      clauses.push_back(std::move(operand.features));
      continue;
    }
    for (std::string& f : operand.features) clauses.push_back({std::move(f)});
  }
  return clauses;
}

// "[a|b|c]", alone or joined by '&' to features or parenthesised groups ("gpu&[r1|r2]"): the
// bracket's features as ConstraintTerms::matching, the rest's clauses as the conjunctive form.
// Anything else with a bracket ('&' inside it, '|' joining it, a count) is left unplanned.
void matchingOr(std::string_view constraint, ConstraintTerms& out) {
  const std::size_t open = constraint.find('[');
  const std::size_t close = constraint.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos) return;
  const auto isAnd = [](char c) { return c == '&' || c == ','; };
  if (open > 0 && !isAnd(constraint[open - 1])) return;
  if (close + 1 < constraint.size() && !isAnd(constraint[close + 1])) return;
  std::vector<std::string> alternatives;
  std::string feature;
  for (const char c : constraint.substr(open + 1, close - open - 1)) {
    if (c == '&' || c == ',' || c == '(' || c == ')') return;
    if (c != '|') {
      feature += c;
      continue;
    }
    if (feature.empty()) return;
    alternatives.push_back(std::move(feature));
    feature.clear();
  }
  if (feature.empty()) return;
  alternatives.push_back(std::move(feature));
  std::string rest(constraint.substr(0, open == 0 ? 0 : open - 1));
  const std::string_view after = constraint.substr(std::min(close + 2, constraint.size()));
  if (!rest.empty() && !after.empty()) rest += '&';
  rest += after;
  // '|' joining the rest at its top level would make Slurm's left-to-right reading differ.
  int depth = 0;
  for (const char c : rest) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == '|' && depth == 0) return;
  }
  if (rest.empty()) {
    out.clauses.emplace();
  } else {
    out.clauses = conjunctiveForm(rest);
  }
  if (out.clauses) out.matching = std::move(alternatives);
}

}  // namespace

ConstraintTerms constraintTerms(std::string_view constraint) {
  ConstraintTerms out;
  std::string feature;
  int bracket = 0;
  int paren = 0;
  int brackets = 0;
  bool counted = false;
  // The name ended at ']', ')' or '*': what follows it up to an operator is not read.
  bool sealed = false;
  // A term ends at an operator; one with no name before it is build_feature_list's failure.
  const auto endTerm = [&]() {
    if (feature.empty()) return false;
    out.features.push_back(std::move(feature));
    feature.clear();
    sealed = false;
    return true;
  };
  for (std::size_t i = 0; i < constraint.size() && out.wellFormed; ++i) {
    const char c = constraint[i];
    switch (c) {
      case '&':
      case ',':
      case '|':
        out.wellFormed = endTerm();
        break;
      case '*': {
        counted = true;
        std::size_t digits = i + 1;
        while (digits < constraint.size() && constraint[digits] >= '0' &&
               constraint[digits] <= '9') {
          ++digits;
        }
        const auto count = parseInteger<std::int64_t>(constraint.substr(i + 1, digits - i - 1));
        out.wellFormed = !feature.empty() && paren == 0 && count && *count > 0;
        sealed = true;
        i = digits - 1;
        break;
      }
      case '[':
        out.wellFormed = feature.empty() && bracket == 0 && ++brackets == 1;
        ++bracket;
        break;
      case ']':
        out.wellFormed = bracket == 1 && !feature.empty();
        sealed = true;
        bracket = 0;
        break;
      case '(':
        out.wellFormed = feature.empty() && paren == 0;
        ++paren;
        break;
      case ')':
        out.wellFormed = paren == 1 && !feature.empty();
        sealed = true;
        paren = 0;
        break;
      default:
        if (!sealed) feature += c;
    }
  }
  if (!feature.empty()) out.features.push_back(std::move(feature));
  if (bracket != 0 || paren != 0) out.wellFormed = false;
  if (out.wellFormed && brackets == 0 && !counted &&
      constraint.find_first_not_of("&,|()") != std::string_view::npos) {
    out.clauses = conjunctiveForm(constraint);
  } else if (out.wellFormed && constraint.empty()) {
    out.clauses.emplace();
  } else if (out.wellFormed && brackets == 1 && !counted) {
    matchingOr(constraint, out);
  }
  return out;
}

std::vector<std::string> gpuTypeFeatures(std::string_view typeLabel, std::string_view product) {
  FirstSeen out;
  const bool listed = typeLabel.find_first_not_of(" ,") != std::string_view::npos;
  const std::string_view words = listed ? typeLabel : product;
  const std::string_view separators = listed ? std::string_view(", ") : std::string_view("-_ ");
  std::size_t pos = 0;
  while (pos < words.size()) {
    const std::size_t end = std::min(words.find_first_of(separators, pos), words.size());
    if (end > pos)
      out.add(std::string(kGpuTypeFeature) + lowercaseAscii(words.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out.take();
}

std::vector<std::string> requiredGpuTypeFeatures(const slurm::JobRequest& request) {
  FirstSeen out;
  for (const auto* list :
       {&request.gres, &request.gpusPerNode, &request.gpus, &request.gpusPerTask}) {
    for (const slurm::GresRequest& entry : *list) {
      if (entry.name == "gpu" && !entry.type.empty()) {
        out.add(std::string(kGpuTypeFeature) + lowercaseAscii(entry.type));
      }
    }
  }
  return out.take();
}

std::uint64_t gpuCount(const std::vector<slurm::GresRequest>& entries) {
  std::uint64_t total = 0;
  for (const slurm::GresRequest& entry : entries) {
    if (entry.name == "gpu") total += entry.count;
  }
  return total;
}

StatusOr<NodeRequest> nodeRequest(const slurm::JobRequest& request,
                                  const api::PartitionSpec& partition) {
  NodeRequest result;
  if (request.nodes) {
    result.minNodes = std::max<std::uint32_t>(request.nodes->min, 1);
    result.maxNodes = std::max(result.minNodes, request.nodes->max.value_or(result.minNodes));
  }
  if (request.ntasksPerNode) {
    result.tasksPerNode = *request.ntasksPerNode;
    // -n 16 --ntasks-per-node=8: cons_tres places at most 8 tasks on a node, so the 16 take two
    // nodes however few -N asked for; within a -N range, or without -N, that is the minimum.
    if (request.ntasks && *request.ntasksPerNode > 0) {
      const std::uint64_t needed =
          (*request.ntasks + *request.ntasksPerNode - 1) / *request.ntasksPerNode;
      if (!request.nodes) {
        result.minNodes = static_cast<std::uint32_t>(std::min<std::uint64_t>(needed, UINT32_MAX));
        result.maxNodes = std::max(result.maxNodes, result.minNodes);
      } else if (needed > result.minNodes && needed <= result.maxNodes) {
        result.minNodes = static_cast<std::uint32_t>(needed);
      }
    }
  } else if (request.ntasks) {
    // Tasks spread over the minimum node count, as Slurm lays them out by default (block).
    result.tasksPerNode = (*request.ntasks + result.minNodes - 1) / result.minNodes;
  }
  result.tasksPerNode = std::max<std::uint32_t>(result.tasksPerNode, 1);

  std::optional<std::uint64_t> gpus;
  const auto offer = [&gpus](std::uint64_t perNode) {
    if (gpus && *gpus != perNode) return false;
    gpus = perNode;
    return true;
  };
  if (!request.gres.empty() && !offer(gpuCount(request.gres))) return invalidGres();
  if (!request.gpusPerNode.empty() && !offer(gpuCount(request.gpusPerNode))) return invalidGres();
  if (!request.gpusPerTask.empty() && !offer(gpuCount(request.gpusPerTask) * result.tasksPerNode)) {
    return invalidGres();
  }
  if (!request.gpus.empty()) {
    const std::uint64_t total = gpuCount(request.gpus);
    if (!offer((total + result.minNodes - 1) / result.minNodes)) return invalidGres();
  }
  if (gpus && *gpus > UINT32_MAX) return invalidGres();
  result.gpusPerNode = static_cast<std::uint32_t>(gpus.value_or(0));

  std::uint64_t cpusPerTask = request.cpusPerTask.value_or(1);
  std::uint64_t cpus = cpusPerTask * result.tasksPerNode;
  const api::PartitionMemory memory = api::partitionMemory(partition);
  // What the job asked for, else the partition's defaults, in slurmctld's order: a GPU job
  // without --mem* takes DefMemPerGPU (cons_tres clears the per-node default for it), any other
  // DefMemPerNode or DefMemPerCPU (_validate_job_desc); with none of them, or --mem=0 or
  // --mem-per-cpu=0, all the memory of each node (pn_min_memory 0).
  std::uint64_t perNodeMb = 0;
  std::uint64_t perCpuMb = 0;
  const bool perGpu = request.memPerGpuMb && *request.memPerGpuMb > 0;
  if (request.memPerNodeMb) {
    perNodeMb = *request.memPerNodeMb;
  } else if (request.memPerCpuMb) {
    perCpuMb = *request.memPerCpuMb;
  } else if (perGpu) {
    perNodeMb = saturatingProduct(*request.memPerGpuMb, result.gpusPerNode);
  } else if (result.gpusPerNode > 0 && memory.defPerGpu > 0) {
    perNodeMb = saturatingProduct(memory.defPerGpu, result.gpusPerNode);
  } else if (memory.defPerNode > 0) {
    perNodeMb = memory.defPerNode;
  } else {
    perCpuMb = memory.defPerCpu;
  }
  // MaxMemPerCPU (_valid_pn_min_mem): memory per CPU past it takes more CPUs instead, each with
  // a share of it; memory per node past it takes at least one CPU for each MaxMemPerCPU.
  if (memory.maxPerCpu > 0 && perCpuMb > memory.maxPerCpu) {
    const std::uint64_t ratio = (perCpuMb + memory.maxPerCpu - 1) / memory.maxPerCpu;
    cpusPerTask = saturatingProduct(cpusPerTask, ratio);
    cpus = saturatingProduct(cpusPerTask, result.tasksPerNode);
    perCpuMb = (perCpuMb + ratio - 1) / ratio;
  } else if (memory.maxPerCpu > 0 && perNodeMb > 0 && !perGpu) {
    cpus = std::max(cpus, (perNodeMb + memory.maxPerCpu - 1) / memory.maxPerCpu);
  }
  // --mincpus is a floor on each node's CPUs (pn_min_cpus); memory per CPU counts them all.
  cpus = std::max<std::uint64_t>(cpus, request.minCpusPerNode.value_or(0));
  result.cpuMillisPerNode = saturatingProduct(cpus, 1000);
  if (perCpuMb > 0) perNodeMb = saturatingProduct(perCpuMb, cpus);
  if (perNodeMb == 0) {
    result.allMemory = true;
  } else {
    result.memoryBytesPerNode = saturatingProduct(perNodeMb, kMiB);
  }
  if (request.shared == slurm::SharedMode::kExclusive ||
      request.shared == slurm::SharedMode::kExclusiveUser ||
      request.shared == slurm::SharedMode::kExclusiveMcs) {
    result.wholeNode = true;
  }
  return result;
}

StatusOr<core::Job> coreJob(const slurm::JobRequest& request, const api::Partition& partition,
                            core::JobId id, const std::string& user, core::Time submitTime,
                            std::size_t clusterNodes) {
  auto nodes = nodeRequest(request, partition.spec);
  if (!nodes.isOk()) return nodes.status();
  core::Job job;
  job.id = id;
  job.name = request.jobName;
  job.user = user;
  job.account = request.account;
  job.partition = partition.metadata.name;
  job.qos = request.qos;
  job.minNodes = nodes->minNodes;
  job.maxNodes = nodes->maxNodes;
  job.tasksPerNode = nodes->tasksPerNode;
  job.gpusPerNode = nodes->gpusPerNode;
  job.cpuMillisPerNode = nodes->cpuMillisPerNode;
  job.memoryBytesPerNode = nodes->memoryBytesPerNode;
  job.exclusive = nodes->wholeNode;
  job.allNodeMemory = nodes->allMemory;

  const slurm::TimeLimit limit =
      request.timeLimit ? *request.timeLimit : api::partitionDefaultTime(partition.spec);
  job.timeLimit = limit.seconds.value_or(core::kUnlimited);

  auto required = expand(request.nodeList, "--nodelist", clusterNodes);
  if (!required.isOk()) return required.status();
  job.requiredNodes = std::move(required).value();
  auto excluded = expand(request.excludeList, "--exclude", clusterNodes);
  if (!excluded.isOk()) return excluded.status();
  job.excludedNodes = std::move(excluded).value();
  if (!request.constraint.empty()) {
    // "a&b", "a,b", "a|b", "(a|b)&c". Matching OR, counts and unparenthesized mixes are refused
    // at submission (submission_rules.h); a job that skipped the webhook is held with the reason
    // rather than left waiting for a node with a feature named "[a|b]".
    ConstraintTerms terms = constraintTerms(request.constraint);
    if (!terms.clauses) {
      return invalidArgument(
          std::string(kInvalidFeature) +
          (terms.wellFormed ? " (" + std::string(kUnplannedConstraint) + ")" : ""));
    }
    // Each feature once, and no OR clause that a required feature already satisfies: the core
    // checks every alternative on every node each cycle, and the CRD lets -C be 1,024
    // characters of them (sets, so the work stays proportional to them, as FirstSeen's).
    FirstSeen requiredFeatures;
    std::set<std::vector<std::string>> alternatives;
    for (std::vector<std::string>& clause : *terms.clauses) {
      std::ranges::sort(clause);
      clause.erase(std::unique(clause.begin(), clause.end()), clause.end());
      if (clause.size() == 1) {
        requiredFeatures.add(std::move(clause.front()));
      } else {
        alternatives.insert(std::move(clause));
      }
    }
    job.constraints = requiredFeatures.take();
    const std::unordered_set<std::string> requiredSet(job.constraints.begin(),
                                                      job.constraints.end());
    for (const std::vector<std::string>& clause : alternatives) {
      if (std::ranges::none_of(clause,
                               [&](const std::string& f) { return requiredSet.contains(f); })) {
        job.constraintAnyOf.push_back(clause);
      }
    }
    if (terms.matching.size() > kMaxMatchingFeatures) {
      return invalidArgument(std::string(kInvalidFeature) + " (more than " +
                             std::to_string(kMaxMatchingFeatures) + " features in [...])");
    }
    // Each feature once, in order; one that every node must have anyway settles it.
    if (std::ranges::none_of(terms.matching,
                             [&](const std::string& f) { return requiredSet.contains(f); })) {
      FirstSeen matching;
      for (std::string& f : terms.matching) matching.add(std::move(f));
      job.matchingOneOf = matching.take();
    }
  }
  for (std::string& type : requiredGpuTypeFeatures(request)) {
    job.constraints.push_back(std::move(type));
  }
  // The partition's tolerations are core::Partition's (partitionTolerations): a job that names
  // several partitions tolerates, in each, what that partition's pods do.
  job.maxSwitches = request.switches;
  job.contiguous = request.contiguous;
  job.switchesWait = request.switchesWaitSeconds.value_or(0);
  if (request.array && request.array->maxRunning) job.arrayMaxRunning = request.array->maxRunning;
  job.dependency = request.dependency;
  job.beginTime = request.begin.value_or(0);
  job.held = request.hold;
  job.nice = request.nice.value_or(0);
  job.adminPriority = request.priority;
  job.requeue = request.requeue.value_or(true);
  job.submitTime = submitTime;
  return job;
}

std::vector<core::Taint> partitionTolerations(const api::Partition& partition) {
  std::vector<core::Taint> out;
  out.reserve(partition.spec.tolerations.size());
  // As Kubernetes matches them: Exists ignores the value.
  for (const api::Toleration& toleration : partition.spec.tolerations) {
    out.push_back(core::Taint{toleration.key,
                              toleration.operator_ == "Exists" ? std::string() : toleration.value,
                              toleration.effect});
  }
  return out;
}

StatusOr<std::vector<podspec::ContainerMount>> containerMounts(const slurm::JobRequest& request,
                                                               const api::Partition& partition) {
  return podspec::resolveContainerMounts(request.container.mounts, request.workDir,
                                         partition.metadata.name, partition.spec);
}

StatusOr<core::Job> plannedJob(const slurm::JobRequest& request,
                               std::span<const api::Partition* const> partitions, core::JobId id,
                               const std::string& user, core::Time submitTime,
                               std::size_t clusterNodes) {
  if (partitions.empty()) return invalidArgument("a job without a partition");
  auto job = coreJob(request, *partitions.front(), id, user, submitTime, clusterNodes);
  if (!job.isOk() || partitions.size() == 1) return job;
  for (const api::Partition* other : partitions.subspan(1)) {
    job->otherPartitions.push_back(other->metadata.name);
    // Its memory as that partition's defaults make it (the GPUs and tasks are the request's, the
    // same everywhere); a partition where it would not translate keeps the first's shape, and
    // is refused there by the same rules as the first.
    auto there = nodeRequest(request, other->spec);
    if (!there.isOk()) continue;
    core::PartitionShape shape{other->metadata.name, there->cpuMillisPerNode,
                               there->memoryBytesPerNode, there->allMemory};
    if (shape.cpuMillisPerNode != job->cpuMillisPerNode ||
        shape.memoryBytesPerNode != job->memoryBytesPerNode ||
        shape.allNodeMemory != job->allNodeMemory) {
      job->otherShapes.push_back(std::move(shape));
    }
  }
  job->timeLimitFromPartition = !request.timeLimit && !partitions.front()->spec.defaultTime;
  return job;
}

core::Duration defaultTimeLimit(const api::Partition* first, const api::Partition* runsIn) {
  if (first != nullptr && first->spec.defaultTime) {
    return first->spec.defaultTime->limit.seconds.value_or(core::kUnlimited);
  }
  const api::Partition* source = runsIn != nullptr ? runsIn : first;
  if (source == nullptr) return core::kUnlimited;
  return api::partitionDefaultTime(source->spec).seconds.value_or(core::kUnlimited);
}

}  // namespace kubeslurm::controllers

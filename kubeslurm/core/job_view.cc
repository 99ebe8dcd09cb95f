#include "kubeslurm/core/job_view.h"

#include <algorithm>

#include "kubeslurm/core/capacity_index.h"

namespace kubeslurm::core {

namespace {

std::vector<NodeIndex> resolve(const ClusterState& state, const std::vector<std::string>& names,
                               std::vector<std::string>* unknown) {
  std::vector<NodeIndex> out;
  out.reserve(names.size());
  for (const std::string& name : names) {
    if (auto n = state.nodeIndex(name)) {
      out.push_back(*n);
    } else if (unknown != nullptr) {
      unknown->push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool hasJobFeatures(const Node& node, const Job& job) {
  const auto has = [&node](const std::string& f) {
    return std::find(node.features.begin(), node.features.end(), f) != node.features.end();
  };
  return std::all_of(job.constraints.begin(), job.constraints.end(), has) &&
         std::all_of(job.constraintAnyOf.begin(), job.constraintAnyOf.end(),
                     [&has](const std::vector<std::string>& clause) {
                       return std::any_of(clause.begin(), clause.end(), has);
                     });
}

bool hasViewFeatures(const Node& node, const Job& job, const JobView& view) {
  if (!hasJobFeatures(node, job)) return false;
  if (view.matching < 0) return true;
  const auto at = static_cast<std::size_t>(view.matching);
  return at < job.matchingOneOf.size() && std::find(node.features.begin(), node.features.end(),
                                                    job.matchingOneOf[at]) != node.features.end();
}

JobView makeJobView(const ClusterState& state, std::uint32_t jobIndex, std::uint32_t partition,
                    Time now, std::int32_t matching) {
  const Job& job = state.snapshot().jobs[jobIndex];
  JobView v;
  v.job = jobIndex;
  v.partition = partition;
  v.matching = matching;
  const Partition& tried = state.snapshot().partitions[partition];
  v.request = {toAmount(job.perNodeAllocationIn(tried.name)), job.holdsWholeNodesIn(tried.name)};
  v.minNodes = std::max<std::uint32_t>(job.minNodes, 1);
  v.maxNodes = std::max(job.maxNodes, v.minNodes);
  const Duration limit =
      job.timeLimitFromPartition ? tried.defaultTime.value_or(tried.maxTime) : job.timeLimit;
  v.duration = std::max<Duration>(limit, 1);  // a zero limit still holds its nodes
  const Time eligible =
      std::max(job.eligibleTime != 0 ? job.eligibleTime : job.submitTime, job.beginTime);
  if (job.maxSwitches && now < eligible + job.switchesWait) v.maxSwitches = *job.maxSwitches;
  v.required = resolve(state, job.requiredNodes, &v.unknownRequired);
  v.excluded = resolve(state, job.excludedNodes, nullptr);
  v.contiguous = job.contiguous;
  v.simple = v.required.empty() && v.excluded.empty() && v.unknownRequired.empty() &&
             !job.hasFeatureConstraints() && job.tolerations.empty() && tried.tolerations.empty() &&
             !job.contiguous && v.request.amount.gpus <= CapacityIndex::kTopBucket;
  return v;
}

bool nodeAllowedSlow(const ClusterState& state, const JobView& job, NodeIndex n) {
  const Job& j = state.snapshot().jobs[job.job];
  const Node& node = state.snapshot().nodes[n];
  const Partition& partition = state.snapshot().partitions[job.partition];
  return node.state == NodeState::kUp &&
         toleratesAll(node.taints, j.tolerations, partition.tolerations) &&
         hasViewFeatures(node, j, job) &&
         !std::binary_search(job.excluded.begin(), job.excluded.end(), n);
}

bool isRequired(const JobView& job, NodeIndex n) {
  return !job.required.empty() && std::binary_search(job.required.begin(), job.required.end(), n);
}

}  // namespace kubeslurm::core

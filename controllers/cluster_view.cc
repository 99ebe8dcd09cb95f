#include "controllers/cluster_view.h"

#include <set>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"

namespace kubeslurm::controllers {
namespace {

// Brings `cache` up to date with `store` and appends its objects to `out`; objects that fail to
// decode go to `onFailure` instead.
template <typename T, typename Decode, typename OnFailure>
void refresh(const kube::ObjectStore& store,
             std::map<std::string, std::pair<std::string, T>>& cache, Decode decode,
             std::vector<T>& out, ViewStats& stats, OnFailure onFailure) {
  std::set<std::string> live;
  for (const kube::ObjectPtr& object : store.list()) {
    std::string key = kube::objectKey(*object);
    std::string version = kube::objectResourceVersion(*object);
    auto it = cache.find(key);
    if (it != cache.end() && it->second.first == version) {
      ++stats.reused;
    } else {
      auto decoded = decode(*object);
      if (!decoded.isOk()) {
        ++stats.failed;
        if (it != cache.end()) cache.erase(it);
        onFailure(*object, decoded.status());
        continue;
      }
      ++stats.decoded;
      it = cache.insert_or_assign(key, std::make_pair(version, std::move(decoded).value())).first;
    }
    live.insert(std::move(key));
    out.push_back(it->second.second);
  }
  for (auto it = cache.begin(); it != cache.end();) {
    it = live.contains(it->first) ? std::next(it) : cache.erase(it);
  }
}

void ignore(const nlohmann::json&, const Status&) {}

}  // namespace

ReconcileInput ClusterView::read(const kube::ObjectStore& nodes, const kube::ObjectStore& pods,
                                 const kube::ObjectStore& jobs, const kube::ObjectStore& partitions,
                                 const kube::ObjectStore& accounts) {
  stats_ = {};
  ReconcileInput input;
  refresh(nodes, nodes_, api::decodeNode, input.objects.nodes, stats_, ignore);
  refresh(pods, pods_, api::decodePod, input.objects.pods, stats_, ignore);
  refresh(partitions, partitions_, api::decodePartition, input.objects.partitions, stats_, ignore);
  refresh(accounts, accounts_, api::decodeAccount, input.objects.accounts, stats_, ignore);
  refresh(jobs, jobs_, api::decodeSlurmJob, input.objects.jobs, stats_,
          [&](const nlohmann::json& object, const Status& failure) {
            UndecodableJob bad;
            const nlohmann::json& meta =
                object.contains("metadata") ? object.at("metadata") : nlohmann::json::object();
            bad.name = api::stringMember(meta, "name");
            bad.namespaceName = api::stringMember(meta, "namespace");
            bad.object = object;
            bad.message = failure.message();
            input.undecodable.push_back(std::move(bad));
          });
  return input;
}

}  // namespace kubeslurm::controllers

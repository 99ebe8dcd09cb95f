#include "controllers/cluster_view.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "controllers/job_object.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/kube/informer.h"

namespace kubeslurm::controllers {
namespace {

// Brings `cache` up to date with `store` and appends its records to `out`; objects that fail to
// decode go to `onFailure` instead. `decode` takes the stored object (kube::ObjectPtr); `keep`
// makes the cache's record of a decoded object.
template <typename Record, typename Decode, typename Keep, typename Out, typename OnFailure>
void refresh(const kube::ObjectStore& store, ViewCache<Record>& cache, Decode decode, Keep keep,
             Out& out, ViewStats& stats, OnFailure onFailure) {
  const std::uint64_t pass = ++cache.passes;
  // Under the store's read lock only what is quick: a record the view holds is taken as it is,
  // and an object it has not decoded is set aside, to be decoded once the lock is released.
  std::vector<kube::ObjectPtr> unseen;
  out.reserve(store.size());
  store.forEach([&](const kube::ObjectPtr& object) {
    auto it = cache.entries.find(object.get());
    if (it == cache.entries.end()) {
      unseen.push_back(object);
      return;
    }
    ++stats.reused;
    it->second.pass = pass;
    out.push_back(it->second.record);
  });
  for (kube::ObjectPtr& object : unseen) {
    auto decoded = decode(object);
    if (!decoded.isOk()) {
      ++stats.failed;
      onFailure(*object, decoded.status());
      continue;
    }
    ++stats.decoded;
    const nlohmann::json* address = object.get();
    auto it = cache.entries
                  .emplace(address, ViewEntry<Record>{std::move(object),
                                                      keep(std::move(decoded).value()), pass})
                  .first;
    out.push_back(it->second.record);
  }
  std::erase_if(cache.entries, [pass](const auto& entry) { return entry.second.pass != pass; });
}

template <typename T>
T asIs(T record) {
  return record;
}

void ignore(const nlohmann::json&, const Status&) {}

// `decode` of the stored object's JSON.
template <typename T>
auto fromJson(StatusOr<T> (*decode)(const api::Json&)) {
  return [decode](const kube::ObjectPtr& object) { return decode(*object); };
}

// `decode`, then dropRaw on what it decoded.
template <typename T>
auto withoutRaw(StatusOr<T> (*decode)(const api::Json&)) {
  return [decode](const kube::ObjectPtr& object) {
    StatusOr<T> decoded = decode(*object);
    if (decoded.isOk()) dropRaw(*decoded);
    return decoded;
  };
}

// What a held object's stored pointer carries in its deleter (holdSlurmJob, holdNode, holdPod):
// the decoded record, and the JSON the pointer points at, which the deleter keeps alive (a job's
// record owns it as its `raw` besides).
template <typename Record>
struct Held {
  std::shared_ptr<Record> record;
  std::shared_ptr<const api::Json> json;
  void operator()(const api::Json* /*json*/) const noexcept {}
};

template <typename Record>
kube::ObjectPtr hold(std::shared_ptr<Record> record, std::shared_ptr<const api::Json> json) {
  const api::Json* at = json.get();
  return {at, Held<Record>{std::move(record), std::move(json)}};
}

template <typename Record>
std::shared_ptr<Record> heldRecord(const kube::ObjectPtr& object) {
  const auto* held = std::get_deleter<Held<Record>>(object);
  return held == nullptr ? nullptr : held->record;
}

// A node or pod decoded and without its `raw`, held with what identifies it as JSON: its kind and
// metadata, which is all the informer's store and handlers read of it.
template <typename Record>
kube::ObjectPtr holdWithoutRaw(api::Json&& object, StatusOr<Record> (*decode)(const api::Json&)) {
  StatusOr<Record> decoded = decode(object);
  if (!decoded.isOk()) return std::make_shared<const api::Json>(std::move(object));
  dropRaw(*decoded);
  api::Json identity = api::Json::object();
  for (const char* key : {"apiVersion", "kind", "metadata"}) {
    if (const auto it = object.find(key); it != object.end()) identity[key] = std::move(*it);
  }
  return hold(std::make_shared<Record>(std::move(decoded).value()),
              std::make_shared<const api::Json>(std::move(identity)));
}

// The record held with the stored object, else the object decoded by `decode`.
template <typename Record, typename Decode>
auto heldOr(Decode decode) {
  return [decode](const kube::ObjectPtr& object) -> StatusOr<std::shared_ptr<Record>> {
    if (std::shared_ptr<Record> held = heldRecord<Record>(object)) return held;
    StatusOr<Record> decoded = decode(object);
    if (!decoded.isOk()) return decoded.status();
    return std::make_shared<Record>(std::move(decoded).value());
  };
}

// A job decoded here shares the stored object as its `raw` (shared_json.h): the store never
// changes it.
StatusOr<api::SlurmJobObject> decodeStoredJob(const kube::ObjectPtr& object) {
  return api::decodeSlurmJob(object);
}

// Moves the members of `from` named in `keys` into a new object that replaces it.
template <std::size_t N>
void keepMembers(api::Json& from, const std::array<std::string_view, N>& keys) {
  if (!from.is_object()) return;
  api::Json kept = api::Json::object();
  for (std::string_view key : keys) {
    const auto it = from.find(key);
    if (it != from.end()) kept.emplace(key, std::move(*it));
  }
  from = std::move(kept);
}

// Identity, times and ownership: what every kind's metadata keeps (annotations: see leanPod).
constexpr std::array<std::string_view, 13> kMetadataKept = {"name",
                                                            "generateName",
                                                            "namespace",
                                                            "uid",
                                                            "resourceVersion",
                                                            "generation",
                                                            "labels",
                                                            "annotations",
                                                            "finalizers",
                                                            "ownerReferences",
                                                            "creationTimestamp",
                                                            "deletionTimestamp",
                                                            "deletionGracePeriodSeconds"};
constexpr std::array<std::string_view, 10> kSpecKept = {
    "nodeName", "schedulerName", "priority",       "priorityClassName", "restartPolicy",
    "hostname", "subdomain",     "initContainers", "containers",        "overhead"};
constexpr std::array<std::string_view, 2> kContainerKept = {"name", "resources"};
constexpr std::string_view kOwnAnnotationPrefix = "kubeslurm.io/";
constexpr std::array<std::string_view, 3> kNodeSpecKept = {"unschedulable", "taints", "providerID"};
constexpr std::array<std::string_view, 4> kNodeStatusKept = {"capacity", "allocatable",
                                                             "conditions", "addresses"};
constexpr std::array<std::string_view, 5> kObjectKept = {"apiVersion", "kind", "metadata", "spec",
                                                         "status"};

api::Json* member(api::Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

void clearRaw(api::Json& raw) { raw = api::Json::object(); }

// The metadata's kept members, with the operator's own annotations only.
void leanMetadata(api::Json& object) {
  api::Json* metadata = member(object, "metadata");
  if (metadata == nullptr) return;
  keepMembers(*metadata, kMetadataKept);
  if (api::Json* annotations = member(*metadata, "annotations");
      annotations != nullptr && annotations->is_object()) {
    api::Json own = api::Json::object();
    for (auto it = annotations->begin(); it != annotations->end(); ++it) {
      if (it.key().starts_with(kOwnAnnotationPrefix)) own[it.key()] = std::move(it.value());
    }
    *annotations = std::move(own);
  }
}

}  // namespace

void leanPod(api::Json& pod) {
  if (!pod.is_object()) return;
  leanMetadata(pod);
  if (api::Json* spec = member(pod, "spec"); spec != nullptr) {
    keepMembers(*spec, kSpecKept);
    for (std::string_view list :
         {std::string_view("initContainers"), std::string_view("containers")}) {
      api::Json* containers = member(*spec, list);
      if (containers == nullptr || !containers->is_array()) continue;
      for (api::Json& container : *containers) keepMembers(container, kContainerKept);
    }
  }
  keepMembers(pod, kObjectKept);
}

void leanNode(api::Json& node) {
  if (!node.is_object()) return;
  leanMetadata(node);
  if (api::Json* spec = member(node, "spec"); spec != nullptr) keepMembers(*spec, kNodeSpecKept);
  if (api::Json* status = member(node, "status"); status != nullptr) {
    keepMembers(*status, kNodeStatusKept);
  }
  keepMembers(node, kObjectKept);
}

void leanSlurmJob(api::Json& job) {
  kube::dropManagedFields(job);
  api::Json* spec = member(job, "spec");
  if (spec == nullptr) return;
  api::Json* script = member(*spec, "script");
  // An empty script (a job of a pod template, an interactive allocation) stays what it is.
  if (script != nullptr && script->is_string() && !script->get_ref<const std::string&>().empty()) {
    *script = std::string(kScriptNotCached);
  }
}

kube::ObjectPtr holdSlurmJob(api::Json&& job) {
  StatusOr<api::SlurmJobObject> decoded = api::decodeSlurmJobFields(job);
  if (!decoded.isOk()) return std::make_shared<const api::Json>(std::move(job));
  api::dropModelledFields(job);
  auto rest = std::make_shared<const api::Json>(std::move(job));
  auto record = std::make_shared<api::SlurmJobObject>(std::move(decoded).value());
  record->raw = api::SharedJson(rest);
  return hold(std::move(record), std::move(rest));
}

std::shared_ptr<api::SlurmJobObject> heldSlurmJob(const kube::ObjectPtr& object) {
  return heldRecord<api::SlurmJobObject>(object);
}

kube::ObjectPtr holdNode(api::Json&& node) {
  return holdWithoutRaw(std::move(node), api::decodeNode);
}

kube::ObjectPtr holdPod(api::Json&& pod) { return holdWithoutRaw(std::move(pod), api::decodePod); }

std::shared_ptr<api::Node> heldNode(const kube::ObjectPtr& object) {
  return heldRecord<api::Node>(object);
}

std::shared_ptr<api::Pod> heldPod(const kube::ObjectPtr& object) {
  return heldRecord<api::Pod>(object);
}

void dropRaw(api::Node& node) {
  clearRaw(node.raw);
  for (api::Taint& taint : node.taints) clearRaw(taint.raw);
  for (api::Condition& condition : node.conditions) clearRaw(condition.raw);
}

void dropRaw(api::Pod& pod) {
  clearRaw(pod.raw);
  for (api::OwnerReference& owner : pod.metadata.ownerReferences) clearRaw(owner.raw);
  for (auto* containers : {&pod.spec.initContainers, &pod.spec.containers}) {
    for (api::Container& container : *containers) {
      clearRaw(container.raw);
      for (api::EnvVar& var : container.env) clearRaw(var.raw);
    }
  }
  for (api::Toleration& toleration : pod.spec.tolerations) clearRaw(toleration.raw);
  for (api::Condition& condition : pod.status.conditions) clearRaw(condition.raw);
  for (auto* statuses : {&pod.status.initContainerStatuses, &pod.status.containerStatuses}) {
    for (api::ContainerStatus& status : *statuses) clearRaw(status.raw);
  }
}

ReconcileInput ClusterView::read(const kube::ObjectStore& nodes, const kube::ObjectStore& pods,
                                 const kube::ObjectStore& jobs, const kube::ObjectStore& partitions,
                                 const kube::ObjectStore& accounts) {
  stats_ = {};
  ReconcileInput input;
  refresh(nodes, nodes_, heldOr<api::Node>(withoutRaw(api::decodeNode)),
          asIs<std::shared_ptr<api::Node>>, input.objects.nodes, stats_, ignore);
  refresh(pods, pods_, heldOr<api::Pod>(withoutRaw(api::decodePod)),
          asIs<std::shared_ptr<api::Pod>>, input.objects.pods, stats_, ignore);
  refresh(partitions, partitions_, fromJson(api::decodePartition), asIs<api::Partition>,
          input.objects.partitions, stats_, ignore);
  refresh(accounts, accounts_, fromJson(api::decodeAccount), asIs<api::Account>,
          input.objects.accounts, stats_, ignore);
  refresh(jobs, jobs_, heldOr<api::SlurmJobObject>(decodeStoredJob),
          asIs<std::shared_ptr<api::SlurmJobObject>>, input.objects.jobs, stats_,
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

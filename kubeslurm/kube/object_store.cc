#include "kubeslurm/kube/object_store.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace kubeslurm::kube {
namespace {

using Json = nlohmann::json;

const Json* member(const Json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

std::string metadataString(const Json& object, const char* field) {
  const Json* metadata = member(object, "metadata");
  if (metadata == nullptr) return {};
  const Json* value = member(*metadata, field);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace

std::string objectKey(const Json& object) {
  std::string name = metadataString(object, "name");
  if (name.empty()) return {};
  std::string ns = metadataString(object, "namespace");
  if (ns.empty()) return name;
  return ns + "/" + name;
}

std::string objectResourceVersion(const Json& object) {
  return metadataString(object, "resourceVersion");
}

std::string objectUid(const Json& object) { return metadataString(object, "uid"); }

std::vector<std::string> indexByNamespace(const Json& object) {
  std::string ns = metadataString(object, "namespace");
  if (ns.empty()) return {};
  return {std::move(ns)};
}

std::vector<std::string> indexByNode(const Json& object) {
  const Json* spec = member(object, "spec");
  const Json* node = spec != nullptr ? member(*spec, "nodeName") : nullptr;
  if (node == nullptr || !node->is_string() || node->get_ref<const std::string&>().empty()) {
    return {};
  }
  return {node->get<std::string>()};
}

std::vector<std::string> indexByOwnerUid(const Json& object) {
  const Json* metadata = member(object, "metadata");
  const Json* owners = metadata != nullptr ? member(*metadata, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->is_array()) return {};
  std::vector<std::string> uids;
  for (const Json& owner : *owners) {
    const Json* uid = member(owner, "uid");
    if (uid != nullptr && uid->is_string()) uids.push_back(uid->get<std::string>());
  }
  return uids;
}

Status ObjectStore::addIndexer(std::string name, IndexFunc function) {
  const std::unique_lock lock(mutex_);
  if (indexers_.contains(name)) {
    return {StatusCode::kAlreadyExists, "indexer " + name + " already exists"};
  }
  Index& index = indices_[name];
  for (const auto& [key, object] : items_) {
    for (std::string& value : function(*object)) index[std::move(value)].insert(key);
  }
  indexers_.emplace(std::move(name), std::move(function));
  return Status::ok();
}

ObjectPtr ObjectStore::get(const std::string& key) const {
  const std::shared_lock lock(mutex_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> ObjectStore::list() const {
  const std::shared_lock lock(mutex_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& entry : items_) out.push_back(entry.second);
  return out;
}

void ObjectStore::forEach(const std::function<void(const ObjectPtr&)>& visit) const {
  const std::shared_lock lock(mutex_);
  for (const auto& entry : items_) visit(entry.second);
}

std::vector<std::string> ObjectStore::listKeys() const {
  const std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& entry : items_) out.push_back(entry.first);
  return out;
}

std::size_t ObjectStore::size() const {
  const std::shared_lock lock(mutex_);
  return items_.size();
}

StatusOr<std::vector<std::string>> ObjectStore::indexKeys(std::string_view name,
                                                          std::string_view value) const {
  const std::shared_lock lock(mutex_);
  auto index = indices_.find(name);
  if (index == indices_.end()) return notFound("no indexer named " + std::string(name));
  auto bucket = index->second.find(value);
  if (bucket == index->second.end()) return std::vector<std::string>{};
  return std::vector<std::string>(bucket->second.begin(), bucket->second.end());
}

StatusOr<std::vector<ObjectPtr>> ObjectStore::byIndex(std::string_view name,
                                                      std::string_view value) const {
  const std::shared_lock lock(mutex_);
  auto index = indices_.find(name);
  if (index == indices_.end()) return notFound("no indexer named " + std::string(name));
  std::vector<ObjectPtr> out;
  auto bucket = index->second.find(value);
  if (bucket == index->second.end()) return out;
  out.reserve(bucket->second.size());
  for (const std::string& key : bucket->second) {
    auto it = items_.find(key);
    if (it != items_.end()) out.push_back(it->second);
  }
  return out;
}

std::vector<std::string> ObjectStore::indexValues(std::string_view name) const {
  const std::shared_lock lock(mutex_);
  std::vector<std::string> out;
  auto index = indices_.find(name);
  if (index == indices_.end()) return out;
  out.reserve(index->second.size());
  for (const auto& entry : index->second) out.push_back(entry.first);
  return out;
}

void ObjectStore::indexLocked(const std::string& key, const Json* oldObject,
                              const Json* newObject) {
  for (const auto& [name, function] : indexers_) {
    Index& index = indices_[name];
    const std::vector<std::string> before =
        oldObject != nullptr ? function(*oldObject) : std::vector<std::string>{};
    const std::vector<std::string> after =
        newObject != nullptr ? function(*newObject) : std::vector<std::string>{};
    for (const std::string& value : before) {
      if (std::find(after.begin(), after.end(), value) != after.end()) continue;
      auto bucket = index.find(value);
      if (bucket == index.end()) continue;
      bucket->second.erase(key);
      // Empty buckets are dropped so that indexValues() lists only values in use and a
      // long-lived informer over churning nodes does not grow without bound.
      if (bucket->second.empty()) index.erase(bucket);
    }
    for (const std::string& value : after) index[value].insert(key);
  }
}

ObjectPtr ObjectStore::put(const std::string& key, ObjectPtr object) {
  const std::unique_lock lock(mutex_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  indexLocked(key, old.get(), object.get());
  slot = std::move(object);
  return old;
}

ObjectPtr ObjectStore::erase(const std::string& key) {
  const std::unique_lock lock(mutex_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  indexLocked(key, old.get(), nullptr);
  return old;
}

}  // namespace kubeslurm::kube

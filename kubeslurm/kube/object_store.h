// A thread-safe, indexed cache of Kubernetes objects: the store behind an informer
// (client-go's tools/cache thread_safe_store.go + index.go, over nlohmann::json).
//
// Objects are keyed "namespace/name" ("name" for cluster-scoped ones, as client-go's
// MetaNamespaceKeyFunc) and held as std::shared_ptr<const Json>: a reader takes a reference,
// never a copy, and an object it holds stays valid after the store replaced it. Stored objects
// are immutable; an update stores a new pointer.
//
// Named indexers map an object to zero or more index values ("which node", "which owner");
// byIndex(name, value) answers from a value -> keys map that every write keeps consistent,
// including when an update moves an object from one value to another (a pod re-bound to
// another node leaves the old node's bucket in the same write).
//
// Locking: one shared_mutex; lookups take it shared, writes exclusive. No callback runs under
// it (index functions excepted: they must be pure and quick).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/base/status.h"

namespace kubeslurm::kube {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// "namespace/name", or "name" when the object has no namespace; "" when it has no name.
std::string objectKey(const nlohmann::json& object);

// metadata.resourceVersion / metadata.uid, or "" when absent.
std::string objectResourceVersion(const nlohmann::json& object);
std::string objectUid(const nlohmann::json& object);

// An index function: the values under which an object is found. Pure and quick (it runs
// under the store's write lock).
using IndexFunc = std::function<std::vector<std::string>(const nlohmann::json&)>;

// Ready-made indexers and their conventional names.
inline constexpr std::string_view kNamespaceIndex = "namespace";
inline constexpr std::string_view kNodeIndex = "spec.nodeName";
inline constexpr std::string_view kOwnerUidIndex = "ownerReferences.uid";
// metadata.namespace (nothing for cluster-scoped objects).
std::vector<std::string> indexByNamespace(const nlohmann::json& object);
// spec.nodeName (nothing for a pod not yet bound).
std::vector<std::string> indexByNode(const nlohmann::json& object);
// Every metadata.ownerReferences[].uid.
std::vector<std::string> indexByOwnerUid(const nlohmann::json& object);

class ObjectStore {
 public:
  ObjectStore() = default;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // Adds an index; objects already stored are indexed at once. A name used twice is
  // kAlreadyExists.
  Status addIndexer(std::string name, IndexFunc function);

  ObjectPtr get(const std::string& key) const;  // nullptr when absent
  std::vector<ObjectPtr> list() const;
  // Each stored object, in no particular order, under the read lock: what list() gives without
  // a vector of them, each with a reference taken and dropped (list() was 15 ms of a cycle at
  // 50,000 objects the reader already held). `visit` must be quick and must not call into this
  // store; a pointer it keeps must be copied (an ObjectPtr), not the address.
  void forEach(const std::function<void(const ObjectPtr&)>& visit) const;
  std::vector<std::string> listKeys() const;
  std::size_t size() const;
  // Objects whose index `name` yields `value`; kNotFound for an unknown index (as client-go's
  // ByIndex errors), so that a typo is not an empty answer.
  StatusOr<std::vector<ObjectPtr>> byIndex(std::string_view name, std::string_view value) const;
  StatusOr<std::vector<std::string>> indexKeys(std::string_view name, std::string_view value) const;
  // The values present in index `name` (empty for an unknown index).
  std::vector<std::string> indexValues(std::string_view name) const;

  // Writes. Each returns the object previously stored under the key (nullptr if none).
  ObjectPtr put(const std::string& key, ObjectPtr object);
  ObjectPtr erase(const std::string& key);

 private:
  // value -> keys; std::map so that index lookups can take a string_view.
  using Index = std::map<std::string, std::unordered_set<std::string>, std::less<>>;

  void indexLocked(const std::string& key, const nlohmann::json* oldObject,
                   const nlohmann::json* newObject);

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, ObjectPtr> items_;
  std::map<std::string, IndexFunc, std::less<>> indexers_;
  std::map<std::string, Index, std::less<>> indices_;
};

}  // namespace kubeslurm::kube

// An API server in memory, for the controllers' unit tests: the interfaces the controllers read
// and write through (kube::Reader, Writer, StatusWriter, Binder), one store per resource, and
// what the real server checks that the controllers rely on:
//   - create of a name that exists: kAlreadyExists (409 AlreadyExists); generateName: a name;
//   - update, merge patch and delete with a resourceVersion (or uid) that is not the stored one:
//     kAborted (409 Conflict), nothing written;
//   - a status write changes only `status`, any other write keeps it (status subresources);
//   - a bind of a pod already on a node: kAlreadyExists, as the real binding subresource.
// Every call is logged in order (calls(), writes()), and the next call of a verb on a resource
// can be made to fail (failNext), as the real server fails with 409, 500 or 503.
// Thread-safe: admissions write from their own threads.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/client.h"

namespace kubeslurm::controllers::fakes {

class FakeApiServer : public kube::Reader,
                      public kube::Writer,
                      public kube::StatusWriter,
                      public kube::Binder {
 public:
  using Json = kube::Json;

  struct Call {
    std::string verb;  // get list create update patch updateStatus patchStatus delete bind
    std::string resource;
    std::string key;  // "ns/name" ("ns/" for a list)
    friend bool operator==(const Call&, const Call&) = default;
    friend std::ostream& operator<<(std::ostream& out, const Call& call) {
      return out << call.verb << " " << call.resource << " " << call.key;
    }
  };

  // A later call of `verb` on `resource` (the next one, or the one after `after` more) fails
  // with `status` and writes nothing.
  void failNext(std::string verb, std::string resource, Status status, int after = 0) {
    std::lock_guard lock(mutex_);
    failures_.push_back({std::move(verb), std::move(resource), std::move(status), after});
  }

  // An object as if someone else had created it (not logged).
  Json put(const std::string& resource, Json object) {
    std::lock_guard lock(mutex_);
    stamp(object);
    store_[resource][keyOf(object)] = object;
    return object;
  }

  std::optional<Json> object(const std::string& resource, const std::string& ns,
                             const std::string& name) const {
    std::lock_guard lock(mutex_);
    const auto kind = store_.find(resource);
    if (kind == store_.end()) return std::nullopt;
    const auto found = kind->second.find(ns + "/" + name);
    if (found == kind->second.end()) return std::nullopt;
    return found->second;
  }

  std::vector<Json> objects(const std::string& resource) const {
    std::lock_guard lock(mutex_);
    std::vector<Json> out;
    if (const auto kind = store_.find(resource); kind != store_.end()) {
      for (const auto& [key, value] : kind->second) out.push_back(value);
    }
    return out;
  }

  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

  // The calls that change something (not get or list), in order.
  std::vector<Call> writes() const {
    std::vector<Call> out;
    for (const Call& call : calls()) {
      if (call.verb != "get" && call.verb != "list") out.push_back(call);
    }
    return out;
  }

  void clearCalls() {
    std::lock_guard lock(mutex_);
    calls_.clear();
  }

  StatusOr<Json> get(const kube::ResourceType& type, std::string_view ns,
                     std::string_view name) override {
    std::lock_guard lock(mutex_);
    const std::string key = std::string(ns) + "/" + std::string(name);
    if (auto failure = take("get", type.plural, key)) return *failure;
    auto& kind = store_[type.plural];
    const auto found = kind.find(key);
    if (found == kind.end()) return notFound(type, name);
    return found->second;
  }

  StatusOr<Json> list(const kube::ResourceType& type, std::string_view ns,
                      const kube::ListOptions& options) override {
    std::lock_guard lock(mutex_);
    if (auto failure = take("list", type.plural, std::string(ns) + "/")) return *failure;
    Json items = Json::array();
    for (const auto& [key, object] : store_[type.plural]) {
      const bool inNamespace =
          ns.empty() || object["metadata"].value("namespace", std::string()) == ns;
      if (inNamespace && matches(object, options.labelSelector)) items.push_back(object);
    }
    return Json{{"metadata", {{"resourceVersion", std::to_string(version_)}}}, {"items", items}};
  }

  StatusOr<Json> create(const kube::ResourceType& type, std::string_view ns,
                        const Json& object) override {
    std::lock_guard lock(mutex_);
    Json made = object;
    made["metadata"]["namespace"] = std::string(ns);
    if (!made["metadata"].contains("name") && made["metadata"].contains("generateName")) {
      made["metadata"]["name"] = made["metadata"]["generateName"].get<std::string>() +
                                 std::to_string(10000 + ++generated_);
    }
    const std::string key = keyOf(made);
    if (auto failure = take("create", type.plural, key)) return *failure;
    auto& kind = store_[type.plural];
    if (kind.contains(key)) {
      return Status(StatusCode::kAlreadyExists,
                    type.plural + " \"" + nameOf(made) + "\" already exists");
    }
    stamp(made);
    kind[key] = made;
    return made;
  }

  StatusOr<Json> update(const kube::ResourceType& type, std::string_view ns,
                        const Json& object) override {
    return replace("update", type, ns, object, /*statusOnly=*/false);
  }

  StatusOr<Json> updateStatus(const kube::ResourceType& type, std::string_view ns,
                              const Json& object) override {
    return replace("updateStatus", type, ns, object, /*statusOnly=*/true);
  }

  StatusOr<Json> patch(const kube::ResourceType& type, std::string_view ns, std::string_view name,
                       const Json& mergePatch) override {
    return mergeInto("patch", type, ns, name, mergePatch, /*statusOnly=*/false);
  }

  StatusOr<Json> patchStatus(const kube::ResourceType& type, std::string_view ns,
                             std::string_view name, const Json& mergePatch) override {
    return mergeInto("patchStatus", type, ns, name, mergePatch, /*statusOnly=*/true);
  }

  Status remove(const kube::ResourceType& type, std::string_view ns, std::string_view name,
                const kube::DeleteOptions& options) override {
    std::lock_guard lock(mutex_);
    const std::string key = std::string(ns) + "/" + std::string(name);
    if (auto failure = take("delete", type.plural, key)) return *failure;
    auto& kind = store_[type.plural];
    const auto found = kind.find(key);
    if (found == kind.end()) return notFound(type, name);
    const Json& meta = found->second["metadata"];
    if ((options.uid && meta.value("uid", std::string()) != *options.uid) ||
        (options.resourceVersion &&
         meta.value("resourceVersion", std::string()) != *options.resourceVersion)) {
      return conflict(type, name);
    }
    kind.erase(found);
    ++version_;
    return Status::ok();
  }

  Status bind(std::string_view ns, std::string_view pod, std::string_view node,
              std::string_view podUid) override {
    std::lock_guard lock(mutex_);
    const std::string key = std::string(ns) + "/" + std::string(pod);
    if (auto failure = take("bind", "pods", key)) return *failure;
    auto& pods = store_["pods"];
    const auto found = pods.find(key);
    if (found == pods.end()) return {StatusCode::kNotFound, "pods \"" + key + "\""};
    Json& object = found->second;
    if (!podUid.empty() && object["metadata"].value("uid", std::string()) != podUid) {
      return {StatusCode::kAborted, "uid precondition"};
    }
    if (!object["spec"].value("nodeName", std::string()).empty()) {
      return {StatusCode::kAlreadyExists, "pod " + key + " is already assigned"};
    }
    object["spec"]["nodeName"] = std::string(node);
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    return Status::ok();
  }

 private:
  struct Failure {
    std::string verb;
    std::string resource;
    Status status;
    int after = 0;  // matching calls to let through first
  };

  // Logs the call, and returns the failure queued for it (taking it off the queue).
  std::optional<Status> take(const std::string& verb, const std::string& resource,
                             const std::string& key) {
    calls_.push_back({verb, resource, key});
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      if (it->verb != verb || it->resource != resource) continue;
      if (it->after > 0) {
        --it->after;
        return std::nullopt;
      }
      Status status = it->status;
      failures_.erase(it);
      return status;
    }
    return std::nullopt;
  }

  StatusOr<Json> replace(const std::string& verb, const kube::ResourceType& type,
                         std::string_view ns, const Json& object, bool statusOnly) {
    std::lock_guard lock(mutex_);
    const std::string name = nameOf(object);
    const std::string key = std::string(ns) + "/" + name;
    if (auto failure = take(verb, type.plural, key)) return *failure;
    auto& kind = store_[type.plural];
    const auto found = kind.find(key);
    if (found == kind.end()) return notFound(type, name);
    if (const auto rv = object["metadata"].value("resourceVersion", std::string());
        !rv.empty() && rv != found->second["metadata"].value("resourceVersion", std::string())) {
      return conflict(type, name);
    }
    Json next = statusOnly ? found->second : object;
    if (statusOnly) {
      next["status"] = object.value("status", Json::object());
    } else if (found->second.contains("status")) {
      next["status"] = found->second["status"];
    }
    next["metadata"]["namespace"] = std::string(ns);
    next["metadata"]["uid"] = found->second["metadata"]["uid"];
    next["metadata"]["resourceVersion"] = std::to_string(++version_);
    found->second = next;
    return next;
  }

  StatusOr<Json> mergeInto(const std::string& verb, const kube::ResourceType& type,
                           std::string_view ns, std::string_view name, const Json& mergePatch,
                           bool statusOnly) {
    std::lock_guard lock(mutex_);
    const std::string key = std::string(ns) + "/" + std::string(name);
    if (auto failure = take(verb, type.plural, key)) return *failure;
    auto& kind = store_[type.plural];
    const auto found = kind.find(key);
    if (found == kind.end()) return notFound(type, name);
    if (const Json* meta = mergePatch.contains("metadata") ? &mergePatch["metadata"] : nullptr;
        meta != nullptr && meta->contains("resourceVersion") &&
        (*meta)["resourceVersion"] != found->second["metadata"]["resourceVersion"]) {
      return conflict(type, name);
    }
    Json next = found->second;
    if (statusOnly) {
      Json status = next.value("status", Json::object());
      status.merge_patch(mergePatch.value("status", Json::object()));
      next["status"] = status;
    } else {
      Json patch = mergePatch;
      patch.erase("status");
      next.merge_patch(patch);
    }
    next["metadata"]["resourceVersion"] = std::to_string(++version_);
    found->second = next;
    return next;
  }

  void stamp(Json& object) {
    object["metadata"]["resourceVersion"] = std::to_string(++version_);
    if (!object["metadata"].contains("uid")) {
      object["metadata"]["uid"] = "uid-" + std::to_string(version_);
    }
  }

  static std::string nameOf(const Json& object) {
    return object["metadata"].value("name", std::string());
  }

  static std::string keyOf(const Json& object) {
    return object["metadata"].value("namespace", std::string()) + "/" + nameOf(object);
  }

  static Status notFound(const kube::ResourceType& type, std::string_view name) {
    return {StatusCode::kNotFound, type.plural + " \"" + std::string(name) + "\" not found"};
  }

  static Status conflict(const kube::ResourceType& type, std::string_view name) {
    return {StatusCode::kAborted, "Operation cannot be fulfilled on " + type.plural + " \"" +
                                      std::string(name) + "\": the object has been modified"};
  }

  // Equality terms only ("a=b,c=d"), what the controllers send.
  static bool matches(const Json& object, const std::string& selector) {
    std::stringstream terms(selector);
    std::string term;
    const Json labels = object["metadata"].value("labels", Json::object());
    while (std::getline(terms, term, ',')) {
      const std::size_t eq = term.find('=');
      if (eq == std::string::npos) return false;
      const std::string label = term.substr(0, eq);
      if (!labels.contains(label) || labels[label] != term.substr(eq + 1)) return false;
    }
    return true;
  }

  mutable std::mutex mutex_;
  std::map<std::string, std::map<std::string, Json>> store_;  // resource -> "ns/name" -> object
  std::vector<Call> calls_;
  std::vector<Failure> failures_;
  std::int64_t version_ = 0;
  int generated_ = 0;
};

}  // namespace kubeslurm::controllers::fakes

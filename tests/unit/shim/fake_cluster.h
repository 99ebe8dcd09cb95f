// An in-memory API server for the CLI's cluster commands: objects by resource, a hook that
// plays the operator on each GET, and a Connector that records the flags it was given.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shim/kube_access.h"

namespace kubeslurm::shim::testing {

class FakeCluster final : public kube::Reader, public kube::Writer {
 public:
  using Json = nlohmann::json;

  std::map<std::string, std::vector<Json>> objects;  // by plural
  // Runs on every GET of an object before it is returned (the operator at work).
  std::function<void(Json&, int getCount)> onGet;
  std::optional<Status> listError;
  int gets = 0;
  std::vector<std::string> deleted;  // "ns/name"
  KubeFlags lastFlags;

  Connector connector(std::string ns = "default", std::string user = "admin") {
    return [this, ns = std::move(ns), user = std::move(user)](
               const KubeFlags& flags, const CliIo&) -> StatusOr<ClusterSession> {
      lastFlags = flags;
      ClusterSession session;
      session.reader = this;
      session.writer = this;
      session.namespaceName = flags.allNamespaces           ? std::string()
                              : flags.namespaceName.empty() ? ns
                                                            : flags.namespaceName;
      session.user = user;
      return session;
    };
  }

  StatusOr<Json> get(const kube::ResourceType& type, std::string_view ns,
                     std::string_view name) override {
    for (Json& object : objects[type.plural]) {
      if (object["metadata"].value("name", "") == name &&
          object["metadata"].value("namespace", "") == ns) {
        ++gets;
        if (onGet) onGet(object, gets);
        return object;
      }
    }
    return notFound(std::string(type.plural) + " \"" + std::string(name) + "\" not found");
  }

  StatusOr<Json> list(const kube::ResourceType& type, std::string_view ns,
                      const kube::ListOptions&) override {
    if (listError) return *listError;
    Json items = Json::array();
    for (const Json& object : objects[type.plural]) {
      if (ns.empty() || !type.namespaced || object["metadata"].value("namespace", "") == ns) {
        items.push_back(object);
      }
    }
    return Json{{"items", items}, {"metadata", Json::object()}};
  }

  StatusOr<Json> create(const kube::ResourceType& type, std::string_view ns,
                        const Json& object) override {
    Json stored = object;
    Json& meta = stored["metadata"];
    if (meta.value("name", "").empty()) {
      meta["name"] = meta.value("generateName", "") + "x7k2p";
    }
    if (meta.value("namespace", "").empty()) meta["namespace"] = std::string(ns);
    objects[type.plural].push_back(stored);
    return stored;
  }

  StatusOr<Json> update(const kube::ResourceType&, std::string_view, const Json&) override {
    return Status(StatusCode::kUnimplemented, "update");
  }

  StatusOr<Json> patch(const kube::ResourceType&, std::string_view, std::string_view,
                       const Json&) override {
    return Status(StatusCode::kUnimplemented, "patch");
  }

  Status remove(const kube::ResourceType& type, std::string_view ns, std::string_view name,
                const kube::DeleteOptions&) override {
    auto& list = objects[type.plural];
    for (auto it = list.begin(); it != list.end(); ++it) {
      if ((*it)["metadata"].value("name", "") == name &&
          (*it)["metadata"].value("namespace", "") == ns) {
        list.erase(it);
        deleted.push_back(std::string(ns) + "/" + std::string(name));
        return Status::ok();
      }
    }
    return notFound("not found");
  }
};

}  // namespace kubeslurm::shim::testing

// An in-memory API server for the CLI's cluster commands: objects by resource, a hook that
// plays the operator on each GET, and a Connector that records the flags it was given.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/cli/kube_access.h"

namespace kubeslurm::cli::testing {

// RFC 7386 by hand: nlohmann's merge_patch trips GCC's -Wnull-dereference.
inline void mergePatch(nlohmann::json& target, const nlohmann::json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = nlohmann::json::object();
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
    } else {
      mergePatch(target[key], value);
    }
  }
}

class FakeCluster final : public kube::Reader, public kube::Writer {
 public:
  using Json = nlohmann::json;

  std::map<std::string, std::vector<Json>> objects;  // by plural
  // Runs on every GET of an object before it is returned (the operator at work).
  std::function<void(Json&, int getCount)> onGet;
  std::optional<Status> listError;
  int gets = 0;
  std::vector<std::string> deleted;  // "ns/name"
  std::vector<std::string> updates;  // "ns/name"
  struct Patch {
    std::string object;  // "ns/name"
    Json body;
  };
  std::vector<Patch> patches;
  std::optional<Status> patchError;
  int patchErrors = -1;  // how many patches fail with patchError; -1: every one
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

  StatusOr<Json> update(const kube::ResourceType& type, std::string_view ns,
                        const Json& object) override {
    const std::string name = object.value(Json::json_pointer("/metadata/name"), std::string());
    for (Json& stored : objects[type.plural]) {
      if (stored["metadata"].value("name", "") == name &&
          stored["metadata"].value("namespace", "") == ns) {
        stored = object;
        updates.push_back(std::string(ns) + "/" + name);
        return stored;
      }
    }
    return notFound(std::string(type.plural) + " \"" + name + "\" not found");
  }

  // A JSON merge patch (RFC 7386), as the client sends it.
  StatusOr<Json> patch(const kube::ResourceType& type, std::string_view ns, std::string_view name,
                       const Json& patchBody) override {
    if (patchError && patchErrors != 0) {
      if (patchErrors > 0) --patchErrors;
      return *patchError;
    }
    for (Json& stored : objects[type.plural]) {
      if (stored["metadata"].value("name", "") == name &&
          stored["metadata"].value("namespace", "") == ns) {
        mergePatch(stored, patchBody);
        patches.push_back({std::string(ns) + "/" + std::string(name), patchBody});
        return stored;
      }
    }
    return notFound(std::string(type.plural) + " \"" + std::string(name) + "\" not found");
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

// A Ready node with `gpus` GPUs, 64 CPUs and 512000 MiB, as the API server returns it.
inline nlohmann::json nodeJson(const std::string& name, int gpus = 8) {
  return nlohmann::json{
      {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
      {"spec", nlohmann::json::object()},
      {"status",
       {{"allocatable",
         {{"cpu", "64"}, {"memory", "512000Mi"}, {"nvidia.com/gpu", std::to_string(gpus)}}},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// A pod bound to `node` that requests `gpus` GPUs and `cpus` CPUs.
inline nlohmann::json podJson(const std::string& ns, const std::string& name,
                              const std::string& node, int gpus, int cpus = 1,
                              const std::string& phase = "Running") {
  return nlohmann::json{{"metadata", {{"name", name}, {"namespace", ns}}},
                        {"spec",
                         {{"nodeName", node},
                          {"containers",
                           {{{"name", "main"},
                             {"resources",
                              {{"requests", {{"cpu", std::to_string(cpus)}}},
                               {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
                        {"status", {{"phase", phase}}}};
}

}  // namespace kubeslurm::cli::testing

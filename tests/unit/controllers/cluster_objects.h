// The objects the controllers read, as the API server serves them, for the controllers' unit
// tests: Nodes as a v1.20 kubelet reports them, pods as a Deployment and as the operator make
// them, Partitions, Accounts and SlurmJobs as sbatch writes them. Each decodes through the codec
// the operator uses, and fails the test if it does not.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/api/timestamp.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::controllers::fakes {

using api::Json;

// When the objects were made: 2026-11-18.
inline constexpr std::int64_t kNow = 1795000000;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

// A Node as the v1.20 kubelet reports it.
inline Json nodeObject(const std::string& name, int gpus, Json labels = Json::object(),
                       const std::string& ready = "True") {
  Json conditions = Json::array();
  if (!ready.empty()) {
    conditions.push_back({{"type", "MemoryPressure"}, {"status", "False"}});
    conditions.push_back({{"type", "Ready"}, {"status", ready}, {"reason", "KubeletReady"}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", Json::object()},
          {"status",
           {{"allocatable",
             {{"cpu", "95500m"},
              {"memory", "1000Gi"},
              {"nvidia.com/gpu", std::to_string(gpus)},
              {"pods", "110"}}},
            {"conditions", conditions}}}};
}

inline api::Node node(const std::string& name, int gpus, Json labels = Json::object(),
                      const std::string& ready = "True") {
  return ok(api::decodeNode(nodeObject(name, gpus, std::move(labels), ready)));
}

// An inference pod as a Deployment makes it: GPUs as limits only (the API server copies them
// into requests), cpu and memory requested.
inline api::Pod inferencePod(const std::string& name, const std::string& nodeName, int gpus,
                             const std::string& phase = "Running") {
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "serving"},
                {"labels", {{"app", "llm"}}},
                {"ownerReferences", Json::array({{{"apiVersion", "apps/v1"},
                                                  {"kind", "ReplicaSet"},
                                                  {"name", "llm-7d9f"},
                                                  {"uid", "rs-1"},
                                                  {"controller", true}}})}}},
              {"spec",
               {{"containers",
                 Json::array({{{"name", "server"},
                               {"image", "vllm/vllm-openai:v0.6.0"},
                               {"resources",
                                {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}}},
                                 {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
              {"status", {{"phase", phase}}}};
  if (!nodeName.empty()) pod["spec"]["nodeName"] = nodeName;
  return ok(api::decodePod(pod));
}

// A rank pod as podspec::rankPods() makes it, bound to `nodeName`.
inline api::Pod rankPod(const std::string& job, int rank, const std::string& nodeName,
                        int attempt = 0, const std::string& phase = "Running", int gpus = 8) {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", job + "-" + std::to_string(rank)},
        {"namespace", "team-a"},
        {"labels",
         {{"kubeslurm.io/job-name", job},
          {"kubeslurm.io/rank", std::to_string(rank)},
          {"kubeslurm.io/attempt", std::to_string(attempt)}}},
        {"annotations", {{"kubeslurm.io/planned-node", nodeName}, {"kubeslurm.io/gang-size", "2"}}},
        {"ownerReferences", Json::array({{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                          {"kind", "SlurmJob"},
                                          {"name", job},
                                          {"uid", "sj-" + job},
                                          {"controller", true}}})}}},
      {"spec",
       {{"nodeName", nodeName},
        {"schedulerName", "kubeslurm"},
        {"containers",
         Json::array({{{"name", "rank"},
                       {"image", "pytorch/pytorch:2.4.0"},
                       {"resources",
                        {{"requests", {{"nvidia.com/gpu", std::to_string(gpus)}}},
                         {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}})}}},
      {"status", {{"phase", phase}}}};
  return ok(api::decodePod(pod));
}

inline Json partitionObject(const std::string& name, Json spec) {
  return {{"apiVersion", "kubeslurm.io/v1alpha1"},
          {"kind", "Partition"},
          {"metadata", {{"name", name}}},
          {"spec", std::move(spec)}};
}

inline api::Partition partition(const std::string& name, Json spec) {
  return ok(api::decodePartition(partitionObject(name, std::move(spec))));
}

// A SlurmJob as sbatch creates it, with no status yet: 2 nodes of 8 GPUs unless `spec` says
// otherwise, submitted ten minutes before kNow.
inline Json slurmJobObject(const std::string& name, const Json& spec = Json::object()) {
  Json object = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                 {"kind", "SlurmJob"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", "team-a"},
                   {"creationTimestamp", api::formatTimestamp(kNow - 600)}}},
                 {"spec",
                  {{"jobName", name},
                   {"user", "alice"},
                   {"script", "#!/bin/bash\nsrun python train.py\n"},
                   {"nodes", 2},
                   {"gpusPerNode", 8}}}};
  object["spec"].merge_patch(spec);
  return object;
}

inline api::SlurmJobObject slurmJob(const std::string& name, std::int64_t id,
                                    const std::string& state, const Json& spec = Json::object(),
                                    const Json& status = Json::object()) {
  Json object = slurmJobObject(name, spec);
  object["status"] = {{"jobId", id}, {"state", state}};
  object["status"].merge_patch(status);
  return ok(api::decodeSlurmJob(object));
}

inline Json accountObject(const std::string& name, const Json& spec,
                          const Json& status = Json::object()) {
  return {{"apiVersion", "kubeslurm.io/v1alpha1"},
          {"kind", "Account"},
          {"metadata", {{"name", name}}},
          {"spec", spec},
          {"status", status}};
}

inline api::Account account(const std::string& name, const Json& spec,
                            const Json& status = Json::object()) {
  return ok(api::decodeAccount(accountObject(name, spec, status)));
}

}  // namespace kubeslurm::controllers::fakes

// A tenant's SlurmJob through everything the operator does with it before a pod exists: decode,
// the cache's hold (cluster_view.h), the pod check (admission_holds.h), the snapshot, the plan,
// and, for a planned start, the gang and its rank pods. Whatever the JSON, the result is a value or
// an error Status: no exception escapes, nothing aborts, and the work stays within what the chart
// gives the operator (run with -rss_limit_mb=512 -timeout=2: the chart's memory limit, and far less
// than the liveness window). Security review C2 (a template field of the wrong type crashed an
// admission thread) and C3 (a 17-byte --nodelist cost 400 MB) are what this target is for.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controllers/admission.h"
#include "controllers/admission_holds.h"
#include "controllers/cluster_view.h"
#include "controllers/snapshot.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/scheduler.h"
#include "kubeslurm/podspec/rank_pods.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

namespace api = kubeslurm::api;
namespace controllers = kubeslurm::controllers;
namespace core = kubeslurm::core;
using api::Json;
using kubeslurm::fuzz::check;

constexpr core::Time kNow = 1795000000;

api::Node node(const std::string& name) {
  auto decoded = api::decodeNode(
      {{"apiVersion", "v1"},
       {"kind", "Node"},
       {"metadata", {{"name", name}, {"labels", {{"kubeslurm.io/leaf", "leaf1"}}}}},
       {"status",
        {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
         {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  check(decoded.isOk());
  return *decoded;
}

const controllers::ClusterObjects& cluster() {
  static const controllers::ClusterObjects objects = [] {
    controllers::ClusterObjects c;
    for (int i = 1; i <= 4; ++i) c.nodes.push_back(node("gpu-" + std::to_string(i)));
    auto train = api::decodePartition(
        {{"apiVersion", "kubeslurm.io/v1alpha1"},
         {"kind", "Partition"},
         {"metadata", {{"name", "train"}, {"resourceVersion", "1"}}},
         {"spec",
          {{"nodes", "gpu-[1-4]"},
           {"default", true},
           // Every memory path: DefMemPerGPU for GPU jobs, DefMemPerCPU for the rest, and
           // MaxMemPerCPU's trade of memory for CPUs.
           {"defMemPerGPU", 49152},
           {"defMemPerCPU", 4096},
           {"maxMemPerCPU", 8192},
           {"sharedVolume", {{"claimName", "home"}, {"mountPath", "/home"}}},
           {"allowedMounts",
            {{{"path", "/datasets"},
              {"readOnly", true},
              {"volume", {{"persistentVolumeClaim", {{"claimName", "datasets"}}}}}}}}}}});
    check(train.isOk());
    c.partitions.push_back(*train);
    auto account = api::decodeAccount({{"apiVersion", "kubeslurm.io/v1alpha1"},
                                       {"kind", "Account"},
                                       {"metadata", {{"name", "nlp"}}},
                                       {"spec", {{"namespaces", {"team-a"}}}}});
    check(account.isOk());
    c.accounts.push_back(*account);
    return c;
  }();
  return objects;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Json object = Json::parse(data, data + size, nullptr, false);
  if (object.is_discarded() || !object.is_object()) return 0;
  // Whatever the tenant wrote, the object the operator reads has what the API server gives it.
  object["apiVersion"] = "kubeslurm.io/v1alpha1";
  object["kind"] = "SlurmJob";
  if (!object["metadata"].is_object()) object["metadata"] = Json::object();
  object["metadata"]["name"] = "job-abcde";
  object["metadata"]["namespace"] = "team-a";
  object["metadata"]["uid"] = "uid-1";
  object["metadata"]["generation"] = 1;
  object["status"] = {{"jobId", 7}, {"state", "PENDING"}};
  auto job = api::decodeSlurmJob(object);

  // As the operator's informer holds it (leanSlurmJob, then holdSlurmJob): decoded once, with as
  // JSON only what the codec does not model; a job that does not decode is held whole. Status
  // writes and array tasks are made from the held job as encoded, so encoding it must give the
  // job again.
  Json lean = object;
  controllers::leanSlurmJob(lean);
  const kubeslurm::kube::ObjectPtr stored = controllers::holdSlurmJob(Json(lean));
  const std::shared_ptr<api::SlurmJobObject> cached = controllers::heldSlurmJob(stored);
  const auto leanJob = api::decodeSlurmJob(lean);
  check(leanJob.isOk() == (cached != nullptr));
  if (cached == nullptr) {
    check(*stored == lean);
  } else {
    check(*cached == *leanJob);
    const auto again = api::decodeSlurmJob(api::encodeSlurmJob(*cached));
    check(again.isOk() && *again == *cached);
  }

  if (!job.isOk()) return 0;

  controllers::ClusterObjects objects = cluster();
  objects.jobs.push_back(*job);
  controllers::AdmissionOptions options;
  options.defaultImage = "busybox:1.36";
  options.toolsImage = "kubeslurm/kubeslurm-tools:fuzz";
  controllers::AdmissionHolds holds;
  const controllers::JobHolds held = holds.holdsFor(
      objects, kNow, [&](const api::SlurmJobObject& j, const api::Partition& partition) {
        return controllers::checkJobPods(j, partition, {7, 0, "alice", "nlp", "normal"}, options);
      });
  const controllers::SnapshotIndex index =
      controllers::buildSnapshot(objects, controllers::SnapshotOptions{}, kNow, held);
  const core::Plan plan = core::plan(index.snapshot, kNow, core::Budget{});
  for (const core::Start& start : plan.starts) {
    // A job the check passed is one whose pods can be made on the nodes it was given.
    auto gang = controllers::gangForStart(start, index, objects, options);
    check(gang.isOk() || gang.status().code() == kubeslurm::StatusCode::kInvalidArgument);
    if (!gang.isOk()) continue;
    // The binder names the step-token Secret when it creates it (generateName); stand in for
    // that name as the binder's own pre-bind check does.
    if (gang->stepSecretName.empty()) {
      gang->stepSecretName = kubeslurm::podspec::stepTokenSecretPrefix(gang->jobName) + "fuzz";
    }
    auto pods = kubeslurm::podspec::rankPods(*gang);
    check(pods.isOk());
    check(pods->size() == gang->nodes.size());
  }
  return 0;
}

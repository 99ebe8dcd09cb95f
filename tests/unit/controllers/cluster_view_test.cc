#include "controllers/cluster_view.h"

#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "controllers/job_object.h"
#include "controllers/job_status.h"
#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/kube/object_store.h"
#include "kubeslurm/podspec/rank_pods.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;

template <typename T>
T ok(StatusOr<T> value) {
  EXPECT_TRUE(value.isOk()) << value.status().toString();
  return std::move(value).value();
}

// A rank pod as the API server returns it once the kubelet has run it: the operator's labels,
// annotations, owner and finalizer beside what a user's template and the server add.
Json rankPod() {
  const Json container = {
      {"name", "rank"},
      {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
      {"command", {"/bin/sh", "-c", "torchrun train.py"}},
      {"env", Json::array({{{"name", "MASTER_PORT"}, {"value", "29500"}},
                           {{"name", "TOKEN"},
                            {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}})},
      {"volumeMounts", Json::array({{{"name", "data"}, {"mountPath", "/data"}}})},
      {"readinessProbe", {{"exec", {{"command", {"true"}}}}}},
      {"resources",
       {{"requests", {{"cpu", "7500m"}, {"memory", "64Gi"}}},
        {"limits", {{"nvidia.com/gpu", "8"}}}}}};
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "train-0"},
        {"namespace", "team-a"},
        {"uid", "pod-uid-0"},
        {"resourceVersion", "4711"},
        {"creationTimestamp", "2026-11-27T10:00:00Z"},
        {"deletionTimestamp", "2026-11-27T11:00:00Z"},
        {"labels", {{"kubeslurm.io/job-name", "train"}, {"kubeslurm.io/rank", "0"}, {"app", "x"}}},
        {"annotations",
         {{"kubeslurm.io/gang-size", "4"},
          {"kubectl.kubernetes.io/last-applied-configuration", std::string(4096, 'x')}}},
        {"ownerReferences", Json::array({{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                          {"kind", "SlurmJob"},
                                          {"name", "train"},
                                          {"uid", "job-uid"},
                                          {"controller", true}}})},
        {"finalizers", {"kubeslurm.io/job-tracking"}},
        {"managedFields", Json::array({{{"manager", "kubeslurm"}, {"fieldsV1", {{"f:x", {}}}}}})}}},
      {"spec",
       {{"nodeName", "gpu-001"},
        {"schedulerName", "kubeslurm"},
        {"hostname", "train-0"},
        {"subdomain", "train"},
        {"restartPolicy", "Never"},
        {"priority", 0},
        {"overhead", {{"cpu", "250m"}}},
        {"initContainers", Json::array({{{"name", "stage"},
                                         {"image", "busybox"},
                                         {"env", Json::array({{{"name", "A"}, {"value", "b"}}})},
                                         {"resources", {{"requests", {{"cpu", "8"}}}}}}})},
        {"containers", Json::array({container})},
        {"volumes", Json::array({{{"name", "data"}, {"emptyDir", Json::object()}}})},
        {"affinity", {{"nodeAffinity", {{"requiredDuringScheduling", "..."}}}}},
        {"tolerations", Json::array({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}})}}},
      {"status",
       {{"phase", "Failed"},
        {"reason", "Error"},
        {"podIP", "10.0.0.7"},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "False"}}})},
        {"containerStatuses", Json::array({{{"name", "rank"},
                                            {"restartCount", 0},
                                            {"state",
                                             {{"terminated",
                                               {{"exitCode", 3},
                                                {"reason", "Error"},
                                                {"startedAt", "2026-11-27T10:00:05Z"},
                                                {"finishedAt", "2026-11-27T10:30:00Z"}}}}}}})}}}};
}

api::Pod decoded(const Json& object) {
  auto pod = api::decodePod(object);
  EXPECT_TRUE(pod.isOk()) << pod.status().toString();
  return std::move(pod).value();
}

TEST(LeanPod, KeepsWhatTheControllersReadAndDropsTheRest) {
  const Json full = rankPod();
  Json lean = full;
  leanPod(lean);
  const api::Pod before = decoded(full);
  const api::Pod after = decoded(lean);

  // What the snapshot charges to the node: the fit plugin's sum, init containers and overhead.
  for (const char* resource : {"nvidia.com/gpu", "memory"}) {
    EXPECT_EQ(api::podRequest(after, resource).value(), api::podRequest(before, resource).value())
        << resource;
  }
  EXPECT_EQ(api::podRequestMilli(after, "cpu").value(), 8250);
  EXPECT_EQ(after.spec.nodeName, "gpu-001");
  EXPECT_EQ(after.spec.schedulerName, "kubeslurm");
  EXPECT_EQ(after.spec.subdomain, "train");

  // Who owns it and what holds it.
  EXPECT_TRUE(isRankPod(after));
  EXPECT_EQ(podJobName(after), "train");
  EXPECT_EQ(after.metadata.uid, "pod-uid-0");
  EXPECT_EQ(after.metadata.resourceVersion, "4711");
  EXPECT_EQ(after.metadata.creationTimestamp, before.metadata.creationTimestamp);
  EXPECT_EQ(after.metadata.deletionTimestamp, before.metadata.deletionTimestamp);
  EXPECT_EQ(after.metadata.labels, before.metadata.labels);
  EXPECT_EQ(after.metadata.finalizers, before.metadata.finalizers);
  ASSERT_EQ(after.metadata.ownerReferences.size(), 1U);
  EXPECT_EQ(after.metadata.ownerReferences[0].uid, "job-uid");
  EXPECT_EQ(podspec::bookkeepingNumber(after.metadata.annotations, podspec::kGangSizeAnnotation),
            4U);

  // How it ended: the status is kept as the kubelet wrote it.
  EXPECT_EQ(lean["status"], full["status"]);
  ASSERT_EQ(after.status.containerStatuses.size(), 1U);
  EXPECT_EQ(after.status.containerStatuses[0].state.exitCode, 3);

  // A user's annotations, the template's env, volumes and probes, and managedFields are gone.
  EXPECT_EQ(after.metadata.annotations.size(), 1U);
  EXPECT_FALSE(lean["metadata"].contains("managedFields"));
  EXPECT_FALSE(lean["spec"].contains("volumes"));
  EXPECT_FALSE(lean["spec"].contains("affinity"));
  EXPECT_EQ(lean["spec"]["containers"][0],
            Json({{"name", "rank"}, {"resources", full["spec"]["containers"][0]["resources"]}}));
  EXPECT_TRUE(after.spec.containers[0].env.empty());
  EXPECT_TRUE(after.spec.initContainers[0].env.empty());
  EXPECT_LT(lean.dump().size() * 3, full.dump().size());
}

TEST(LeanPod, LeavesWhatIsNotAnObjectForTheDecoderToRefuse) {
  Json text = "not a pod";
  leanPod(text);
  EXPECT_EQ(text, Json("not a pod"));

  Json pod = rankPod();
  pod["metadata"] = 3;
  pod["spec"]["containers"] = "rank";
  leanPod(pod);
  EXPECT_EQ(pod["metadata"], Json(3));
  EXPECT_EQ(pod["spec"]["containers"], Json("rank"));
  EXPECT_FALSE(api::decodePod(pod).isOk());
}

// A node as a v1.20 kubelet reports it, with what the scheduler does not read.
Json kubeletNode() {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", "gpu-001"},
            {"uid", "node-uid"},
            {"resourceVersion", "12"},
            {"labels", {{"topology.kubernetes.io/zone", "a"}, {"nvidia.com/gpu.product", "H100"}}},
            {"annotations",
             {{"node.alpha.kubernetes.io/ttl", "0"}, {"kubeslurm.io/drain-reason", "bad gpu"}}}}},
          {"spec",
           {{"providerID", "sim://gpu-001"},
            {"unschedulable", true},
            {"podCIDR", "10.1.0.0/24"},
            {"taints", Json::array({{{"key", "nvidia.com/gpu"}, {"effect", "NoSchedule"}}})}}},
          {"status",
           {{"capacity", {{"nvidia.com/gpu", "8"}, {"cpu", "96"}}},
            {"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "95500m"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
            {"addresses", Json::array({{{"type", "InternalIP"}, {"address", "10.0.0.1"}}})},
            {"images", Json::array({{{"names", {"nvcr.io/nvidia/pytorch:24.05-py3"}},
                                     {"sizeBytes", 20000000000}}})},
            {"nodeInfo", {{"kubeletVersion", "v1.20.2"}}},
            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}}}}};
}

// A job's script waits in the API server until its gang is admitted (job_object.h): the cache
// holds a stand-in that still decodes as a script; the rest of the job is kept as it came.
TEST(LeanSlurmJob, KeepsAStandInForTheScriptAndTheRestAsItCame) {
  api::Json job = {{"apiVersion", "kubeslurm.io/v1alpha1"},
                   {"kind", "SlurmJob"},
                   {"metadata",
                    {{"name", "train"},
                     {"namespace", "team-a"},
                     {"labels", {{"team", "nlp"}}},
                     {"managedFields", api::Json::array({{{"manager", "kubectl"}}})}}},
                   {"spec",
                    {{"jobName", "train"},
                     {"script", std::string(4096, '#')},
                     {"podTemplate", {{"spec", api::Json::object()}}}}},
                   {"status", {{"jobId", 7}}}};
  api::Json lean = job;
  leanSlurmJob(lean);
  EXPECT_EQ(lean["spec"]["script"], std::string(kScriptNotCached));
  EXPECT_FALSE(lean["metadata"].contains("managedFields"));
  api::Json rest = job;
  rest["metadata"].erase("managedFields");
  rest["spec"]["script"] = lean["spec"]["script"];
  EXPECT_EQ(lean, rest);
  const auto decoded = api::decodeSlurmJob(lean);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->script, kScriptNotCached);

  // What the decoder must judge is left to it.
  api::Json odd = {{"spec", {{"script", 42}}}};
  leanSlurmJob(odd);
  EXPECT_EQ(odd["spec"]["script"], 42);
  api::Json text = "not an object";
  leanSlurmJob(text);
  EXPECT_EQ(text, "not an object");
}

// A SlurmJob as the API server sends it: what the codec models, beside what it passes through
// (labels, a pod template, a rendezvous, conditions).
Json slurmJobObject() {
  return {{"apiVersion", "kubeslurm.io/v1alpha1"},
          {"kind", "SlurmJob"},
          {"metadata",
           {{"name", "train"},
            {"namespace", "team-a"},
            {"uid", "job-uid"},
            {"resourceVersion", "812"},
            {"generation", 2},
            {"labels", {{"team", "nlp"}}}}},
          {"spec",
           {{"jobName", "train"},
            {"user", "alice"},
            {"partition", "gpu"},
            {"timeLimit", "60"},
            {"nodes", 2},
            {"gpusPerNode", 8},
            {"script", "#!/bin/bash\nsrun python train.py\n"},
            {"podTemplate", {{"spec", {{"containers", Json::array({{{"name", "rank"}}})}}}}},
            {"rendezvous", {{"port", 29400}}},
            {"cancel", true}}},
          {"status",
           {{"jobId", 7},
            {"state", "PENDING"},
            {"reason", "Priority"},
            {"conditions", Json::array({{{"type", "Valid"}, {"status", "True"}}})}}}};
}

// The cache holds a job decoded, once, and as JSON only what the codec does not model; the
// job it holds is the one the whole object decodes to, and encodes to the same object.
TEST(HoldSlurmJob, HoldsTheDecodedJobAndAsJsonOnlyWhatItsCodecDoesNotModel) {
  Json lean = slurmJobObject();
  leanSlurmJob(lean);
  const kube::ObjectPtr held = holdSlurmJob(Json(lean));
  const std::shared_ptr<api::SlurmJobObject> job = heldSlurmJob(held);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(*job, ok(api::decodeSlurmJob(lean)));
  EXPECT_EQ(&*job->raw, held.get());  // the store points at the job's own `raw`

  // As JSON: the whole metadata (keys, indexes and handlers read it), and the rest the codec
  // passes through.
  EXPECT_EQ(kube::objectKey(*held), "team-a/train");
  EXPECT_EQ((*held)["metadata"], lean["metadata"]);
  EXPECT_EQ((*held)["spec"], Json({{"podTemplate", lean["spec"]["podTemplate"]},
                                   {"rendezvous", {{"port", 29400}}},
                                   {"cancel", true}}));
  EXPECT_TRUE(cancelRequested(*job));  // scancel's request, which the codec passes through
  EXPECT_EQ((*held)["status"], Json({{"conditions", lean["status"]["conditions"]}}));

  // Encoded, it is the object again, up to how the codec writes a time limit.
  Json expected = lean;
  expected["spec"]["timeLimit"] = "01:00:00";
  EXPECT_EQ(api::encodeSlurmJob(*job), expected);
  EXPECT_EQ(ok(api::decodeSlurmJob(api::encodeSlurmJob(*job))), *job);
}

TEST(HoldSlurmJob, HoldsAJobThatDoesNotDecodeAsItCameForTheViewToReport) {
  Json bad = slurmJobObject();
  bad["spec"]["nodes"] = "many";
  const kube::ObjectPtr held = holdSlurmJob(Json(bad));
  EXPECT_EQ(heldSlurmJob(held), nullptr);
  EXPECT_EQ(*held, bad);
  EXPECT_EQ(heldSlurmJob(std::make_shared<const Json>(slurmJobObject())), nullptr);

  kube::ObjectStore none;
  kube::ObjectStore jobs;
  jobs.put("team-a/train", held);
  ClusterView view;
  const ReconcileInput input = view.read(none, none, jobs, none, none);
  EXPECT_TRUE(input.objects.jobs.empty());
  ASSERT_EQ(input.undecodable.size(), 1U);
  EXPECT_EQ(input.undecodable[0].name, "train");
  EXPECT_EQ(input.undecodable[0].object, bad);
}

// The view hands each cycle the held record itself, not a copy, and decodes nothing.
TEST(ClusterView, HandsTheCycleTheHeldJobItself) {
  kube::ObjectStore none;
  kube::ObjectStore jobs;
  Json lean = slurmJobObject();
  leanSlurmJob(lean);
  const kube::ObjectPtr held = holdSlurmJob(std::move(lean));
  jobs.put("team-a/train", held);
  // One stored as JSON (a test's, or before the holder): decoded by the view, as before.
  Json other = slurmJobObject();
  other["metadata"]["name"] = "eval";
  jobs.put("team-a/eval", std::make_shared<const Json>(other));

  ClusterView view;
  const ReconcileInput input = view.read(none, none, jobs, none, none);
  ASSERT_EQ(input.objects.jobs.size(), 2U);
  EXPECT_EQ(view.stats().decoded, 2U);
  bool sawHeld = false;
  for (std::size_t i = 0; i < input.objects.jobs.size(); ++i) {
    if (input.objects.jobs[i].name != "train") continue;
    EXPECT_EQ(input.objects.jobs.shared(i).get(), heldSlurmJob(held).get());
    sawHeld = true;
  }
  EXPECT_TRUE(sawHeld);
}

// Nodes and pods are held decoded without their `raw`, and as JSON only their kind and metadata
// (what the store's keys and the handlers read); the view takes the records as they are.
TEST(HoldNodeAndPod, HoldTheRecordsWithoutJsonAndTheViewTakesThem) {
  Json lean = rankPod();
  leanPod(lean);
  const kube::ObjectPtr pod = holdPod(Json(lean));
  const std::shared_ptr<api::Pod> heldPodRecord = heldPod(pod);
  ASSERT_NE(heldPodRecord, nullptr);
  EXPECT_EQ(heldNode(pod), nullptr);
  EXPECT_EQ(*pod, Json({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", lean["metadata"]}}));
  EXPECT_EQ(kube::objectKey(*pod), "team-a/train-0");
  EXPECT_TRUE(heldPodRecord->raw.empty());
  EXPECT_TRUE(heldPodRecord->spec.containers[0].raw.empty());
  EXPECT_EQ(heldPodRecord->spec.nodeName, "gpu-001");
  EXPECT_EQ(heldPodRecord->status.containerStatuses[0].state.exitCode, 3);

  Json leanNodeObject = kubeletNode();
  leanNode(leanNodeObject);
  const kube::ObjectPtr node = holdNode(Json(leanNodeObject));
  ASSERT_NE(heldNode(node), nullptr);
  EXPECT_FALSE(node->contains("status"));
  EXPECT_TRUE(heldNode(node)->raw.empty());
  EXPECT_EQ(heldNode(node)->allocatable, ok(api::decodeNode(leanNodeObject)).allocatable);

  // What does not decode is held as it came.
  const Json odd = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", "not an object"}};
  EXPECT_EQ(heldPod(holdPod(Json(odd))), nullptr);
  EXPECT_EQ(*holdPod(Json(odd)), odd);

  kube::ObjectStore nodes;
  kube::ObjectStore pods;
  kube::ObjectStore none;
  nodes.put("gpu-001", node);
  pods.put("team-a/train-0", pod);
  ClusterView view;
  const ReconcileInput input = view.read(nodes, pods, none, none, none);
  ASSERT_EQ(input.objects.pods.size(), 1U);
  ASSERT_EQ(input.objects.nodes.size(), 1U);
  EXPECT_EQ(&input.objects.pods[0], heldPodRecord.get());
  EXPECT_EQ(&input.objects.nodes[0], heldNode(node).get());
}

TEST(LeanNode, KeepsWhatTheSnapshotReads) {
  const Json full = kubeletNode();
  Json lean = full;
  leanNode(lean);
  auto before = api::decodeNode(full);
  auto after = api::decodeNode(lean);
  ASSERT_TRUE(after.isOk()) << after.status().toString();
  EXPECT_EQ(after->metadata.name, "gpu-001");
  EXPECT_EQ(after->metadata.labels, before->metadata.labels);
  EXPECT_TRUE(after->unschedulable);
  ASSERT_EQ(after->taints.size(), 1U);
  EXPECT_EQ(after->taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(after->allocatable, before->allocatable);
  EXPECT_EQ(after->capacity, before->capacity);
  EXPECT_EQ(api::nodeReadyStatus(*after), "True");
  EXPECT_EQ(after->addresses, before->addresses);
  EXPECT_EQ(after->metadata.annotations,
            (std::map<std::string, std::string>{{"kubeslurm.io/drain-reason", "bad gpu"}}));
  EXPECT_FALSE(lean["status"].contains("images"));
  EXPECT_FALSE(lean["status"].contains("nodeInfo"));
  EXPECT_FALSE(lean["spec"].contains("podCIDR"));
}

TEST(ClusterView, KeepsDecodedNodesAndPodsWithoutTheirJson) {
  kube::ObjectStore nodes;
  kube::ObjectStore pods;
  kube::ObjectStore jobs;
  kube::ObjectStore partitions;
  kube::ObjectStore accounts;
  Json lean = rankPod();
  leanPod(lean);
  pods.put("team-a/train-0", std::make_shared<const Json>(lean));
  nodes.put("gpu-001", std::make_shared<const Json>(kubeletNode()));

  ClusterView view;
  const ReconcileInput input = view.read(nodes, pods, jobs, partitions, accounts);
  ASSERT_EQ(input.objects.pods.size(), 1U);
  const api::Pod& pod = input.objects.pods[0];
  EXPECT_EQ(pod.metadata.name, "train-0");
  EXPECT_EQ(pod.status.containerStatuses[0].state.exitCode, 3);
  EXPECT_TRUE(pod.raw.empty());
  EXPECT_TRUE(pod.metadata.ownerReferences[0].raw.empty());
  EXPECT_TRUE(pod.spec.containers[0].raw.empty());
  EXPECT_TRUE(pod.status.containerStatuses[0].raw.empty());
  EXPECT_TRUE(pod.status.conditions[0].raw.empty());
  ASSERT_EQ(input.objects.nodes.size(), 1U);
  EXPECT_TRUE(input.objects.nodes[0].raw.empty());
  EXPECT_TRUE(input.objects.nodes[0].taints[0].raw.empty());
  EXPECT_TRUE(input.objects.nodes[0].conditions[0].raw.empty());
  EXPECT_EQ(view.stats().decoded, 2U);

  // Read again unchanged: taken from the view, not decoded again.
  const ReconcileInput again = view.read(nodes, pods, jobs, partitions, accounts);
  EXPECT_EQ(again.objects.pods.size(), 1U);
  EXPECT_EQ(view.stats().decoded, 0U);
  EXPECT_EQ(view.stats().reused, 2U);
}

}  // namespace
}  // namespace kubeslurm::controllers

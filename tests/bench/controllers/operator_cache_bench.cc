// The operator's caches at scale: what the informers' stores and the cluster view hold, and what
// a cycle spends before its first write (reading the view, building the snapshot, planning),
// for a cluster of --nodes 8-GPU nodes and --jobs SlurmJobs. Measures; asserts nothing.
//
//   build/bin/operator_cache_bench [--nodes 5000] [--jobs 50000] [--repeats 5]
//                                  [--stores baseline,lean,held]   (which stores to measure)
//                                  [--arrays 0 --array-tasks 1000 --array-made 256]
//
// --arrays adds that many pending arrays of --array-tasks one-GPU tasks each, of which
// --array-made are made as SlurmJobs (pending; the operator's default keeps 256 waiting, all of
// them made is how it kept arrays before): the cycle with many pending arrays, and what their
// task objects cost.
// The cluster: every node as a v1.20 kubelet reports it (images, nodeInfo, heartbeats); gangs of
// 4 x 8 GPUs running on three quarters of the nodes, each with its rank pods as the operator
// makes them; one 1-GPU inference pod per 5 nodes on the rest; the other jobs pending (60%) or
// finished.
// Every object is serialised as the API server sends it and parsed, transformed and stored as an
// informer does, three times: with the transform every informer had (managedFields dropped), with
// the operator's transforms (leanNode, leanPod, leanSlurmJob) and with those and every object
// held decoded (holdNode, holdPod, holdSlurmJob), as the operator keeps them. "job fill" is the
// informer's time to parse, transform and store every SlurmJob (the reflector thread's, not the
// loop's); "1st read" is the loop's first read of the view, which decodes what the stores did not.
// "cycle" is one read, snapshot and plan timed together, as the loop runs them (with the
// snapshot memo the cycle before filled), while the last cycle's snapshot is still published for
// the query API; "faults" are the minor page faults each cycle took (memory it touched fresh from
// the kernel). "snapshot" and "no-memo cycle" build without the memo (the nodes translated
// afresh), "memo snap" with it, and "memo" is what the memo holds: no node changes between
// cycles here, so these bound what the memo saves (a node the informer replaced is translated
// afresh, as without one).
// Memory is RSS growth after malloc_trim, so that freed parse buffers do not count. Times are
// medians of --repeats on this machine: compare the two stores with each other, not with another
// machine.
//
// Ends with one line of JSON.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controllers/arrays.h"
#include "controllers/cluster_view.h"
#include "controllers/snapshot.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/kube/informer.h"
#include "kubeslurm/kube/object_store.h"
#include "kubeslurm/slurm/sbatch_options.h"
#include "tests/bench/resident_memory.h"

namespace kubeslurm::controllers {
namespace {

using api::Json;
using Clock = std::chrono::steady_clock;

constexpr core::Time kNow = 1795000000;

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::string nodeName(int i) {
  const std::string digits = std::to_string(i + 1);
  return "gpu-" + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
}

Json managedFields(const std::string& manager, Json fields) {
  return Json::array({{{"manager", manager},
                       {"operation", "Update"},
                       {"apiVersion", "v1"},
                       {"time", "2026-11-20T10:00:00Z"},
                       {"fieldsType", "FieldsV1"},
                       {"fieldsV1", std::move(fields)}}});
}

Json kubeletNode(int i) {
  Json images = Json::array();
  for (int k = 0; k < 12; ++k) {
    images.push_back(
        {{"names", Json::array({"nvcr.io/nvidia/pytorch@sha256:" + std::string(64, 'a'),
                                "nvcr.io/nvidia/pytorch:24." + std::to_string(k)})},
         {"sizeBytes", 9000000000 + k}});
  }
  Json conditions = Json::array();
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    conditions.push_back({{"type", type},
                          {"status", std::string(type) == "Ready" ? "True" : "False"},
                          {"reason", std::string("Kubelet") + type},
                          {"message", "kubelet reports " + std::string(type)},
                          {"lastHeartbeatTime", "2026-11-20T10:00:00Z"},
                          {"lastTransitionTime", "2026-11-01T10:00:00Z"}});
  }
  const std::string name = nodeName(i);
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "node-" + std::to_string(i)},
            {"resourceVersion", std::to_string(1000 + i)},
            {"creationTimestamp", "2026-11-01T10:00:00Z"},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
              {"kubeslurm.io/leaf", "leaf" + std::to_string(i / 32)},
              {"kubeslurm.io/spine", "spine" + std::to_string(i / 512)}}},
            {"annotations",
             {{"node.alpha.kubernetes.io/ttl", "0"},
              {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}},
            {"managedFields", managedFields("kubelet", {{"f:status", {{"f:images", {}}}}})}}},
          {"spec", {{"providerID", "sim://" + name}, {"podCIDR", "10.244.0.0/24"}}},
          {"status",
           {{"capacity", {{"nvidia.com/gpu", "8"}, {"cpu", "96"}, {"memory", "2000Gi"}}},
            {"allocatable", {{"nvidia.com/gpu", "8"}, {"cpu", "95500m"}, {"memory", "1990Gi"}}},
            {"conditions", conditions},
            {"addresses", Json::array({{{"type", "InternalIP"}, {"address", "10.1.0.1"}},
                                       {{"type", "Hostname"}, {"address", name}}})},
            {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
            {"nodeInfo",
             {{"kubeletVersion", "v1.20.2"},
              {"containerRuntimeVersion", "containerd://1.6.20"},
              {"kernelVersion", "5.15.0"},
              {"osImage", "Ubuntu 22.04"},
              {"machineID", std::string(32, 'f')},
              {"systemUUID", std::string(36, 'e')},
              {"bootID", std::string(36, 'd')}}},
            {"images", images}}}};
}

// A pod with `env` variables, bound to `node`, Running.
Json boundPod(const std::string& ns, const std::string& name, const std::string& node,
              const std::string& gpus, Json labels, Json owners, int env) {
  Json vars = Json::array();
  for (int k = 0; k < env; ++k) {
    vars.push_back({{"name", "VAR_" + std::to_string(k)}, {"value", "value-" + std::to_string(k)}});
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", "uid-" + ns + "-" + name},
        {"resourceVersion", "5000"},
        {"creationTimestamp", "2026-11-20T10:00:00Z"},
        {"labels", std::move(labels)},
        {"annotations", {{"kubeslurm.io/gang-size", "4"}}},
        {"ownerReferences", std::move(owners)},
        {"managedFields", managedFields("kubeslurm-operator", {{"f:spec", {{"f:env", {}}}}})}}},
      {"spec",
       {{"nodeName", node},
        {"schedulerName", "kubeslurm"},
        {"restartPolicy", "Never"},
        {"containers",
         Json::array({{{"name", "rank"},
                       {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                       {"command", Json::array({"/kubeslurm/kubeslurm-inpod", "batch"})},
                       {"env", vars},
                       {"volumeMounts",
                        Json::array({{{"name", "script"}, {"mountPath", "/kubeslurm/script"}}})},
                       {"resources",
                        {{"limits", {{"nvidia.com/gpu", gpus}}},
                         {"requests", {{"nvidia.com/gpu", gpus}, {"cpu", "8"}}}}}}})},
        {"volumes", Json::array({{{"name", "script"}, {"configMap", {{"name", name}}}}})}}},
      {"status",
       {{"phase", "Running"},
        {"podIP", "10.244.1.1"},
        {"hostIP", "10.1.0.1"},
        {"startTime", "2026-11-20T10:00:01Z"},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})},
        {"containerStatuses",
         Json::array({{{"name", "rank"},
                       {"ready", true},
                       {"restartCount", 0},
                       {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                       {"imageID", "sha256:" + std::string(64, 'b')},
                       {"containerID", "containerd://" + std::string(64, 'c')},
                       {"state", {{"running", {{"startedAt", "2026-11-20T10:00:04Z"}}}}}}})}}}};
}

// A SlurmJob as `sbatch` makes it, with the status the operator writes for `state`.
Json slurmJob(const api::SlurmJobObject& submitted, int i, const std::string& state,
              const std::string& nodes) {
  api::SlurmJobObject job = submitted;
  job.name = "train-" + std::to_string(i);
  api::SlurmJobStatus status;
  status.jobId = 1000 + i;
  status.state = state;
  status.stateCode = state == "PENDING" ? "PD" : state == "RUNNING" ? "R" : "CD";
  status.reason = state == "PENDING" ? "Priority" : "None";
  status.submitTime = kNow - 3600;
  if (state != "PENDING") status.startTime = kNow - 1800;
  if (state == "COMPLETED") {
    status.endTime = kNow - 60;
    status.exitCode = "0:0";
  }
  status.nodeList = nodes;
  job.status = status;
  Json object = api::encodeSlurmJob(job);
  object["metadata"]["uid"] = "job-uid-" + std::to_string(i);
  object["metadata"]["resourceVersion"] = std::to_string(9000 + i);
  object["metadata"]["creationTimestamp"] = "2026-11-20T09:00:00Z";
  object["metadata"]["managedFields"] = managedFields("kubectl-create", {{"f:spec", {}}});
  return object;
}

struct Cluster {
  std::vector<std::string> nodes, pods, jobs, partitions;  // as the API server sends them
};

// `arrays` pending arrays of `tasks` tasks, `made` of them as task SlurmJobs (PENDING, with ids),
// as the API server sends them.
void addArrays(Cluster& c, int arrays, int tasks, int made) {
  std::string script = "#!/bin/bash\n#SBATCH --gres=gpu:1\n";
  while (script.size() < 1024) script += "srun python infer.py --shard $SLURM_ARRAY_TASK_ID\n";
  slurm::SbatchContext context;
  context.now = kNow - 3600;
  context.cwd = "/home/alice";
  const std::string range = "0-" + std::to_string(tasks - 1);
  const slurm::SbatchParseResult parsed = slurm::parseSbatch(
      {"-J", "shards", "-p", "gpu", "-t", "1:00:00", "--array", range, "infer.sh"}, script,
      context);
  const api::SlurmJobObject submitted =
      api::slurmJobFromInvocation(*parsed.invocation, "team-a", "alice");
  std::int64_t nextId = 2'000'000;
  for (int a = 0; a < arrays; ++a) {
    api::SlurmJobObject array = submitted;
    array.name = "shards-" + std::to_string(a);
    api::SlurmJobStatus status;
    status.jobId = nextId++;
    status.state = "PENDING";
    status.stateCode = "PD";
    status.reason = "Priority";
    status.submitTime = kNow - 3600;
    array.status = status;
    Json parent = api::encodeSlurmJob(array);
    parent["metadata"]["uid"] = "array-uid-" + std::to_string(a);
    parent["metadata"]["resourceVersion"] = std::to_string(nextId);
    parent["metadata"]["creationTimestamp"] = "2026-11-20T09:00:00Z";
    c.jobs.push_back(parent.dump());
    const api::SlurmJobObject decoded = *api::decodeSlurmJob(parent);
    for (int t = 0; t < std::min(made, tasks); ++t) {
      Json task = arrayTaskObject(decoded, static_cast<std::uint32_t>(t));
      task["metadata"]["uid"] = "task-uid-" + std::to_string(a) + "-" + std::to_string(t);
      task["metadata"]["resourceVersion"] = std::to_string(nextId);
      task["metadata"]["creationTimestamp"] = "2026-11-20T09:00:01Z";
      task["status"] = {{"jobId", nextId++},
                        {"state", "PENDING"},
                        {"stateCode", "PD"},
                        {"reason", "Priority"},
                        {"arrayJobId", *status.jobId},
                        {"arrayTaskId", t},
                        {"submitTime", "2026-11-20T09:00:00Z"}};
      c.jobs.push_back(task.dump());
    }
  }
}

Cluster makeCluster(int nodeCount, int jobCount) {
  Cluster c;
  for (int i = 0; i < nodeCount; ++i) c.nodes.push_back(kubeletNode(i).dump());

  std::string script = "#!/bin/bash\n#SBATCH -N 4\n#SBATCH --gres=gpu:8\n";
  while (script.size() < 1024) script += "srun python train.py --config configs/large.yaml\n";
  slurm::SbatchContext context;
  context.now = kNow - 3600;
  context.cwd = "/home/alice";
  const slurm::SbatchParseResult parsed = slurm::parseSbatch(
      {"-J", "train", "-p", "gpu", "-t", "4:00:00", "train.sh"}, script, context);
  const api::SlurmJobObject submitted =
      api::slurmJobFromInvocation(*parsed.invocation, "team-a", "alice");

  const int running = std::min(jobCount, nodeCount * 3 / 16);
  for (int i = 0; i < jobCount; ++i) {
    const bool isRunning = i < running;
    const std::string state = isRunning ? "RUNNING" : (i % 10 < 6 ? "PENDING" : "COMPLETED");
    const std::string first = isRunning ? nodeName(4 * i) : "";
    c.jobs.push_back(slurmJob(submitted, i, state, first).dump());
    if (!isRunning) continue;
    const std::string job = "train-" + std::to_string(i);
    const Json owner = Json::array({{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                     {"kind", "SlurmJob"},
                                     {"name", job},
                                     {"uid", "job-uid-" + std::to_string(i)},
                                     {"controller", true}}});
    for (int rank = 0; rank < 4; ++rank) {
      const Json labels = {{"kubeslurm.io/job-name", job},
                           {"kubeslurm.io/job-id", std::to_string(1000 + i)},
                           {"kubeslurm.io/rank", std::to_string(rank)},
                           {"kubeslurm.io/attempt", "0"}};
      c.pods.push_back(boundPod("team-a", job + "-" + std::to_string(rank), nodeName(4 * i + rank),
                                "8", labels, owner, 30)
                           .dump());
    }
  }
  for (int i = 0; i < nodeCount / 5; ++i) {
    const Json owner = Json::array(
        {{{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "llm"}, {"uid", "rs"}}});
    const int node = running * 4 + i % std::max(1, nodeCount - running * 4);
    c.pods.push_back(boundPod("serving", "llm-" + std::to_string(i), nodeName(node), "1",
                              {{"app", "llm"}}, owner, 10)
                         .dump());
  }
  c.partitions.push_back(Json({{"apiVersion", "kubeslurm.io/v1alpha1"},
                               {"kind", "Partition"},
                               {"metadata", {{"name", "gpu"}, {"resourceVersion", "1"}}},
                               {"spec",
                                {{"nodes", "gpu-[00001-" + nodeName(nodeCount - 1).substr(4) + "]"},
                                 {"default", true}}}})
                             .dump());
  return c;
}

// Parses, transforms and stores `texts` as an informer does (kube::Informer::prepare); returns
// the RSS it added.
std::int64_t fill(kube::ObjectStore& store, const std::vector<std::string>& texts,
                  const kube::Transform& transform, const kube::Holder& holder = nullptr) {
  const std::int64_t before = bench::residentBytes();
  for (const std::string& text : texts) {
    Json object = Json::parse(text);
    transform(object);
    kube::ObjectPtr held =
        holder ? holder(std::move(object)) : std::make_shared<const Json>(std::move(object));
    std::string key = kube::objectKey(*held);
    store.put(key, std::move(held));
  }
  return bench::residentBytes() - before;
}

template <typename F>
double medianMs(int repeats, F&& run) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto began = Clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - began).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Figures {
  std::string label;
  std::map<std::string, double> storeMib;  // by kind
  double viewMib = 0;
  double cycleCopyMib = 0;
  double jobFillMs = 0;
  double firstReadMs = 0;
  double readMs = 0;
  double snapshotMs = 0;
  double memoSnapshotMs = 0;
  double memoMib = 0;  // what the memo holds (RSS growth of the build that filled it)  // with the
                       // memo the build before filled, nothing changed since
  double planMs = 0;
  double coldCycleMs = 0;  // without a memo
  double cycleMs = 0;
  double cycleFaults = 0;  // minor page faults per cycle
};

Figures measure(const Cluster& cluster, const std::string& label, const kube::Transform& nodeT,
                const kube::Transform& podT, const kube::Transform& jobT, bool held, int repeats) {
  Figures f;
  f.label = label;
  kube::ObjectStore nodes;
  kube::ObjectStore pods;
  kube::ObjectStore jobs;
  kube::ObjectStore partitions;
  kube::ObjectStore accounts;
  const auto holder = [held](const kube::Holder& h) { return held ? h : kube::Holder(); };
  f.storeMib["nodes"] = mib(fill(nodes, cluster.nodes, nodeT, holder(holdNode)));
  f.storeMib["pods"] = mib(fill(pods, cluster.pods, podT, holder(holdPod)));
  const auto filling = Clock::now();
  f.storeMib["slurmjobs"] = mib(fill(jobs, cluster.jobs, jobT, holder(holdSlurmJob)));
  f.jobFillMs = std::chrono::duration<double, std::milli>(Clock::now() - filling).count();
  fill(partitions, cluster.partitions, kube::dropManagedFields);

  ClusterView view;
  std::int64_t before = bench::residentBytes();
  auto began = Clock::now();
  { const ReconcileInput first = view.read(nodes, pods, jobs, partitions, accounts); }
  f.firstReadMs = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
  f.viewMib = mib(bench::residentBytes() - before);

  before = bench::residentBytes();
  ReconcileInput input = view.read(nodes, pods, jobs, partitions, accounts);
  f.cycleCopyMib = mib(bench::residentBytes() - before);
  f.readMs = medianMs(repeats, [&] { (void)view.read(nodes, pods, jobs, partitions, accounts); });

  SnapshotOptions options;
  SnapshotIndex index;
  f.snapshotMs = medianMs(repeats, [&] { index = buildSnapshot(input.objects, options, kNow); });
  SnapshotMemo memo;
  before = bench::residentBytes();
  (void)buildSnapshot(input.objects, options, kNow, {}, &memo);
  f.memoMib = mib(bench::residentBytes() - before);
  f.memoSnapshotMs =
      medianMs(repeats, [&] { index = buildSnapshot(input.objects, options, kNow, {}, &memo); });
  core::Budget budget;
  f.planMs = medianMs(repeats, [&] { (void)core::plan(index.snapshot, kNow, budget); });
  // The last cycle's snapshot stays published (for the query API) while the next is built.
  auto published = std::make_shared<const SnapshotIndex>(std::move(index));
  const auto cycle = [&](SnapshotMemo* carried) {
    const ReconcileInput read = view.read(nodes, pods, jobs, partitions, accounts);
    SnapshotIndex built = buildSnapshot(read.objects, options, kNow, {}, carried);
    (void)core::plan(built.snapshot, kNow, budget);
    published = std::make_shared<const SnapshotIndex>(std::move(built));
  };
  f.coldCycleMs = medianMs(repeats, [&] { cycle(nullptr); });
  const std::int64_t faults = bench::minorFaults();
  f.cycleMs = medianMs(repeats, [&] { cycle(&memo); });
  f.cycleFaults = static_cast<double>(bench::minorFaults() - faults) / repeats;
  return f;
}

// What the stores and the view hold together.
double totalMib(const Figures& f) {
  double total = f.viewMib;
  for (const auto& [kind, size] : f.storeMib) total += size;
  return total;
}

int run(int argc, char** argv) {
  int nodeCount = 5000;
  int jobCount = 50000;
  int repeats = 5;
  int arrays = 0;
  int arrayTasks = 1000;
  int arrayMade = 256;
  std::string stores = "baseline,lean,held";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--stores") {
      stores = argv[i + 1];
      continue;
    }
    const int value = std::stoi(argv[i + 1]);
    if (flag == "--nodes") nodeCount = std::max(value, 4);
    if (flag == "--jobs") jobCount = std::max(value, 1);
    if (flag == "--repeats") repeats = std::max(value, 1);
    if (flag == "--arrays") arrays = std::max(value, 0);
    if (flag == "--array-tasks") arrayTasks = std::max(value, 1);
    if (flag == "--array-made") arrayMade = std::max(value, 0);
  }
  std::cerr << "generating " << nodeCount << " nodes and " << jobCount << " SlurmJobs\n";
  Cluster cluster = makeCluster(nodeCount, jobCount);
  if (arrays > 0) {
    std::cerr << "and " << arrays << " pending arrays of " << arrayTasks << " tasks, "
              << std::min(arrayMade, arrayTasks) << " of each made\n";
    addArrays(cluster, arrays, arrayTasks, arrayMade);
  }
  std::int64_t textBytes = 0;
  for (const auto* list : {&cluster.nodes, &cluster.pods, &cluster.jobs}) {
    for (const std::string& text : *list) textBytes += static_cast<std::int64_t>(text.size());
  }

  const auto wanted = [&stores](std::string_view name) {
    return ("," + stores + ",").find("," + std::string(name) + ",") != std::string::npos;
  };
  std::vector<Figures> all;
  if (wanted("baseline")) {
    std::cerr << "stores as every informer kept them (managedFields dropped)\n";
    all.push_back(measure(cluster, "baseline", kube::dropManagedFields, kube::dropManagedFields,
                          kube::dropManagedFields, false, repeats));
  }
  if (wanted("lean")) {
    std::cerr << "stores with the lean transforms (leanNode, leanPod, leanSlurmJob)\n";
    all.push_back(measure(cluster, "lean", leanNode, leanPod, leanSlurmJob, false, repeats));
  }
  if (wanted("held")) {
    std::cerr << "stores as the operator keeps them: lean, held decoded (holdNode, holdPod, "
                 "holdSlurmJob)\n";
    all.push_back(measure(cluster, "held", leanNode, leanPod, leanSlurmJob, true, repeats));
  }

  std::printf("== operator caches: %d nodes, %zu pods, %d SlurmJobs (%.1f MiB as JSON text) ==\n",
              nodeCount, cluster.pods.size(), jobCount, mib(textBytes));
  std::printf("%-9s %9s %9s %9s %9s %9s %10s %9s %9s %9s %9s %9s %9s %9s %13s %9s %9s\n", "stores",
              "nodes", "pods", "jobs", "view", "total", "cycle copy", "job fill", "1st read",
              "read", "snapshot", "memo", "memo snap", "plan", "no-memo cycle", "cycle", "faults");
  for (const Figures& f : all) {
    std::printf(
        "%-9s %7.1f M %7.1f M %7.1f M %7.1f M %7.1f M %8.1f M %6.0f ms %6.0f ms %6.1f ms %6.1f ms "
        "%7.1f M %6.1f ms %6.1f ms %10.1f ms %6.1f ms %9.0f\n",
        f.label.c_str(), f.storeMib.at("nodes"), f.storeMib.at("pods"), f.storeMib.at("slurmjobs"),
        f.viewMib, totalMib(f), f.cycleCopyMib, f.jobFillMs, f.firstReadMs, f.readMs, f.snapshotMs,
        f.memoMib, f.memoSnapshotMs, f.planMs, f.coldCycleMs, f.cycleMs, f.cycleFaults);
  }
  Json line = {{"nodes", nodeCount}, {"pods", cluster.pods.size()}, {"slurmjobs", jobCount}};
  for (const Figures& f : all) {
    line[f.label] = {{"store_mib", f.storeMib},    {"view_mib", f.viewMib},
                     {"total_mib", totalMib(f)},   {"cycle_copy_mib", f.cycleCopyMib},
                     {"job_fill_ms", f.jobFillMs}, {"first_read_ms", f.firstReadMs},
                     {"read_ms", f.readMs},        {"snapshot_ms", f.snapshotMs},
                     {"memo_mib", f.memoMib},      {"memo_snapshot_ms", f.memoSnapshotMs},
                     {"plan_ms", f.planMs},        {"no_memo_cycle_ms", f.coldCycleMs},
                     {"cycle_ms", f.cycleMs},      {"cycle_minor_faults", f.cycleFaults}};
  }
  std::printf("%s\n", line.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace kubeslurm::controllers

int main(int argc, char** argv) {
  try {
    return kubeslurm::controllers::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "operator_cache_bench: " << e.what() << "\n";
    return 1;
  }
}

// Informer memory (Google Benchmark). It measures and reports; it asserts nothing.
//
//   BM_InformerMemory/0   10,000 rank pods listed into an informer's store, managedFields kept
//   BM_InformerMemory/1   the same with the default transform (managedFields dropped)
//
// Counters: bytes_per_pod (RSS growth / pods, after malloc_trim so that freed list pages do not
// count), json_bytes_per_pod (the pod's compact JSON as the apiserver sends it),
// stored_json_bytes_per_pod (the same after the transform), sync_ms.
// The pods are served by a fake Reader in pages of 500, parsed from text as the client does.
//
// Run: build/bin/kube_bench --benchmark_filter=Informer
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "kubeslurm/kube/informer.h"
#include "tests/bench/resident_memory.h"

namespace kubeslurm::kube {
namespace {

constexpr int kPods = 10000;
constexpr int kPage = 500;

// A rank pod as a v1.20 apiserver returns it for a running 8-GPU rank: operator-set labels,
// SLURM_* environment, a bound node, status from the kubelet, and the managedFields of its two
// writers (the operator's create and the kubelet's status updates).
Json rankPod(int i) {
  const std::string job = "train-" + std::to_string(i / 16);
  const std::string rank = std::to_string(i % 16);
  const std::string name = job + "-" + rank;
  const std::string node = "gpu-" + std::to_string(i % 1250);
  Json env = Json::array();
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"SLURM_JOB_ID", std::to_string(100000 + i / 16)},
      {"SLURM_JOB_NAME", job},
      {"SLURM_JOB_NUM_NODES", "16"},
      {"SLURM_NODEID", rank},
      {"SLURM_PROCID", rank},
      {"SLURM_NTASKS", "16"},
      {"SLURM_GPUS_ON_NODE", "8"},
      {"SLURM_JOB_NODELIST", job + "-[0-15]"},
      {"MASTER_ADDR", job + "-0"},
      {"MASTER_PORT", "29500"},
      {"WORLD_SIZE", "128"},
      {"NODE_RANK", rank},
      {"NCCL_IB_HCA", "mlx5_0,mlx5_1"}};
  for (const auto& [key, value] : vars) env.push_back({{"name", key}, {"value", value}});
  Json fieldsEnv = Json::object();
  for (const auto& entry : vars) {
    fieldsEnv[R"(k:{"name":")" + entry.first + R"("})"] = {
        {".", Json::object()}, {"f:name", Json::object()}, {"f:value", Json::object()}};
  }
  const Json condition = {{"type", "Ready"},
                          {"status", "True"},
                          {"lastProbeTime", nullptr},
                          {"lastTransitionTime", "2024-05-01T10:00:05Z"}};
  Json conditions = Json::array();
  for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    Json c = condition;
    c["type"] = type;
    conditions.push_back(c);
  }
  const Json conditionFields = {{".", Json::object()},
                                {"f:lastProbeTime", Json::object()},
                                {"f:lastTransitionTime", Json::object()},
                                {"f:status", Json::object()},
                                {"f:type", Json::object()}};
  Json kubeletConditions = Json::object();
  for (const char* type : {"ContainersReady", "Initialized", "Ready"}) {
    kubeletConditions[R"(k:{"type":")" + std::string(type) + R"("})"] = conditionFields;
  }
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "team-a"},
        {"uid", "3f1c2a9e-5b7d-4e8f-9a0b-" + std::to_string(100000000000 + i)},
        {"resourceVersion", std::to_string(5000000 + i)},
        {"creationTimestamp", "2024-05-01T10:00:00Z"},
        {"labels",
         {{"kubeslurm.io/job", job},
          {"kubeslurm.io/rank", rank},
          {"kubeslurm.io/partition", "gpu"}}},
        {"annotations", {{"kubeslurm.io/job-id", std::to_string(100000 + i / 16)}}},
        {"ownerReferences", Json::array({{{"apiVersion", "kubeslurm.io/v1alpha1"},
                                          {"kind", "SlurmJob"},
                                          {"name", job},
                                          {"uid", "9d8e7f6a-" + std::to_string(i / 16)},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}})},
        {"managedFields",
         Json::array(
             {{{"manager", "kubeslurm-operator"},
               {"operation", "Update"},
               {"apiVersion", "v1"},
               {"time", "2024-05-01T10:00:00Z"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1",
                {{"f:metadata",
                  {{"f:annotations",
                    {{".", Json::object()}, {"f:kubeslurm.io/job-id", Json::object()}}},
                   {"f:labels",
                    {{".", Json::object()},
                     {"f:kubeslurm.io/job", Json::object()},
                     {"f:kubeslurm.io/partition", Json::object()},
                     {"f:kubeslurm.io/rank", Json::object()}}},
                   {"f:ownerReferences",
                    {{".", Json::object()}, {R"(k:{"uid":"9d8e7f6a"})", Json::object()}}}}},
                 {"f:spec",
                  {{"f:containers",
                    {{R"(k:{"name":"rank"})",
                      {{".", Json::object()},
                       {"f:command", Json::object()},
                       {"f:env", fieldsEnv},
                       {"f:image", Json::object()},
                       {"f:imagePullPolicy", Json::object()},
                       {"f:name", Json::object()},
                       {"f:resources", {{".", Json::object()}, {"f:limits", Json::object()}}}}}}},
                   {"f:hostname", Json::object()},
                   {"f:nodeName", Json::object()},
                   {"f:restartPolicy", Json::object()},
                   {"f:schedulerName", Json::object()},
                   {"f:subdomain", Json::object()}}}}}},
              {{"manager", "kubelet"},
               {"operation", "Update"},
               {"apiVersion", "v1"},
               {"time", "2024-05-01T10:00:05Z"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1",
                {{"f:status",
                  {{"f:conditions", kubeletConditions},
                   {"f:containerStatuses", Json::object()},
                   {"f:hostIP", Json::object()},
                   {"f:phase", Json::object()},
                   {"f:podIP", Json::object()},
                   {"f:podIPs",
                    {{".", Json::object()}, {R"(k:{"ip":"10.0.0.1"})", Json::object()}}},
                   {"f:startTime", Json::object()}}}}}}})}}},
      {"spec",
       {{"containers",
         Json::array(
             {{{"name", "rank"},
               {"image", "registry.example.com/llm/train:2024.05"},
               {"command", Json::array({"/kubeslurm/step-agent", "--rank", rank})},
               {"env", env},
               {"resources",
                {{"limits", {{"nvidia.com/gpu", "8"}, {"cpu", "96"}, {"memory", "1600Gi"}}},
                 {"requests", {{"nvidia.com/gpu", "8"}, {"cpu", "96"}, {"memory", "1600Gi"}}}}},
               {"terminationMessagePath", "/dev/termination-log"},
               {"terminationMessagePolicy", "File"},
               {"imagePullPolicy", "IfNotPresent"}}})},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"nodeName", node},
        {"hostname", name},
        {"subdomain", job},
        {"schedulerName", "kubeslurm"},
        {"priority", 0},
        {"enableServiceLinks", true},
        {"preemptionPolicy", "PreemptLowerPriority"}}},
      {"status",
       {{"phase", "Running"},
        {"conditions", conditions},
        {"hostIP", "10.1." + std::to_string(i % 250) + ".7"},
        {"podIP", "10.244." + std::to_string(i % 250) + "." + std::to_string(i % 200)},
        {"podIPs", Json::array({{{"ip", "10.244.0.1"}}})},
        {"startTime", "2024-05-01T10:00:01Z"},
        {"qosClass", "Guaranteed"},
        {"containerStatuses",
         Json::array({{{"name", "rank"},
                       {"state", {{"running", {{"startedAt", "2024-05-01T10:00:04Z"}}}}},
                       {"lastState", Json::object()},
                       {"ready", true},
                       {"restartCount", 0},
                       {"image", "registry.example.com/llm/train:2024.05"},
                       {"imageID", "docker-pullable://registry.example.com/llm/train@sha256:0f3e"},
                       {"containerID", "containerd://" + std::string(64, 'a')},
                       {"started", true}}})}}}};
}

// Pages of 500 pods as response bodies; list() parses one per call like the HTTPS client.
class PagedPods final : public Reader, public Watcher {
 public:
  PagedPods() {
    for (int start = 0; start < kPods; start += kPage) {
      Json page = {{"kind", "PodList"},
                   {"apiVersion", "v1"},
                   {"metadata", {{"resourceVersion", "6000000"}}},
                   {"items", Json::array()}};
      for (int i = start; i < start + kPage && i < kPods; ++i) {
        Json pod = rankPod(i);
        jsonBytes_ += pod.dump().size();
        Json slim = pod;
        dropManagedFields(slim);
        slimBytes_ += slim.dump().size();
        page["items"].push_back(std::move(pod));
      }
      if (start + kPage < kPods) page["metadata"]["continue"] = std::to_string(start + kPage);
      pages_.push_back(page.dump());
    }
  }
  double jsonBytesPerPod() const { return static_cast<double>(jsonBytes_) / kPods; }
  double slimBytesPerPod() const { return static_cast<double>(slimBytes_) / kPods; }

  StatusOr<Json> get(const ResourceType&, std::string_view, std::string_view) override {
    return Status(StatusCode::kUnimplemented, "bench");
  }
  StatusOr<Json> list(const ResourceType&, std::string_view, const ListOptions& options) override {
    const std::size_t page =
        options.continueToken.empty() ? 0 : std::stoul(options.continueToken) / kPage;
    return Json::parse(pages_[page]);
  }
  // An idle watch until the informer stops it.
  WatchResult watch(const ResourceType&, std::string_view, const WatchOptions& options,
                    const WatchHandler&, WatchStop* stop) override {
    auto cancelled = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
    auto flag = std::make_shared<bool>(false);
    stop->setCanceller([cancelled, flag] {
      {
        const std::lock_guard<std::mutex> lock(cancelled->first);
        *flag = true;
      }
      cancelled->second.notify_all();
    });
    {
      std::unique_lock<std::mutex> lock(cancelled->first);
      cancelled->second.wait(lock, [&] { return *flag; });
    }
    stop->clearCanceller();
    return {Status(StatusCode::kCancelled, "bench"), options.resourceVersion, 0};
  }

 private:
  std::vector<std::string> pages_;
  std::size_t jsonBytes_ = 0;
  std::size_t slimBytes_ = 0;
};

double residentBytes() { return static_cast<double>(bench::residentBytes()); }

void informerMemory(benchmark::State& state) {
  const bool dropManaged = state.range(0) != 0;
  PagedPods api;
  double perPod = 0;
  double syncMs = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    const double before = residentBytes();
    InformerOptions options;
    if (!dropManaged) options.transform = nullptr;
    auto informer = std::make_unique<Informer>(api, api, resources::pods(), options);
    (void)informer->addIndexer(std::string(kNodeIndex), indexByNode);
    (void)informer->addIndexer(std::string(kOwnerUidIndex), indexByOwnerUid);
    const auto start = std::chrono::steady_clock::now();
    informer->start();
    if (!informer->waitForSync(std::chrono::minutes(2))) state.SkipWithError("no sync");
    syncMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double after = residentBytes();
    perPod = (after - before) / kPods;
    benchmark::DoNotOptimize(informer->store().size());
    informer->stop();
  }
  state.counters["bytes_per_pod"] = perPod;
  state.counters["json_bytes_per_pod"] = api.jsonBytesPerPod();
  state.counters["stored_json_bytes_per_pod"] =
      dropManaged ? api.slimBytesPerPod() : api.jsonBytesPerPod();
  state.counters["sync_ms"] = syncMs;
}

BENCHMARK(informerMemory)
    ->Name("BM_InformerMemory")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kubeslurm::kube

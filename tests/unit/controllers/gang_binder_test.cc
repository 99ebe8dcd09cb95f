#include "controllers/gang_binder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controllers/job_object.h"

namespace kubeslurm::controllers {
namespace {

using kube::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// One namespace of an API server in memory, with the answers the binder relies on:
// create of an existing name → kAlreadyExists; bind of a bound pod → kAborted (409); delete
// with a stale uid precondition → kAborted; label selectors with `k=v[,k=v]`. Every write is
// recorded in order, with the fence state the test may read.
class FakeCluster : public kube::Reader, public kube::Writer, public kube::Binder {
 public:
  StatusOr<Json> get(const kube::ResourceType& type, std::string_view /*ns*/,
                     std::string_view name) override {
    // As the chart's RBAC has it: the operator may create Secrets, never read them.
    if (type.plural == "secrets") return Status{StatusCode::kPermissionDenied, "forbidden"};
    std::lock_guard lock(mutex_);
    ++gets;
    auto& store = storeFor(type);
    auto found = store.find(std::string(name));
    if (found == store.end()) return notFound(type.plural + " \"" + std::string(name) + "\"");
    return found->second;
  }
  StatusOr<Json> list(const kube::ResourceType& type, std::string_view /*ns*/,
                      const kube::ListOptions& options) override {
    std::lock_guard lock(mutex_);
    ++lists;
    Json items = Json::array();
    for (const auto& [name, object] : storeFor(type)) {
      if (matches(object, options.labelSelector)) items.push_back(object);
    }
    return Json{{"kind", "PodList"}, {"metadata", Json::object()}, {"items", items}};
  }
  StatusOr<Json> create(const kube::ResourceType& type, std::string_view /*ns*/,
                        const Json& object) override {
    if (objectCreateDelay.count() > 0 && type.plural != "pods") {
      const int now = ++objectCreatesInFlight_;
      {
        std::lock_guard lock(mutex_);
        maxObjectCreatesInFlight = std::max(maxObjectCreatesInFlight, now);
      }
      std::this_thread::sleep_for(objectCreateDelay);
      --objectCreatesInFlight_;
    }
    std::lock_guard lock(mutex_);
    // generateName: the API server appends 5 random characters; here, a counter.
    const bool generated = !object["metadata"].contains("name");
    const std::string name = generated ? object["metadata"]["generateName"].get<std::string>() +
                                             std::to_string(10000 + ++generated_)
                                       : object["metadata"]["name"].get<std::string>();
    writes.push_back("create " + type.plural + " " +
                     (generated ? object["metadata"]["generateName"].get<std::string>() : name));
    if (failCreateOf == name ||
        (generated && failCreateOf == object["metadata"].value("generateName", ""))) {
      return Status{StatusCode::kUnavailable, "injected create failure"};
    }
    auto& store = storeFor(type);
    if (store.contains(name)) return Status{StatusCode::kAlreadyExists, name + " exists"};
    Json stored = object;
    stored["metadata"]["name"] = name;
    stored["metadata"]["uid"] = "uid-" + std::to_string(++uids_);
    store[name] = stored;
    return stored;
  }
  StatusOr<Json> update(const kube::ResourceType& /*type*/, std::string_view /*ns*/,
                        const Json& /*object*/) override {
    return Status{StatusCode::kUnimplemented, "not used"};
  }
  StatusOr<Json> patch(const kube::ResourceType& type, std::string_view /*ns*/,
                       std::string_view name, const Json& mergePatch) override {
    std::lock_guard lock(mutex_);
    writes.push_back("patch " + type.plural + " " + std::string(name));
    auto& store = storeFor(type);
    auto found = store.find(std::string(name));
    if (found == store.end()) return notFound(std::string(name));
    Json patch = mergePatch;
    patch["metadata"].erase("resourceVersion");  // objects here have none
    found->second.merge_patch(patch);
    return found->second;
  }
  Status remove(const kube::ResourceType& type, std::string_view /*ns*/, std::string_view name,
                const kube::DeleteOptions& options) override {
    std::lock_guard lock(mutex_);
    std::string grace = options.gracePeriodSeconds ? std::to_string(*options.gracePeriodSeconds)
                                                   : std::string("default");
    writes.push_back("delete " + type.plural + " " + std::string(name) + " grace=" + grace);
    deleteOptions[std::string(name)] = options;
    auto& store = storeFor(type);
    auto found = store.find(std::string(name));
    if (found == store.end()) return notFound(std::string(name));
    if (options.uid && found->second["metadata"]["uid"] != *options.uid) {
      return Status{StatusCode::kAborted, "Precondition failed: UID in precondition"};
    }
    store.erase(found);
    return Status::ok();
  }
  Status bind(std::string_view /*ns*/, std::string_view pod, std::string_view node,
              std::string_view podUid) override {
    const int now = ++inFlight_;
    {
      std::lock_guard lock(mutex_);
      maxInFlight = std::max(maxInFlight, now);
    }
    if (bindDelay.count() > 0) std::this_thread::sleep_for(bindDelay);
    std::lock_guard lock(mutex_);
    --inFlight_;
    const int call = ++bindCalls;
    writes.push_back("bind " + std::string(pod) + " " + std::string(node));
    bindUids.emplace_back(podUid);
    if (call == failBindNumber) return Status{StatusCode::kInternal, "injected bind failure"};
    auto found = pods_.find(std::string(pod));
    if (found == pods_.end()) return notFound(std::string(pod));
    if (!found->second["spec"].value("nodeName", "").empty()) {
      return Status{StatusCode::kAborted, "pod is already assigned to node"};
    }
    found->second["spec"]["nodeName"] = std::string(node);
    return Status::ok();
  }

  // Test access.
  void put(const kube::ResourceType& type, Json object) {
    std::lock_guard lock(mutex_);
    if (!object["metadata"].contains("uid")) {
      object["metadata"]["uid"] = "uid-" + std::to_string(++uids_);
    }
    const std::string name = object["metadata"]["name"].get<std::string>();
    storeFor(type)[name] = std::move(object);
  }
  std::size_t secretCount() {
    std::lock_guard lock(mutex_);
    return secrets_.size();
  }
  std::optional<Json> networkPolicy(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto found = networkPolicies_.find(name);
    if (found == networkPolicies_.end()) return std::nullopt;
    return found->second;
  }
  std::optional<Json> secret(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto found = secrets_.find(name);
    if (found == secrets_.end()) return std::nullopt;
    return found->second;
  }
  std::optional<Json> pod(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto found = pods_.find(name);
    if (found == pods_.end()) return std::nullopt;
    return found->second;
  }
  std::vector<std::string> podNames() {
    std::lock_guard lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [name, object] : pods_) names.push_back(name);
    return names;
  }
  std::size_t writeCount() {
    std::lock_guard lock(mutex_);
    return writes.size();
  }
  std::vector<std::string> writesSnapshot() {
    std::lock_guard lock(mutex_);
    return writes;
  }
  void setNodeName(const std::string& name, const std::string& node) {
    std::lock_guard lock(mutex_);
    pods_.at(name)["spec"]["nodeName"] = node;
  }

  std::vector<std::string> writes;
  std::vector<std::string> bindUids;
  std::map<std::string, kube::DeleteOptions> deleteOptions;
  int bindCalls = 0;
  int failBindNumber = 0;  // 1-based: that bind call fails
  std::string failCreateOf;
  int lists = 0;
  int gets = 0;
  int maxInFlight = 0;
  std::chrono::milliseconds bindDelay{0};
  // Creates of anything but pods take this long, outside the lock, and are counted in flight.
  std::chrono::milliseconds objectCreateDelay{0};
  int maxObjectCreatesInFlight = 0;

 private:
  std::map<std::string, Json>& storeFor(const kube::ResourceType& type) {
    if (type.plural == "secrets") return secrets_;
    if (type.plural == "networkpolicies") return networkPolicies_;
    if (type.plural == "slurmjobs") return slurmJobs_;
    return type.plural == "services" ? services_ : pods_;
  }
  static bool matches(const Json& object, const std::string& selector) {
    std::stringstream terms(selector);
    std::string term;
    while (std::getline(terms, term, ',')) {
      const auto eq = term.find('=');
      const std::string key = term.substr(0, eq);
      const std::string value = term.substr(eq + 1);
      const Json& labels = object["metadata"].value("labels", Json::object());
      if (!labels.contains(key) || labels[key] != value) return false;
    }
    return true;
  }

  std::mutex mutex_;
  std::map<std::string, Json> pods_;
  std::map<std::string, Json> services_;
  std::map<std::string, Json> secrets_;
  std::map<std::string, Json> networkPolicies_;
  std::map<std::string, Json> slurmJobs_;
  int generated_ = 0;
  std::atomic<int> inFlight_{0};
  std::atomic<int> objectCreatesInFlight_{0};
  int uids_ = 0;
};

podspec::GangInput gangOf(std::size_t ranks, std::uint32_t attempt = 1) {
  podspec::GangInput gang;
  gang.namespaceName = "team-a";
  gang.jobName = "train";
  gang.jobUid = "job-uid";
  gang.jobId = 7;
  gang.attempt = attempt;
  for (std::size_t i = 0; i < ranks; ++i) {
    gang.nodes.push_back("gpu-" + std::to_string(100 + i).substr(1));
  }
  gang.gpusPerNode = 8;
  gang.image = "busybox";
  gang.script = "sleep 2";
  gang.environment.jobId = 7;
  gang.environment.jobName = "train";
  gang.environment.gpusPerNode = 8;
  return gang;
}

// The job's Service, as an earlier attempt of the job with that uid (or another job) left it.
void putJobService(FakeCluster& cluster, const std::string& ownerUid) {
  cluster.put(kube::ResourceType{"", "v1", "services", true},
              Json{{"metadata",
                    {{"name", "train"},
                     {"ownerReferences", {{{"kind", "SlurmJob"}, {"uid", ownerUid}}}}}}});
}

// Someone else's pod (no labels of ours) under rank 2's name.
void putForeignPod(FakeCluster& cluster) {
  cluster.put(kube::resources::pods(),
              Json{{"metadata",
                    {{"name", "train-2"}, {"uid", "foreign-uid"}, {"labels", {{"app", "web"}}}}},
                   {"spec", {{"nodeName", "gpu-09"}}}});
}

std::size_t countPrefix(const std::vector<std::string>& writes, std::string_view prefix) {
  return static_cast<std::size_t>(
      std::count_if(writes.begin(), writes.end(),
                    [prefix](const std::string& w) { return w.starts_with(prefix); }));
}

// Service first, then every rank created unbound, then every rank bound to gang.nodes[rank]
// through pods/binding with the uid the create returned (Binding.metadata.uid).
TEST(GangBinderTest, AdmitBindsEveryRankToItsPlannedNode) {
  FakeCluster cluster;
  GangBinder binder(cluster, cluster, cluster);
  const podspec::GangInput gang = gangOf(4);
  ASSERT_TRUE(binder.admit(gang).isOk());

  for (std::size_t rank = 0; rank < 4; ++rank) {
    auto pod = cluster.pod("train-" + std::to_string(rank));
    ASSERT_TRUE(pod.has_value()) << rank;
    EXPECT_EQ((*pod)["spec"]["nodeName"], gang.nodes[rank]);
  }
  const auto writes = cluster.writesSnapshot();
  ASSERT_EQ(writes.size(), 9U);
  EXPECT_EQ(writes[0], "create services train");
  EXPECT_EQ(countPrefix({writes.begin() + 1, writes.begin() + 5}, "create pods "), 4U);
  EXPECT_EQ(countPrefix({writes.begin() + 5, writes.end()}, "bind "), 4U);
  for (const std::string& uid : cluster.bindUids) EXPECT_TRUE(uid.starts_with("uid-")) << uid;
  EXPECT_EQ(binder.binds(), 4U);
  EXPECT_EQ(binder.bindFailures(), 0U);
  EXPECT_EQ(binder.rollbacks(), 0U);
}

// The SlurmJob `train` as the API server holds it, with its script and uid.
void putJob(FakeCluster& cluster, const std::string& uid, const std::string& script) {
  cluster.put(kube::resources::slurmJobs(),
              Json{{"apiVersion", "kubeslurm.io/v1alpha1"},
                   {"kind", "SlurmJob"},
                   {"metadata", {{"name", "train"}, {"namespace", "team-a"}, {"uid", uid}}},
                   {"spec", {{"jobName", "train"}, {"script", script}}}});
}

// The operator's cache holds a stand-in for a job's script (leanSlurmJob): rank 0 runs the
// job's own, read from the API server at admission.
TEST(GangBinderTest, RankZeroRunsTheScriptReadFromTheJobNotTheCachedStandIn) {
  FakeCluster cluster;
  putJob(cluster, "job-uid", "#!/bin/bash\nsrun python train.py\n");
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(2);
  gang.script = std::string(kScriptNotCached);
  // A fresh gang reads nothing else (AFreshGangIsWrittenWithoutReadingAnything): the one read
  // is the job's.
  ASSERT_TRUE(binder.admit(gang, KnownPods::kNone).isOk());
  const auto rank0 = cluster.pod("train-0");
  ASSERT_TRUE(rank0.has_value());
  EXPECT_NE(rank0->dump().find("srun python train.py"), std::string::npos) << rank0->dump(1);
  EXPECT_EQ(rank0->dump().find("read from the SlurmJob at admission"), std::string::npos);
  EXPECT_EQ(cluster.gets, 1);
}

// An array's task carries no copy of the script: its rank 0 runs the array's, read from the
// array the gang names, and only while that array is the one with the named uid.
TEST(GangBinderTest, ATasksRankZeroRunsItsArraysScript) {
  FakeCluster cluster;
  cluster.put(
      kube::resources::slurmJobs(),
      Json{{"apiVersion", "kubeslurm.io/v1alpha1"},
           {"kind", "SlurmJob"},
           {"metadata", {{"name", "sweep"}, {"namespace", "team-a"}, {"uid", "uid-sweep"}}},
           {"spec",
            {{"jobName", "sweep"}, {"array", "0-9"}, {"script", "#!/bin/sh\necho shard\n"}}}});
  podspec::GangInput gang = gangOf(1);
  gang.script = std::string(kScriptNotCached);
  gang.scriptSourceName = "sweep";
  gang.scriptSourceUid = "uid-another-sweep";
  GangBinder binder(cluster, cluster, cluster);
  EXPECT_EQ(binder.admit(gang, KnownPods::kNone).code(), StatusCode::kAborted);
  EXPECT_TRUE(cluster.writesSnapshot().empty());

  gang.scriptSourceUid = "uid-sweep";
  ASSERT_TRUE(binder.admit(gang, KnownPods::kNone).isOk());
  const auto rank0 = cluster.pod("train-0");
  ASSERT_TRUE(rank0.has_value());
  EXPECT_NE(rank0->dump().find("echo shard"), std::string::npos) << rank0->dump(1);
}

// A job deleted and submitted again under its name since the plan is another job: nothing is
// written for the one planned, and a job gone is reported as gone.
TEST(GangBinderTest, AReplacedOrDeletedJobGetsNoPods) {
  FakeCluster cluster;
  putJob(cluster, "another-uid", "#!/bin/sh\necho other\n");
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(2);
  gang.script = std::string(kScriptNotCached);
  EXPECT_EQ(binder.admit(gang).code(), StatusCode::kAborted);
  EXPECT_TRUE(cluster.writesSnapshot().empty());

  FakeCluster empty;
  GangBinder alone(empty, empty, empty);
  EXPECT_EQ(alone.admit(gang).code(), StatusCode::kNotFound);
  EXPECT_TRUE(empty.writesSnapshot().empty());
}

// The steps --crash-at stops at, heard in admit()'s order and each after its write landed: with
// one write in flight, the 2nd pod-created is heard when exactly two rank pods exist. A failed
// admit never hears gang-bound.
TEST(GangBinderTest, ReachedHearsEachStepAfterItsWrite) {
  FakeCluster cluster;
  std::vector<std::string> heard;
  std::vector<std::size_t> podsWhenHeard;
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.reached = [&](AdmissionStep step) {
    heard.emplace_back(admissionStepName(step));
    podsWhenHeard.push_back(cluster.podNames().size());
  };
  GangBinder binder(cluster, cluster, cluster, options);
  ASSERT_TRUE(binder.admit(gangOf(3)).isOk());
  EXPECT_THAT(heard, ElementsAre("objects-ready", "pod-created", "pod-created", "pod-created",
                                 "pod-bound", "pod-bound", "pod-bound", "gang-bound"));
  EXPECT_THAT(podsWhenHeard, ElementsAre(0, 1, 2, 3, 3, 3, 3, 3));

  FakeCluster failing;
  failing.failBindNumber = 2;
  heard.clear();
  options.reached = [&](AdmissionStep step) { heard.emplace_back(admissionStepName(step)); };
  GangBinder rolledBack(failing, failing, failing, options);
  EXPECT_FALSE(rolledBack.admit(gangOf(3)).isOk());
  EXPECT_THAT(heard, ElementsAre("objects-ready", "pod-created", "pod-created", "pod-created",
                                 "pod-bound"));
}

TEST(GangBinderTest, AdmissionStepNamesRoundTrip) {
  for (AdmissionStep step : {AdmissionStep::kObjectsReady, AdmissionStep::kPodCreated,
                             AdmissionStep::kPodBound, AdmissionStep::kGangBound}) {
    EXPECT_EQ(parseAdmissionStep(admissionStepName(step)), step);
  }
  EXPECT_EQ(parseAdmissionStep("pod-created:2"), std::nullopt);
  EXPECT_EQ(parseAdmissionStep(""), std::nullopt);
}

// Create-bound placement: one write per rank, each pod created on its planned node, the ranks
// that only hold a node first and rank 0 (the script) last; no pods/binding.
TEST(GangBinderTest, CreateBoundMakesEachRankOnItsNodeAndRankZeroLast) {
  FakeCluster cluster;
  GangBinderOptions options{.bindParallelism = 4, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  const podspec::GangInput gang = gangOf(4);
  ASSERT_TRUE(binder.admit(gang).isOk());
  const auto writes = cluster.writesSnapshot();
  ASSERT_EQ(writes.size(), 5U) << ::testing::PrintToString(writes);
  EXPECT_EQ(writes[0], "create services train");
  EXPECT_EQ(countPrefix({writes.begin() + 1, writes.begin() + 4}, "create pods "), 3U);
  EXPECT_EQ(writes[4], "create pods train-0");
  EXPECT_EQ(cluster.bindCalls, 0);
  for (std::size_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ((*cluster.pod("train-" + std::to_string(rank)))["spec"]["nodeName"],
              gang.nodes[rank]);
  }
  // Level-triggered as the binding placement: a second admit writes nothing.
  ASSERT_TRUE(binder.admit(gang).isOk());
  EXPECT_EQ(cluster.writeCount(), 5U);
}

// A gang whose pods the caches do not show (KnownPods::kNone) is written at once: no list of the
// job's pods, no read of its Service or NetworkPolicy. One write per object (issue 18).
TEST(GangBinderTest, AFreshGangIsWrittenWithoutReadingAnything) {
  FakeCluster cluster;
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  podspec::GangInput gang = gangOf(4);
  gang.isolateNetwork = true;
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  std::vector<api::Pod> pods;
  const Status admitted = binder.admit(gang, KnownPods::kNone, &pods);
  ASSERT_TRUE(admitted.isOk()) << admitted.toString();
  // What the caller expects its caches to show: every rank on its node, reading the Secret the
  // API server named (the caller could not build these pods itself).
  ASSERT_EQ(pods.size(), 4U);
  for (std::size_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(pods[rank].spec.nodeName, gang.nodes[rank]);
    EXPECT_THAT(api::encodePod(pods[rank]).dump(), HasSubstr("train-step-10001"));
  }
  EXPECT_THAT(cluster.writesSnapshot(),
              ElementsAre("create services train", "create networkpolicies train",
                          "create secrets train-step-", "create pods train-1",
                          "create pods train-2", "create pods train-3", "create pods train-0"));
  EXPECT_EQ(cluster.lists, 0);
  EXPECT_EQ(cluster.gets, 0);
  // The same gang observed (KnownPods::kUnknown) finds everything in place and writes nothing.
  ASSERT_TRUE(binder.admit(gang).isOk());
  EXPECT_EQ(cluster.writeCount(), 7U);
}

// A requeued job's Service is still there: the create is refused, and the one read that follows
// finds it the job's own.
TEST(GangBinderTest, AFreshGangReusesItsOwnServiceAfterOneRefusedCreate) {
  FakeCluster cluster;
  putJobService(cluster, "job-uid");
  GangBinder binder(cluster, cluster, cluster);
  ASSERT_TRUE(binder.admit(gangOf(2), KnownPods::kNone).isOk());
  EXPECT_EQ(cluster.gets, 1);
  EXPECT_EQ(cluster.lists, 0);
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "bind "), 2U);

  FakeCluster foreign;
  putJobService(foreign, "other-uid");
  GangBinder refused(foreign, foreign, foreign);
  EXPECT_EQ(refused.admit(gangOf(2), KnownPods::kNone).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(countPrefix(foreign.writesSnapshot(), "create pods "), 0U);
}

// The caches were wrong: a rank's name is taken. A fresh admission never adopts (its step token
// is new, the pod's may be another), so the ranks it made are rolled back and the taken name
// reported; a pod that is not ours is left alone.
TEST(GangBinderTest, AFreshGangFindingARankNameTakenRollsBack) {
  FakeCluster cluster;
  putForeignPod(cluster);
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  const Status status = binder.admit(gangOf(4), KnownPods::kNone);
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_THAT(std::string(status.message()), HasSubstr("train-2"));
  EXPECT_THAT(cluster.podNames(), ElementsAre("train-2"));
  EXPECT_EQ((*cluster.pod("train-2"))["metadata"]["uid"], "foreign-uid");
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create pods train-0"), 0U);
  EXPECT_EQ(binder.rollbacks(), 1U);
}

// The caches were behind an admission of our own: a rank of this very attempt exists. The fresh
// admission deletes the rank it made and leaves the others alone (they may be a gang that runs,
// which the caller's next look will show), where a rollback of the attempt would stop them.
TEST(GangBinderTest, AFreshGangFindingItsOwnAttemptDeletesOnlyWhatItMade) {
  FakeCluster cluster;
  auto existing = podspec::rankPods(gangOf(4));
  ASSERT_TRUE(existing.isOk());
  (*existing)[2].spec.nodeName = "gpu-02";
  cluster.put(kube::resources::pods(), api::encodePod((*existing)[2]));
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  const Status status = binder.admit(gangOf(4), KnownPods::kNone);
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_THAT(cluster.podNames(), ElementsAre("train-2"));
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "delete pods train-1"), 1U);
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "delete pods train-2"), 0U);
  EXPECT_EQ(cluster.lists, 0);
}

// Any failure of a fresh admission takes back only what it created: a pod of the same attempt
// that the caches had not shown (here one more rank's name) is left alone, where an observed
// admission's rollback removes every pod of the attempt.
TEST(GangBinderTest, AFreshGangThatFailsDeletesOnlyThePodsItCreated) {
  auto wider = podspec::rankPods(gangOf(6));
  ASSERT_TRUE(wider.isOk());
  for (const KnownPods known : {KnownPods::kNone, KnownPods::kUnknown}) {
    FakeCluster cluster;
    cluster.put(kube::resources::pods(), api::encodePod((*wider)[5]));
    cluster.failCreateOf = "train-2";
    GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
    options.placement = GangPlacement::kCreateBound;
    GangBinder binder(cluster, cluster, cluster, options);
    EXPECT_EQ(binder.admit(gangOf(4), known).code(), StatusCode::kUnavailable);
    EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "delete pods train-1"), 1U);
    if (known == KnownPods::kNone) {
      EXPECT_THAT(cluster.podNames(), ElementsAre("train-5"));
    } else {
      EXPECT_THAT(cluster.podNames(), IsEmpty());
    }
  }
}

// A failed create stops the admission before rank 0 exists, and the ranks made are deleted:
// nothing of the job ran its script.
TEST(GangBinderTest, CreateBoundNeverMakesRankZeroAfterAFailedCreate) {
  FakeCluster cluster;
  cluster.failCreateOf = "train-2";
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  EXPECT_EQ(binder.admit(gangOf(4)).code(), StatusCode::kUnavailable);
  const auto writes = cluster.writesSnapshot();
  EXPECT_EQ(countPrefix(writes, "create pods train-0"), 0U) << ::testing::PrintToString(writes);
  EXPECT_EQ(countPrefix(writes, "delete pods train-1"), 1U);
  EXPECT_THAT(cluster.podNames(), IsEmpty());
}

// Invariant 3: a second admit of a bound gang finds Service and pods as they should be and
// sends no write at all.
TEST(GangBinderTest, SecondAdmitOfTheSameAttemptWritesNothing) {
  FakeCluster cluster;
  GangBinder binder(cluster, cluster, cluster);
  ASSERT_TRUE(binder.admit(gangOf(4)).isOk());
  const std::size_t before = cluster.writeCount();
  const Status again = binder.admit(gangOf(4));
  EXPECT_TRUE(again.isOk()) << again.toString();
  EXPECT_EQ(cluster.writeCount(), before) << ::testing::PrintToString(cluster.writesSnapshot());
  EXPECT_EQ(binder.binds(), 4U);
}

// A crashed admit left ranks 0-1 created and unbound: the retry creates only 2-3 and binds all.
TEST(GangBinderTest, AdmitFinishesWhatACrashedAdmitLeft) {
  FakeCluster cluster;
  auto pods = podspec::rankPods(gangOf(4));
  ASSERT_TRUE(pods.isOk());
  cluster.put(kube::resources::pods(), api::encodePod((*pods)[0]));
  cluster.put(kube::resources::pods(), api::encodePod((*pods)[1]));
  GangBinder binder(cluster, cluster, cluster);
  ASSERT_TRUE(binder.admit(gangOf(4)).isOk());
  const auto writes = cluster.writesSnapshot();
  EXPECT_EQ(countPrefix(writes, "create pods "), 2U);
  EXPECT_EQ(countPrefix(writes, "bind "), 4U);
  EXPECT_EQ((*cluster.pod("train-1"))["spec"]["nodeName"], "gpu-01");
}

// Invariant 1: the 3rd bind fails → every pod of the attempt is deleted, the ranks bound before
// the failure included; never-bound pods go with gracePeriodSeconds 0, bound ones keep their
// grace period (the kubelet must stop them before their GPUs count as free); each delete
// carries the uid precondition and propagation Background. No bind is sent after the failure.
TEST(GangBinderTest, FailedBindRollsBackTheWholeGang) {
  FakeCluster cluster;
  cluster.failBindNumber = 3;
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 1, .canWrite = {}, .reached = {}});
  const Status status = binder.admit(gangOf(6));
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status.toString();
  EXPECT_NE(status.message().find("injected bind failure"), std::string::npos);
  EXPECT_THAT(cluster.podNames(), IsEmpty());
  EXPECT_EQ(cluster.bindCalls, 3);
  const auto writes = cluster.writesSnapshot();
  const auto lastBind = std::find_if(writes.rbegin(), writes.rend(),
                                     [](const std::string& w) { return w.starts_with("bind "); });
  const auto firstDelete = std::find_if(
      writes.begin(), writes.end(), [](const std::string& w) { return w.starts_with("delete "); });
  EXPECT_LE(std::distance(writes.begin(), lastBind.base()),
            std::distance(writes.begin(), firstDelete));
  EXPECT_EQ(countPrefix(writes, "delete pods train-0 grace=default"), 1U);
  EXPECT_EQ(countPrefix(writes, "delete pods train-1 grace=default"), 1U);
  for (const char* unbound : {"train-2", "train-3", "train-4", "train-5"}) {
    EXPECT_EQ(countPrefix(writes, std::string("delete pods ") + unbound + " grace=0"), 1U)
        << unbound;
  }
  for (const auto& [name, options] : cluster.deleteOptions) {
    EXPECT_TRUE(options.uid.has_value() && options.uid->starts_with("uid-")) << name;
    EXPECT_EQ(options.propagationPolicy, "Background") << name;
    // Its job-tracking finalizer released just before, or the API server would keep it.
    const auto deleted = std::find_if(writes.begin(), writes.end(), [&](const std::string& w) {
      return w.starts_with("delete pods " + name + " ");
    });
    ASSERT_NE(deleted, writes.begin()) << name;
    EXPECT_EQ(*std::prev(deleted), "patch pods " + name);
  }
  EXPECT_EQ(binder.binds(), 2U);
  EXPECT_EQ(binder.bindFailures(), 1U);
  EXPECT_EQ(binder.rollbacks(), 1U);
  EXPECT_EQ(binder.podsDeleted(), 6U);
}

// The same with binds in parallel: whatever was in flight beside the failed bind is deleted
// too, so nothing of the gang stays bound.
TEST(GangBinderTest, FailedBindAmongParallelBindsLeavesNothingBound) {
  FakeCluster cluster;
  cluster.failBindNumber = 5;
  cluster.bindDelay = std::chrono::milliseconds(5);
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 4, .canWrite = {}, .reached = {}});
  EXPECT_FALSE(binder.admit(gangOf(16)).isOk());
  EXPECT_THAT(cluster.podNames(), IsEmpty());
  EXPECT_LT(cluster.bindCalls, 16);  // binds stop being issued after the failure
  EXPECT_EQ(binder.rollbacks(), 1U);
}

TEST(GangBinderTest, BindsRunInParallelUpToTheLimit) {
  FakeCluster cluster;
  cluster.bindDelay = std::chrono::milliseconds(20);
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 3, .canWrite = {}, .reached = {}});
  ASSERT_TRUE(binder.admit(gangOf(12)).isOk());
  EXPECT_EQ(cluster.bindCalls, 12);
  EXPECT_LE(cluster.maxInFlight, 3);
  EXPECT_GE(cluster.maxInFlight, 2);
}

// The Service, the NetworkPolicy and the step-token Secret do not wait for one another: one round
// trip for the three, and every rank is created after all three (issue 18).
TEST(GangBinderTest, TheJobsObjectsAreCreatedSideBySideBeforeTheRanks) {
  FakeCluster cluster;
  cluster.objectCreateDelay = std::chrono::milliseconds(30);
  GangBinderOptions options{.bindParallelism = 16, .canWrite = {}, .reached = {}};
  options.placement = GangPlacement::kCreateBound;
  GangBinder binder(cluster, cluster, cluster, options);
  podspec::GangInput gang = gangOf(4);
  gang.isolateNetwork = true;
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  ASSERT_TRUE(binder.admit(gang, KnownPods::kNone, nullptr).isOk());
  EXPECT_EQ(cluster.maxObjectCreatesInFlight, 3);
  const std::vector<std::string> writes = cluster.writesSnapshot();
  ASSERT_EQ(writes.size(), 7U);
  EXPECT_THAT(std::vector<std::string>(writes.begin(), writes.begin() + 3),
              UnorderedElementsAre("create services train", "create networkpolicies train",
                                   "create secrets train-step-"));
  for (std::size_t i = 3; i < writes.size(); ++i) EXPECT_THAT(writes[i], HasSubstr("create pods"));
}

// A failed create (the 3rd rank) → the ranks already created are deleted and nothing is bound.
TEST(GangBinderTest, FailedCreateRollsBackAndBindsNothing) {
  FakeCluster cluster;
  cluster.failCreateOf = "train-2";
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 1, .canWrite = {}, .reached = {}});
  const Status status = binder.admit(gangOf(4));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(cluster.bindCalls, 0);
  EXPECT_THAT(cluster.podNames(), IsEmpty());
}

// A pod that holds a rank's name but belongs to someone else: the create's AlreadyExists is a
// failure, this attempt's pods are rolled back, and the foreign pod is left alone (invariant 4:
// never delete what the operator does not own).
TEST(GangBinderTest, CreateConflictWithAForeignPodRollsBackOnlyOurPods) {
  FakeCluster cluster;
  putForeignPod(cluster);
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 1, .canWrite = {}, .reached = {}});
  const Status status = binder.admit(gangOf(4));
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_EQ(cluster.bindCalls, 0);
  EXPECT_THAT(cluster.podNames(), ElementsAre("train-2"));
  EXPECT_EQ((*cluster.pod("train-2"))["metadata"]["uid"], "foreign-uid");
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "delete pods train-2"), 0U);
}

// A pod of the job's previous attempt still holds a rank's name: refused before any write, and
// the old pod is not touched (its deletion is the rollback of that attempt).
TEST(GangBinderTest, EarlierAttemptStillPresentIsRefusedWithoutWriting) {
  FakeCluster cluster;
  auto old = podspec::rankPods(gangOf(4, 0));
  ASSERT_TRUE(old.isOk());
  cluster.put(kube::resources::pods(), api::encodePod((*old)[1]));
  GangBinder binder(cluster, cluster, cluster);
  const Status status = binder.admit(gangOf(4, 1));
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_THAT(cluster.writesSnapshot(), IsEmpty());
}

TEST(GangBinderTest, ServiceOwnedByAnotherJobIsRefused) {
  FakeCluster cluster;
  putJobService(cluster, "other-uid");
  GangBinder binder(cluster, cluster, cluster);
  const Status status = binder.admit(gangOf(2));
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create pods "), 0U);
}

// Our own Service from an earlier attempt (same owner uid) is reused, not an error.
TEST(GangBinderTest, OwnServiceIsReused) {
  FakeCluster cluster;
  putJobService(cluster, "job-uid");
  GangBinder binder(cluster, cluster, cluster);
  ASSERT_TRUE(binder.admit(gangOf(2)).isOk());
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create services"), 0U);
}

// With the in-pod runtime the gang's step token comes first: a Secret with a fresh 256-bit
// token, owned by the job, made with generateName so that nobody can have created it first
// (security review M6: anyone with `create secrets` could plant `<job>-step` and learn the
// token). The operator never reads Secrets (FakeCluster refuses, as RBAC does): a later admit
// of the same attempt finds the name in the pods and writes nothing.
TEST(GangBinderTest, InPodRuntimeCreatesTheStepTokenSecretOncePerAttempt) {
  FakeCluster cluster;
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(2);
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  ASSERT_TRUE(binder.admit(gang).isOk());
  const auto writes = cluster.writesSnapshot();
  ASSERT_GE(writes.size(), 2U);
  EXPECT_EQ(writes[0], "create services train");
  EXPECT_EQ(writes[1], "create secrets train-step-");
  auto secret = cluster.secret("train-step-10001");
  ASSERT_TRUE(secret.has_value());
  const std::string token = (*secret)["stringData"]["token"].get<std::string>();
  EXPECT_EQ(token.size(), 64U);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  EXPECT_EQ((*secret)["metadata"]["ownerReferences"][0]["uid"], "job-uid");
  for (const char* name : {"train-0", "train-1"}) {
    const Json pod = *cluster.pod(name);
    bool mounted = false;
    for (const Json& var : pod["spec"]["containers"][0]["env"]) {
      mounted |= var.value("name", "") == "KUBESLURM_STEP_TOKEN" &&
                 var.at("valueFrom").at("secretKeyRef").value("name", "") == "train-step-10001";
    }
    EXPECT_TRUE(mounted) << name;
  }

  const std::size_t before = cluster.writeCount();
  ASSERT_TRUE(binder.admit(gang).isOk());
  EXPECT_EQ(cluster.writeCount(), before) << "the attempt's pods already name its Secret";
  EXPECT_EQ(cluster.secretCount(), 1U);
}

// A Secret planted under the old fixed name is never the job's: the job's has another name.
TEST(GangBinderTest, APlantedStepSecretIsNeverUsed) {
  FakeCluster cluster;
  cluster.put(kube::resources::secrets(),
              Json{{"metadata", {{"name", "train-step"}}}, {"stringData", {{"token", "known"}}}});
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(1);
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  ASSERT_TRUE(binder.admit(gang).isOk());
  const Json pod = *cluster.pod("train-0");
  for (const Json& var : pod["spec"]["containers"][0]["env"]) {
    if (var.value("name", "") != "KUBESLURM_STEP_TOKEN") continue;
    EXPECT_EQ(var.at("valueFrom").at("secretKeyRef").value("name", ""), "train-step-10001");
  }
}

// A pod that is not one of the gang's ranks (the webhook keeps tenants from labelling one so, and
// this is the second fence) never names the token's Secret, however well it forges the rest.
TEST(GangBinderTest, OnlyTheGangsOwnRankPodsNameItsStepSecret) {
  FakeCluster cluster;
  cluster.put(kube::resources::pods(), Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "train-extra", "namespace": "team-a",
                 "labels": {"kubeslurm.io/job-name": "train", "kubeslurm.io/attempt": "1"},
                 "ownerReferences": [{"apiVersion": "kubeslurm.io/v1alpha1", "kind": "SlurmJob",
                                      "name": "train", "uid": "job-uid", "controller": true}]},
    "spec": {"containers": [{"name": "rank", "image": "busybox",
             "env": [{"name": "KUBESLURM_STEP_TOKEN", "valueFrom": {"secretKeyRef":
                     {"name": "train-step-known", "key": "token"}}}]}]}})"));
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(1);
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  ASSERT_TRUE(binder.admit(gang).isOk());
  const Json pod = *cluster.pod("train-0");
  bool mounted = false;
  for (const Json& var : pod["spec"]["containers"][0]["env"]) {
    if (var.value("name", "") != "KUBESLURM_STEP_TOKEN") continue;
    mounted = true;
    EXPECT_EQ(var.at("valueFrom").at("secretKeyRef").value("name", ""), "train-step-10001");
  }
  EXPECT_TRUE(mounted);
}

TEST(GangBinderTest, FailingToCreateTheStepTokenRollsBackAndCreatesNoPod) {
  FakeCluster cluster;
  cluster.failCreateOf = "train-step-";
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(2);
  gang.toolsImage = "kubeslurm/kubeslurm-tools:0.1.0";
  const Status status = binder.admit(gang);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.toString();
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create pods "), 0U);
}

// Partition spec.jobNetwork Isolated: the job's NetworkPolicy is made with its Service, once;
// one of the same name that is not the job's stops the admit, as a foreign Service does.
TEST(GangBinderTest, AnIsolatedJobGetsItsNetworkPolicyOnce) {
  FakeCluster cluster;
  GangBinder binder(cluster, cluster, cluster);
  podspec::GangInput gang = gangOf(2);
  gang.isolateNetwork = true;
  ASSERT_TRUE(binder.admit(gang).isOk());
  const auto policy = cluster.networkPolicy("train");
  ASSERT_TRUE(policy.has_value());
  EXPECT_EQ(policy->at("metadata").at("ownerReferences").at(0).value("uid", ""), "job-uid");
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create networkpolicies train"), 1U);
  ASSERT_TRUE(binder.admit(gang).isOk());
  EXPECT_EQ(countPrefix(cluster.writesSnapshot(), "create networkpolicies train"), 1U);

  FakeCluster foreign;
  foreign.put(kube::resources::networkPolicies(), Json{{"metadata", {{"name", "train"}}}});
  GangBinder other(foreign, foreign, foreign);
  const Status status = other.admit(gang);
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.toString();
  EXPECT_NE(status.message().find("networkpolicy train exists and is not owned by job train"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(countPrefix(foreign.writesSnapshot(), "create pods "), 0U);
}

// Invariant 2: a closed fence → kAborted and not one write.
TEST(GangBinderTest, ClosedFenceWritesNothing) {
  FakeCluster cluster;
  GangBinder binder(cluster, cluster, cluster,
                    {.bindParallelism = 16, .canWrite = [] { return false; }, .reached = {}});
  EXPECT_EQ(binder.admit(gangOf(4)).code(), StatusCode::kAborted);
  EXPECT_EQ(binder.rollback("team-a", "train", 1).code(), StatusCode::kAborted);
  EXPECT_THAT(cluster.writesSnapshot(), IsEmpty());
}

// The fence closes after the 2nd bind: the binder stops there — no further bind and no
// rollback delete (it may not write either); the half-bound gang is the next leader's to find.
TEST(GangBinderTest, FenceClosingMidGangStopsAllWrites) {
  FakeCluster cluster;
  constexpr std::size_t kOpenFor = 1 + 4 + 2;  // Service, 4 creates, 2 binds
  GangBinderOptions options{.bindParallelism = 1, .canWrite = {}, .reached = {}};
  options.canWrite = [&cluster] { return cluster.writeCount() < kOpenFor; };
  GangBinder binder(cluster, cluster, cluster, options);
  EXPECT_EQ(binder.admit(gangOf(4)).code(), StatusCode::kAborted);
  const auto writes = cluster.writesSnapshot();
  EXPECT_EQ(writes.size(), kOpenFor) << ::testing::PrintToString(writes);
  EXPECT_EQ(countPrefix(writes, "delete "), 0U);
  EXPECT_EQ(cluster.podNames().size(), 4U);

  std::vector<api::Pod> left;
  for (const std::string& name : cluster.podNames()) {
    left.push_back(api::decodePod(*cluster.pod(name)).value());
  }
  const auto partial = findPartialGangs(left);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_TRUE(partial[0].has(GangDefect::kPartlyBound)) << partial[0].describe();
}

TEST(GangBinderTest, RollbackDeletesTheAttemptOrEveryEarlierOne) {
  FakeCluster cluster;
  for (std::uint32_t attempt = 0; attempt < 3; ++attempt) {
    auto gang = gangOf(2, attempt);
    gang.jobName = "train";
    auto pods = podspec::rankPods(gang);
    ASSERT_TRUE(pods.isOk());
    for (api::Pod& pod : *pods) {
      pod.metadata.name += "-a" + std::to_string(attempt);  // names are per rank in reality
      cluster.put(kube::resources::pods(), api::encodePod(pod));
    }
  }
  cluster.put(kube::resources::pods(),
              Json{{"metadata", {{"name", "web-0"}, {"labels", {{"app", "web"}}}}}});
  GangBinder binder(cluster, cluster, cluster);
  ASSERT_TRUE(binder.rollback("team-a", "train", 1).isOk());
  EXPECT_THAT(cluster.podNames(),
              ElementsAre("train-0-a0", "train-0-a2", "train-1-a0", "train-1-a2", "web-0"));
  ASSERT_TRUE(binder.rollback("team-a", "train", 2, RollbackScope::kThisAndEarlier).isOk());
  EXPECT_THAT(cluster.podNames(), ElementsAre("web-0"));
  EXPECT_EQ(binder.rollbacks(), 2U);
  EXPECT_EQ(binder.podsDeleted(), 6U);
  // Nothing left of the job: a rollback with nothing to delete writes nothing.
  const std::size_t before = cluster.writeCount();
  ASSERT_TRUE(binder.rollback("team-a", "train", 2, RollbackScope::kThisAndEarlier).isOk());
  EXPECT_EQ(cluster.writeCount(), before);
}

// --- findPartialGangs ---------------------------------------------------------------------------

std::vector<api::Pod> boundGang(std::size_t ranks, std::uint32_t attempt = 1) {
  const podspec::GangInput gang = gangOf(ranks, attempt);
  std::vector<api::Pod> pods = podspec::rankPods(gang).value();
  for (std::size_t rank = 0; rank < pods.size(); ++rank) {
    pods[rank].metadata.uid = "u" + std::to_string(attempt) + std::to_string(rank);
    pods[rank].spec.nodeName = gang.nodes[rank];
    pods[rank].status.phase = "Running";
  }
  return pods;
}

TEST(FindPartialGangsTest, WholeBoundGangIsNotPartial) {
  EXPECT_THAT(findPartialGangs(boundGang(4)), IsEmpty());
  // Finished the same way: the job controller's business, not recovery's.
  auto done = boundGang(4);
  for (api::Pod& pod : done) pod.status.phase = "Succeeded";
  EXPECT_THAT(findPartialGangs(done), IsEmpty());
  // A finished script job keeps rank 0 (its output) and stops the others: still not partial,
  // or every new leader's recovery would delete the job's output.
  done.resize(1);
  EXPECT_THAT(findPartialGangs(done), IsEmpty());
  // One rank still running beside it is.
  done.push_back(boundGang(4)[1]);
  EXPECT_EQ(findPartialGangs(done).size(), 1U);
}

// Created but never bound (a crash between creates and binds): whole, not partial; admit's
// retry or the scheduler decides. Only some created: partial.
TEST(FindPartialGangsTest, MissingRanksArePartial) {
  auto pods = boundGang(4);
  for (api::Pod& pod : pods) pod.spec.nodeName.clear();
  EXPECT_THAT(findPartialGangs(pods), IsEmpty());
  pods.resize(2);
  const auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_EQ(partial[0].namespaceName, "team-a");
  EXPECT_EQ(partial[0].jobName, "train");
  EXPECT_EQ(partial[0].attempt, 1U);
  EXPECT_EQ(partial[0].gangSize, 4U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kMissingRanks));
  ASSERT_EQ(partial[0].pods.size(), 2U);
  EXPECT_EQ(partial[0].pods[0].name, "train-0");
  EXPECT_EQ(partial[0].pods[0].uid, "u10");
  EXPECT_EQ(partial[0].describe(), "team-a/train attempt 1: MissingRanks (2 pods)");
}

TEST(FindPartialGangsTest, TerminatingRankCountsAsMissing) {
  auto pods = boundGang(3);
  pods[2].metadata.deletionTimestamp = 1700000000;
  const auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kMissingRanks));
  EXPECT_EQ(partial[0].pods.size(), 3U);  // the terminating one is still listed for deletion
}

TEST(FindPartialGangsTest, SomeButNotAllBoundIsPartial) {
  auto pods = boundGang(4);
  pods[3].spec.nodeName.clear();
  const auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kPartlyBound));
}

TEST(FindPartialGangsTest, RankOnAnUnplannedNodeIsPartial) {
  auto pods = boundGang(2);
  pods[1].spec.nodeName = "gpu-77";
  const auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kWrongNode));
}

// pkg/kubelet/lifecycle/predicate.go: a pod the node cannot fit is Failed with reason
// "OutOf<resource>" — that rank never runs, so its gang cannot.
TEST(FindPartialGangsTest, RankRejectedByTheKubeletIsPartial) {
  auto pods = boundGang(2);
  pods[0].status.phase = "Failed";
  pods[0].status.reason = "OutOfnvidia.com/gpu";
  auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kRejected));
  // A rank that failed by exit code is a job failure, not a placement defect.
  pods[0].status.reason = "Error";
  EXPECT_THAT(findPartialGangs(pods), IsEmpty());
}

TEST(FindPartialGangsTest, EarlierAttemptsAreStale) {
  auto pods = boundGang(2, 3);
  // By the job's status.restarts.
  auto byJob = findPartialGangs(pods, {{{"team-a", "train"}, 4}});
  ASSERT_EQ(byJob.size(), 1U);
  EXPECT_THAT(byJob[0].defects, ElementsAre(GangDefect::kStaleAttempt));
  EXPECT_THAT(findPartialGangs(pods, {{{"team-a", "train"}, 3}}), IsEmpty());
  // By a newer attempt's pods of the same job beside them.
  auto newer = boundGang(1, 5);
  for (api::Pod& pod : newer) pod.metadata.name += "-new";
  pods.insert(pods.end(), newer.begin(), newer.end());
  auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_EQ(partial[0].attempt, 3U);
  EXPECT_THAT(partial[0].defects, ElementsAre(GangDefect::kStaleAttempt));
}

TEST(FindPartialGangsTest, GroupsByNamespaceJobAndAttemptAndIgnoresOtherPods) {
  auto a = boundGang(2);
  auto b = boundGang(2);
  for (api::Pod& pod : b) pod.metadata.namespaceName = "team-b";
  b.pop_back();
  api::Pod inference;
  inference.metadata.name = "web-0";
  inference.metadata.namespaceName = "team-a";
  inference.metadata.labels["app"] = "web";
  inference.spec.nodeName = "gpu-00";
  std::vector<api::Pod> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.push_back(inference);
  const auto partial = findPartialGangs(all);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_EQ(partial[0].namespaceName, "team-b");
}

TEST(FindPartialGangsTest, MissingOrInconsistentBookkeepingIsMalformed) {
  auto pods = boundGang(2);
  pods[1].metadata.annotations[std::string(podspec::kGangSizeAnnotation)] = "3";
  auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_TRUE(partial[0].has(GangDefect::kMalformed));
  EXPECT_EQ(partial[0].gangSize, 0U);

  pods = boundGang(2);
  pods[0].metadata.labels[std::string(podspec::kAttemptLabel)] = "x";
  partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 2U);  // the unparsable one alone, and the rest now one rank short
  EXPECT_TRUE(partial[0].has(GangDefect::kMalformed));
  EXPECT_TRUE(partial[1].has(GangDefect::kMissingRanks));
}

// Recovery removes exactly what was reported, by uid.
TEST(GangBinderTest, RemoveGangDeletesTheReportedPods) {
  FakeCluster cluster;
  auto pods = boundGang(4);
  pods.resize(2);
  for (const api::Pod& pod : pods) cluster.put(kube::resources::pods(), api::encodePod(pod));
  GangBinder binder(cluster, cluster, cluster);
  const auto partial = findPartialGangs(pods);
  ASSERT_EQ(partial.size(), 1U);
  ASSERT_TRUE(binder.removeGang(partial[0]).isOk());
  EXPECT_THAT(cluster.podNames(), IsEmpty());
  EXPECT_EQ(cluster.deleteOptions.at("train-0").uid, "u10");
}

}  // namespace
}  // namespace kubeslurm::controllers

// The gang binder against the sandbox's real control plane (kube-apiserver, controller-manager
// and kube-scheduler v1.20.2) with four simulated 8-GPU nodes playing the kubelets.
//
// Rank pods carry schedulerName "kubeslurm", a scheduler that does not run here, so the real
// kube-scheduler leaves them alone (it only takes pods whose spec.schedulerName is one of its
// profiles, default-scheduler) and only the binder's pods/binding places them — as in a real
// cluster where the operator binds its gangs and kube-scheduler places the inference services.
#include "controllers/gang_binder.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/kube/client.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::controllers {
namespace {

using testing_support::CommandResult;
using testing_support::SandboxEnvironment;
using testing_support::waitUntil;

// One sandbox for the binary: four 8-GPU nodes on two leaf switches; pods start 0.5 s after
// admission; Leases renewed every 2 s.
const ::testing::Environment* const kSandbox = ::testing::AddGlobalTestEnvironment(
    new SandboxEnvironment("--nodes 4x8-2leaf --nodesim-binary " NODESIM_BINARY
                           " --nodesim-args '--heartbeat 2 --start-delay 0.5'"));

using testing_support::kubectl;

// Fails the n-th bind (1-based) without sending it, as an API server that refused it would;
// every other bind goes to the real server.
class FailingBinder : public kube::Binder {
 public:
  FailingBinder(kube::Binder& inner, int failAt) : inner_(inner), failAt_(failAt) {}
  Status bind(std::string_view ns, std::string_view pod, std::string_view node,
              std::string_view podUid) override {
    if (++calls_ == failAt_) return {StatusCode::kUnavailable, "injected: bind refused"};
    return inner_.bind(ns, pod, node, podUid);
  }

 private:
  kube::Binder& inner_;
  int failAt_;
  std::atomic<int> calls_{0};
};

class GangBinderIT : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    ns_ = "gang-" + std::to_string(counter_++);
    CommandResult made = kubectl("create namespace " + ns_);
    ASSERT_EQ(made.exitCode, 0) << made.output;
    // The ServiceAccount admission plugin refuses pods until the namespace's default service
    // account has its token (docs/sandbox.md); the operator would retry, the test waits.
    ASSERT_TRUE(waitUntil(
        [&] {
          CommandResult token =
              kubectl("-n " + ns_ + " get sa default -o jsonpath={.secrets[0].name}");
          return token.exitCode == 0 && !token.output.empty();
        },
        std::chrono::seconds(20)));
    auto client = kube::Client::create(testing_support::sandboxAdminConfig());
    ASSERT_TRUE(client.isOk()) << client.status().toString();
    client_ = std::move(client).value();
  }

  void TearDown() override {
    if (ns_.empty() || SandboxEnvironment::env().empty()) return;
    // Free the GPUs for the next test at once: no kubelet grace needed for what is left.
    (void)kubectl("-n " + ns_ + " delete deployment --all --wait=false");
    waitUntil(
        [&] {
          (void)kubectl("-n " + ns_ + " delete pods --all --grace-period=0 --force --wait=false");
          return kubectl("-n " + ns_ + " get pods -o name").output.empty();
        },
        std::chrono::seconds(30));
    (void)kubectl("delete namespace " + ns_ + " --wait=false");
  }

  podspec::GangInput gang(const std::string& job, std::vector<std::string> nodes,
                          std::uint32_t attempt = 0) {
    podspec::GangInput input;
    input.namespaceName = ns_;
    input.jobName = job;
    input.jobUid = "uid-of-" + job;  // no SlurmJob CRD here: the GC cannot resolve the owner
    input.jobId = 100 + counter_;
    input.attempt = attempt;
    input.nodes = std::move(nodes);
    input.gpusPerNode = 8;
    input.image = "busybox";
    input.script = "sleep 2";
    input.environment.jobId = input.jobId;
    input.environment.jobName = job;
    input.environment.gpusPerNode = 8;
    return input;
  }

  std::vector<api::Pod> jobPods(const std::string& job) {
    kube::ListOptions options;
    options.labelSelector = std::string(podspec::kJobNameLabel) + "=" + job;
    auto list = kube::listAll(*client_, kube::resources::pods(), ns_, options);
    EXPECT_TRUE(list.isOk()) << list.status().toString();
    std::vector<api::Pod> pods;
    if (!list.isOk()) return pods;
    for (const kube::Json& item : (*list)["items"]) pods.push_back(api::decodePod(item).value());
    return pods;
  }

  std::optional<api::Pod> pod(const std::string& name) {
    auto got = client_->get(kube::resources::pods(), ns_, name);
    if (!got.isOk()) return std::nullopt;
    return api::decodePod(*got).value();
  }

  bool waitGone(const std::string& job, std::chrono::seconds timeout = std::chrono::seconds(30)) {
    return waitUntil([&] { return jobPods(job).empty(); }, timeout);
  }

  std::string ns_;
  std::unique_ptr<kube::Client> client_;
  static inline int counter_ = 0;
};

std::string describe(const std::vector<api::Pod>& pods) {
  std::string text;
  for (const api::Pod& pod : pods) {
    text += pod.metadata.name + " node=" + pod.spec.nodeName + " phase=" + pod.status.phase +
            " reason=" + pod.status.reason + "\n";
  }
  return text;
}

// (a) The whole gang: every rank bound (Binding → spec.nodeName) to its planned node, run by the
// simulated kubelets, all four at once; rank 0 runs the batch script `sleep 2` and succeeds.
// The Service is headless (clusterIP None) and publishes not-ready addresses, so every rank
// resolves before any is ready.
TEST_F(GangBinderIT, AdmittedGangIsBoundToThePlannedNodesAndRuns) {
  GangBinder binder(*client_, *client_, *client_);
  const podspec::GangInput input = gang("train", {"gpu-003", "gpu-004", "gpu-001", "gpu-002"});
  const Status admitted = binder.admit(input);
  ASSERT_TRUE(admitted.isOk()) << admitted.toString();
  EXPECT_EQ(binder.binds(), 4U);

  std::vector<api::Pod> pods = jobPods("train");
  ASSERT_EQ(pods.size(), 4U);
  for (const api::Pod& rankPod : pods) {
    const std::string rank = rankPod.metadata.labels.at(std::string(podspec::kRankLabel));
    EXPECT_EQ(rankPod.spec.nodeName, input.nodes.at(std::stoul(rank))) << rankPod.metadata.name;
  }
  const bool allRunning = waitUntil(
      [&] {
        pods = jobPods("train");
        std::size_t running = 0;
        for (const api::Pod& p : pods) {
          const bool rank0 = p.metadata.name == "train-0";
          if (p.status.phase == "Running" || (rank0 && p.status.phase == "Succeeded")) ++running;
        }
        return running == 4;
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(allRunning) << describe(pods);
  EXPECT_TRUE(waitUntil([&] { return pod("train-0")->status.phase == "Succeeded"; },
                        std::chrono::seconds(20)))
      << describe(jobPods("train"));
  EXPECT_TRUE(findPartialGangs(jobPods("train")).empty());

  auto service = client_->get({"", "v1", "services", true}, ns_, "train");
  ASSERT_TRUE(service.isOk()) << service.status().toString();
  EXPECT_EQ((*service)["spec"]["clusterIP"], "None");
  EXPECT_EQ((*service)["spec"]["publishNotReadyAddresses"], true);

  // A second admit of the running gang changes nothing: same pods, same uids, no new binds.
  std::map<std::string, std::string> uids;
  for (const api::Pod& p : jobPods("train")) uids[p.metadata.name] = p.metadata.uid;
  ASSERT_TRUE(binder.admit(input).isOk());
  EXPECT_EQ(binder.binds(), 4U);
  for (const api::Pod& p : jobPods("train")) EXPECT_EQ(uids[p.metadata.name], p.metadata.uid);
}

// (b) Invariant 1: the 3rd bind fails after two ranks were really bound (and started by their
// kubelets) → the binder deletes the whole gang; the bound ranks go through graceful deletion
// (the simulated kubelet stops them and removes the pod, as the kubelet's status manager does),
// and no pod of the job remains.
TEST_F(GangBinderIT, BindFailureMidGangLeavesNoPodOfTheJob) {
  FailingBinder failing(*client_, 3);
  GangBinder binder(*client_, *client_, failing,
                    {.bindParallelism = 1, .canWrite = {}, .reached = {}});
  const Status admitted =
      binder.admit(gang("broken", {"gpu-001", "gpu-002", "gpu-003", "gpu-004"}));
  EXPECT_EQ(admitted.code(), StatusCode::kUnavailable) << admitted.toString();
  EXPECT_EQ(binder.binds(), 2U);
  EXPECT_EQ(binder.bindFailures(), 1U);
  EXPECT_EQ(binder.rollbacks(), 1U);
  EXPECT_EQ(binder.podsDeleted(), 4U);
  // What is still visible is on its way out: terminating, never a live bound rank.
  for (const api::Pod& p : jobPods("broken")) {
    EXPECT_TRUE(p.metadata.deletionTimestamp.has_value()) << describe({p});
  }
  EXPECT_TRUE(waitGone("broken")) << describe(jobPods("broken"));
}

// (c) Invariant 4: an inference pod placed by kube-scheduler holds all 8 GPUs of a node; a gang
// planned onto that node is bound (the API server does not check capacity on a Binding), and
// the kubelet refuses the rank at admission: Failed, reason OutOfnvidia.com/gpu
// (pkg/kubelet/lifecycle/predicate.go). findPartialGangs reports it, the rollback removes the
// gang, and the inference pod is the same object, still Running on its node.
TEST_F(GangBinderIT, KubeletRejectedRankIsFoundAndRolledBackBesideInference) {
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: infer\nspec:\n  replicas: 1\n"
      "  selector:\n    matchLabels: {app: infer}\n  template:\n    metadata:\n"
      "      labels: {app: infer}\n    spec:\n      containers:\n      - name: server\n"
      "        image: busybox\n        command: [sleep, infinity]\n        resources:\n"
      "          limits: {nvidia.com/gpu: 8}\n";
  const std::string file = ::testing::TempDir() + "gang-it-" + ns_ + "-infer.yaml";
  std::ofstream(file) << deployment;
  CommandResult applied = kubectl("-n " + ns_ + " apply -f " + file);
  std::filesystem::remove(file);
  ASSERT_EQ(applied.exitCode, 0) << applied.output;

  std::optional<api::Pod> inference;
  const bool running = waitUntil(
      [&] {
        kube::ListOptions options;
        options.labelSelector = "app=infer";
        auto list = kube::listAll(*client_, kube::resources::pods(), ns_, options);
        if (!list.isOk() || (*list)["items"].empty()) return false;
        inference = api::decodePod((*list)["items"][0]).value();
        return inference->status.phase == "Running";
      },
      std::chrono::seconds(40));
  ASSERT_TRUE(running) << (inference ? describe({*inference}) : "no inference pod");
  const std::string taken = inference->spec.nodeName;
  const std::string other = taken == "gpu-001" ? "gpu-002" : "gpu-001";
  EXPECT_EQ(inference->spec.schedulerName, "default-scheduler");

  GangBinder binder(*client_, *client_, *client_);
  const podspec::GangInput input = gang("clash", {taken, other});
  ASSERT_TRUE(binder.admit(input).isOk());

  std::vector<PartialGang> partial;
  const bool found = waitUntil(
      [&] {
        partial = findPartialGangs(jobPods("clash"));
        return !partial.empty() && partial[0].has(GangDefect::kRejected);
      },
      std::chrono::seconds(20));
  ASSERT_TRUE(found) << describe(jobPods("clash"));
  ASSERT_EQ(partial.size(), 1U);
  EXPECT_EQ(partial[0].jobName, "clash");
  EXPECT_EQ(pod("clash-0")->status.reason, "OutOfnvidia.com/gpu");
  EXPECT_EQ(pod("clash-0")->spec.nodeName, taken);

  ASSERT_TRUE(binder.rollback(ns_, "clash", input.attempt).isOk());
  EXPECT_TRUE(waitGone("clash")) << describe(jobPods("clash"));

  auto after = client_->get(kube::resources::pods(), ns_, inference->metadata.name);
  ASSERT_TRUE(after.isOk()) << after.status().toString();
  const api::Pod still = api::decodePod(*after).value();
  EXPECT_EQ(still.metadata.uid, inference->metadata.uid);
  EXPECT_EQ(still.spec.nodeName, taken);
  EXPECT_EQ(still.status.phase, "Running");
  EXPECT_FALSE(still.metadata.deletionTimestamp.has_value());
}

// (d) Invariant 1 after a crash: an operator died after creating 2 of 4 ranks and binding one.
// The pods alone tell a new leader what happened (gang-size, planned-node); it finds the gang
// and deletes it before scheduling anything.
TEST_F(GangBinderIT, PartialGangLeftByACrashIsFoundAndRemoved) {
  const podspec::GangInput input = gang("crashed", {"gpu-001", "gpu-002", "gpu-003", "gpu-004"});
  auto pods = podspec::rankPods(input);
  ASSERT_TRUE(pods.isOk()) << pods.status().toString();
  for (std::size_t rank = 0; rank < 2; ++rank) {
    auto created = client_->create(kube::resources::pods(), ns_, api::encodePod((*pods)[rank]));
    ASSERT_TRUE(created.isOk()) << created.status().toString();
  }
  ASSERT_TRUE(client_->bind(ns_, "crashed-0", "gpu-001").isOk());

  // A whole gang of another job beside it must not be touched.
  GangBinder binder(*client_, *client_, *client_);
  ASSERT_TRUE(binder.admit(gang("whole", {"gpu-004"})).isOk());

  kube::ListOptions options;
  options.labelSelector = std::string(podspec::kJobNameLabel);  // every pod of the operator
  auto list = kube::listAll(*client_, kube::resources::pods(), "", options);
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  std::vector<api::Pod> all;
  for (const kube::Json& item : (*list)["items"]) all.push_back(api::decodePod(item).value());
  std::vector<PartialGang> partial;
  for (PartialGang& gang : findPartialGangs(all)) {
    if (gang.namespaceName == ns_) partial.push_back(std::move(gang));
  }
  ASSERT_EQ(partial.size(), 1U) << describe(all);
  EXPECT_EQ(partial[0].jobName, "crashed");
  EXPECT_TRUE(partial[0].has(GangDefect::kMissingRanks)) << partial[0].describe();
  EXPECT_TRUE(partial[0].has(GangDefect::kPartlyBound)) << partial[0].describe();
  EXPECT_EQ(partial[0].gangSize, 4U);

  ASSERT_TRUE(
      binder.rollback(ns_, "crashed", partial[0].attempt, RollbackScope::kThisAndEarlier).isOk());
  EXPECT_TRUE(waitGone("crashed")) << describe(jobPods("crashed"));
  const auto whole = jobPods("whole");
  ASSERT_EQ(whole.size(), 1U);
  EXPECT_FALSE(whole[0].metadata.deletionTimestamp.has_value());
}

}  // namespace
}  // namespace kubeslurm::controllers

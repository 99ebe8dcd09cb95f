// The node simulator against the sandbox's real control plane: `sandbox up --nodes 4x8` starts
// kubeslurm-nodesim beside a real kube-apiserver, controller-manager and kube-scheduler v1.20.2,
// and the real kubectl (v1.20.2, from the control-plane cache) looks at what it does.
//
// The node lifecycle controller's grace period is shortened to 8 s (`--node-grace-period 8`,
// with the simulator renewing Leases every 2 s) so that a failed node goes Unknown within the
// test's time; everything else runs with the sandbox's defaults.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "kubeslurm/kube/client.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::nodesim {
namespace {

using testing_support::CommandResult;
using testing_support::runCommand;
using testing_support::SandboxEnvironment;
using testing_support::waitUntil;

// One sandbox for the whole binary, with four simulated 8-GPU nodes.
const ::testing::Environment* const kSandbox = ::testing::AddGlobalTestEnvironment(
    new SandboxEnvironment("--nodes 4x8 --nodesim-binary " NODESIM_BINARY
                           " --nodesim-args '--heartbeat 2 --start-delay 0.5'"
                           " --node-grace-period 8"));

using testing_support::kubectl;
const auto& quote = testing_support::shellQuote;

// The output of a kubectl call that must succeed.
std::string kubectlOk(const std::string& args) {
  CommandResult result = kubectl(args);
  EXPECT_EQ(result.exitCode, 0) << "kubectl " << args << "\n" << result.output;
  return result.output;
}

std::string jsonpath(const std::string& object, const std::string& path,
                     const std::string& ns = {}) {
  CommandResult result = kubectl((ns.empty() ? std::string() : "-n " + ns + " ") + "get " + object +
                                 " -o " + quote("jsonpath=" + path));
  return result.exitCode == 0 ? result.output : "<error: " + result.output + ">";
}

class NodesimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    ns_ = "nodesim-" + std::to_string(counter_++);
    kubectlOk("create namespace " + ns_);
    (void)info;
  }

  // Creates a pod from YAML; retried while the namespace's service account is being made.
  void createPod(const std::string& yaml) {
    const std::string file = writeTemp(yaml);
    CommandResult last;
    const bool created = waitUntil(
        [&] {
          last = kubectl("-n " + ns_ + " create -f " + file);
          return last.exitCode == 0;
        },
        std::chrono::seconds(15));
    ASSERT_TRUE(created) << last.output;
    std::filesystem::remove(file);
  }

  // POST pods/NAME/binding, as the operator binds its gangs.
  void bind(const std::string& pod, const std::string& node) {
    const std::string file =
        writeTemp(R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + pod +
                  R"("},"target":{"apiVersion":"v1","kind":"Node","name":")" + node + R"("}})");
    kubectlOk("create --raw /api/v1/namespaces/" + ns_ + "/pods/" + pod + "/binding -f " + file);
    std::filesystem::remove(file);
  }

  // A pod that no scheduler picks up (its scheduler does not exist): only bind() places it.
  static std::string unscheduledPod(const std::string& name, const std::string& command,
                                    int gpus = 0, const std::string& restartPolicy = "Never") {
    std::string yaml =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
        "\nspec:\n  schedulerName: kubeslurm-test\n  restartPolicy: " + restartPolicy +
        "\n  terminationGracePeriodSeconds: 30\n  containers:\n  - name: main\n"
        "    image: busybox\n    command: " +
        command + "\n";
    if (gpus > 0) {
      yaml +=
          "    resources:\n      limits:\n        nvidia.com/gpu: " + std::to_string(gpus) + "\n";
    }
    return yaml;
  }

  std::string podField(const std::string& pod, const std::string& path) {
    return jsonpath("pod " + pod, path, ns_);
  }

  bool waitPhase(const std::string& pod, const std::string& phase,
                 std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    return waitUntil([&] { return podField(pod, "{.status.phase}") == phase; }, timeout);
  }

  std::string writeTemp(const std::string& text) {
    std::string path =
        ::testing::TempDir() + "nodesim-it-" + ns_ + "-" + std::to_string(files_++) + ".yaml";
    std::ofstream(path) << text;
    return path;
  }

  std::string ns_;
  int files_ = 0;
  static inline int counter_ = 0;
};

// kubelet registration (kubelet_node_status.go) and heartbeats: the nodes exist, are Ready,
// advertise 8 GPUs, carry the topology labels, and each has its Lease held by itself.
TEST_F(NodesimTest, NodesAreReadyWithTheirGpusAndLeases) {
  const std::string ready = kubectlOk(
      "get nodes -l nodesim.kubeslurm.io/simulated=true -o " +
      quote(
          R"(jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status},{end})"));
  EXPECT_EQ(ready, "gpu-001=True,gpu-002=True,gpu-003=True,gpu-004=True,");
  const std::string table = kubectlOk("get nodes");
  EXPECT_NE(table.find("gpu-004   Ready"), std::string::npos) << table;
  EXPECT_EQ(jsonpath("node gpu-001", R"({.status.allocatable.nvidia\.com/gpu})"), "8");
  EXPECT_EQ(jsonpath("node gpu-003", R"({.metadata.labels.kubeslurm\.io/leaf})"), "leaf1");
  EXPECT_EQ(jsonpath("node gpu-002", "{.status.nodeInfo.kubeletVersion}"), "v1.20.2");
  EXPECT_EQ(jsonpath("lease gpu-002", "{.spec.holderIdentity}", "kube-node-lease"), "gpu-002");
  EXPECT_EQ(jsonpath("lease gpu-002", "{.metadata.ownerReferences[0].kind}", "kube-node-lease"),
            "Node");
}

// A pod bound through the binding subresource runs `sleep 1` and completes: Succeeded, exit
// code 0, reason Completed, with the node's InternalIP as hostIP and a pod IP.
TEST_F(NodesimTest, BoundSleepPodRunsAndSucceeds) {
  createPod(unscheduledPod("sleeper", R"(["sleep", "1"])"));
  EXPECT_EQ(podField("sleeper", "{.spec.nodeName}"), "");
  bind("sleeper", "gpu-001");
  ASSERT_TRUE(waitPhase("sleeper", "Running", std::chrono::seconds(10)))
      << podField("sleeper", "{.status}");
  ASSERT_TRUE(waitPhase("sleeper", "Succeeded", std::chrono::seconds(10)))
      << podField("sleeper", "{.status}");
  EXPECT_EQ(podField("sleeper", "{.status.containerStatuses[0].state.terminated.exitCode}"), "0");
  EXPECT_EQ(podField("sleeper", "{.status.containerStatuses[0].state.terminated.reason}"),
            "Completed");
  EXPECT_EQ(podField("sleeper", "{.status.hostIP}"),
            jsonpath("node gpu-001", R"({.status.addresses[?(@.type=="InternalIP")].address})"));
  EXPECT_EQ(podField("sleeper", "{.status.podIP}").rfind("10.244.0.", 0), 0U);
}

TEST_F(NodesimTest, ExitCodeFailsThePod) {
  createPod(unscheduledPod("exits", R"(["sh", "-c", "exit 3"])"));
  bind("exits", "gpu-002");
  ASSERT_TRUE(waitPhase("exits", "Failed")) << podField("exits", "{.status}");
  EXPECT_EQ(podField("exits", "{.status.containerStatuses[0].state.terminated.exitCode}"), "3");
  EXPECT_EQ(podField("exits", "{.status.containerStatuses[0].state.terminated.reason}"), "Error");
}

// Kubelet admission (lifecycle/predicate.go): a pod bound past the node's free GPUs fails with
// reason OutOfnvidia.com/gpu and the kubelet's message.
TEST_F(NodesimTest, PodAskingForMoreGpusThanFreeIsRejected) {
  createPod(unscheduledPod("holder", R"(["sleep", "infinity"])", 6));
  bind("holder", "gpu-003");
  ASSERT_TRUE(waitPhase("holder", "Running")) << podField("holder", "{.status}");
  createPod(unscheduledPod("greedy", R"(["sleep", "1"])", 4));
  bind("greedy", "gpu-003");
  ASSERT_TRUE(waitPhase("greedy", "Failed")) << podField("greedy", "{.status}");
  EXPECT_EQ(podField("greedy", "{.status.reason}"), "OutOfnvidia.com/gpu");
  EXPECT_EQ(podField("greedy", "{.status.message}"),
            "Pod Node didn't have enough resource: nvidia.com/gpu, requested: 4, used: 6, "
            "capacity: 8");
  kubectlOk("-n " + ns_ + " delete pod holder --wait=true --timeout=15s");
}

// The real kube-scheduler places a pod that is not ours on a simulated node, and it runs.
TEST_F(NodesimTest, DefaultSchedulerPlacesPodsOnSimulatedNodes) {
  createPod(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: inference\nspec:\n  restartPolicy: Never\n"
      "  containers:\n  - name: main\n    image: busybox\n    command: [\"sleep\", \"1\"]\n"
      "    resources:\n      limits:\n        nvidia.com/gpu: 1\n");
  ASSERT_TRUE(waitPhase("inference", "Succeeded", std::chrono::seconds(20)))
      << podField("inference", "{.status}");
  EXPECT_EQ(podField("inference", "{.spec.nodeName}").rfind("gpu-", 0), 0U);
  const std::string scheduled =
      podField("inference", R"({.status.conditions[?(@.type=="PodScheduled")].status})");
  EXPECT_EQ(scheduled, "True");
}

// Graceful deletion: the running container gets SIGTERM (exit code 143, seen in the last
// status before the pod goes) and the simulator deletes the pod with grace period 0, long
// before the 30 s grace period would end.
TEST_F(NodesimTest, GracefulDeleteTerminatesAndRemovesThePod) {
  createPod(unscheduledPod("server", R"(["sleep", "infinity"])"));
  bind("server", "gpu-004");
  ASSERT_TRUE(waitPhase("server", "Running")) << podField("server", "{.status}");

  auto client = kube::Client::create(testing_support::sandboxAdminConfig());
  ASSERT_TRUE(client.isOk()) << client.status().toString();
  kube::WatchOptions options;
  options.fieldSelector = "metadata.name=server";
  options.resourceVersion = podField("server", "{.metadata.resourceVersion}");
  options.timeoutSeconds = 20;
  std::string lastExitCode;
  std::atomic<bool> deleted{false};
  kube::WatchStop stop;
  std::thread watcher([&] {
    (*client)->watch(
        kube::resources::pods(), ns_, options,
        [&](const kube::WatchEvent& event) {
          const auto code = event.object.value(
              "/status/containerStatuses/0/state/terminated/exitCode"_json_pointer, -1);
          if (code >= 0) lastExitCode = std::to_string(code);
          if (event.type == kube::WatchEventType::kDeleted) {
            deleted = true;
            return false;
          }
          return true;
        },
        &stop);
  });
  const auto started = std::chrono::steady_clock::now();
  kubectlOk("-n " + ns_ + " delete pod server --wait=false");
  const bool gone =
      waitUntil([&] { return kubectl("-n " + ns_ + " get pod server").exitCode != 0; },
                std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - started;
  waitUntil([&] { return deleted.load(); }, std::chrono::seconds(5));
  stop.stop();
  watcher.join();
  EXPECT_TRUE(gone) << "pod still there after graceful delete";
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_TRUE(deleted.load());
  EXPECT_EQ(lastExitCode, "143");
}

// A failed node stops heartbeating: its Lease is no longer renewed, and the node lifecycle
// controller of the real controller-manager marks it Ready=Unknown on its own after its grace
// period (8 s here); recovering it makes it Ready again.
TEST_F(NodesimTest, FailedNodeStopsItsLeaseAndGoesUnknown) {
  auto renewTime = [] { return jsonpath("lease gpu-004", "{.spec.renewTime}", "kube-node-lease"); };
  auto ready = [] {
    return jsonpath("node gpu-004", R"({.status.conditions[?(@.type=="Ready")].status})");
  };
  ASSERT_EQ(ready(), "True");
  const std::string sandbox = SandboxEnvironment::sandboxScript();
  const std::string dir = SandboxEnvironment::dir();
  CommandResult failed = runCommand(sandbox + " node fail gpu-004 --dir " + dir);
  ASSERT_EQ(failed.exitCode, 0) << failed.output;
  const std::string before = renewTime();
  std::this_thread::sleep_for(std::chrono::seconds(4));  // two renewal intervals
  EXPECT_EQ(renewTime(), before) << "the Lease of a failed node was renewed";
  EXPECT_TRUE(waitUntil([&] { return ready() == "Unknown"; }, std::chrono::seconds(25))) << ready();
  EXPECT_EQ(jsonpath("node gpu-004", R"({.status.conditions[?(@.type=="Ready")].reason})"),
            "NodeStatusUnknown");
  EXPECT_NE(jsonpath("node gpu-003", R"({.status.conditions[?(@.type=="Ready")].status})"),
            "Unknown");

  CommandResult recovered = runCommand(sandbox + " node recover gpu-004 --dir " + dir);
  ASSERT_EQ(recovered.exitCode, 0) << recovered.output;
  EXPECT_TRUE(waitUntil([&] { return ready() == "True"; }, std::chrono::seconds(10))) << ready();
  EXPECT_NE(renewTime(), before);
}

}  // namespace
}  // namespace kubeslurm::nodesim

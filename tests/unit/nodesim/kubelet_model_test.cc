// The kubelet model of one simulated node (kubeslurm/nodesim/kubelet_model.h). Each test names
// the kubelet behaviour it pins down.
#include "kubeslurm/nodesim/kubelet_model.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace kubeslurm::nodesim {
namespace {

using Kind = api::ContainerState::Kind;

constexpr std::int64_t kT0 = 1'700'000'000'000;  // ms; a whole second

SimNode gpuNode(std::int64_t gpus = 8) {
  ShapeOptions shape;
  shape.nodes = "gpu-001";
  shape.gpus = gpus;
  auto nodes = buildNodes(shape);
  EXPECT_TRUE(nodes.isOk());
  return nodes->front();
}

api::Pod makePod(const std::string& name, std::vector<std::string> command, std::int64_t gpus = 0,
                 std::string restartPolicy = "Never", std::int64_t createdS = kT0 / 1000) {
  api::Pod pod;
  pod.metadata.name = name;
  pod.metadata.namespaceName = "ns";
  pod.metadata.uid = "uid-" + name;
  pod.metadata.resourceVersion = "1";
  pod.metadata.creationTimestamp = createdS;
  pod.spec.nodeName = "gpu-001";
  pod.spec.restartPolicy = std::move(restartPolicy);
  api::Container c;
  c.name = "main";
  c.image = "busybox";
  c.command = std::move(command);
  if (gpus > 0) c.resources.limits["nvidia.com/gpu"] = std::to_string(gpus);
  pod.spec.containers.push_back(std::move(c));
  pod.status.phase = "Pending";  // as the API server creates it
  return pod;
}

// A node with its pods, stepped like the simulator's loop: statuses written back, removed
// pods dropped.
struct Harness {
  SimNode node = gpuNode();
  std::map<std::string, api::Pod> pods;
  ModelOptions options;
  SimulatedRunner runner;
  bool failed = false;
  std::set<std::string> removed;

  NodeStep step(std::int64_t nowMs) {
    std::vector<const api::Pod*> view;
    for (const auto& [_, pod] : pods) view.push_back(&pod);
    NodeStep result = stepNode(node, failed, view, nowMs, options, runner);
    for (const PodUpdate& update : result.updates) {
      const std::string name = update.pod->metadata.name;
      if (update.status) pods[name].status = *update.status;
      if (update.remove) removed.insert(name);
    }
    for (const auto& name : removed) pods.erase(name);
    return result;
  }
  api::Pod& add(api::Pod pod) {
    const std::string name = pod.metadata.name;
    return pods[name] = std::move(pod);
  }
  const api::Pod& pod(const std::string& name) { return pods.at(name); }
};

const api::Condition* condition(const api::Pod& pod, const std::string& type) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// kubelet: a pod is admitted, then Pending with its containers waiting in ContainerCreating
// until the runtime has started them; hostIP and podIP are set, startTime is the admission.
TEST(KubeletModelTest, AdmittedPodWaitsInContainerCreatingThenRuns) {
  Harness h;
  h.add(makePod("a", {"sleep", "30"}, 4));
  NodeStep first = h.step(kT0);
  ASSERT_EQ(first.updates.size(), 1U);
  const api::Pod& pending = h.pod("a");
  EXPECT_EQ(pending.status.phase, "Pending");
  EXPECT_EQ(pending.status.startTime, kT0 / 1000);
  EXPECT_EQ(pending.status.hostIP, h.node.internalIP);
  EXPECT_EQ(pending.status.podIP, h.node.podIPPrefix + "2");
  ASSERT_EQ(pending.status.containerStatuses.size(), 1U);
  EXPECT_EQ(pending.status.containerStatuses[0].state.kind, Kind::kWaiting);
  EXPECT_EQ(pending.status.containerStatuses[0].state.reason, "ContainerCreating");
  EXPECT_EQ(condition(pending, "Ready")->status, "False");
  EXPECT_EQ(first.wakeAtMs, kT0 + 1000);  // the default start delay

  EXPECT_TRUE(h.step(kT0 + 999).updates.empty());
  h.step(kT0 + 1000);
  const api::Pod& running = h.pod("a");
  EXPECT_EQ(running.status.phase, "Running");
  const api::ContainerStatus& s = running.status.containerStatuses[0];
  EXPECT_EQ(s.state.kind, Kind::kRunning);
  EXPECT_EQ(s.state.startedAt, kT0 / 1000 + 1);
  EXPECT_TRUE(s.ready);
  EXPECT_EQ(s.started, true);
  EXPECT_EQ(s.containerID.rfind("containerd://", 0), 0U);
  EXPECT_EQ(s.containerID.size(), std::string("containerd://").size() + 64);
  EXPECT_FALSE(s.imageID.empty());
  for (const char* type : {"PodScheduled", "Initialized", "ContainersReady", "Ready"}) {
    ASSERT_NE(condition(running, type), nullptr) << type;
    EXPECT_EQ(condition(running, type)->status, "True") << type;
  }
}

// `sleep 1` under restartPolicy Never: runs one second, exits 0, reason Completed; getPhase
// (kubelet_pods.go) makes the pod Succeeded; Ready goes False with reason PodCompleted.
TEST(KubeletModelTest, SleepRunsItsSecondsThenSucceeds) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sleep", "1"}));
  NodeStep first = h.step(kT0);
  EXPECT_EQ(h.pod("a").status.phase, "Running");
  EXPECT_EQ(first.wakeAtMs, kT0 + 1000);
  h.step(kT0 + 1000);
  const api::Pod& done = h.pod("a");
  EXPECT_EQ(done.status.phase, "Succeeded");
  const api::ContainerState& t = done.status.containerStatuses[0].state;
  EXPECT_EQ(t.kind, Kind::kTerminated);
  EXPECT_EQ(t.exitCode, 0);
  EXPECT_EQ(t.reason, "Completed");
  EXPECT_EQ(t.startedAt, kT0 / 1000);
  EXPECT_EQ(t.finishedAt, kT0 / 1000 + 1);
  EXPECT_EQ(condition(done, "Ready")->reason, "PodCompleted");
  EXPECT_FALSE(done.status.containerStatuses[0].ready);
}

TEST(KubeletModelTest, ExitCodeFailsThePodUnderNever) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sh", "-c", "echo hi; sleep 2; exit 3"}));
  h.step(kT0);
  EXPECT_EQ(h.pod("a").status.phase, "Running");
  h.step(kT0 + 2000);
  const api::Pod& done = h.pod("a");
  EXPECT_EQ(done.status.phase, "Failed");
  EXPECT_EQ(done.status.containerStatuses[0].state.exitCode, 3);
  EXPECT_EQ(done.status.containerStatuses[0].state.reason, "Error");
}

// predicate.go: the sum of the requests of the admitted, non-terminal pods plus this one must
// fit in allocatable; else phase Failed, reason "OutOf<resource>", and rejectPod's message.
TEST(KubeletModelTest, OverCommittedGpusAreRejectedWithTheKubeletsReasonAndMessage) {
  Harness h;
  h.add(makePod("first", {"sleep", "100"}, 4, "Never", kT0 / 1000));
  h.add(makePod("second", {"sleep", "100"}, 8, "Never", kT0 / 1000 + 1));
  h.step(kT0 + 1000);
  EXPECT_EQ(h.pod("first").status.phase, "Pending");
  const api::Pod& rejected = h.pod("second");
  EXPECT_EQ(rejected.status.phase, "Failed");
  EXPECT_EQ(rejected.status.reason, "OutOfnvidia.com/gpu");
  EXPECT_EQ(rejected.status.message,
            "Pod Node didn't have enough resource: nvidia.com/gpu, requested: 8, used: 4, "
            "capacity: 8");
  EXPECT_TRUE(rejected.status.containerStatuses.empty());
  // A rejected pod is terminal: it holds nothing, so a pod that fits is still admitted.
  h.add(makePod("third", {"sleep", "100"}, 4, "Never", kT0 / 1000 + 2));
  h.step(kT0 + 1500);
  EXPECT_EQ(h.pod("third").status.phase, "Pending");
  EXPECT_TRUE(h.pod("third").status.reason.empty());
  EXPECT_EQ(h.pod("third").status.hostIP, h.node.internalIP);
}

// The kubelet admits in creation order (HandlePodAdditions sorts by creation time): the older
// pod wins the GPUs even when it is listed second.
TEST(KubeletModelTest, AdmissionFollowsCreationOrder) {
  Harness h;
  h.add(makePod("a-young", {"sleep", "100"}, 8, "Never", kT0 / 1000 + 5));
  h.add(makePod("z-old", {"sleep", "100"}, 8, "Never", kT0 / 1000));
  h.step(kT0 + 6000);
  EXPECT_EQ(h.pod("z-old").status.phase, "Pending");
  EXPECT_EQ(h.pod("a-young").status.reason, "OutOfnvidia.com/gpu");
}

// Finished pods give their resources back (only non-terminal pods count).
TEST(KubeletModelTest, SucceededPodsFreeTheirGpus) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sleep", "1"}, 8));
  h.step(kT0);
  h.step(kT0 + 1000);
  ASSERT_EQ(h.pod("a").status.phase, "Succeeded");
  h.add(makePod("b", {"sleep", "1"}, 8, "Never", kT0 / 1000 + 1));
  h.step(kT0 + 1100);
  EXPECT_EQ(h.pod("b").status.phase, "Running");
}

// CPU is compared in millicores, as predicate.go's InsufficientResourceError reports it.
TEST(KubeletModelTest, CpuIsComparedInMillicores) {
  Harness h;
  api::Pod big = makePod("big", {"sleep", "9"});
  big.spec.containers[0].resources.requests["cpu"] = "63500m";
  h.add(big);
  api::Pod small = makePod("small", {"sleep", "9"}, 0, "Never", kT0 / 1000 + 1);
  small.spec.containers[0].resources.requests["cpu"] = "1";
  h.add(small);
  h.step(kT0 + 2000);
  EXPECT_EQ(h.pod("big").status.phase, "Pending");
  EXPECT_EQ(h.pod("small").status.reason, "OutOfcpu");
  EXPECT_EQ(h.pod("small").status.message,
            "Pod Node didn't have enough resource: cpu, requested: 1000, used: 63500, "
            "capacity: 64000");
}

// The pod count is checked first (--max-pods, allocatable "pods").
TEST(KubeletModelTest, PodCountIsLimitedByMaxPods) {
  Harness h;
  h.node.allocatable["pods"] = "2";
  for (int i = 0; i < 3; ++i) {
    h.add(makePod("p" + std::to_string(i), {"sleep", "9"}, 0, "Never", kT0 / 1000 + i));
  }
  h.step(kT0 + 5000);
  EXPECT_EQ(h.pod("p0").status.phase, "Pending");
  EXPECT_EQ(h.pod("p1").status.phase, "Pending");
  EXPECT_EQ(h.pod("p2").status.reason, "OutOfpods");
  EXPECT_EQ(h.pod("p2").status.message,
            "Pod Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2");
}

// removeMissingExtendedResources: an extended resource the node does not advertise at all is
// not checked by the kubelet (a GPU pod on a CPU-only node is admitted).
TEST(KubeletModelTest, ExtendedResourcesTheNodeLacksAreIgnored) {
  Harness h;
  h.node = gpuNode(0);
  h.add(makePod("a", {"sleep", "9"}, 2));
  h.step(kT0);
  EXPECT_EQ(h.pod("a").status.phase, "Pending");
}

TEST(KubeletModelTest, PodIpsAreUniqueOnANode) {
  Harness h;
  std::set<std::string> ips;
  for (int i = 0; i < 20; ++i) {
    h.add(makePod("p" + std::to_string(i), {"sleep", "9"}, 0, "Never", kT0 / 1000 + i));
  }
  h.step(kT0 + 30'000);
  for (const auto& [name, pod] : h.pods) {
    EXPECT_EQ(pod.status.podIP.rfind(h.node.podIPPrefix, 0), 0U) << name;
    EXPECT_TRUE(ips.insert(pod.status.podIP).second) << pod.status.podIP;
  }
}

// restartPolicy Always: the exited container is restarted; restartCount counts the dead ones,
// lastState keeps the exit, and the kubelet backs off (CrashLoopBackOff, 10 s then 20 s...).
// The pod stays Running (getPhase).
TEST(KubeletModelTest, AlwaysRestartsWithCrashLoopBackOff) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sh", "-c", "sleep 1; exit 2"}, 0, "Always"));
  h.step(kT0);
  NodeStep exited = h.step(kT0 + 1000);
  const api::ContainerStatus& s = h.pod("a").status.containerStatuses[0];
  EXPECT_EQ(h.pod("a").status.phase, "Running");
  EXPECT_EQ(s.restartCount, 1);
  EXPECT_EQ(s.state.kind, Kind::kWaiting);
  EXPECT_EQ(s.state.reason, "CrashLoopBackOff");
  EXPECT_EQ(s.lastState.kind, Kind::kTerminated);
  EXPECT_EQ(s.lastState.exitCode, 2);
  EXPECT_EQ(exited.wakeAtMs, kT0 + 1000 + 10'000);
  EXPECT_TRUE(h.step(kT0 + 10'999).updates.empty());
  h.step(kT0 + 11'000);
  const api::ContainerStatus& again = h.pod("a").status.containerStatuses[0];
  EXPECT_EQ(again.state.kind, Kind::kRunning);
  EXPECT_EQ(again.state.startedAt, kT0 / 1000 + 11);
  EXPECT_EQ(again.restartCount, 1);
  // Second exit at 12 s: the back-off doubles.
  NodeStep second = h.step(kT0 + 12'000);
  EXPECT_EQ(h.pod("a").status.containerStatuses[0].restartCount, 2);
  EXPECT_EQ(second.wakeAtMs, kT0 + 12'000 + 20'000);
}

// OnFailure restarts only failures: exit 0 ends the pod Succeeded.
TEST(KubeletModelTest, OnFailureDoesNotRestartASuccess) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sleep", "1"}, 0, "OnFailure"));
  h.step(kT0);
  h.step(kT0 + 1000);
  EXPECT_EQ(h.pod("a").status.phase, "Succeeded");
  EXPECT_EQ(h.pod("a").status.containerStatuses[0].restartCount, 0);
}

// Graceful deletion: the runtime sends SIGTERM (a shell reports 143), then the status manager
// deletes the pod with grace period 0 once no container runs.
TEST(KubeletModelTest, GracefulDeletionTerminatesWith143ThenRemoves) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sleep", "infinity"}));
  EXPECT_FALSE(h.step(kT0).wakeAtMs.has_value());  // runs until stopped
  h.pods["a"].metadata.deletionTimestamp = kT0 / 1000 + 35;
  h.pods["a"].metadata.deletionGracePeriodSeconds = 30;
  NodeStep step = h.step(kT0 + 5000);
  ASSERT_EQ(step.updates.size(), 1U);
  ASSERT_TRUE(step.updates[0].status.has_value());
  EXPECT_TRUE(step.updates[0].remove);
  const api::ContainerState& t = step.updates[0].status->containerStatuses[0].state;
  EXPECT_EQ(t.kind, Kind::kTerminated);
  EXPECT_EQ(t.exitCode, 143);
  EXPECT_EQ(t.finishedAt, kT0 / 1000 + 5);
  EXPECT_EQ(step.updates[0].status->phase, "Failed");
  EXPECT_TRUE(h.removed.contains("a"));
}

// A container that ignores SIGTERM runs to the end of the grace period and is SIGKILLed (137).
TEST(KubeletModelTest, IgnoredSigtermIsKilledWith137AtTheGraceDeadline) {
  Harness h;
  h.options.startDelayMs = 0;
  api::Pod pod = makePod("a", {"sleep", "infinity"});
  pod.metadata.annotations[std::string(kAnnotationIgnoreSigterm)] = "true";
  h.add(pod);
  h.step(kT0);
  h.pods["a"].metadata.deletionTimestamp = kT0 / 1000 + 30;
  NodeStep waiting = h.step(kT0 + 1000);
  EXPECT_TRUE(waiting.updates.empty());
  EXPECT_EQ(waiting.wakeAtMs, kT0 + 30'000);
  NodeStep killed = h.step(kT0 + 30'000);
  ASSERT_EQ(killed.updates.size(), 1U);
  EXPECT_EQ(killed.updates[0].status->containerStatuses[0].state.exitCode, 137);
  EXPECT_TRUE(killed.updates[0].remove);
}

// pkg/kubelet/active_deadline.go: active longer than activeDeadlineSeconds (from startTime) →
// the containers are stopped (SIGTERM, 143) and the pod is Failed with reason DeadlineExceeded
// and the kubelet's message; it is not deleted. The model wakes for the deadline.
TEST(KubeletModelTest, ActiveDeadlineFailsThePodWithDeadlineExceeded) {
  Harness h;
  h.options.startDelayMs = 0;
  api::Pod pod = makePod("a", {"sleep", "infinity"});
  pod.spec.activeDeadlineSeconds = 20;
  h.add(pod);
  EXPECT_EQ(h.step(kT0).wakeAtMs, kT0 + 20'000);
  EXPECT_EQ(h.pod("a").status.phase, "Running");
  NodeStep step = h.step(kT0 + 20'000);
  ASSERT_EQ(step.updates.size(), 1U);
  EXPECT_FALSE(step.updates[0].remove);
  const api::Pod& ended = h.pod("a");
  EXPECT_EQ(ended.status.phase, "Failed");
  EXPECT_EQ(ended.status.reason, "DeadlineExceeded");
  EXPECT_EQ(ended.status.message, "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(ended.status.containerStatuses[0].state.kind, Kind::kTerminated);
  EXPECT_EQ(ended.status.containerStatuses[0].state.exitCode, 143);
  EXPECT_TRUE(h.step(kT0 + 25'000).updates.empty());  // terminal: nothing more

  // One that ends before its deadline is not touched.
  Harness early;
  early.options.startDelayMs = 0;
  api::Pod quick = makePod("b", {"sleep", "5"});
  quick.spec.activeDeadlineSeconds = 20;
  early.add(quick);
  early.step(kT0);
  early.step(kT0 + 5'000);
  early.step(kT0 + 21'000);
  EXPECT_EQ(early.pod("b").status.phase, "Succeeded");
}

// A pod deleted before the kubelet ever started it (and a finished one) is removed at once.
TEST(KubeletModelTest, DeletedPodsThatDoNotRunAreRemovedAtOnce) {
  Harness h;
  api::Pod never = makePod("never", {"sleep", "9"});
  never.metadata.deletionTimestamp = kT0 / 1000 + 30;
  h.add(never);
  NodeStep step = h.step(kT0);
  ASSERT_EQ(step.updates.size(), 1U);
  EXPECT_FALSE(step.updates[0].status.has_value());
  EXPECT_TRUE(step.updates[0].remove);
}

// Level-triggered: stepping again at the same instant over the written statuses changes
// nothing; a simulator that was down catches up in one pass with deterministic timestamps.
TEST(KubeletModelTest, StepsAreIdempotentAndCatchUp) {
  Harness h;
  h.add(makePod("a", {"sleep", "5"}));
  h.step(kT0);
  EXPECT_TRUE(h.step(kT0).updates.empty());
  // Down for a minute: the pod started at +1 s, ran 5 s and finished at +6 s.
  h.step(kT0 + 60'000);
  const api::ContainerState& t = h.pod("a").status.containerStatuses[0].state;
  EXPECT_EQ(h.pod("a").status.phase, "Succeeded");
  EXPECT_EQ(t.startedAt, kT0 / 1000 + 1);
  EXPECT_EQ(t.finishedAt, kT0 / 1000 + 6);
  EXPECT_TRUE(h.step(kT0 + 61'000).updates.empty());
}

// A failed node's kubelet is dead: nothing advances, nothing is admitted or removed.
TEST(KubeletModelTest, FailedNodeAdvancesNothing) {
  Harness h;
  h.options.startDelayMs = 0;
  h.add(makePod("a", {"sleep", "1"}));
  h.step(kT0);
  h.failed = true;
  h.add(makePod("b", {"sleep", "1"}, 0, "Never", kT0 / 1000 + 1));
  EXPECT_TRUE(h.step(kT0 + 5000).updates.empty());
  EXPECT_EQ(h.pod("a").status.phase, "Running");
  h.failed = false;
  h.step(kT0 + 6000);
  EXPECT_EQ(h.pod("a").status.phase, "Succeeded");
  EXPECT_EQ(h.pod("b").status.phase, "Running");  // admitted only now
}

TEST(KubeletModelTest, FailPodsOnNodeFailureMarksThemNodeLost) {
  Harness h;
  h.options.startDelayMs = 0;
  h.options.failPodsOnNodeFailure = true;
  h.add(makePod("a", {"sleep", "100"}));
  h.step(kT0);
  h.failed = true;
  h.step(kT0 + 1000);
  EXPECT_EQ(h.pod("a").status.phase, "Failed");
  EXPECT_EQ(h.pod("a").status.reason, "NodeLost");
  EXPECT_EQ(h.pod("a").status.message, "Node gpu-001 which was running pod a is unresponsive");
  EXPECT_TRUE(h.step(kT0 + 2000).updates.empty());
}

}  // namespace
}  // namespace kubeslurm::nodesim

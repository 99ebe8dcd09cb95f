// kubeslurm-operator as users run it: the real binary against the sandbox's real control plane
// (kube-apiserver, controller-manager and kube-scheduler v1.20.2) with eight simulated 8-GPU
// nodes under two leaf switches, the CRDs from crds/, and SlurmJobs created with kubectl.
//
// Pinned here (docs/operator.md): a gang is bound whole to one leaf and runs to COMPLETED with
// the rendezvous in every rank; a failing rank makes the job FAILED with Slurm's "N:0"; a job
// that cannot run as written keeps its id and says why in a Valid=False condition, and runs
// once it can (level-triggered); inference pods placed by kube-scheduler hold capacity and are
// never touched; a node failure requeues the job onto other nodes (restarts counted); scancel
// (spec.cancel) of a running job is CANCELLED "0:15".
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include "kubeslurm/api/core_v1.h"
#include "tests/integration/support/operator_process.h"
#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm {
namespace {

using nlohmann::json;
using testing_support::CommandResult;
using testing_support::kubectl;
using testing_support::OperatorProcess;
using testing_support::SandboxEnvironment;
using testing_support::waitUntil;
using namespace std::chrono_literals;

// Nodes are declared NotReady 8 s after their kubelet stops (--node-grace-period).
const ::testing::Environment* const kSandbox =
    ::testing::AddGlobalTestEnvironment(new SandboxEnvironment(
        "--nodes 8x8-2leaf --node-grace-period 8 --nodesim-binary " NODESIM_BINARY
        " --nodesim-args '--heartbeat 2 --start-delay 0.5'"));

json kubectlJson(const std::string& arguments) {
  CommandResult got = kubectl(arguments + " -o json");
  if (got.exitCode != 0) return json();
  return json::parse(got.output, nullptr, /*allow_exceptions=*/false);
}

// An RFC 3339 time as Unix seconds; 0 when absent or malformed.
std::int64_t epochSeconds(const std::string& text) {
  auto parsed = api::parseTimestamp(text);
  return parsed.isOk() ? *parsed : 0;
}

// The CRDs, one default Partition over all nodes, and the operator, once for the binary
// (registered after the sandbox, so set up after it and torn down before it).
class OperatorEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    ASSERT_EQ(testing_support::installCrdsAndOperatorNamespace(KUBESLURM_SOURCE_DIR), "");
    CommandResult partition = kubectl(R"(apply -f - <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: batch
spec:
  nodes: gpu-[001-008]
  default: true
  defaultTime: "1:00:00"
  maxTime: "1-00:00:00"
  preemptMode: REQUEUE
  topology:
    labelKeys: [kubeslurm.io/spine, kubeslurm.io/leaf]
  nccl:
    NCCL_SOCKET_IFNAME: eth0
EOF
)");
    ASSERT_EQ(partition.exitCode, 0) << partition.output;

    // The in-pod runtime on: the API server validates the rank pods and the step-token Secret
    // the operator writes for it (the simulated kubelets run no image).
    primary_ = std::make_unique<OperatorProcess>(
        KUBESLURM_OPERATOR_BINARY, "it-primary", SandboxEnvironment::dir() + "/logs/operator.log",
        std::vector<std::string>{"--tools-image", "kubeslurm/kubeslurm-tools:it"});
    ASSERT_TRUE(primary_->start()) << "cannot start " << KUBESLURM_OPERATOR_BINARY;
    ASSERT_TRUE(primary_->waitForLeadership(30s)) << "the operator did not become leader:\n"
                                                  << primary_->log();
  }

  void TearDown() override {
    if (!primary_) return;
    primary_->stop(SIGTERM);
    if (::testing::UnitTest::GetInstance()->Failed()) {
      std::printf("---- operator log (tail) ----\n%s\n", primary_->logTail().c_str());
    }
    primary_.reset();
  }

  static OperatorProcess& primary() { return *primary_; }

 private:
  static inline std::unique_ptr<OperatorProcess> primary_;
};

const ::testing::Environment* const kOperator =
    ::testing::AddGlobalTestEnvironment(new OperatorEnvironment());

class OperatorIT : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "the sandbox did not start";
    ASSERT_TRUE(OperatorEnvironment::primary().running()) << "the operator is not running";
    ns_ = "op-" + std::to_string(counter_++);
    CommandResult made = kubectl("create namespace " + ns_);
    ASSERT_EQ(made.exitCode, 0) << made.output;
    // The ServiceAccount admission plugin refuses pods until the namespace's default service
    // account has its token; the operator would retry, but the test's timing should not.
    ASSERT_TRUE(testing_support::waitForServiceAccountToken(ns_, 20s));
  }

  void TearDown() override {
    if (ns_.empty() || SandboxEnvironment::env().empty()) return;
    (void)kubectl("-n " + ns_ + " delete deployment --all --wait=false");
    (void)kubectl("-n " + ns_ + " delete sj --all --wait=false");
    // Free the GPUs for the next test at once.
    waitUntil(
        [&] {
          (void)kubectl("-n " + ns_ + " delete pods --all --grace-period=0 --force --wait=false");
          return kubectl("-n " + ns_ + " get pods -o name").output.empty();
        },
        30s);
    (void)kubectl("delete namespace " + ns_ + " --wait=false");
  }

  // Creates a SlurmJob from `spec` (YAML lines, indented two spaces); returns its name.
  std::string submit(const std::string& jobName, const std::string& spec) {
    CommandResult made = kubectl("-n " + ns_ +
                                 " create -o jsonpath={.metadata.name} -f - <<'EOF'\n"
                                 "apiVersion: kubeslurm.io/v1alpha1\n"
                                 "kind: SlurmJob\n"
                                 "metadata:\n"
                                 "  generateName: " +
                                 jobName +
                                 "-\n"
                                 "spec:\n"
                                 "  jobName: " +
                                 jobName +
                                 "\n"
                                 "  user: alice\n" +
                                 spec + "EOF\n");
    EXPECT_EQ(made.exitCode, 0) << made.output;
    return made.exitCode == 0 ? made.output : std::string();
  }

  json job(const std::string& name) { return kubectlJson("-n " + ns_ + " get sj " + name); }

  // The job's Valid condition; null while it has none (or the job cannot be read).
  json validCondition(const std::string& name) {
    const json j = job(name);
    if (!j.is_object() || !j.contains("status")) return json();
    for (const json& c : j["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Valid") return c;
    }
    return json();
  }

  // A string field of the job's status; "" while the job cannot be read (a kubectl call can fail
  // for a moment on a loaded machine, and a poll must wait on, not throw).
  std::string statusField(const std::string& name, const std::string& field) {
    const json j = job(name);
    if (!j.is_object() || !j.contains("status") || !j["status"].is_object()) return "";
    return j["status"].value(field, "");
  }

  std::string state(const std::string& name) { return statusField(name, "state"); }

  // Waits for `wanted`; on timeout, fails with the job's last status.
  ::testing::AssertionResult reaches(const std::string& name, const std::string& wanted,
                                     std::chrono::milliseconds timeout) {
    if (waitUntil([&] { return state(name) == wanted; }, timeout)) {
      return ::testing::AssertionSuccess();
    }
    const json j = job(name);
    return ::testing::AssertionFailure()
           << name << " did not reach " << wanted
           << "; status: " << (j.is_object() && j.contains("status") ? j["status"].dump() : "none");
  }

  // The task SlurmJobs of an array, and how many of them are in `state`.
  json arrayTasks(const std::string& array) {
    return kubectlJson("-n " + ns_ + " get sj -l kubeslurm.io/array-job=" + array)
        .value("items", json::array());
  }
  std::size_t arrayTasksIn(const std::string& array, const std::string& state) {
    std::size_t n = 0;
    for (const json& t : arrayTasks(array)) {
      if (t.value("status", json::object()).value("state", "") == state) ++n;
    }
    return n;
  }

  json rankPods(const std::string& name) {
    const json list = kubectlJson("-n " + ns_ + " get pods -l kubeslurm.io/job-name=" + name);
    return list.is_object() ? list.value("items", json::array()) : json::array();
  }

  std::vector<std::string> events(const std::string& name) {
    const json list =
        kubectlJson("-n " + ns_ + " get events --field-selector involvedObject.name=" + name);
    std::vector<std::string> reasons;
    if (!list.is_object()) return reasons;
    for (const json& e : list.value("items", json::array()))
      reasons.push_back(e.value("reason", ""));
    return reasons;
  }

  static std::map<std::string, std::string> envOf(const json& pod) {
    std::map<std::string, std::string> env;
    for (const json& e : pod["spec"]["containers"][0].value("env", json::array())) {
      env[e.value("name", "")] = e.value("value", "");
    }
    return env;
  }

  static std::string nodeLeaf(const std::string& node) {
    CommandResult leaf =
        kubectl("get node " + node + " -o jsonpath={.metadata.labels.kubeslurm\\.io/leaf}");
    return leaf.output;
  }

  std::string ns_;
  static inline int counter_ = 0;
};

TEST_F(OperatorIT, GangOfFourRunsOnOneLeafWithTheRendezvousAndCompletes) {
  // The job names no account: it runs under the Account that covers its namespace.
  const std::string account = "team-" + ns_;
  ASSERT_EQ(kubectl("apply -f - <<'EOF'\n"
                    "apiVersion: kubeslurm.io/v1alpha1\n"
                    "kind: Account\n"
                    "metadata:\n"
                    "  name: " +
                    account +
                    "\n"
                    "spec:\n"
                    "  shares: 1\n"
                    "  namespaces: [" +
                    ns_ + "]\nEOF\n")
                .exitCode,
            0);
  const std::string name = submit("train", R"(  nodes: 4
  gpusPerNode: 8
  timeLimit: "10:00"
  script: |
    #!/bin/sh
    sleep 5
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(reaches(name, "RUNNING", 60s));
  const json running = job(name);
  const std::int64_t jobId = running["status"].value("jobId", std::int64_t{0});
  EXPECT_GT(jobId, 0);
  EXPECT_EQ(running["status"].value("nodeList", ""), name + "-[0-3]");
  EXPECT_EQ(running["status"].value("stateCode", ""), "R");

  const json pods = rankPods(name);
  ASSERT_EQ(pods.size(), 4U) << pods.dump();
  std::set<std::string> nodes;
  std::set<std::string> leaves;
  std::map<std::string, json> byRank;
  for (const json& pod : pods) {
    const std::string node = pod["spec"].value("nodeName", "");
    nodes.insert(node);
    leaves.insert(nodeLeaf(node));
    byRank[pod["metadata"]["labels"].value("kubeslurm.io/rank", "")] = pod;
    EXPECT_EQ(pod["spec"].value("schedulerName", ""), "kubeslurm");
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"].value("nvidia.com/gpu", ""), "8");
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0].value("kind", ""), "SlurmJob");
  }
  EXPECT_EQ(nodes.size(), 4U) << "one rank per node";
  EXPECT_EQ(leaves.size(), 1U) << "a 4-node gang fits under one leaf switch (topology/tree)";

  // The in-pod runtime: every rank copies the tools in and reads the job's step token from one
  // Secret the job owns (the garbage collector removes it with the job). The API server picks
  // its name from the "<job>-step-" prefix, so a tenant cannot plant one in advance.
  std::set<std::string> secretNames;
  for (const json& pod : pods) {
    EXPECT_EQ(pod["spec"]["initContainers"][0].value("image", ""), "kubeslurm/kubeslurm-tools:it");
    for (const json& var : pod["spec"]["containers"][0]["env"]) {
      if (var.value("name", "") != "KUBESLURM_STEP_TOKEN") continue;
      secretNames.insert(var["valueFrom"]["secretKeyRef"].value("name", ""));
    }
  }
  ASSERT_EQ(secretNames.size(), 1U) << "every rank reads the same step-token Secret";
  const std::string secretName = *secretNames.begin();
  EXPECT_EQ(secretName.rfind(name + "-step-", 0), 0U) << secretName;
  EXPECT_GT(secretName.size(), (name + "-step-").size()) << "a generated suffix";
  const json secret = kubectlJson("-n " + ns_ + " get secret " + secretName);
  ASSERT_TRUE(secret.is_object()) << "no step-token Secret";
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0].value("name", ""), name);
  EXPECT_EQ(secret["data"].value("token", "").size(), 88U) << "32 bytes, hex, base64";

  // The partition leaves jobNetwork unset, so the job is isolated: only its own ranks reach it.
  const json policy = kubectlJson("-n " + ns_ + " get networkpolicy " + name);
  ASSERT_TRUE(policy.is_object()) << "no NetworkPolicy for the job";
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0].value("name", ""), name);
  EXPECT_EQ(policy["spec"]["podSelector"]["matchLabels"].value("kubeslurm.io/job-name", ""), name);

  // Every rank: the variables of the issue and DESIGN.md, in the formats of the reference
  // ("SLURM_* in a batch step"; TASKS_PER_NODE "1(x4)", TOPOLOGY_ADDR spine.leaf.host).
  ASSERT_EQ(byRank.size(), 4U);
  const std::string master = name + "-0." + name + "." + ns_ + ".svc.cluster.local";
  std::set<std::string> topologyPrefixes;
  for (const auto& [rank, pod] : byRank) {
    SCOPED_TRACE("rank " + rank);
    std::map<std::string, std::string> env = envOf(pod);
    const std::string host = name + "-" + rank;
    EXPECT_EQ(pod["spec"].value("hostname", ""), host);
    EXPECT_EQ(pod["spec"].value("subdomain", ""), name);
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"].value("nvidia.com/gpu", ""),
              "8");
    const std::map<std::string, std::string> expected = {
        {"SLURM_JOB_ID", std::to_string(jobId)},
        {"SLURM_JOBID", std::to_string(jobId)},
        {"SLURM_JOB_NAME", "train"},
        {"SLURM_JOB_NODELIST", name + "-[0-3]"},
        {"SLURM_NODELIST", name + "-[0-3]"},
        {"SLURM_JOB_NUM_NODES", "4"},
        {"SLURM_NNODES", "4"},
        {"SLURM_NODEID", rank},
        {"SLURM_PROCID", rank},
        {"SLURM_LOCALID", "0"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_NPROCS", "4"},
        {"SLURM_NTASKS_PER_NODE", "1"},
        {"SLURM_TASKS_PER_NODE", "1(x4)"},
        {"SLURM_JOB_PARTITION", "batch"},
        {"SLURM_JOB_ACCOUNT", account},
        {"SLURM_JOB_USER", "alice"},
        {"SLURM_GPUS_ON_NODE", "8"},
        {"SLURM_CLUSTER_NAME", "kubeslurm"},
        {"SLURMD_NODENAME", host},
        {"SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node"},
        {"MASTER_ADDR", master},
        {"MASTER_PORT", "29500"},
        {"WORLD_SIZE", "4"},
        {"NODE_RANK", rank},
        {"NNODES", "4"},
        {"NPROC_PER_NODE", "1"},
        {"PET_MASTER_ADDR", master},
        {"PET_MASTER_PORT", "29500"},
        {"PET_NNODES", "4"},
        {"PET_NODE_RANK", rank},
        {"PET_NPROC_PER_NODE", "1"},
        {"NCCL_SOCKET_IFNAME", "eth0"}};
    for (const auto& [variable, value] : expected) EXPECT_EQ(env[variable], value) << variable;
    // spine.leaf.host, one leaf for the whole gang (checked above through the node labels).
    EXPECT_TRUE(std::regex_match(env["SLURM_TOPOLOGY_ADDR"], std::regex("[^.]+\\.[^.]+\\." + host)))
        << env["SLURM_TOPOLOGY_ADDR"];
    topologyPrefixes.insert(
        env["SLURM_TOPOLOGY_ADDR"].substr(0, env["SLURM_TOPOLOGY_ADDR"].size() - host.size()));
  }
  EXPECT_EQ(topologyPrefixes.size(), 1U);
  // The partition's status counts the gang's nodes (sinfo's allocated state).
  EXPECT_TRUE(waitUntil(
      [&] {
        const json p = kubectlJson("get partition batch");
        return p.is_object() && p["status"].value("allocatedNodes", 0) >= 4 &&
               p["status"].value("runningJobs", 0) >= 1;
      },
      10s))
      << kubectlJson("get partition batch").dump();
  const json service = kubectlJson("-n " + ns_ + " get service " + name);
  EXPECT_EQ(service["spec"].value("clusterIP", ""), "None");

  ASSERT_TRUE(reaches(name, "COMPLETED", 60s));
  const json done = job(name);
  EXPECT_EQ(done["status"].value("exitCode", ""), "0:0");
  EXPECT_TRUE(done["status"].contains("startTime"));
  EXPECT_TRUE(done["status"].contains("endTime"));
  // The account's usage is persisted when the job ends: 32 GPUs for the script's 5 s and the
  // time until the operator saw it end (GPU-seconds; the half-life decay is negligible here).
  EXPECT_TRUE(waitUntil(
      [&] {
        const json a = kubectlJson("get account " + account);
        return a.is_object() && a.contains("status") &&
               a["status"].value("rawUsage", 0.0) >= 32.0 * 4 && a["status"].contains("lastDecay");
      },
      15s))
      << kubectlJson("get account " + account).dump();
  const json charged = kubectlJson("get account " + account);
  EXPECT_LE(charged["status"].value("rawUsage", 0.0), 32.0 * 12) << charged.dump();
  // Zero is omitted from the status; a stale count would still say 1.
  EXPECT_EQ(charged["status"].value("runningJobs", 0), 0) << charged.dump();
  (void)kubectl("delete account " + account);
  const std::vector<std::string> reasons = events(name);
  for (const char* wanted : {"Submitted", "Scheduled", "Started", "Completed"}) {
    EXPECT_NE(std::find(reasons.begin(), reasons.end(), wanted), reasons.end())
        << "no " << wanted << " event";
  }
}

TEST_F(OperatorIT, FailingRankMakesTheJobFailedWithSlurmsExitCode) {
  const std::string name = submit("fails", R"(  nodes: 1
  gpusPerNode: 1
  script: |
    #!/bin/sh
    exit 3
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(reaches(name, "FAILED", 60s));
  const json done = job(name);
  EXPECT_EQ(done["status"].value("exitCode", ""), "3:0");
  EXPECT_EQ(done["status"].value("reason", ""), "NonZeroExitCode");
}

// Reference "Dependencies": after job 11 failed, `afternotok:11` ran while `afterok:11` stays
// DependencyNeverSatisfied (no kill_invalid_depend); `afterany` runs either way.
TEST_F(OperatorIT, DependencyChainAfterFailure) {
  // Long enough for three kubectl submissions and a cycle on a loaded 2-core machine: the test
  // must see the afterok dependant waiting before this job fails.
  const std::string failing = submit("step1", R"(  nodes: 1
  gpusPerNode: 1
  script: |
    #!/bin/sh
    sleep 8; exit 3
)");
  ASSERT_FALSE(failing.empty());
  std::int64_t id = 0;
  ASSERT_TRUE(waitUntil(
      [&] {
        const json j = job(failing);
        if (j.is_object() && j.contains("status")) id = j["status"].value("jobId", 0);
        return id > 0;
      },
      20s));
  const auto dependant = [&](const std::string& jobName, const std::string& dependency) {
    return submit(jobName, "  dependency: " + dependency + ":" + std::to_string(id) +
                               "\n  nodes: 1\n  gpusPerNode: 1\n"
                               "  script: |\n    #!/bin/sh\n    true\n");
  };
  const std::string onFailure = dependant("cleanup", "afternotok");
  const std::string onSuccess = dependant("next", "afterok");
  const std::string either = dependant("report", "afterany");
  ASSERT_TRUE(waitUntil([&] { return statusField(onSuccess, "reason") == "Dependency"; }, 20s))
      << job(onSuccess).dump();
  ASSERT_TRUE(reaches(failing, "FAILED", 30s));
  ASSERT_TRUE(reaches(onFailure, "COMPLETED", 30s));
  ASSERT_TRUE(reaches(either, "COMPLETED", 30s));
  EXPECT_TRUE(waitUntil(
      [&] { return statusField(onSuccess, "reason") == "DependencyNeverSatisfied"; }, 15s))
      << job(onSuccess).dump();
  EXPECT_EQ(state(onSuccess), "PENDING");
}

// Multifactor priority with PriorityWeightFairshare 10000 against age 1000: of two jobs queued
// behind the same blocker, the one whose account used nothing starts first, though the other
// was submitted earlier.
TEST_F(OperatorIT, FairShareOrdersTwoAccountsJobs) {
  for (const std::string& account : {"heavy-" + ns_, "light-" + ns_, "other-" + ns_}) {
    ASSERT_EQ(kubectl("apply -f - <<'EOF'\napiVersion: kubeslurm.io/v1alpha1\nkind: Account\n"
                      "metadata:\n  name: " +
                      account + "\nspec:\n  shares: 1\nEOF\n")
                  .exitCode,
              0);
  }
  const auto whole = [&](const std::string& jobName, const std::string& account,
                         const std::string& seconds) {
    return submit(jobName, "  account: " + account +
                               "\n  nodes: 8\n  gpusPerNode: 8\n  timeLimit: \"5:00\"\n"
                               "  script: |\n    #!/bin/sh\n    sleep " +
                               seconds + "\n");
  };
  // heavy- runs the whole cluster for a while: its usage grows, its fair-share drops (the
  // usage is persisted when a running job ends).
  const std::string usage = whole("usage", "heavy-" + ns_, "6");
  ASSERT_TRUE(reaches(usage, "COMPLETED", 60s));
  ASSERT_TRUE(waitUntil(
      [&] {
        const json a = kubectlJson("get account heavy-" + ns_);
        return a.is_object() && a.contains("status") && a["status"].contains("rawUsage") &&
               a["status"]["rawUsage"].is_number() && a["status"]["rawUsage"].get<double>() > 0;
      },
      20s))
      << kubectlJson("get account heavy-" + ns_).dump();
  // The blocker runs long enough that both jobs are queued behind it even on a loaded machine;
  // the test checks that they were (both pending behind it) before it judges the order. It
  // charges a third account: usage it put on light- could outweigh heavy-'s.
  const std::string blocker = whole("blocker", "other-" + ns_, "12");
  ASSERT_TRUE(reaches(blocker, "RUNNING", 30s));
  const std::string first = whole("heavy", "heavy-" + ns_, "1");
  std::this_thread::sleep_for(1s);
  const std::string second = whole("light", "light-" + ns_, "1");
  const auto waiting = [&](const std::string& name) {
    const json status = job(name).value("status", json::object());
    const std::string reason = status.value("reason", "");
    return status.value("state", "") == "PENDING" &&
           (reason == "Priority" || reason == "Resources");
  };
  ASSERT_TRUE(waitUntil([&] { return waiting(first) && waiting(second); }, 10s))
      << job(first).dump() << "\n"
      << job(second).dump();
  ASSERT_EQ(state(blocker), "RUNNING") << "the blocker ended before both jobs were queued";
  ASSERT_TRUE(reaches(first, "COMPLETED", 60s));
  ASSERT_TRUE(reaches(second, "COMPLETED", 60s));
  const std::int64_t heavyStart = epochSeconds(job(first)["status"].value("startTime", ""));
  const std::int64_t lightStart = epochSeconds(job(second)["status"].value("startTime", ""));
  EXPECT_LT(lightStart, heavyStart) << "the account that used nothing should start first";
}

// An Account's GrpTRES=gres/gpu=8 holds the second 8-GPU job with Slurm's AssocGrpGRES while
// seven nodes stand idle, and it runs once the first ends.
TEST_F(OperatorIT, AccountGpuLimitHoldsTheSecondJobUntilTheFirstEnds) {
  const std::string account = "capped-" + ns_;
  ASSERT_EQ(kubectl("apply -f - <<'EOF'\napiVersion: kubeslurm.io/v1alpha1\nkind: Account\n"
                    "metadata:\n  name: " +
                    account + "\nspec:\n  limits:\n    grpTres:\n      gres/gpu: 8\nEOF\n")
                .exitCode,
            0);
  const auto gang = [&](const std::string& jobName, const std::string& seconds) {
    return submit(jobName, "  account: " + account +
                               "\n  nodes: 1\n  gpusPerNode: 8\n  timeLimit: \"5:00\"\n"
                               "  script: |\n    #!/bin/sh\n    sleep " +
                               seconds + "\n");
  };
  const std::string first = gang("first", "6");
  ASSERT_TRUE(reaches(first, "RUNNING", 30s));
  const std::string second = gang("second", "1");
  ASSERT_TRUE(waitUntil(
      [&] {
        const json status = job(second).value("status", json::object());
        return status.value("state", "") == "PENDING" &&
               status.value("reason", "") == "AssocGrpGRES";
      },
      20s))
      << job(second).dump();
  EXPECT_EQ(state(first), "RUNNING");
  EXPECT_TRUE(reaches(first, "COMPLETED", 60s));
  EXPECT_TRUE(reaches(second, "COMPLETED", 60s));
  EXPECT_GE(epochSeconds(job(second)["status"].value("startTime", "")),
            epochSeconds(job(first)["status"].value("endTime", "")));
  (void)kubectl("delete account " + account);
}

TEST_F(OperatorIT, JobThatCannotRunKeepsItsIdSaysWhyAndRunsOnceItCan) {
  const std::string name = submit("lost", R"(  partition: later
  nodes: 1
  gpusPerNode: 1
  script: |
    #!/bin/sh
    true
)");
  ASSERT_FALSE(name.empty());
  const auto condition = [&] { return validCondition(name); };
  ASSERT_TRUE(waitUntil([&] { return condition().is_object(); }, 30s)) << job(name).dump();
  const json invalid = condition();
  EXPECT_EQ(invalid.value("status", ""), "False");
  EXPECT_EQ(invalid.value("reason", ""), "InvalidPartition");
  EXPECT_NE(invalid.value("message", "").find("Invalid partition name specified"),
            std::string::npos)
      << invalid.dump();
  const json pending = job(name);
  EXPECT_EQ(pending["status"].value("state", ""), "PENDING");
  EXPECT_GT(pending["status"].value("jobId", std::int64_t{0}), 0);
  EXPECT_TRUE(rankPods(name).empty());

  // The partition appears: nothing else changes, and the job runs.
  ASSERT_EQ(kubectl(R"(apply -f - <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: later
spec:
  nodes: gpu-[001-008]
EOF
)")
                .exitCode,
            0);
  EXPECT_TRUE(reaches(name, "COMPLETED", 60s));
  EXPECT_TRUE(waitUntil([&] { return condition().value("status", "") == "True"; }, 10s))
      << condition().dump();
  (void)kubectl("delete partition later");
}

// A new job's id goes out with what its first cycle decided of it, in one status write (issue
// 18's one call per object): a held job's first change that carries its id carries JobHeldUser.
TEST_F(OperatorIT, ANewJobsIdComesWithItsReasonInOneWrite) {
  const std::string events = ::testing::TempDir() + "/watch-" + ns_;
  // Running before the job is made; its own request timeout ends it.
  (void)kubectl("-n " + ns_ +
                " get sj --watch --output-watch-events --request-timeout=20s -o "
                "jsonpath='{.type} {.object.status.jobId} {.object.status.reason}{\"\\n\"}' > " +
                events + " 2>&1 &");
  std::this_thread::sleep_for(2s);
  const std::string name = submit("held", R"(  hold: true
  nodes: 1
  script: |
    #!/bin/sh
    true
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(waitUntil([&] { return statusField(name, "reason") == "JobHeldUser"; }, 30s))
      << job(name).dump();
  std::this_thread::sleep_for(2s);  // later cycles: nothing for them to write
  std::istringstream lines(testing_support::readFile(events));
  std::vector<std::string> numbered;  // the changes that carry the id: "ID REASON"
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string type;
    std::string id;
    std::string reason;
    words >> type >> id >> reason;
    if (type == "MODIFIED" && !id.empty()) numbered.push_back(id + " " + reason);
  }
  const std::string id = std::to_string(job(name)["status"].value("jobId", std::int64_t{0}));
  ASSERT_FALSE(numbered.empty()) << testing_support::readFile(events);
  EXPECT_EQ(numbered.front(), id + " JobHeldUser") << testing_support::readFile(events);
  EXPECT_EQ(numbered.size(), 1U) << testing_support::readFile(events);
}

// sbatch --mincpus: each node is asked for at least that many CPUs (slurmctld's pn_min_cpus, a
// floor on the allocation): the rank pods request them, and more than a node has never starts.
TEST_F(OperatorIT, MinCpusIsWhatEachRankPodRequests) {
  const std::string fits = submit("mincpus", R"(  nodes: 2
  minCpusPerNode: 12
  script: |
    #!/bin/sh
    true
)");
  const std::string never = submit("toomany", R"(  nodes: 1
  minCpusPerNode: 65
  script: |
    #!/bin/sh
    true
)");
  ASSERT_FALSE(fits.empty());
  ASSERT_FALSE(never.empty());
  ASSERT_TRUE(waitUntil([&] { return rankPods(fits).size() == 2; }, 60s)) << job(fits).dump();
  for (const json& pod : rankPods(fits)) {
    EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["requests"].value("cpu", ""), "12") << pod;
  }
  EXPECT_TRUE(reaches(fits, "COMPLETED", 60s));
  EXPECT_EQ(state(never), "PENDING");
  EXPECT_TRUE(rankPods(never).empty());
  EXPECT_NE(statusField(never, "reason"), "") << job(never).dump();
}

// sbatch -p small,batch: the job is tried in each partition and starts in the one where it
// fits; its status and pods say which (slurmctld reports the partition a job started in).
TEST_F(OperatorIT, AJobOfSeveralPartitionsRunsInTheOneWhereItFits) {
  const std::string small = "small-" + ns_;
  ASSERT_EQ(kubectl("apply -f - <<'EOF'\napiVersion: kubeslurm.io/v1alpha1\nkind: Partition\n"
                    "metadata:\n  name: " +
                    small + "\nspec:\n  nodes: gpu-001\nEOF\n")
                .exitCode,
            0);
  const std::string name = submit("either", "  partition: " + small +
                                                ",batch\n  nodes: 2\n  gpusPerNode: 1\n"
                                                "  script: |\n    #!/bin/sh\n    true\n");
  ASSERT_FALSE(name.empty());
  EXPECT_TRUE(reaches(name, "COMPLETED", 60s)) << job(name).dump();
  const json done = job(name);
  EXPECT_EQ(done["spec"].value("partition", ""), small + ",batch");
  EXPECT_EQ(done["status"].value("partition", ""), "batch") << done.dump();

  // While it waits, its record holds the list as given, and a job that names none the default
  // partition it went to: what squeue and `kubectl get sj` show.
  const std::string held = submit("held", "  partition: " + small +
                                              ",batch\n  hold: true\n  nodes: 1\n"
                                              "  script: |\n    #!/bin/sh\n    true\n");
  const std::string plain = submit("plain",
                                   "  hold: true\n  nodes: 1\n"
                                   "  script: |\n    #!/bin/sh\n    true\n");
  ASSERT_TRUE(waitUntil(
      [&] {
        return statusField(held, "partition") == small + ",batch" &&
               statusField(plain, "partition") == "batch";
      },
      30s))
      << job(held).dump() << job(plain).dump();
  (void)kubectl("-n " + ns_ + " delete sj " + held + " " + plain);
  (void)kubectl("delete partition " + small);
}

TEST_F(OperatorIT, InferencePodsHoldCapacityAndAreNeverTouched) {
  // Two 8-GPU inference replicas placed by the real kube-scheduler.
  CommandResult deployed = kubectl("-n " + ns_ + R"( apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  replicas: 2
  selector:
    matchLabels: {app: serve}
  template:
    metadata:
      labels: {app: serve}
    spec:
      containers:
      - name: server
        image: inference:1
        command: ["sleep", "infinity"]
        resources:
          limits: {nvidia.com/gpu: 8}
EOF
)");
  ASSERT_EQ(deployed.exitCode, 0) << deployed.output;
  const auto inference = [&] {
    return kubectlJson("-n " + ns_ + " get pods -l app=serve").value("items", json::array());
  };
  ASSERT_TRUE(waitUntil(
      [&] {
        const json pods = inference();
        return pods.size() == 2 && std::all_of(pods.begin(), pods.end(), [](const json& p) {
                 return p["status"].value("phase", "") == "Running";
               });
      },
      60s));
  std::map<std::string, std::string> before;  // uid -> node
  for (const json& p : inference()) before[p["metadata"]["uid"]] = p["spec"]["nodeName"];

  // Seven whole nodes do not fit beside them; six do.
  const std::string big = submit("big", R"(  nodes: 7
  gpusPerNode: 8
  script: |
    #!/bin/sh
    true
)");
  const std::string fits = submit("fits", R"(  nodes: 6
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 1
)");
  ASSERT_FALSE(big.empty());
  ASSERT_FALSE(fits.empty());
  EXPECT_TRUE(reaches(fits, "COMPLETED", 60s));
  EXPECT_EQ(state(big), "PENDING");
  EXPECT_EQ(job(big)["status"].value("reason", ""), "Resources");
  for (const json& pod : rankPods(fits)) {
    EXPECT_FALSE(before.count("") > 0);
    for (const auto& [uid, node] : before) {
      EXPECT_NE(pod["spec"].value("nodeName", ""), node) << "a rank shares a full inference node";
    }
  }

  std::map<std::string, std::string> after;
  for (const json& p : inference()) {
    after[p["metadata"]["uid"]] = p["spec"]["nodeName"];
    EXPECT_EQ(p["status"].value("phase", ""), "Running");
    EXPECT_FALSE(p["metadata"].contains("deletionTimestamp"));
  }
  EXPECT_EQ(after, before) << "inference pods were moved or replaced";

  // Inference scales down: the big job gets its nodes.
  ASSERT_EQ(kubectl("-n " + ns_ + " scale deployment serve --replicas=0").exitCode, 0);
  EXPECT_TRUE(reaches(big, "COMPLETED", 90s));
}

TEST_F(OperatorIT, NodeFailureRequeuesTheJobOntoOtherNodesAndScancelEndsIt) {
  const std::string name = submit("resilient", R"(  nodes: 2
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 600
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(reaches(name, "RUNNING", 60s));
  std::string failed;
  for (const json& pod : rankPods(name)) {
    if (pod["metadata"]["labels"].value("kubeslurm.io/rank", "") == "1") {
      failed = pod["spec"].value("nodeName", "");
    }
  }
  ASSERT_FALSE(failed.empty());
  CommandResult fail =
      testing_support::runCommand(SandboxEnvironment::sandboxScript() + " node fail " + failed +
                                  " --dir " + SandboxEnvironment::dir());
  ASSERT_EQ(fail.exitCode, 0) << fail.output;

  // NotReady after the grace period, then requeued (attempt 1) and running elsewhere.
  EXPECT_TRUE(waitUntil(
      [&] {
        const json j = job(name);
        return j.is_object() && j.contains("status") &&
               j["status"].value("restarts", std::int64_t{0}) == 1 &&
               j["status"].value("state", "") == "RUNNING";
      },
      90s))
      << job(name).dump();
  const json pods = rankPods(name);
  std::size_t current = 0;
  for (const json& pod : pods) {
    if (pod["metadata"]["labels"].value("kubeslurm.io/attempt", "") != "1") continue;
    ++current;
    EXPECT_NE(pod["spec"].value("nodeName", ""), failed);
  }
  EXPECT_EQ(current, 2U) << pods.dump();
  const std::vector<std::string> reasons = events(name);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "NodeFail"), reasons.end());

  (void)testing_support::runCommand(SandboxEnvironment::sandboxScript() + " node recover " +
                                    failed + " --dir " + SandboxEnvironment::dir());
  ASSERT_EQ(
      kubectl("-n " + ns_ + " patch sj " + name + " --type merge -p '{\"spec\":{\"cancel\":true}}'")
          .exitCode,
      0);
  ASSERT_TRUE(reaches(name, "CANCELLED", 30s));
  EXPECT_EQ(job(name)["status"].value("exitCode", ""), "0:15");
}

// scontrol requeue on a running job (docs/cli.md: spec.requeueRequests + 1; Slurm 22.05
// src/slurmctld/job_mgr.c _job_requeue_op): the ranks are stopped, the job goes back to the
// queue with restarts 1 and the same job id (REQUEUED, then PENDING once its pods are gone),
// runs again as attempt 1 and completes. The request is handled once (status.requeuesHandled).
TEST_F(OperatorIT, RequeueRequestStopsARunningJobAndRunsItAgain) {
  const std::string name = submit("again", R"(  nodes: 2
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 8
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(reaches(name, "RUNNING", 60s));
  const std::int64_t jobId = job(name)["status"].value("jobId", std::int64_t{0});
  ASSERT_GT(jobId, 0);
  ASSERT_EQ(kubectl("-n " + ns_ + " patch sj " + name +
                    " --type merge -p '{\"spec\":{\"requeueRequests\":1}}'")
                .exitCode,
            0);

  // Back in the queue as attempt 1, then running again on attempt-1 pods only.
  std::set<std::string> seen;
  EXPECT_TRUE(waitUntil(
      [&] {
        const json j = job(name);
        if (!j.is_object() || !j.contains("status")) return false;
        const std::string state = j["status"].value("state", "");
        const std::int64_t restarts = j["status"].value("restarts", std::int64_t{0});
        if (restarts == 1) seen.insert(state);
        return restarts == 1 && state == "RUNNING";
      },
      90s))
      << job(name).dump();
  EXPECT_TRUE(seen.contains("REQUEUED") || seen.contains("PENDING"))
      << "states seen with restarts 1: " << ::testing::PrintToString(seen);
  for (const json& pod : rankPods(name)) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    EXPECT_EQ(pod["metadata"]["labels"].value("kubeslurm.io/attempt", ""), "1") << pod.dump();
  }
  const std::vector<std::string> reasons = events(name);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Requeued"), reasons.end());

  ASSERT_TRUE(reaches(name, "COMPLETED", 60s));
  const json done = job(name);
  EXPECT_EQ(done["status"].value("jobId", std::int64_t{0}), jobId);
  EXPECT_EQ(done["status"].value("restarts", std::int64_t{0}), 1);
  EXPECT_EQ(done["status"].value("requeuesHandled", std::int64_t{0}), 1);
  EXPECT_EQ(done["status"].value("exitCode", ""), "0:0");
}

// sbatch --array=0-3%2 (reference "Job arrays"): every task is a SlurmJob of its own, owned by
// the array's, with a job id of its own and SLURM_ARRAY_* in its ranks; at most 2 run at once,
// the others waiting with reason JobArrayTaskLimit; the array's object sums them up and ends
// COMPLETED when all did; `afterok:<ArrayJobId>` waits for every task.
TEST_F(OperatorIT, ArrayTasksRunTwoAtATimeAndADependencyWaitsForAllOfThem) {
  const std::string array = submit("sweep", R"(  array: "0-3%2"
  nodes: 1
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 4
)");
  ASSERT_FALSE(array.empty());
  std::int64_t arrayId = 0;
  ASSERT_TRUE(waitUntil(
      [&] {
        const json j = job(array);
        if (j.is_object() && j.contains("status")) arrayId = j["status"].value("jobId", 0);
        return arrayId > 0;
      },
      20s));
  const std::string after = submit("report", "  dependency: afterok:" + std::to_string(arrayId) +
                                                 "\n  nodes: 1\n  gpusPerNode: 1\n"
                                                 "  script: |\n    #!/bin/sh\n    true\n");
  ASSERT_FALSE(after.empty());

  const auto tasks = [&] {
    return kubectlJson("-n " + ns_ + " get sj -l kubeslurm.io/array-job=" + array)
        .value("items", json::array());
  };
  std::size_t mostRunning = 0;
  bool sawThrottle = false;
  std::int64_t lastTaskEnd = 0;
  ASSERT_TRUE(waitUntil(
      [&] {
        std::size_t running = 0;
        std::size_t completed = 0;
        const json items = tasks();
        for (const json& t : items) {
          const json status = t.value("status", json::object());
          const std::string s = status.value("state", "");
          if (s == "RUNNING") ++running;
          if (s == "COMPLETED") ++completed;
          sawThrottle = sawThrottle || status.value("reason", "") == "JobArrayTaskLimit";
        }
        mostRunning = std::max(mostRunning, running);
        return items.size() == 4 && completed == 4;
      },
      120s))
      << tasks().dump();
  EXPECT_LE(mostRunning, 2U);
  EXPECT_EQ(mostRunning, 2U) << "two tasks should have run side by side";
  EXPECT_TRUE(sawThrottle);

  std::set<std::int64_t> ids;
  for (const json& t : tasks()) {
    const json& status = t["status"];
    ids.insert(status.value("jobId", 0));
    EXPECT_EQ(status.value("arrayJobId", 0), arrayId);
    EXPECT_EQ(t["metadata"]["ownerReferences"][0].value("name", ""), array);
    lastTaskEnd = std::max(lastTaskEnd, epochSeconds(status.value("endTime", "")));
    const json pods = rankPods(t["metadata"].value("name", ""));
    ASSERT_EQ(pods.size(), 1U) << pods.dump();
    const auto env = envOf(pods[0]);
    EXPECT_EQ(env.at("SLURM_JOB_ID"), std::to_string(status.value("jobId", 0)));
    EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), std::to_string(arrayId));
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), std::to_string(status.value("arrayTaskId", -1)));
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_COUNT"), "4");
    EXPECT_EQ(env.at("SLURM_ARRAY_TASK_MAX"), "3");
  }
  EXPECT_EQ(ids.size(), 4U);
  EXPECT_FALSE(ids.contains(arrayId));
  // Ids follow the task index (Slurm numbers, and so starts, tasks in index order).
  std::map<std::int64_t, std::int64_t> idByTask;
  for (const json& t : tasks()) {
    idByTask[t["status"].value("arrayTaskId", std::int64_t{-1})] = t["status"].value("jobId", 0);
  }
  std::int64_t previous = 0;
  for (const auto& [task, id] : idByTask) {
    EXPECT_GT(id, previous) << "task " << task;
    previous = id;
  }

  ASSERT_TRUE(reaches(array, "COMPLETED", 20s));
  EXPECT_EQ(job(array)["status"].value("exitCode", ""), "0:0");
  ASSERT_TRUE(reaches(after, "COMPLETED", 60s));
  const std::int64_t afterStart = epochSeconds(job(after)["status"].value("startTime", ""));
  EXPECT_GE(afterStart, lastTaskEnd) << "afterok on the array started before its last task ended";

  // Every task was created once (condition TasksCreated): one deleted by hand stays deleted.
  bool created = false;
  for (const json& c : job(array)["status"].value("conditions", json::array())) {
    created = created || (c.value("type", "") == "TasksCreated" && c.value("status", "") == "True");
  }
  EXPECT_TRUE(created) << job(array).dump();
  ASSERT_EQ(kubectl("-n " + ns_ + " delete sj " + array + "-0").exitCode, 0);
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(tasks().size(), 3U) << "a deleted task was created again";
  EXPECT_EQ(state(array), "COMPLETED");
}

// scancel <ArrayJobId> ends every task: the running one CANCELLED "0:15", the pending ones
// CANCELLED without having run, and the array's object CANCELLED once they all ended.
TEST_F(OperatorIT, CancellingTheArrayCancelsEveryTask) {
  const std::string array = submit("sweep", R"(  array: "0-3%1"
  nodes: 1
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 600
)");
  ASSERT_FALSE(array.empty());
  const auto tasks = [&] { return arrayTasks(array); };
  const auto count = [&](const std::string& state) { return arrayTasksIn(array, state); };
  ASSERT_TRUE(waitUntil([&] { return count("RUNNING") == 1 && count("PENDING") == 3; }, 60s))
      << tasks().dump();
  ASSERT_TRUE(reaches(array, "RUNNING", 10s));
  ASSERT_EQ(kubectl("-n " + ns_ + " patch sj " + array +
                    " --type merge -p '{\"spec\":{\"cancel\":true}}'")
                .exitCode,
            0);
  ASSERT_TRUE(waitUntil([&] { return count("CANCELLED") == 4; }, 30s)) << tasks().dump();
  std::multiset<std::string> exitCodes;
  for (const json& t : tasks()) exitCodes.insert(t["status"].value("exitCode", ""));
  EXPECT_EQ(exitCodes, (std::multiset<std::string>{"0:0", "0:0", "0:0", "0:15"}));
  ASSERT_TRUE(reaches(array, "CANCELLED", 20s));
}

// Tasks scancel cancelled before the operator made them (spec.cancelTasks, which the CLI
// writes for `scancel A_T` of such a task) are made cancelled and never run; the others run.
TEST_F(OperatorIT, TasksCancelledBeforeTheyWereMadeAreMadeCancelled) {
  const std::string array = submit("picked", R"(  array: "0-3"
  cancelTasks: "1-2"
  nodes: 1
  gpusPerNode: 1
  script: |
    #!/bin/sh
    sleep 1
)");
  ASSERT_FALSE(array.empty());
  std::map<std::int64_t, std::string> states;
  const auto read = [&] {
    states.clear();
    for (const json& t : kubectlJson("-n " + ns_ + " get sj -l kubeslurm.io/array-job=" + array)
                             .value("items", json::array())) {
      const json status = t.value("status", json::object());
      states[status.value("arrayTaskId", std::int64_t{-1})] = status.value("state", "");
    }
    return states == std::map<std::int64_t, std::string>{
                         {0, "COMPLETED"}, {1, "CANCELLED"}, {2, "CANCELLED"}, {3, "COMPLETED"}};
  };
  ASSERT_TRUE(waitUntil(read, 60s)) << json(states).dump();
  for (const std::string task : {"-1", "-2"}) {
    EXPECT_TRUE(rankPods(array + task).empty()) << "cancelled task " << task << " ran";
  }
}

// A 512-task array (the common batch-inference sweep) run one at a time: as Slurm keeps a
// pending array in one record, at most 256 of its tasks wait as SlurmJobs (made 64 per cycle,
// many creates in flight at once), the rest in the array's record; scancel of the array makes
// the rest cancelled and ends every one. The times are reported, not asserted (the machine is
// shared).
TEST_F(OperatorIT, AWideArrayWaitsMostlyInItsRecordAndIsCancelledWhole) {
  constexpr std::size_t kTasks = 512;
  const auto submitted = std::chrono::steady_clock::now();
  const std::string array = submit("shards", R"(  array: "0-511%1"
  nodes: 1
  gpusPerNode: 1
  script: |
    #!/bin/sh
    sleep 600
)");
  ASSERT_FALSE(array.empty());
  const auto tasks = [&] { return arrayTasks(array); };
  const auto count = [&](const std::string& state) { return arrayTasksIn(array, state); };
  constexpr std::size_t kWaiting = 256;  // ReconcilerOptions::arrayWaitingTasks
  ASSERT_TRUE(waitUntil([&] { return tasks().size() >= kWaiting; }, 60s)) << tasks().size();
  const auto made = std::chrono::steady_clock::now();
  // No copy of the script in any task: they read the array's.
  for (const json& t : tasks()) ASSERT_FALSE(t["spec"].contains("script")) << t.dump();
  ASSERT_TRUE(waitUntil([&] { return count("RUNNING") == 1; }, 60s));
  // The one that runs left room for one more; no more are made while 256 wait.
  ASSERT_TRUE(waitUntil([&] { return tasks().size() == kWaiting + 1; }, 20s)) << tasks().size();
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(tasks().size(), kWaiting + 1);
  ASSERT_EQ(kubectl("-n " + ns_ + " patch sj " + array +
                    " --type merge -p '{\"spec\":{\"cancel\":true}}'")
                .exitCode,
            0);
  const auto cancelled = std::chrono::steady_clock::now();
  ASSERT_TRUE(waitUntil([&] { return count("CANCELLED") == kTasks; }, 90s));
  ASSERT_TRUE(reaches(array, "CANCELLED", 20s));
  const auto seconds = [](auto from, auto to) {
    return std::chrono::duration<double>(to - from).count();
  };
  std::cerr << "  array of " << kTasks << ": " << kWaiting << " tasks made "
            << seconds(submitted, made) << " s after submission; every task CANCELLED "
            << seconds(cancelled, std::chrono::steady_clock::now()) << " s after scancel\n";
  // The cycles that made tasks, as the operator logged them (how long creating took).
  std::istringstream log(OperatorEnvironment::primary().log());
  for (std::string line; std::getline(log, line);) {
    if (line.find(" 0 array tasks created") == std::string::npos &&
        line.find("array tasks created") != std::string::npos) {
      std::cerr << "  " << line.substr(line.find("cycle ")) << "\n";
    }
  }
}

// MaxArraySize (default 1001): slurmctld refuses --array=0-1001 at submission, and so does the
// webhook. Without one (as here), the array gets its id and says why in Slurm's words, and makes
// no task.
TEST_F(OperatorIT, AnArrayPastMaxArraySizeKeepsItsIdSaysWhyAndMakesNoTask) {
  const std::string array = submit("huge", R"(  array: "0-1001"
  nodes: 1
  script: |
    #!/bin/sh
    true
)");
  ASSERT_FALSE(array.empty());
  const auto valid = [&] { return validCondition(array); };
  ASSERT_TRUE(waitUntil([&] { return valid().is_object(); }, 30s)) << job(array).dump();
  EXPECT_EQ(valid().value("status", ""), "False");
  EXPECT_EQ(valid().value("reason", ""), "InvalidSpec");
  EXPECT_EQ(valid().value("message", ""), "spec.array: invalid job array specification \"0-1001\"");
  EXPECT_GT(job(array)["status"].value("jobId", std::int64_t{0}), 0);
  std::this_thread::sleep_for(3s);  // a few cycles: none makes a task
  EXPECT_TRUE(arrayTasks(array).empty());
}

// Slurm's time limit is in minutes (--time=1 is 60 s); at the limit the ranks get SIGTERM and,
// KillWait later, SIGKILL (their pods are deleted with that grace period); the state is
// TIMEOUT with reason TimeLimit. Costs a minute of wall time.
TEST_F(OperatorIT, TimeLimitEndsTheJobAsTimeout) {
  const std::string name = submit("slow", R"(  nodes: 2
  gpusPerNode: 4
  timeLimit: "1"
  script: |
    #!/bin/sh
    sleep 600
)");
  ASSERT_FALSE(name.empty());
  ASSERT_TRUE(reaches(name, "RUNNING", 60s));
  ASSERT_TRUE(reaches(name, "TIMEOUT", 90s));
  const json done = job(name);
  EXPECT_EQ(done["status"].value("reason", ""), "TimeLimit");
  const std::int64_t ran = epochSeconds(done["status"].value("endTime", "")) -
                           epochSeconds(done["status"].value("startTime", ""));
  EXPECT_GE(ran, 60);
  EXPECT_LE(ran, 70);
  EXPECT_TRUE(waitUntil(
      [&] {
        for (const json& pod : rankPods(name)) {
          const std::string phase = pod["status"].value("phase", "");
          if (phase == "Running" || phase == "Pending") return false;
        }
        return true;
      },
      30s))
      << "ranks still running after the time limit";
}

// PreemptType=preempt/partition_prio: a job in a higher PriorityTier partition takes the nodes
// of a running job whose partition has PreemptMode=REQUEUE; the victim goes back to the queue
// as its next attempt (reason BeginTime, as slurmctld's requeue leaves it) and runs again after.
TEST_F(OperatorIT, HigherTierPreemptsAndTheVictimIsRequeuedThenRunsAgain) {
  ASSERT_EQ(kubectl(R"(apply -f - <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: urgent
spec:
  nodes: gpu-[001-008]
  priorityTier: 10
  preemptMode: "OFF"
EOF
)")
                .exitCode,
            0);
  const std::string victim = submit("wide", R"(  nodes: 8
  gpusPerNode: 8
  timeLimit: "30:00"
  script: |
    #!/bin/sh
    sleep 6
)");
  ASSERT_FALSE(victim.empty());
  ASSERT_TRUE(reaches(victim, "RUNNING", 60s));
  const std::string urgent = submit("urgent", R"(  partition: urgent
  nodes: 2
  gpusPerNode: 8
  timeLimit: "10:00"
  script: |
    #!/bin/sh
    sleep 1
)");
  ASSERT_FALSE(urgent.empty());
  EXPECT_TRUE(reaches(urgent, "COMPLETED", 60s));
  const std::vector<std::string> reasons = events(victim);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Preempted"), reasons.end());
  EXPECT_TRUE(reaches(victim, "COMPLETED", 90s));
  EXPECT_EQ(job(victim)["status"].value("restarts", std::int64_t{0}), 1);
  (void)kubectl("delete partition urgent");
}

// Invariant 1 across crashes: the operator is SIGKILLed at random instants while it admits a
// stream of 2-node gangs, and restarted each time (same identity, so it leads again at once and
// runs its recovery pass before planning). Every job must end COMPLETED exactly once, with its
// own id, no restart counted, and no pod of another attempt left behind.
// KUBESLURM_CRASH_JOBS sets the number of gangs (32; the `long` ctest entry runs the issue's 200),
// with one kill per about 2.7 gangs.
TEST_F(OperatorIT, KillNineDuringAdmissionsLosesNothingAndLeavesNoPartialGang) {
  const char* configured = std::getenv("KUBESLURM_CRASH_JOBS");  // NOLINT(concurrency-mt-unsafe)
  const int kJobs = configured != nullptr ? std::max(1, std::atoi(configured)) : 32;
  const int kKills = std::max(12, kJobs * 12 / 32);
  std::vector<std::string> names;
  for (int i = 0; i < kJobs; ++i) {
    names.push_back(submit("crash", R"(  nodes: 2
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 2
)"));
    ASSERT_FALSE(names.back().empty());
  }
  OperatorProcess& op = OperatorEnvironment::primary();
  std::minstd_rand random(7);  // NOLINT(cert-msc32-c,cert-msc51-cpp): a reproducible schedule
  const std::size_t recoveriesBefore = op.count("recovery:");
  int kills = 0;
  const auto finished = [&] {
    const json list = kubectlJson("-n " + ns_ + " get sj");
    int done = 0;
    for (const json& j : list.value("items", json::array())) {
      if (j.contains("status") && j["status"].value("state", "") == "COMPLETED") ++done;
    }
    return done;
  };
  while (kills < kKills && finished() < kJobs) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + random() % 600));
    op.stop(SIGKILL);
    ++kills;
    ASSERT_TRUE(op.start());
  }
  ASSERT_TRUE(waitUntil([&] { return finished() == kJobs; }, 180s + kJobs * 2s))
      << finished() << " of " << kJobs << " completed";

  const json list = kubectlJson("-n " + ns_ + " get sj");
  const json items = list.value("items", json::array());
  EXPECT_EQ(items.size(), static_cast<std::size_t>(kJobs)) << "a job was lost or duplicated";
  std::set<std::int64_t> ids;
  for (const json& j : items) {
    const std::int64_t id = j["status"].value("jobId", std::int64_t{0});
    EXPECT_GT(id, 0);
    EXPECT_TRUE(ids.insert(id).second) << "job id " << id << " handed out twice";
    EXPECT_EQ(j["status"].value("exitCode", ""), "0:0");
    EXPECT_EQ(j["status"].value("restarts", std::int64_t{0}), 0)
        << "a crash must not count as a restart of the job";
  }
  // Whatever pods remain are of the jobs' current attempt and have finished.
  EXPECT_TRUE(waitUntil(
      [&] {
        for (const json& pod :
             kubectlJson("-n " + ns_ + " get pods").value("items", json::array())) {
          const std::string phase = pod["status"].value("phase", "");
          if (pod["metadata"]["labels"].value("kubeslurm.io/attempt", "") != "0") return false;
          if (phase != "Succeeded") return false;
        }
        return true;
      },
      30s))
      << kubectl("-n " + ns_ + " get pods -o wide").output;
  // How many partial gangs the recovery passes found and removed (informational: whether a kill
  // lands mid-admission is up to the schedule).
  std::size_t partial = 0;
  const std::string text = op.log();
  const std::string marker = "recovery: ";
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + 1)) {
    partial += std::strtoul(text.c_str() + at + marker.size(), nullptr, 10);
  }
  std::printf(
      "[ crash     ] %d SIGKILLs during %d gang admissions; %zu recovery passes removed "
      "%zu partial gangs in all (since the binary started)\n",
      kills, kJobs, op.count("recovery:") - recoveriesBefore, partial);
}

// Invariant 1 at chosen instants, where the test above leaves it to a timer: an operator started
// with --crash-at SIGKILLs itself at one write of a 4-rank gang's admission, with one write in
// flight so that the instant is exact, in both placements. The test first checks that the kill
// landed mid-admission (the cluster holds exactly what the admission had written: no pod, two
// unbound pods, two of four bound, two created bound, all four bound with the job still
// PENDING), then restarts the operator: a partial gang is removed by its recovery pass and
// admitted again, a whole one is kept, and either way the job completes once, with no restart
// counted.
TEST_F(OperatorIT, CrashAtEachAdmissionStepLeavesNoPartialGangAndTheJobRunsOnce) {
  struct CrashPoint {
    std::string placement;
    std::string flag;
    std::size_t pods;   // rank pods when the operator died
    std::size_t bound;  // of which bound
  };
  const std::vector<CrashPoint> points = {
      {"binding", "objects-ready:1", 0, 0}, {"binding", "pod-created:2", 2, 0},
      {"binding", "pod-bound:2", 4, 2},     {"binding", "gang-bound:1", 4, 4},
      {"create", "pod-created:2", 2, 2},    {"create", "gang-bound:1", 4, 4}};
  OperatorProcess& primary = OperatorEnvironment::primary();
  for (const CrashPoint& point : points) {
    SCOPED_TRACE(point.placement + " " + point.flag);
    primary.stop(SIGTERM);  // releases the Lease
    OperatorProcess crashing(
        KUBESLURM_OPERATOR_BINARY, "it-primary",
        SandboxEnvironment::dir() + "/logs/operator-crash.log",
        {"--tools-image", "kubeslurm/kubeslurm-tools:it", "--gang-write-parallelism", "1",
         "--gang-placement", point.placement, "--crash-at", point.flag});
    ASSERT_TRUE(crashing.start());
    const std::string crashLine = "crash-at: " + point.flag.substr(0, point.flag.find(':')) + " #";
    const std::size_t crashesBefore = crashing.count(crashLine);
    const std::string name = submit("crash-at", R"(  nodes: 4
  gpusPerNode: 8
  script: |
    #!/bin/sh
    sleep 1
)");
    ASSERT_FALSE(name.empty());
    ASSERT_EQ(crashing.waitForExit(60s), SIGKILL) << crashing.logTail();
    ASSERT_EQ(crashing.count(crashLine), crashesBefore + 1) << crashing.logTail();

    // Where the kill landed.
    const json atCrash = rankPods(name);
    std::set<std::string> uidsAtCrash;
    std::size_t bound = 0;
    for (const json& pod : atCrash) {
      uidsAtCrash.insert(pod["metadata"].value("uid", ""));
      if (!pod["spec"].value("nodeName", "").empty()) ++bound;
    }
    EXPECT_EQ(atCrash.size(), point.pods) << kubectl("-n " + ns_ + " get pods -o wide").output;
    EXPECT_EQ(bound, point.bound);
    EXPECT_EQ(state(name), "PENDING") << "the status was written past the crash point";

    const std::size_t recoveries = primary.count("recovery:");
    ASSERT_TRUE(primary.start());
    ASSERT_TRUE(waitUntil([&] { return primary.count("recovery:") > recoveries; }, 30s));
    // The restarted leader's recovery pass, before its first cycle, is what removes a partial
    // gang (the cycle's own check would too, but only after a timeout).
    const std::string log = primary.log();
    const std::size_t line = log.rfind("recovery: ");
    const bool whole = point.pods == 4 && point.bound == 4;
    const bool partial = point.pods > 0 && !whole;
    EXPECT_EQ(log.substr(line, log.find('\n', line) - line),
              std::string("recovery: ") + (partial ? "1" : "0") + " partial gang(s) removed");
    ASSERT_TRUE(reaches(name, "COMPLETED", 90s));
    const json done = job(name);
    EXPECT_EQ(done["status"].value("restarts", std::int64_t{0}), 0);
    EXPECT_EQ(done["status"].value("exitCode", ""), "0:0");
    // A script job's other ranks only serve steps: they are stopped once rank 0 has ended.
    const json rank0 = kubectlJson("-n " + ns_ + " get pod " + name + "-0");
    ASSERT_TRUE(rank0.is_object()) << kubectl("-n " + ns_ + " get pods -o wide").output;
    EXPECT_EQ(rank0["status"].value("phase", ""), "Succeeded");
    EXPECT_EQ(rank0["metadata"]["labels"].value("kubeslurm.io/attempt", ""), "0");
    // A whole gang runs as it was bound; a partial one was removed before it could start.
    EXPECT_EQ(uidsAtCrash.contains(rank0["metadata"].value("uid", "")), whole);
  }
}

// Issue 17's "nothing lost, nothing re-run": two jobs end while no operator runs, and someone
// deletes the second one's pods meanwhile (the job-tracking finalizer holds them). The operator
// that comes back records both COMPLETED with the end their containers recorded (not the time
// it came back), runs neither again, lets the deleted pods go, and charges the account what the
// jobs used (GPU-seconds from start to end), not nothing and not the outage.
TEST_F(OperatorIT, JobsThatEndWhileNoOperatorRunsAreRecordedChargedAndNotRunAgain) {
  const std::string account = "outage-" + ns_;
  ASSERT_EQ(kubectl("apply -f - <<'EOF'\napiVersion: kubeslurm.io/v1alpha1\nkind: Account\n"
                    "metadata:\n  name: " +
                    account + "\nspec:\n  shares: 1\nEOF\n")
                .exitCode,
            0);
  const auto submitOne = [&] {
    return submit("outage", "  account: " + account +
                                "\n  nodes: 1\n  gpusPerNode: 8\n"
                                "  script: |\n    #!/bin/sh\n    sleep 4\n");
  };
  const std::string kept = submitOne();
  const std::string deleted = submitOne();
  ASSERT_TRUE(reaches(kept, "RUNNING", 30s));
  ASSERT_TRUE(reaches(deleted, "RUNNING", 30s));
  OperatorProcess& op = OperatorEnvironment::primary();
  op.stop(SIGKILL);

  // Both scripts end while no operator runs; their ends, as the kubelets recorded them.
  std::map<std::string, std::int64_t> finishedAt;
  ASSERT_TRUE(waitUntil(
      [&] {
        for (const std::string& name : {kept, deleted}) {
          const json pod = kubectlJson("-n " + ns_ + " get pod " + name + "-0");
          if (!pod.is_object() || pod["status"].value("phase", "") != "Succeeded") return false;
          finishedAt[name] = epochSeconds(
              pod["status"]["containerStatuses"][0]["state"]["terminated"].value("finishedAt", ""));
        }
        return true;
      },
      30s));
  ASSERT_EQ(
      kubectl("-n " + ns_ + " delete pods -l kubeslurm.io/job-name=" + deleted + " --wait=false")
          .exitCode,
      0);
  std::this_thread::sleep_for(4s);
  const json held = kubectlJson("-n " + ns_ + " get pod " + deleted + "-0");
  ASSERT_TRUE(held.is_object()) << "the finalizer did not hold the deleted rank";
  EXPECT_TRUE(held["metadata"].contains("deletionTimestamp"));

  const auto restartedAt = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  ASSERT_TRUE(op.start());
  ASSERT_TRUE(op.waitForLeadership(30s));
  double expectedUsage = 0;
  for (const std::string& name : {kept, deleted}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(reaches(name, "COMPLETED", 60s));
    const json status = job(name)["status"];
    const std::int64_t end = epochSeconds(status.value("endTime", ""));
    EXPECT_EQ(end, finishedAt[name]) << "the end is the container's, not the operator's return";
    EXPECT_LT(end, restartedAt - 2);
    EXPECT_EQ(status.value("restarts", std::int64_t{0}), 0);
    EXPECT_EQ(status.value("exitCode", ""), "0:0");
    const std::vector<std::string> reasons = events(name);
    EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "Scheduled"), 1) << "it ran again";
    expectedUsage += 8.0 * static_cast<double>(end - epochSeconds(status.value("startTime", "")));
  }
  // The deleted ranks go once their end is recorded; the other job keeps rank 0 (its output),
  // released from the finalizer.
  EXPECT_TRUE(waitUntil([&] { return rankPods(deleted).empty(); }, 30s))
      << kubectl("-n " + ns_ + " get pods -o wide").output;
  EXPECT_TRUE(waitUntil(
      [&] {
        const json pod = kubectlJson("-n " + ns_ + " get pod " + kept + "-0");
        return pod.is_object() && !pod["metadata"].contains("finalizers");
      },
      30s));
  // The account is charged what both jobs used, while no operator counted (the usage is
  // persisted when a running job ends, or every minute).
  double charged = 0;
  EXPECT_TRUE(waitUntil(
      [&] {
        const json a = kubectlJson("get account " + account);
        if (!a.is_object() || !a.contains("status") || !a["status"].contains("rawUsage")) {
          return false;
        }
        charged = a["status"]["rawUsage"].get<double>();
        return charged >= 0.9 * expectedUsage;
      },
      70s))
      << "charged " << charged << " of " << expectedUsage << " GPU-seconds";
  EXPECT_LE(charged, 1.1 * expectedUsage + 16) << "charged for the outage, not the jobs";
  (void)kubectl("delete account " + account);
}

// Time limits hold while no operator runs: a rank pod carries activeDeadlineSeconds of its
// partition's MaxTime + KillWait + 60 s, which the (simulated) kubelet enforces. The operator is
// SIGKILLed once the job runs; the kubelet stops the rank (DeadlineExceeded), and the operator
// that comes back records TIMEOUT at that moment. Behind the `long` label: it waits out the
// minute's margin.
TEST_F(OperatorIT, TimeLimitsHoldWhileNoOperatorRuns) {
  const std::string partition = "brief-" + ns_;
  ASSERT_EQ(kubectl("apply -f - <<'EOF'\napiVersion: kubeslurm.io/v1alpha1\nkind: Partition\n"
                    "metadata:\n  name: " +
                    partition +
                    "\nspec:\n  nodes: gpu-[001-008]\n  maxTime: \"0:20\"\n"
                    "  defaultTime: \"0:20\"\nEOF\n")
                .exitCode,
            0);
  const std::string name = submit("endless", "  partition: " + partition +
                                                 "\n  nodes: 1\n  gpusPerNode: 8\n"
                                                 "  script: |\n    #!/bin/sh\n    sleep 600\n");
  ASSERT_TRUE(reaches(name, "RUNNING", 30s));
  OperatorProcess& op = OperatorEnvironment::primary();
  op.stop(SIGKILL);
  const json running = kubectlJson("-n " + ns_ + " get pod " + name + "-0");
  ASSERT_TRUE(running.is_object());
  EXPECT_EQ(running["spec"].value("activeDeadlineSeconds", std::int64_t{0}), 20 + 2 + 60);

  json stopped;
  ASSERT_TRUE(waitUntil(
      [&] {
        stopped = kubectlJson("-n " + ns_ + " get pod " + name + "-0");
        return stopped.is_object() && stopped["status"].value("reason", "") == "DeadlineExceeded";
      },
      150s))
      << stopped.dump();
  const std::int64_t finished = epochSeconds(
      stopped["status"]["containerStatuses"][0]["state"]["terminated"].value("finishedAt", ""));
  ASSERT_TRUE(op.start());
  ASSERT_TRUE(reaches(name, "TIMEOUT", 60s));
  const json status = job(name)["status"];
  EXPECT_EQ(status.value("reason", ""), "TimeLimit");
  EXPECT_EQ(status.value("exitCode", ""), "0:0");
  EXPECT_EQ(epochSeconds(status.value("endTime", "")), finished);
  (void)kubectl("delete partition " + partition);
}

// Invariant 2: with two replicas only the Lease holder writes; when it stops, the other takes
// over and schedules.
TEST_F(OperatorIT, TwoReplicasOnlyTheLeaderSchedulesAndTheOtherTakesOver) {
  OperatorProcess& primary = OperatorEnvironment::primary();
  OperatorProcess secondary(KUBESLURM_OPERATOR_BINARY, "it-secondary",
                            SandboxEnvironment::dir() + "/logs/operator-2.log");
  ASSERT_TRUE(secondary.start());
  ASSERT_TRUE(waitUntil([&] { return secondary.count("leader is now \"it-primary\"") > 0; }, 20s))
      << secondary.log();

  const std::string first = submit("ha", R"(  nodes: 1
  gpusPerNode: 8
  script: |
    #!/bin/sh
    true
)");
  ASSERT_TRUE(reaches(first, "COMPLETED", 60s));
  EXPECT_EQ(secondary.count("became leader"), 0U);
  EXPECT_EQ(secondary.count(" cycle "), 0U) << "a follower ran a scheduling cycle";

  primary.stop(SIGTERM);  // releases the Lease
  ASSERT_TRUE(waitUntil([&] { return secondary.count("recovery:") > 0; }, 30s)) << secondary.log();
  const std::string second = submit("ha", R"(  nodes: 1
  gpusPerNode: 8
  script: |
    #!/bin/sh
    true
)");
  EXPECT_TRUE(reaches(second, "COMPLETED", 60s));
  EXPECT_NE(job(first)["status"].value("jobId", std::int64_t{0}),
            job(second)["status"].value("jobId", std::int64_t{0}));

  // Back to one primary for whatever runs next.
  secondary.stop(SIGTERM);
  const std::size_t before = primary.count("recovery:");
  ASSERT_TRUE(primary.start());
  ASSERT_TRUE(waitUntil([&] { return primary.count("recovery:") > before; }, 30s));
}

}  // namespace
}  // namespace kubeslurm

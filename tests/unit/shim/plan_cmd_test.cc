#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "shim/commands.h"
#include "shim/scenario.h"
#include "tests/unit/shim/shim_test_util.h"

namespace kubeslurm::shim {
namespace {

using testing::FakeCli;

// The reference's Goal C rig: 8 nodes x 8 GPUs under leaf1/leaf2/spine, one partition.
constexpr std::string_view kGoalCCluster = R"(now: 2026-11-21T04:30:00
nodes:
  - names: gpu-node-[001-008]
    gpus: 8
    cpus: 64
    memory: 512000Mi
topology: |
  SwitchName=leaf1 Nodes=gpu-node-[001-004]
  SwitchName=leaf2 Nodes=gpu-node-[005-008]
  SwitchName=spine Switches=leaf[1-2]
partitions:
  - {name: train, nodes: "gpu-node-[001-008]", default: true, maxTime: 7-00:00:00}
)";

// Exclusive 8-GPU jobs on `busy` (ending in 30 min), then one pending job of `nodes` x gpu:8.
std::string goalC(const std::vector<std::string>& busy, int nodes, std::string_view extra = "",
                  std::string_view nodeStates = "") {
  std::string yaml(kGoalCCluster);
  yaml += nodeStates;
  if (!busy.empty()) yaml += "running:\n";
  int id = 1;
  for (const std::string& node : busy) {
    yaml += "  - {id: " + std::to_string(id++) + ", nodes: " + node +
            ", gpusPerNode: 8, exclusive: true, endsIn: 1800}\n";
  }
  yaml += "pending:\n  - {id: 100, nodes: " + std::to_string(nodes) +
          ", ntasksPerNode: 1, gpusPerNode: 8, timeLimit: \"1:00:00\"" + std::string(extra) + "}\n";
  return yaml;
}

struct PlanRun {
  int rc;
  std::string out;
  std::string err;
};

PlanRun runPlanOn(const std::string& yaml, std::vector<std::string> extraArgs = {}) {
  FakeCli cli;
  cli.files["s.yaml"] = yaml;
  std::vector<std::string> args = {"--scenario", "s.yaml"};
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  const int rc = runPlan(args, cli.io());
  return {rc, cli.out(), cli.err()};
}

struct GoalCRow {
  std::vector<std::string> busy;
  int nodes;
  std::string expected;
};

class GoalCTableTest : public ::testing::TestWithParam<GoalCRow> {};

// shared/reference/slurm-22.05.md, "Goal C: placement under topology/tree", one row each.
TEST_P(GoalCTableTest, PicksTheNodesSlurmPicked) {
  const GoalCRow& row = GetParam();
  const PlanRun run = runPlanOn(goalC(row.busy, row.nodes));
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "100 start " + row.expected + "\n");
}

INSTANTIATE_TEST_SUITE_P(
    ReferenceRows, GoalCTableTest,
    ::testing::Values(
        GoalCRow{{}, 4, "gpu-node-[001-004]"},
        GoalCRow{{"gpu-node-001", "gpu-node-002"}, 4, "gpu-node-[005-008]"},
        GoalCRow{{"gpu-node-001", "gpu-node-002"}, 2, "gpu-node-[003-004]"},
        GoalCRow{{"gpu-node-001", "gpu-node-002"}, 3, "gpu-node-[005-007]"},
        GoalCRow{{"gpu-node-001", "gpu-node-002"}, 1, "gpu-node-003"},
        GoalCRow{{"gpu-node-001", "gpu-node-002", "gpu-node-005"}, 4, "gpu-node-[003,006-008]"}));

// Row "same, 4 nodes --switches=1@00:05:00": pends until leaf1's jobs end, estimated on leaf1.
TEST(PlanCommandTest, SwitchesWaitPendsWithAnEstimatedStartOnOneLeaf) {
  const PlanRun run = runPlanOn(
      goalC({"gpu-node-001", "gpu-node-002", "gpu-node-005"}, 4, ", switches: 1@00:05:00"));
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out,
            "100 pending Resources est. start 2026-11-21T05:00:00 on gpu-node-[001-004]\n");
}

// Row "007 down, 008 drained": 4 / 5 nodes.
TEST(PlanCommandTest, DownAndDrainedNodesAreSkipped) {
  const std::string states =
      "  - {names: gpu-node-007, gpus: 8, state: down}\n"
      "  - {names: gpu-node-008, gpus: 8, state: drain}\n";
  std::string cluster(kGoalCCluster);
  // Declare 001-006 up, 007 down, 008 drained, in node order.
  const std::string all = "  - names: gpu-node-[001-008]\n";
  cluster.replace(cluster.find(all), all.size(), "  - names: gpu-node-[001-006]\n");
  const std::size_t topology = cluster.find("topology:");
  cluster.insert(topology, states);
  const auto pending = [&](int nodes) {
    return cluster + "pending:\n  - {id: 100, nodes: " + std::to_string(nodes) +
           ", gpusPerNode: 8, timeLimit: \"1:00:00\"}\n";
  };
  PlanRun run = runPlanOn(pending(4));
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "100 start gpu-node-[001-004]\n");
  run = runPlanOn(pending(5));
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "100 start gpu-node-[001-005]\n");
}

TEST(PlanCommandTest, TimeLimitAboveTheMaximumPendsWithPartitionTimeLimit) {
  const PlanRun run = runPlanOn(std::string(kGoalCCluster) +
                                "pending:\n  - {id: 7, nodes: 1, gpusPerNode: 8, "
                                "timeLimit: 8-00:00:00}\n");
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "7 pending PartitionTimeLimit\n");
}

TEST(PlanCommandTest, JsonOutputCarriesEveryDecision) {
  const PlanRun run = runPlanOn(goalC({"gpu-node-001"}, 2), {"-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["now"], FakeCli::kNow);
  EXPECT_EQ(out["nowText"], "2026-11-21T04:30:00");
  ASSERT_EQ(out["jobs"].size(), 1U);
  const nlohmann::json& job = out["jobs"][0];
  EXPECT_EQ(job["id"], 100);
  EXPECT_EQ(job["action"], "start");
  EXPECT_EQ(job["nodeList"].size(), 2U);
  EXPECT_TRUE(job["nodes"].is_string());
  EXPECT_TRUE(job["backfilled"].is_boolean());
  EXPECT_TRUE(out["preemptions"].is_array());
  EXPECT_TRUE(out["stats"].contains("jobsConsidered"));
}

TEST(PlanCommandTest, ExampleScenarioLoadsAndPlans) {
  const std::filesystem::path example =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path() /
      "deploy" / "examples" / "scenario.yaml";
  std::ifstream in(example);
  ASSERT_TRUE(in) << example;
  std::ostringstream text;
  text << in.rdbuf();
  const PlanRun run = runPlanOn(text.str());
  ASSERT_EQ(run.rc, 0) << run.err;
  // One line per pending job, in the file's order.
  std::istringstream lines(run.out);
  std::vector<std::string> ids;
  for (std::string line; std::getline(lines, line);) ids.push_back(line.substr(0, line.find(' ')));
  EXPECT_EQ(ids, (std::vector<std::string>{"10", "11", "12", "13"}));
  EXPECT_NE(run.out.find("12 pending PartitionTimeLimit"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("13 pending Dependency"), std::string::npos) << run.out;
}

TEST(PlanCommandTest, RunsThroughTheCliDispatcher) {
  FakeCli cli;
  cli.files["s.yaml"] = goalC({}, 4);
  EXPECT_EQ(runCli("kubeslurm", {"plan", "--scenario=s.yaml"}, cli.io()), 0) << cli.err();
  EXPECT_EQ(cli.out(), "100 start gpu-node-[001-004]\n");
}

TEST(PlanCommandTest, UsageErrorsExitTwo) {
  FakeCli cli;
  EXPECT_EQ(runPlan({}, cli.io()), 2);
  EXPECT_NE(cli.err().find("--scenario FILE is required"), std::string::npos);
  EXPECT_EQ(runPlan({"--scenario", "s.yaml", "-o", "yaml"}, cli.io()), 2);
  EXPECT_EQ(runPlan({"--bogus"}, cli.io()), 2);
  EXPECT_EQ(runPlan({"--help"}, cli.io()), 0);
}

TEST(PlanCommandTest, UnreadableOrInvalidScenarioExitsOneWithTheReason) {
  FakeCli cli;
  EXPECT_EQ(runPlan({"--scenario", "missing.yaml"}, cli.io()), 1);
  EXPECT_EQ(cli.err(), "kubeslurm plan: error: Unable to open file missing.yaml\n");
  const PlanRun run = runPlanOn("nodes:\n  - names: n1\n    gpu: 8\n");
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err.rfind("kubeslurm plan: error: s.yaml:3:5: nodes[0].gpu: unknown key", 0), 0U)
      << run.err;
}

// ---- the scenario loader -----------------------------------------------------------------

StatusOr<Scenario> load(std::string_view yaml) {
  return loadScenario(yaml, "s.yaml", FakeCli::kNow, 0);
}

std::string loadError(std::string_view yaml) {
  auto scenario = load(yaml);
  return scenario.isOk() ? "(loaded)" : scenario.status().message();
}

TEST(ScenarioTest, LoadsNodesTopologyPartitionsAndJobs) {
  auto scenario = load(goalC({"gpu-node-001"}, 4, ", submit: 90, switches: 1@00:05:00"));
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const core::Snapshot& s = scenario->snapshot;
  ASSERT_EQ(s.nodes.size(), 8U);
  EXPECT_EQ(s.nodes[7].name, "gpu-node-008");
  EXPECT_EQ(s.nodes[0].allocatable.gpus, 8U);
  EXPECT_EQ(s.nodes[0].allocatable.cpuMillis, 64000U);
  EXPECT_EQ(s.nodes[0].allocatable.memoryBytes, 512000ULL * 1024 * 1024);
  EXPECT_EQ(s.topology.switches.size(), 3U);
  ASSERT_EQ(s.partitions.size(), 1U);
  EXPECT_EQ(s.partitions[0].maxTime, 7 * 86400);
  EXPECT_EQ(scenario->now, FakeCli::kNow);
  ASSERT_EQ(s.jobs.size(), 2U);
  const core::Job& running = s.jobs[0];
  EXPECT_EQ(running.phase, core::JobPhase::kRunning);
  EXPECT_EQ(running.allocatedNodes, std::vector<core::NodeIndex>{0});
  EXPECT_EQ(running.startTime + running.timeLimit, FakeCli::kNow + 1800);
  const core::Job& pending = s.jobs[1];
  EXPECT_EQ(pending.phase, core::JobPhase::kPending);
  EXPECT_EQ(pending.partition, "train");
  EXPECT_EQ(pending.minNodes, 4U);
  EXPECT_EQ(pending.timeLimit, 3600);
  EXPECT_EQ(pending.submitTime, FakeCli::kNow - 90);
  EXPECT_EQ(pending.maxSwitches, 1U);
  EXPECT_EQ(pending.switchesWait, 300);
  EXPECT_EQ(pending.account, "root");
  EXPECT_EQ(scenario->pendingOrder, std::vector<core::JobId>{100});
  ASSERT_EQ(s.accounts.size(), 1U);
  EXPECT_EQ(s.accounts[0].name, "root");
}

TEST(ScenarioTest, RunningJobsGivenAsACountTakeTheFirstNodesWithRoom) {
  auto scenario = load(std::string(kGoalCCluster) +
                       "running:\n"
                       "  - {id: 1, nodes: gpu-node-002, gpusPerNode: 8, endsIn: 60}\n"
                       "  - {id: 2, nodes: 2, gpusPerNode: 4, endsIn: 60}\n"
                       "  - {id: 3, nodes: 3, gpusPerNode: 4, endsIn: 60}\n");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  EXPECT_EQ(scenario->snapshot.jobs[1].allocatedNodes, (std::vector<core::NodeIndex>{0, 2}));
  EXPECT_EQ(scenario->snapshot.jobs[2].allocatedNodes, (std::vector<core::NodeIndex>{0, 2, 3}));
}

TEST(ScenarioTest, DefaultsWithoutPartitionsAccountsOrNow) {
  auto scenario = load("nodes:\n  - {names: \"n[1-2]\", gpus: 4}\npending:\n  - {id: 5}\n");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const core::Snapshot& s = scenario->snapshot;
  ASSERT_EQ(s.partitions.size(), 1U);
  EXPECT_EQ(s.partitions[0].name, "batch");
  EXPECT_TRUE(s.partitions[0].isDefault);
  EXPECT_EQ(s.partitions[0].nodes.size(), 2U);
  EXPECT_EQ(scenario->now, FakeCli::kNow);
  const core::Job& job = s.jobs[0];
  EXPECT_EQ(job.partition, "batch");
  EXPECT_EQ(job.timeLimit, core::kUnlimited);
  EXPECT_EQ(job.minNodes, 1U);
  EXPECT_EQ(job.cpuMillisPerNode, 1000U);  // one task, one CPU
  EXPECT_EQ(job.user, "root");
}

TEST(ScenarioTest, ReadsAccountsConfigBudgetAndFinishedJobs) {
  auto scenario = load(std::string(kGoalCCluster) + R"(accounts:
  - {name: ml-team, shares: 60, usage: 26622}
  - {name: vision, parent: ml-team, shares: 2}
config:
  policy: fifo
  preemption: false
  priority: {weightAge: 5, decayHalfLife: 1-0, favorSmall: yes}
budget: {maxJobsTested: 7, window: 3600, resolution: 30, maxReservations: 2}
finished:
  - {id: 9, state: FAILED, exitCode: 3, endedAgo: 60}
pending:
  - {id: 10, account: vision, dependency: "afternotok:9", nodes: 1-3, nice: 10, priority: 5000}
)");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const core::Snapshot& s = scenario->snapshot;
  ASSERT_EQ(s.accounts.size(), 3U);
  EXPECT_EQ(s.accounts[1].name, "ml-team");
  EXPECT_EQ(s.accounts[1].parent, "root");
  EXPECT_EQ(s.accounts[1].shares, 60U);
  EXPECT_DOUBLE_EQ(s.accounts[1].rawUsage, 26622);
  EXPECT_EQ(s.accounts[2].parent, "ml-team");
  EXPECT_EQ(s.config.policy, core::SchedulingPolicy::kFifo);
  EXPECT_FALSE(s.config.preemption);
  EXPECT_EQ(s.config.priority.weightAge, 5U);
  EXPECT_EQ(s.config.priority.decayHalfLife, 86400);
  EXPECT_TRUE(s.config.priority.favorSmall);
  EXPECT_EQ(scenario->budget.maxJobsTested, 7U);
  EXPECT_EQ(scenario->budget.window, 3600);
  EXPECT_EQ(scenario->budget.resolution, 30);
  ASSERT_EQ(s.finished.size(), 1U);
  EXPECT_EQ(s.finished[0].state, slurm::JobState::kFailed);
  EXPECT_EQ(s.finished[0].endTime, FakeCli::kNow - 60);
  const core::Job& job = s.jobs[0];
  ASSERT_TRUE(job.dependency.has_value());
  EXPECT_EQ(job.minNodes, 1U);
  EXPECT_EQ(job.maxNodes, 3U);
  EXPECT_EQ(job.nice, 10);
  EXPECT_EQ(job.adminPriority, 5000U);
}

TEST(ScenarioTest, ErrorsNameTheLineAndTheKey) {
  EXPECT_EQ(loadError("nodes:\n  - {names: n1, gpus: eight}\n"),
            "s.yaml:2:23: nodes[0].gpus: expected a whole number from 0 to 1024, got \"eight\"");
  EXPECT_EQ(
      loadError("nodes:\n  - {names: n1}\npending:\n  - {id: 1, timeLimit: soon}\n"),
      "s.yaml:4:24: pending[0].timeLimit: invalid time \"soon\" (Invalid --time specification)");
  EXPECT_EQ(loadError("nodes:\n  - {names: n1}\nsurprise: 1\n"),
            "s.yaml:3:1: surprise: unknown key (expected one of: now, nodes, topology, "
            "partitions, accounts, running, pending, finished, config, budget)");
  EXPECT_EQ(loadError("nodes:\n  - {names: n1}\npending:\n  - {id: 1}\n  - {id: 1}\n"),
            "s.yaml:5:10: pending[1].id: job id 1 is used twice");
  EXPECT_EQ(loadError("nodes:\n  - {names: n1}\npending:\n  - {id: 1, partition: nope}\n"),
            "s.yaml:4:24: pending[0].partition: no partition named \"nope\"");
  // yaml-cpp's own syntax errors carry its mark too.
  EXPECT_EQ(loadError("nodes: [\n"), "s.yaml:2:1: end of sequence flow not found");
}

TEST(ScenarioTest, RejectsInconsistentScenarios) {
  const std::string nodes = "nodes:\n  - {names: \"n[1-2]\", gpus: 8}\n";
  for (const std::string& bad : {
           std::string(""),
           std::string("- a\n- b\n"),
           std::string("nodes: []\n"),
           std::string("nodes:\n  - {gpus: 8}\n"),
           nodes + "  - {names: n2}\n",                                // declared twice
           nodes + "partitions:\n  - {name: p, nodes: \"n[1-3]\"}\n",  // unknown node
           nodes + "partitions:\n  - {name: p}\n  - {name: p}\n",      // twice
           nodes + "partitions:\n  - {name: p, preemptMode: sometimes}\n",
           nodes + "partitions:\n  - {name: p}\npending:\n  - {id: 1}\n",  // no default
           nodes + "accounts:\n  - {name: a, parent: nowhere}\n",
           nodes + "accounts:\n  - {name: a, parent: b}\n  - {name: b, parent: a}\n",
           nodes + "running:\n  - {id: 1, nodes: 3, endsIn: 5}\n",  // too many
           nodes + "running:\n  - {id: 1, nodes: n1}\n",            // no endsIn
           nodes + "running:\n  - {id: 1, nodes: n1, gpusPerNode: 9, endsIn: 5}\n",
           nodes + "pending:\n  - {id: 0}\n",
           nodes + "pending:\n  - {id: 1, nodes: 3-2}\n",
           nodes + "pending:\n  - {id: 1, dependency: \"afterok:\"}\n",
           nodes + "pending:\n  - {id: 1, switches: \"x@1\"}\n",
           nodes + "pending:\n  - {id: 1, nodelist: \"n[1-\"}\n",
           nodes + "pending:\n  - {id: 1, memory: lots}\n",
           nodes + "now: yesterday\n",
           nodes + "config: {policy: random}\n",
           nodes + "topology: \"SwitchName=s1 Nodes=n[1-2] Bogus=1\"\n",
           std::string("nodes:\n  - {names: \"n[1-999999]\"}\n"),  // too many nodes
       }) {
    EXPECT_FALSE(load(bad).isOk()) << "loaded:\n" << bad;
  }
}

TEST(ScenarioTest, MemoryQuantitiesFollowKubernetes) {
  EXPECT_EQ(*parseMemoryQuantity("512Gi"), 512ULL << 30U);
  EXPECT_EQ(*parseMemoryQuantity("512000Mi"), 512000ULL << 20U);
  EXPECT_EQ(*parseMemoryQuantity("500G"), 500000000000ULL);
  EXPECT_EQ(*parseMemoryQuantity("1.5Ki"), 1536U);
  EXPECT_EQ(*parseMemoryQuantity("1024"), 1024U);
  EXPECT_EQ(*parseMemoryQuantity("0"), 0U);
  for (const char* bad : {"", "Gi", "-1Gi", "12XB", "1e30", "nan", "1 Gi"}) {
    EXPECT_FALSE(parseMemoryQuantity(bad).isOk()) << bad;
  }
}

}  // namespace
}  // namespace kubeslurm::shim

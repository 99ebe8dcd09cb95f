#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeslurm/planner/planner.h"
#include "kubeslurm/planner/scenario.h"
#include "tests/unit/planner/planner_test_util.h"

namespace kubeslurm::planner {
namespace {

using testing::FakePlanner;

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
  FakePlanner fake;
  fake.files["s.yaml"] = yaml;
  std::vector<std::string> args = {"--scenario", "s.yaml"};
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  const int rc = runPlan(args, fake.io());
  return {rc, fake.out(), fake.err()};
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
  EXPECT_EQ(out["now"], FakePlanner::kNow);
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
      std::filesystem::path(KUBESLURM_SOURCE_DIR) / "deploy" / "examples" / "scenario.yaml";
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

TEST(PlanCommandTest, UsageErrorsExitTwo) {
  FakePlanner fake;
  EXPECT_EQ(runPlan({}, fake.io()), 2);
  EXPECT_NE(fake.err().find("--scenario FILE is required"), std::string::npos);
  EXPECT_EQ(runPlan({"--scenario", "s.yaml", "-o", "yaml"}, fake.io()), 2);
  EXPECT_EQ(runPlan({"--bogus"}, fake.io()), 2);
  EXPECT_EQ(runPlan({"--help"}, fake.io()), 0);
}

TEST(PlanCommandTest, UnreadableOrInvalidScenarioExitsOneWithTheReason) {
  FakePlanner fake;
  EXPECT_EQ(runPlan({"--scenario", "missing.yaml"}, fake.io()), 1);
  EXPECT_EQ(fake.err(), "kubeslurm plan: error: Unable to open file missing.yaml\n");
  const PlanRun run = runPlanOn("nodes:\n  - names: n1\n    gpu: 8\n");
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err.rfind("kubeslurm plan: error: s.yaml:3:5: nodes[0].gpu: unknown key", 0), 0U)
      << run.err;
}

// ---- QOS, association limits, preempt/qos, jobs of several partitions ---------------------

constexpr std::string_view kTwoNodes = R"(now: 2026-11-21T04:30:00
nodes:
  - {names: "n[1-2]", gpus: 8}
)";

// A Grp limit holds the job back with Slurm's reason and does not block the partition: the job
// behind it, of another account, starts.
TEST(PlanCommandTest, AnAssociationLimitHoldsAJobWithSlurmsReason) {
  const PlanRun run = runPlanOn(std::string(kTwoNodes) + R"(accounts:
  - {name: ml, limits: {grpTres: {gres/gpu: 8}}}
running:
  - {id: 1, account: ml, nodes: n1, gpusPerNode: 8, endsIn: 600}
pending:
  - {id: 10, account: ml, gpusPerNode: 8, timeLimit: "1:00:00"}
  - {id: 11, gpusPerNode: 8, timeLimit: "1:00:00"}
)");
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "10 pending AssocGrpGRES\n11 start n2\n");
}

TEST(PlanCommandTest, QosLimitsAndUnknownQosPendWithSlurmsReasons) {
  const PlanRun run = runPlanOn(std::string(kTwoNodes) + R"(qos:
  - {name: small, limits: {maxTresPerUser: {gres/gpu: 8}, maxNodesPerJob: 1}}
running:
  - {id: 1, user: ann, qos: small, nodes: n1, gpusPerNode: 8, endsIn: 600}
pending:
  - {id: 10, user: ann, qos: small, gpusPerNode: 8, timeLimit: "1:00:00"}
  - {id: 11, user: bob, qos: small, nodes: 2, gpusPerNode: 1, timeLimit: "1:00:00"}
  - {id: 12, qos: gold, timeLimit: "1:00:00"}
  - {id: 13, gpusPerNode: 8, timeLimit: "1:00:00"}
)");
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out,
            "10 pending QOSMaxGRESPerUser\n11 pending QOSMaxNodePerJobLimit\n"
            "12 pending InvalidQOS\n13 start n2\n");
}

// preempt/qos: the running job of the QOS the preemptor's QOS lists is the victim, although
// the other one started later (partition_prio would take the youngest); PreemptMode comes from
// config when the victim's QOS sets none.
TEST(PlanCommandTest, PreemptQosChoosesAJobOfTheListedQos) {
  const std::string scenario = std::string(kTwoNodes) + R"(qos:
  - {name: high, preempt: [low]}
  - {name: low}
config: {preemptType: qos, preemptMode: CANCEL}
running:
  - {id: 1, qos: low, nodes: n1, gpusPerNode: 8, endsIn: 600, elapsed: 60}
  - {id: 2, nodes: n2, gpusPerNode: 8, endsIn: 600}
pending:
  - {id: 10, qos: high, gpusPerNode: 8, timeLimit: "1:00:00"}
)";
  PlanRun run = runPlanOn(scenario);
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out,
            "10 pending Resources est. start 2026-11-21T04:30:00 on n1\n"
            "1 preempted by 10 CANCEL\n");
  // The QOS's own PreemptMode wins over slurm.conf's.
  std::string requeue = scenario;
  requeue.replace(requeue.find("{name: low}"), 11, "{name: low, preemptMode: REQUEUE}");
  run = runPlanOn(requeue);
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_NE(run.out.find("1 preempted by 10 REQUEUE\n"), std::string::npos) << run.out;
  // preempt/partition_prio: one partition, one tier: nothing to preempt.
  std::string byPartition = scenario;
  byPartition.replace(byPartition.find("preemptType: qos"), 16, "preemptType: partition_prio");
  run = runPlanOn(byPartition);
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out.find("preempted"), std::string::npos) << run.out;
}

// sbatch -p a,b: a full first partition, so the job starts in the second, and says so.
TEST(PlanCommandTest, AJobOfTwoPartitionsStartsInTheSecond) {
  const std::string scenario = std::string(kTwoNodes) + R"(partitions:
  - {name: a, nodes: n1, default: true}
  - {name: b, nodes: n2}
running:
  - {id: 1, nodes: n1, gpusPerNode: 8, endsIn: 600}
pending:
  - {id: 10, partition: "a,b", gpusPerNode: 8, timeLimit: "1:00:00"}
)";
  PlanRun run = runPlanOn(scenario);
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(run.out, "10 start n2 partition=b\n");
  run = runPlanOn(scenario, {"-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["jobs"][0]["partition"], "b");
  // A job of one partition prints none in text; JSON names it on every start.
  run = runPlanOn(goalC({}, 1), {"-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["jobs"][0]["partition"], "train");
  EXPECT_EQ(runPlanOn(goalC({}, 1)).out, "100 start gpu-node-001\n");
}

TEST(PlanCommandTest, LimitsExampleLoadsAndPlans) {
  const std::filesystem::path example =
      std::filesystem::path(KUBESLURM_SOURCE_DIR) / "deploy" / "examples" / "scenario-limits.yaml";
  std::ifstream in(example);
  ASSERT_TRUE(in) << example;
  std::ostringstream text;
  text << in.rdbuf();
  const PlanRun run = runPlanOn(text.str());
  ASSERT_EQ(run.rc, 0) << run.err;
  // docs/plan-and-simulate.md shows this output.
  EXPECT_EQ(run.out,
            "10 pending AssocGrpGRES\n"
            "11 pending QOSMaxGRESPerUser\n"
            "12 pending AssocMaxWallDurationPerJobLimit\n"
            "13 pending Resources est. start 2026-11-21T04:30:00 on gpu-node-005\n"
            "14 start gpu-node-007 partition=spot\n"
            "15 pending InvalidQOS\n"
            "3 preempted by 13 REQUEUE\n");
}

// ---- the scenario loader -----------------------------------------------------------------

StatusOr<Scenario> load(std::string_view yaml) {
  return loadScenario(yaml, "s.yaml", FakePlanner::kNow, 0);
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
  EXPECT_EQ(scenario->now, FakePlanner::kNow);
  ASSERT_EQ(s.jobs.size(), 2U);
  const core::Job& running = s.jobs[0];
  EXPECT_EQ(running.phase, core::JobPhase::kRunning);
  EXPECT_EQ(running.allocatedNodes, std::vector<core::NodeIndex>{0});
  EXPECT_EQ(running.startTime + running.timeLimit, FakePlanner::kNow + 1800);
  const core::Job& pending = s.jobs[1];
  EXPECT_EQ(pending.phase, core::JobPhase::kPending);
  EXPECT_EQ(pending.partition, "train");
  EXPECT_EQ(pending.minNodes, 4U);
  EXPECT_EQ(pending.timeLimit, 3600);
  EXPECT_EQ(pending.submitTime, FakePlanner::kNow - 90);
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
  EXPECT_EQ(scenario->now, FakePlanner::kNow);
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
  EXPECT_EQ(s.finished[0].endTime, FakePlanner::kNow - 60);
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
            "partitions, accounts, qos, running, pending, finished, config, budget)");
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

TEST(ScenarioTest, ReadsQosDefinitions) {
  auto scenario = load(std::string(kTwoNodes) + R"(qos:
  - name: high
    priority: 100
    preempt: [low, scavenger]
    preemptMode: CANCEL
    limits:
      grpJobs: 4
      grpTres: {gres/gpu: 32, node: 4}
      maxJobsPerUser: 2
      maxTresPerUser: {gres/gpu: 16}
      maxTresPerJob: {node: 2}
      maxWallDurationPerJob: "2-00:00:00"
  - {name: low, preempt: scavenger}
  - {name: scavenger, limits: {maxNodesPerJob: 1, maxWallDurationPerJob: UNLIMITED}}
running:
  - {id: 1, qos: low, nodes: n1, endsIn: 60}
pending:
  - {id: 2, qos: high}
  - {id: 3}
)");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const core::Snapshot& s = scenario->snapshot;
  ASSERT_EQ(s.qos.size(), 4U);  // and "normal", which every Slurm database has
  const core::Qos& high = s.qos[0];
  EXPECT_EQ(high.name, "high");
  EXPECT_EQ(high.priority, 100U);
  EXPECT_EQ(high.preempt, (std::vector<std::string>{"low", "scavenger"}));
  EXPECT_EQ(high.preemptMode, core::PreemptMode::kCancel);
  EXPECT_EQ(high.grpJobs, 4U);
  EXPECT_EQ(high.grpTres.gpus, 32U);
  EXPECT_EQ(high.grpTres.nodes, 4U);
  EXPECT_EQ(high.maxJobsPerUser, 2U);
  EXPECT_EQ(high.maxTresPerUser.gpus, 16U);
  EXPECT_FALSE(high.maxTresPerUser.nodes.has_value());
  EXPECT_EQ(high.maxTresPerJob.nodes, 2U);
  EXPECT_EQ(high.maxWallPerJob, 2 * 86400);
  EXPECT_EQ(s.qos[1].preempt, std::vector<std::string>{"scavenger"});
  EXPECT_FALSE(s.qos[1].preemptMode.has_value());
  EXPECT_EQ(s.qos[2].maxTresPerJob.nodes, 1U);
  EXPECT_FALSE(s.qos[2].maxWallPerJob.has_value());  // UNLIMITED: no limit
  EXPECT_EQ(s.qos[3].name, "normal");
  EXPECT_EQ(s.jobs[0].qos, "low");
  EXPECT_EQ(s.jobs[1].qos, "high");
  EXPECT_EQ(s.jobs[2].qos, "normal");
  // Without QOS definitions, names go unchecked and a job without one has none.
  auto bare = load(std::string(kTwoNodes) + "pending:\n  - {id: 1}\n  - {id: 2, qos: any}\n");
  ASSERT_TRUE(bare.isOk()) << bare.status().toString();
  EXPECT_TRUE(bare->snapshot.qos.empty());
  EXPECT_EQ(bare->snapshot.jobs[0].qos, "");
  EXPECT_EQ(bare->snapshot.jobs[1].qos, "any");
  // A normal the file defines is kept as given.
  auto own = load(std::string(kTwoNodes) + "qos:\n  - {name: normal, priority: 5}\n");
  ASSERT_TRUE(own.isOk()) << own.status().toString();
  ASSERT_EQ(own->snapshot.qos.size(), 1U);
  EXPECT_EQ(own->snapshot.qos[0].priority, 5U);
}

TEST(ScenarioTest, ReadsAccountLimitsWithTheCrdsKeys) {
  auto scenario = load(std::string(kTwoNodes) + R"(accounts:
  - name: ml
    limits:
      maxJobs: 3
      maxNodesPerJob: 2
      maxWallDurationPerJob: "1-00:00:00"
      grpJobs: 10
      grpTres: {gres/gpu: 64, node: 8}
      maxTresPerJob: {gres/gpu: 16, node: 2}
  - {name: root, limits: {grpJobs: 20}}
  - {name: vision, parent: ml}
)");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const core::Snapshot& s = scenario->snapshot;
  ASSERT_EQ(s.accounts.size(), 3U);
  EXPECT_EQ(s.accounts[0].limits.grpJobs, 20U);
  const core::AssociationLimits& l = s.accounts[1].limits;
  EXPECT_EQ(l.maxJobs, 3U);
  EXPECT_EQ(l.grpJobs, 10U);
  EXPECT_EQ(l.grpTres.gpus, 64U);
  EXPECT_EQ(l.grpTres.nodes, 8U);
  EXPECT_EQ(l.maxTresPerJob.gpus, 16U);
  EXPECT_EQ(l.maxTresPerJob.nodes, 2U);
  EXPECT_EQ(l.maxWallPerJob, 86400);
  EXPECT_EQ(s.accounts[2].limits, core::AssociationLimits{});
}

TEST(ScenarioTest, ReadsPreemptTypeAndMode) {
  for (const auto& [text, type] :
       {std::pair{"qos", core::PreemptType::kQos},
        std::pair{"preempt/qos", core::PreemptType::kQos},
        std::pair{"partition_prio", core::PreemptType::kPartitionPriority},
        std::pair{"preempt/partition_prio", core::PreemptType::kPartitionPriority}}) {
    auto scenario = load(std::string(kTwoNodes) + "config: {preemptType: " + text + "}\n");
    ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
    EXPECT_EQ(scenario->snapshot.config.preemptType, type) << text;
    EXPECT_EQ(scenario->snapshot.config.preemptMode, core::PreemptMode::kRequeue);
  }
  auto cancel = load(std::string(kTwoNodes) + "config: {preemptMode: cancel}\n");
  ASSERT_TRUE(cancel.isOk()) << cancel.status().toString();
  EXPECT_EQ(cancel->snapshot.config.preemptMode, core::PreemptMode::kCancel);
}

TEST(ScenarioTest, ReadsJobsOfSeveralPartitions) {
  auto scenario = load(std::string(kTwoNodes) + R"(partitions:
  - {name: a, default: true}
  - {name: b}
  - {name: c}
running:
  - {id: 1, partition: b, nodes: 1, endsIn: 60}
pending:
  - {id: 2, partition: "c,a,b"}
  - {id: 3, partition: [b, a]}
  - {id: 4}
)");
  ASSERT_TRUE(scenario.isOk()) << scenario.status().toString();
  const auto& jobs = scenario->snapshot.jobs;
  EXPECT_EQ(jobs[0].partition, "b");
  EXPECT_TRUE(jobs[0].otherPartitions.empty());
  EXPECT_EQ(jobs[1].partition, "c");
  EXPECT_EQ(jobs[1].otherPartitions, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(jobs[2].partition, "b");
  EXPECT_EQ(jobs[2].otherPartitions, std::vector<std::string>{"a"});
  EXPECT_EQ(jobs[3].partition, "a");
  EXPECT_TRUE(jobs[3].otherPartitions.empty());
}

TEST(ScenarioTest, LimitsQosAndPartitionListErrorsNameTheKey) {
  const std::string nodes(kTwoNodes);
  const std::string ab = nodes + "partitions:\n  - {name: a, default: true}\n  - {name: b}\n";
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, limits: {maxWall: 1}}\n"),
            "s.yaml:5:24: qos[0].limits.maxWall: unknown key (expected one of: grpJobs, grpTres, "
            "maxJobsPerUser, maxTresPerUser, maxTresPerJob, maxNodesPerJob, "
            "maxWallDurationPerJob)");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, colour: red}\n"),
            "s.yaml:5:15: qos[0].colour: unknown key (expected one of: name, priority, preempt, "
            "preemptMode, limits)");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, limits: {grpTres: {gres/tpu: 1}}}\n"),
            "s.yaml:5:34: qos[0].limits.grpTres.gres/tpu: unknown TRES \"gres/tpu\" "
            "(expected gres/gpu or node)");
  EXPECT_EQ(loadError(nodes + "accounts:\n  - {name: a, limits: {grpTres: {cpu: 64}}}\n"),
            "s.yaml:5:34: accounts[0].limits.grpTres.cpu: TRES \"cpu\" is not modelled by plan, "
            "which counts only gres/gpu and node");
  EXPECT_EQ(loadError(nodes + "accounts:\n  - {name: a, limits: {maxSubmitJobs: 10}}\n"),
            "s.yaml:5:39: accounts[0].limits.maxSubmitJobs: a submit-time limit (sbatch is "
            "refused beyond it), which a plan of jobs already queued cannot apply; leave it out "
            "of the scenario");
  EXPECT_EQ(loadError(nodes + "accounts:\n  - {name: a, limits: {maxNodes: 1}}\n"),
            "s.yaml:5:24: accounts[0].limits.maxNodes: unknown key (expected one of: maxJobs, "
            "maxNodesPerJob, maxWallDurationPerJob, grpJobs, grpTres, maxTresPerJob)");
  EXPECT_EQ(loadError(nodes + "accounts:\n  - {name: a, limits: {grpJobs: -1}}\n"),
            "s.yaml:5:33: accounts[0].limits.grpJobs: expected a whole number from 0 to "
            "4294967295, got \"-1\"");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, preempt: [r]}\n"),
            "s.yaml:5:24: qos[0].preempt: no qos named \"r\"");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, preempt: q}\n"),
            "s.yaml:5:24: qos[0].preempt: a qos cannot preempt itself");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q}\n  - {name: q}\n"),
            "s.yaml:6:12: qos[1].name: qos \"q\" is declared twice");
  EXPECT_EQ(loadError(nodes + "qos:\n  - {name: q, preemptMode: SUSPEND}\n"),
            "s.yaml:5:28: qos[0].preemptMode: expected OFF, REQUEUE or CANCEL, got \"SUSPEND\"");
  EXPECT_EQ(loadError(nodes + "config: {preemptType: preempt/none}\n"),
            "s.yaml:4:23: config.preemptType: expected partition_prio or qos, got "
            "\"preempt/none\"");
  EXPECT_EQ(loadError(nodes + "config: {preemptMode: OFF}\n"),
            "s.yaml:4:23: config.preemptMode: expected REQUEUE or CANCEL (to turn preemption "
            "off: preemption: false)");
  EXPECT_EQ(loadError(ab + "pending:\n  - {id: 1, partition: \"a,c\"}\n"),
            "s.yaml:8:24: pending[0].partition: no partition named \"c\"");
  EXPECT_EQ(loadError(ab + "pending:\n  - {id: 1, partition: [a, b, a]}\n"),
            "s.yaml:8:24: pending[0].partition: partition \"a\" is named twice");
  EXPECT_EQ(loadError(ab + "running:\n  - {id: 1, partition: \"a,b\", nodes: 1, endsIn: 5}\n"),
            "s.yaml:8:24: running[0].partition: a running job runs in one partition; name only "
            "that one");
  EXPECT_EQ(loadError(nodes + "accounts:\n  - {name: a, limits: {maxNodesPerJob: 1, maxTresPerJob: "
                              "{node: 2}}}\n"),
            "s.yaml:5:40: accounts[0].limits.maxNodesPerJob: disagrees with maxTresPerJob.node "
            "(MaxNodes= is MaxTRES=node); give one");
  for (const std::string& bad : {
           nodes + "qos: {name: q}\n",
           nodes + "qos:\n  - {priority: 1}\n",
           nodes + "qos:\n  - {name: q, priority: -1}\n",
           nodes + "qos:\n  - {name: q, limits: [1]}\n",
           nodes + "qos:\n  - {name: q, limits: {grpTres: 8}}\n",
           nodes + "qos:\n  - {name: q, limits: {grpTres: {node: [1]}}}\n",
           nodes + "qos:\n  - {name: q, limits: {maxTresPerUser: {gres/gpu: lots}}}\n",
           nodes + "qos:\n  - {name: q, limits: {maxWallDurationPerJob: soon}}\n",
           nodes + "pending:\n  - {id: 1, qos: [a]}\n",
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
}  // namespace kubeslurm::planner

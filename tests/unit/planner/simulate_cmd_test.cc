#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeslurm/planner/planner.h"
#include "tests/unit/planner/planner_test_util.h"

namespace kubeslurm::planner {
namespace {

using testing::FakePlanner;

// Four 1-GPU nodes. Job 1 holds 2 nodes for 100 s, job 2 wants all 4, job 3 one node for 10 s:
// backfill runs job 3 in the hole that FIFO leaves idle.
constexpr std::string_view kSmallSwf =
    "; MaxNodes: 4\n"
    "1 0 -1 100 2 -1 -1 -1 -1 -1 1 1 1 -1 0 -1 -1 -1\n"
    "2 1 -1 100 4 -1 -1 -1 -1 -1 1 2 1 -1 0 -1 -1 -1\n"
    "3 2 -1 10 1 -1 -1 -1 -1 -1 1 1 1 -1 0 -1 -1 -1\n"
    "4 3 -1 -1 1 -1 -1 -1 -1 -1 5 1 1 -1 0 -1 -1 -1\n";  // cancelled before it ran

constexpr std::string_view kPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "p0,12000,16384,1,1000,,LS,Running,0,500,0\n"
    "p1,6000,12288,1,460,,BE,Running,10,300,10\n"
    "p2,6000,12288,2,1000,,LS,Running,20,100,20\n"
    "p3,4000,1024,0,0,,BE,Pending,30,60,\n";

constexpr std::string_view kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,64000,262144,2,T4\n"
    "n1,64000,262144,2,T4\n";

struct SimRun {
  int rc;
  std::string out;
  std::string err;
};

SimRun simulateWith(std::vector<std::string> args, bool terminal = false) {
  FakePlanner fake;
  fake.files["t.swf"] = kSmallSwf;
  fake.files["traces/x_pod_list_default.csv"] = kPods;
  fake.files["traces/x_node_list_gpu_node.csv"] = kNodes;
  fake.io().errIsTerminal = terminal;
  const int rc = runSimulate(args, fake.io());
  return {rc, fake.out(), fake.err()};
}

TEST(SimulateCommandTest, ReportsEveryPolicyInATable) {
  const SimRun run = simulateWith({"--trace", "t.swf", "--policy", "all"});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_NE(run.out.find("trace:       t.swf (swf), 3 jobs replayed, 1 left out"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("cluster:     4 nodes, 4 GPUs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("note:        1 jobs skipped: run time -1 (never ran)"),
            std::string::npos);
  for (const char* policy : {"\nfifo ", "\npriority ", "\nbackfill "}) {
    EXPECT_NE(run.out.find(policy), std::string::npos) << policy << " in\n" << run.out;
  }
  EXPECT_EQ(run.err, "");  // not a terminal: no progress line
}

TEST(SimulateCommandTest, JsonHasOneResultPerPolicyAndBackfillWaitsLess) {
  const SimRun run = simulateWith({"--trace=t.swf", "--policy=fifo,backfill", "-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["format"], "swf");
  EXPECT_EQ(out["jobs"], 3);
  EXPECT_EQ(out["skipped"], 1);
  EXPECT_EQ(out["nodes"], 4);
  ASSERT_EQ(out["results"].size(), 2U);
  const nlohmann::json& fifo = out["results"][0];
  const nlohmann::json& backfill = out["results"][1];
  EXPECT_EQ(fifo["policy"], "fifo");
  EXPECT_EQ(backfill["policy"], "backfill");
  EXPECT_EQ(fifo["started"], 3);
  EXPECT_EQ(fifo["rejectedStarts"], 0);
  EXPECT_LT(backfill["wait"]["mean"].get<double>(), fifo["wait"]["mean"].get<double>());
  EXPECT_EQ(backfill["backfilled"], 1);
  for (const char* key : {"makespan", "gpuUtilization", "nodeUtilization", "boundedSlowdown",
                          "accounts", "jainFairness", "planCalls", "wallSeconds"}) {
    EXPECT_TRUE(backfill.contains(key)) << key;
  }
}

TEST(SimulateCommandTest, AccountRuleAddsAFairnessTable) {
  const SimRun run = simulateWith({"--trace", "t.swf", "--accounts", "user"});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_NE(run.out.find("accounts:    user (2 accounts)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("fair share vs usage (Jain's index"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("user-1 "), std::string::npos);
  EXPECT_NE(run.out.find("user-2 "), std::string::npos);
}

TEST(SimulateCommandTest, AlibabaFindsTheSiblingNodeList) {
  const SimRun run =
      simulateWith({"--trace", "traces/x_pod_list_default.csv", "-o", "json", "--policy", "fifo"});
  ASSERT_EQ(run.rc, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["format"], "alibaba");
  EXPECT_EQ(out["nodes"], 2);
  EXPECT_EQ(out["gpus"], 4);
  EXPECT_EQ(out["jobs"], 3);  // p3 never ran in the trace
  EXPECT_EQ(out["results"][0]["started"], 3);
}

TEST(SimulateCommandTest, ClusterShapeFromFlags) {
  const SimRun run = simulateWith(
      {"--trace", "t.swf", "--nodes", "gpu-node-[001-002]", "--gpus-per-node", "2", "-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  const nlohmann::json out = nlohmann::json::parse(run.out);
  EXPECT_EQ(out["nodes"], 2);
  EXPECT_EQ(out["gpus"], 4);
}

TEST(SimulateCommandTest, ProgressGoesToATerminalOnly) {
  const SimRun run = simulateWith({"--trace", "t.swf"}, /*terminal=*/true);
  ASSERT_EQ(run.rc, 0);
  EXPECT_NE(run.err.find("backfill: 100% (3/3 jobs done"), std::string::npos) << run.err;
  const SimRun quiet = simulateWith({"--trace", "t.swf", "--no-progress"}, /*terminal=*/true);
  EXPECT_EQ(quiet.err, "");
}

TEST(SimulateCommandTest, BadArgumentsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"--trace"},
           {"--trace", "t.swf", "--policy", "random"},
           {"--trace", "t.swf", "--accounts", "users"},
           {"--trace", "t.swf", "--time-limit-factor", "0"},
           {"--trace", "t.swf", "--gpus-per-node", "x"},
           {"--trace", "t.swf", "--max-jobs", "-3"},
           {"--trace", "t.swf", "-o", "yaml"},
           {"--trace", "t.txt"},
           {"--trace", "t.swf", "--format", "csv"},
           {"--trace", "t.swf", "--what"},
       }) {
    const SimRun run = simulateWith(args);
    EXPECT_EQ(run.rc, 2) << ::testing::PrintToString(args) << "\n" << run.err;
    EXPECT_NE(run.err.find("kubeslurm simulate: error: "), std::string::npos);
  }
}

TEST(SimulateCommandTest, UnreadableOrMalformedTracesExitOneNamingTheFile) {
  SimRun run = simulateWith({"--trace", "nope.swf"});
  EXPECT_EQ(run.rc, 1);
  EXPECT_EQ(run.err, "kubeslurm simulate: error: Unable to open file nope.swf\n");
  FakePlanner fake;
  fake.files["bad.swf"] = "1 2 3\n";
  EXPECT_EQ(runSimulate({"--trace", "bad.swf"}, fake.io()), 1);
  EXPECT_EQ(fake.err(),
            "kubeslurm simulate: error: bad.swf: swf line 1: expected 18 fields, got 3\n");
}

TEST(SimulateCommandTest, MaxJobsReplaysOnlyTheFirstRecords) {
  const SimRun run = simulateWith({"--trace", "t.swf", "--max-jobs", "2", "-o", "json"});
  ASSERT_EQ(run.rc, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["jobs"], 2);
}

}  // namespace
}  // namespace kubeslurm::planner

// sinfo's output as a pure function (sinfo_format.h), held against
// ../shared/reference/slurm-22.05.md "sinfo and squeue on an empty cluster" and the node
// states recorded there, and against src/sinfo/opts.c's default formats.
#include "kubeslurm/cli/sinfo_format.h"

#include <gtest/gtest.h>

#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::nodeJson;
using testing::podJson;

api::Partition partition(const std::string& name, const std::string& maxTime, bool isDefault,
                         const std::string& nodes = "gpu-node-[001-008]") {
  json spec = {{"nodes", nodes}, {"default", isDefault}};
  if (!maxTime.empty()) spec["maxTime"] = maxTime;
  auto p = api::decodePartition(json{{"metadata", {{"name", name}}}, {"spec", spec}});
  EXPECT_TRUE(p.isOk());
  return *p;
}

// The reference cluster: train (default, 7 days) and debug (1 hour) over eight 8-GPU nodes.
struct Cluster {
  std::vector<api::Partition> partitions = {partition("debug", "01:00:00", false),
                                            partition("train", "7-00:00:00", true)};
  std::vector<json> nodeObjects;
  std::vector<json> pods;

  Cluster() {
    for (int i = 1; i <= 8; ++i) nodeObjects.push_back(nodeJson("gpu-node-00" + std::to_string(i)));
  }

  CommandOutput run(const std::vector<std::string>& args) const {
    std::vector<api::Node> nodes;
    for (const json& object : nodeObjects) nodes.push_back(*api::decodeNode(object));
    std::vector<api::Pod> bound;
    for (const json& object : pods) bound.push_back(*api::decodePod(object));
    std::vector<NodeFacts> facts;
    for (const api::Node& node : nodes) facts.push_back(nodeFacts(node, bound));
    const SinfoParse parse = parseSinfoArgs(args);
    if (parse.exit) return *parse.exit;
    return formatSinfo(partitions, nodes, facts, parse.options, SinfoContext{FakeCli::kNow, 0});
  }
};

// Reference "sinfo and squeue on an empty cluster": the default partition first (slurm.conf
// order there), '*' on it, TIMELIMIT as _print_secs.
TEST(SinfoFormat, EmptyClusterMatchesTheReference) {
  const CommandOutput out = Cluster().run({});
  EXPECT_EQ(out.exitCode, 0);
  EXPECT_EQ(out.out,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "train*       up 7-00:00:00      8   idle gpu-node-[001-008]\n"
            "debug        up    1:00:00      8   idle gpu-node-[001-008]\n");
  EXPECT_EQ(out.err, "");
}

// Reference: drain (scontrol update state=drain reason=maintenance), down* (slurmd gone), and
// sinfo -R's REASON USER TIMESTAMP NODELIST. Rows of a partition sort by state descending
// (sort.c "#P,-t"; DRAIN and NO_RESPOND are flag bits above the base state).
Cluster degraded() {
  Cluster c;
  c.nodeObjects[7]["spec"]["unschedulable"] = true;
  c.nodeObjects[7]["metadata"]["annotations"] = {
      {"kubeslurm.io/reason", "maintenance"}, {"kubeslurm.io/reason-time", "2026-11-21T04:36:13Z"}};
  c.nodeObjects[6]["status"]["conditions"] = {
      {{"type", "Ready"}, {"status", "Unknown"}, {"lastTransitionTime", "2026-11-21T04:43:27Z"}}};
  c.pods = {podJson("team-a", "job-0", "gpu-node-001", 8),
            podJson("team-a", "job-1", "gpu-node-002", 8),
            // Inference pods of another namespace use GPUs too: gpu-node-003 is mix.
            podJson("inference", "llm-0", "gpu-node-003", 2),
            // A finished pod holds nothing.
            podJson("team-a", "old-0", "gpu-node-004", 8, 1, "Succeeded")};
  return c;
}

TEST(SinfoFormat, NodeStates) {
  EXPECT_EQ(degraded().run({"-p", "train"}).out,
            "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "train*       up 7-00:00:00      1  down* gpu-node-007\n"
            "train*       up 7-00:00:00      1  drain gpu-node-008\n"
            "train*       up 7-00:00:00      1    mix gpu-node-003\n"
            "train*       up 7-00:00:00      2  alloc gpu-node-[001-002]\n"
            "train*       up 7-00:00:00      3   idle gpu-node-[004-006]\n");
}

TEST(SinfoFormat, DrainingNodeWithWork) {
  Cluster c = degraded();
  c.nodeObjects[0]["spec"]["unschedulable"] = true;
  EXPECT_EQ(c.run({"-h", "-p", "debug", "-t", "drain"}).out,
            "debug        up    1:00:00      1   drng gpu-node-001\n"
            "debug        up    1:00:00      1  drain gpu-node-008\n");
}

// Reference "sinfo -R": one row per reason, nodes of every partition counted once.
TEST(SinfoFormat, ListReasonsMatchesTheReference) {
  EXPECT_EQ(degraded().run({"-R"}).out,
            "REASON               USER      TIMESTAMP           NODELIST\n"
            "Not responding       root      2026-11-21T04:43:27 gpu-node-007\n"
            "maintenance          root      2026-11-21T04:36:13 gpu-node-008\n");
}

// opts.c: -N is "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6" with the node list and
// partition widths computed from the data (at least 9); rows sort by node name ("N"), stably,
// so a node's partitions keep partition order.
TEST(SinfoFormat, NodeOriented) {
  const CommandOutput out = degraded().run({"-N", "-n", "gpu-node-[001,007-008]"});
  EXPECT_EQ(out.out,
            "NODELIST      NODES PARTITION STATE \n"
            "gpu-node-001      1    train* alloc \n"
            "gpu-node-001      1     debug alloc \n"
            "gpu-node-007      1    train* down* \n"
            "gpu-node-007      1     debug down* \n"
            "gpu-node-008      1    train* drain \n"
            "gpu-node-008      1     debug drain \n");
}

// opts.c: -s is "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0"; A counts
// allocated and mixed nodes, O down and drained ones.
TEST(SinfoFormat, Summarize) {
  EXPECT_EQ(degraded().run({"-s"}).out,
            "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n"
            "train*       up 7-00:00:00          3/3/2/8 gpu-node-[001-008]\n"
            "debug        up    1:00:00          3/3/2/8 gpu-node-[001-008]\n");
}

// -l: a ctime(3) line, then 22.05's long columns (no RESERVATION column before 23.02).
TEST(SinfoFormat, LongOutput) {
  EXPECT_EQ(Cluster().run({"-l", "-p", "debug"}).out,
            "Sat Nov 21 04:30:00 2026\n"
            "PARTITION AVAIL  TIMELIMIT   JOB_SIZE ROOT OVERSUBS     GROUPS  NODES       STATE "
            "NODELIST\n"
            "debug        up    1:00:00 1-infinite   no       NO        all      8        idle "
            "gpu-node-[001-008]\n");
}

// print.c: "%.Nx" right-justifies and cuts at N, "%Nx" pads and cuts; text around fields stays.
TEST(SinfoFormat, FormatOption) {
  EXPECT_EQ(degraded().run({"-h", "-p", "debug", "-o", "[%P|%.3t|%D|%c|%G] %N"}).out,
            "[debug|dow|1|64|gpu:8] gpu-node-007\n"
            "[debug|dra|1|64|gpu:8] gpu-node-008\n"
            "[debug|mix|1|64|gpu:8] gpu-node-003\n"
            "[debug|all|2|64|gpu:8] gpu-node-[001-002]\n"
            "[debug|idl|3|64|gpu:8] gpu-node-[004-006]\n");
  EXPECT_EQ(Cluster().run({"-o", "%5P %l"}).out,
            "PARTI TIMELIMIT\ntrai* 7-00:00:00\ndebug 1:00:00\n");
}

// A partition whose selector matches nothing still has its row, with STATE n/a (print.c
// _print_state_compact without nodes), and no time limit prints "infinite".
TEST(SinfoFormat, PartitionWithoutNodes) {
  Cluster c;
  c.partitions.push_back(partition("a-very-long-name", "", false, "other-[1-2]"));
  EXPECT_EQ(c.run({}).out,
            "PARTITION        AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "train*              up 7-00:00:00      8   idle gpu-node-[001-008]\n"
            "a-very-long-name    up   infinite      0    n/a \n"
            "debug               up    1:00:00      8   idle gpu-node-[001-008]\n");
}

TEST(SinfoFormat, NodeSelector) {
  Cluster c;
  c.nodeObjects[0]["metadata"]["labels"]["pool"] = "a100";
  auto p = api::decodePartition(
      json{{"metadata", {{"name", "a100"}}},
           {"spec", {{"nodeSelector", {{"matchLabels", {{"pool", "a100"}}}}}}}});
  ASSERT_TRUE(p.isOk());
  c.partitions = {*p};
  EXPECT_EQ(c.run({"-h"}).out, "a100         up   infinite      1   idle gpu-node-001\n");
}

TEST(SinfoFormat, BadArguments) {
  const CommandOutput state = Cluster().run({"-t", "sleepy"});
  EXPECT_EQ(state.exitCode, 1);
  EXPECT_EQ(state.err, "sinfo: error: Bad state string: \"sleepy\"\n");
  const CommandOutput format = Cluster().run({"-o", "%P %Q"});
  EXPECT_EQ(format.exitCode, 1);
  EXPECT_EQ(format.err, "sinfo: error: Invalid node format specification: Q\n");
  const CommandOutput option = Cluster().run({"-x"});
  EXPECT_EQ(option.exitCode, 1);
  EXPECT_EQ(option.err,
            "sinfo: invalid option -- 'x'\nTry \"sinfo --help\" for more information\n");
}

TEST(SinfoFormat, NodeFactsFromPods) {
  const api::Node node = *api::decodeNode(nodeJson("n1", 8));
  const std::vector<api::Pod> pods = {*api::decodePod(podJson("a", "p", "n1", 3, 10)),
                                      *api::decodePod(podJson("b", "q", "other", 5, 10))};
  const NodeFacts facts = nodeFacts(node, pods);
  EXPECT_EQ(facts.allocGpus, 3);
  EXPECT_EQ(facts.allocCpus, 10);
  EXPECT_EQ(facts.memoryMb, 512000);
  EXPECT_EQ(nodeStateCompact(facts), "mix");
  EXPECT_EQ(nodeStateScontrol(facts), "MIXED");
}

}  // namespace
}  // namespace kubeslurm::cli

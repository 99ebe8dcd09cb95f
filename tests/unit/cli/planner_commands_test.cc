// `kubeslurm plan` and `kubeslurm simulate` reach the planner through the CLI's dispatcher,
// with the CLI's files and clock.
#include <gtest/gtest.h>

#include "kubeslurm/cli/cli.h"
#include "tests/unit/cli/cli_test_util.h"

namespace kubeslurm::cli {
namespace {

using testing::FakeCli;

TEST(PlannerCommandsTest, PlanRunsThroughTheCliDispatcher) {
  FakeCli cli;
  cli.files["s.yaml"] = R"(now: 2026-11-21T04:30:00
nodes:
  - {names: "gpu-node-[001-008]", gpus: 8, cpus: 64}
partitions:
  - {name: train, nodes: "gpu-node-[001-008]", default: true}
pending:
  - {id: 100, nodes: 4, ntasksPerNode: 1, gpusPerNode: 8, timeLimit: "1:00:00"}
)";
  EXPECT_EQ(runCli("kubeslurm", {"plan", "--scenario=s.yaml"}, cli.io()), 0) << cli.err();
  EXPECT_EQ(cli.out(), "100 start gpu-node-[001-004]\n");
}

TEST(PlannerCommandsTest, SimulateRunsThroughTheCliDispatcherAndReportsItsErrors) {
  FakeCli cli;
  EXPECT_EQ(runCli("simulate", {"--trace", "missing.swf"}, cli.io()), 1);
  EXPECT_NE(cli.err().find("kubeslurm simulate: error:"), std::string::npos) << cli.err();
}

}  // namespace
}  // namespace kubeslurm::cli

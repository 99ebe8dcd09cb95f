// `sinfo` against an in-memory API server: pods of every namespace load a node, API errors
// read as sinfo's (src/sinfo/sinfo.c: "slurm_load_partitions: ..."), our flags are taken out.
#include <gtest/gtest.h>

#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

FakeCluster cluster() {
  FakeCluster fake;
  fake.objects["partitions"] = {
      json{{"metadata", {{"name", "train"}}}, {"spec", {{"default", true}, {"nodes", "n[1-3]"}}}}};
  fake.objects["nodes"] = {testing::nodeJson("n3"), testing::nodeJson("n1"),
                           testing::nodeJson("n2")};
  fake.objects["pods"] = {testing::podJson("team-a", "a-0", "n1", 8),
                          testing::podJson("serving", "llm-0", "n2", 1)};
  return fake;
}

TEST(SinfoCmd, ReadsEveryNamespace) {
  FakeCluster fake = cluster();
  FakeCli cli;
  EXPECT_EQ(runSinfoWith({"--namespace", "team-a", "-h"}, cli.io(), fake.connector()), 0);
  EXPECT_EQ(cli.out(),
            "train*       up   infinite      1    mix n2\n"
            "train*       up   infinite      1  alloc n1\n"
            "train*       up   infinite      1   idle n3\n");
  EXPECT_EQ(cli.err(), "");
}

TEST(SinfoCmd, ApiErrors) {
  FakeCluster fake = cluster();
  fake.listError = Status(StatusCode::kUnavailable, "connection refused");
  FakeCli cli;
  EXPECT_EQ(runSinfoWith({}, cli.io(), fake.connector()), 1);
  EXPECT_EQ(cli.err(),
            "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n"
            "sinfo: error: connection refused\n");
  FakeCli bad;
  EXPECT_EQ(runSinfoWith({"--all-namespaces"}, bad.io(), fake.connector()), 1);
  EXPECT_EQ(bad.err(),
            "sinfo: unrecognized option '--all-namespaces'\n"
            "Try \"sinfo --help\" for more information\n");
}

}  // namespace
}  // namespace kubeslurm::cli

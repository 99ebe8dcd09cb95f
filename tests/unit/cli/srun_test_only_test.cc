// `srun --test-only` from a login shell (srun_job.c create_srun_job -> allocate_test ->
// slurm_job_will_run): srun's allocation options make the job sbatch's options would, the
// operator plans it as for sbatch --test-only, and srun prints allocate.c's "Job N to start at
// ..." line, or slurm_perror's "allocation failure: ..." when it is refused.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/cli/kube_access.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

// The operator's will-run answer, and the job it was asked about.
class WillRun final : public testing::NoQueries {
 public:
  explicit WillRun(StatusOr<rpc::TestOnlyAnswer> answer, std::vector<json>& asked)
      : answer_(std::move(answer)), asked_(asked) {}
  StatusOr<rpc::TestOnlyAnswer> testOnly(const std::string& ns, const std::string& job) override {
    json object = json::parse(job);
    object["metadata"]["namespace"] = ns;
    asked_.push_back(std::move(object));
    return answer_;
  }

 private:
  StatusOr<rpc::TestOnlyAnswer> answer_;
  std::vector<json>& asked_;
};

struct Outcome {
  int code = 0;
  std::string err;
  std::vector<json> asked;
};

Outcome srunTestOnly(const SrunOptions& options, const std::vector<std::string>& command,
                     StatusOr<rpc::TestOnlyAnswer> answer) {
  FakeCluster fake;
  FakeCli cli;
  cli.env = {{"PWD", "/home/alice"}, {"USER", "alice"}};
  Outcome run;
  SubmitEnvironment environment{
      fake.connector("team-a", "alice"), [](std::chrono::milliseconds) {},
      [&](const ClusterSession&, const SchedulerFlags&,
          const CliIo&) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
        return std::unique_ptr<rpc::QueryClient>(std::make_unique<WillRun>(answer, run.asked));
      }};
  run.code = runSrunTestOnlyWith(options, command, cli.io(), environment);
  run.err = cli.err();
  EXPECT_EQ(cli.out(), "");
  return run;
}

rpc::TestOnlyAnswer answer() {
  return {.jobId = 17,
          .startTime = FakeCli::kNow,
          .processors = 128,
          .nodes = "gpu-[001-002]",
          .partition = "gpu"};
}

// Allocation options keep sbatch's meaning; step options (-l, --overlap, -K) shape no job; the
// job is named after the command's base name, as srun names it.
TEST(SrunTestOnly, PlansTheAllocationOptionsAndSaysWhereItWouldStart) {
  const Outcome run = srunTestOnly({{"nodes", "2"},
                                    {"gres", "gpu:8"},
                                    {"partition", "gpu"},
                                    {"time", "30"},
                                    {"label", std::nullopt},
                                    {"overlap", std::nullopt},
                                    {"test-only", std::nullopt}},
                                   {"/usr/bin/hostname", "-s"}, answer());
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.err,
            "srun: Job 17 to start at 2026-11-21T04:30:00 using 128 processors on nodes "
            "gpu-[001-002] in partition gpu\n");
  ASSERT_EQ(run.asked.size(), 1U);
  const json& spec = run.asked[0]["spec"];
  EXPECT_EQ(spec["nodes"], 2);
  EXPECT_EQ(spec["gres"], "gpu:8");
  EXPECT_EQ(spec["partition"], "gpu");
  EXPECT_EQ(spec["timeLimit"], "00:30:00");
  EXPECT_EQ(spec["jobName"], "hostname");
  EXPECT_EQ(spec["user"], "alice");
  EXPECT_EQ(run.asked[0]["metadata"]["namespace"], "team-a");
}

// An option Slurm has and kubeslurm does not use is said to change nothing, in srun's name.
TEST(SrunTestOnly, AnOptionThatChangesNothingIsNamed) {
  const Outcome run =
      srunTestOnly({{"reservation", "maint"}, {"test-only", std::nullopt}}, {"true"}, answer());
  EXPECT_EQ(run.code, 0);
  EXPECT_TRUE(
      run.err.starts_with("srun: warning: --reservation is accepted but has no effect in "
                          "kubeslurm\n"))
      << run.err;
}

TEST(SrunTestOnly, AJobNameGivenAndNoCommand) {
  const Outcome named =
      srunTestOnly({{"job-name", "probe"}, {"test-only", std::nullopt}}, {"true"}, answer());
  ASSERT_EQ(named.asked.size(), 1U);
  EXPECT_EQ(named.asked[0]["spec"]["jobName"], "probe");
  const Outcome bare = srunTestOnly({{"test-only", std::nullopt}}, {}, answer());
  EXPECT_EQ(bare.code, 0);
  EXPECT_EQ(bare.asked.size(), 1U);
}

// srun_job.c: a refused will-run test is slurm_perror("allocation failure"), whatever refused it.
TEST(SrunTestOnly, ARefusalIsAnAllocationFailure) {
  for (const StatusCode code : {StatusCode::kResourceExhausted, StatusCode::kInvalidArgument,
                                StatusCode::kFailedPrecondition}) {
    const Outcome run =
        srunTestOnly({{"gres", "gpu:h100:8"}, {"test-only", std::nullopt}}, {"true"},
                     Status(code, "Requested node configuration is not available"));
    EXPECT_EQ(run.code, 1);
    EXPECT_EQ(run.err, "allocation failure: Requested node configuration is not available\n");
  }
}

// An option's value is judged as srun's shared option code judges it, in srun's name; nothing
// is asked.
TEST(SrunTestOnly, ABadOptionValueIsSrunsErrorAndAsksNothing) {
  const Outcome run =
      srunTestOnly({{"gres", "gpu:x:y:z"}, {"test-only", std::nullopt}}, {"true"}, answer());
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.err, "srun: error: Invalid generic resource (gres) specification\n");
  EXPECT_TRUE(run.asked.empty());
}

}  // namespace
}  // namespace kubeslurm::cli

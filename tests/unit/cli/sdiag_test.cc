// sdiag: the layout of Slurm 22.05.8's src/sdiag/sdiag.c (_print_stats) for the figures the
// operator's GetStatistics carries, the options of src/sdiag/opts.c, and the command against a
// stand-in query API. The reference (../shared/reference/slurm-22.05.md, "sprio, sshare,
// sdiag") names the sections; the labels and spacing come from sdiag.c.
#include <gtest/gtest.h>

#include "kubeslurm/cli/sdiag_cmd.h"
#include "kubeslurm/cli/sdiag_format.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using testing::FakeCli;
using testing::FakeCluster;

// The operator started at 04:00:00Z and has planned 1800 times; its last cycle at 04:29:59.
rpc::Statistics statistics() {
  rpc::Statistics s;
  s.serverStart = FakeCli::kNow - 1800;
  s.cycles = 1800;
  s.lastCycleSeconds = 0.0012344;
  s.meanCycleSeconds = 0.0009876;
  s.maxCycleSeconds = 0.25;
  s.jobsConsidered = 4;
  s.jobsStarted = 1;
  s.jobsBackfilled = 1;
  s.backfillDepth = 3;
  s.totalJobsStarted = 21;
  s.totalJobsBackfilled = 5;
  s.jobsByState = {{"PENDING", 2}, {"RUNNING", 3}, {"COMPLETED", 16}};
  return s;
}

SdiagContext context() {
  SdiagContext c;
  c.now = FakeCli::kNow;
  c.planTime = FakeCli::kNow - 1;
  return c;
}

// The whole text: sdiag.c's banner (55 '*', "Data since" padded to the width of "sdiag output
// at"), "Jobs started:" and the job-state block, the main scheduler in microseconds with
// tab-indented lines, and the backfill block. Lines without a kubeslurm figure are left out.
TEST(SdiagFormat, PrintsSlurmsLayout) {
  EXPECT_EQ(formatSdiag(statistics(), context()),
            "*******************************************************\n"
            "sdiag output at Sat Nov 21 04:30:00 2026 (1795235400)\n"
            "Data since      Sat Nov 21 04:00:00 2026 (1795233600)\n"
            "*******************************************************\n"
            "Jobs started:   21\n"
            "\n"
            "Job states ts:  Sat Nov 21 04:29:59 2026 (1795235399)\n"
            "Jobs pending:   2\n"
            "Jobs running:   3\n"
            "\n"
            "Main schedule statistics (microseconds):\n"
            "\tLast cycle:   1234\n"
            "\tMax cycle:    250000\n"
            "\tTotal cycles: 1800\n"
            "\tMean cycle:   988\n"
            "\tCycles per minute: 60\n"
            "\n"
            "Backfilling stats\n"
            "\tTotal backfilled jobs (since last slurm start): 5\n"
            "\tTotal backfilled jobs (since last stats cycle start): 5\n"
            "\tLast depth cycle: 3\n");
}

// sdiag.c: "Mean cycle" only with cycles counted, "Cycles per minute" only once more than 60 s
// passed (integer minutes); times in the local zone (slurm_ctime2 is localtime). A state with
// no jobs is 0.
TEST(SdiagFormat, ConditionalLinesAndLocalTime) {
  rpc::Statistics s;
  s.serverStart = FakeCli::kNow - 60;
  SdiagContext c = context();
  c.utcOffsetSeconds = 3600;
  const std::string out = formatSdiag(s, c);
  EXPECT_NE(out.find("sdiag output at Sat Nov 21 05:30:00 2026 (1795235400)\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\tTotal cycles: 0\n\nBackfilling stats\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Mean cycle"), std::string::npos);
  EXPECT_EQ(out.find("per minute"), std::string::npos);
  EXPECT_NE(out.find("Jobs pending:   0\nJobs running:   0\n"), std::string::npos);

  s.serverStart = FakeCli::kNow - 179;  // 2 whole minutes: 7 / 2
  s.cycles = 7;
  EXPECT_NE(formatSdiag(s, c).find("\tCycles per minute: 3\n"), std::string::npos);
}

TEST(SdiagFormat, Options) {
  EXPECT_FALSE(parseSdiagArgs({}).exit);
  // -a is the default; -i/-t/-T sort the RPC tables, which kubeslurm does not print.
  EXPECT_FALSE(parseSdiagArgs({"-a", "-i", "--sort-by-time", "-T", "operand"}).exit);
  const auto help = parseSdiagArgs({"-h"}).exit;
  ASSERT_TRUE(help);
  EXPECT_EQ(help->exitCode, 0);
  EXPECT_EQ(help->out.substr(0, help->out.find('\n')), "Usage: sdiag [OPTIONS]");
  EXPECT_EQ(parseSdiagArgs({"--help"}).exit->out, help->out);
  EXPECT_EQ(parseSdiagArgs({"--usage"}).exit->out, "Usage: sdiag [-M cluster] [-aritT]\n");
  EXPECT_EQ(parseSdiagArgs({"-V"}).exit->out, "slurm-wlm 22.05.8\n");
  EXPECT_EQ(parseSdiagArgs({"--vers"}).exit->out, "slurm-wlm 22.05.8\n");
  // -r: acted on after the options (so "-r -h" is help), and refused.
  const auto reset = parseSdiagArgs({"--reset"}).exit;
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->exitCode, 1);
  EXPECT_EQ(reset->err,
            "sdiag: error: -r/--reset is not supported by kubeslurm: the statistics count from "
            "the operator's start\n");
  EXPECT_EQ(parseSdiagArgs({"-r", "-h"}).exit->exitCode, 0);
  EXPECT_EQ(parseSdiagArgs({"-M", "other"}).exit->exitCode, 1);
  const auto bad = parseSdiagArgs({"-x"}).exit;
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->exitCode, 1);
  EXPECT_EQ(bad->err, "sdiag: invalid option -- 'x'\nTry \"sdiag --help\" for more information\n");
  EXPECT_EQ(parseSdiagArgs({"--sort-by"}).exit->err,
            "sdiag: option '--sort-by' is ambiguous; possibilities: '--sort-by-id' "
            "'--sort-by-time' '--sort-by-time2'\nTry \"sdiag --help\" for more information\n");
}

// A stand-in for the operator's query API: the statistics, or an error.
class FakeQueries final : public testing::NoQueries {
 public:
  StatusOr<rpc::StatisticsAnswer> answer;
  explicit FakeQueries(StatusOr<rpc::StatisticsAnswer> a) : answer(std::move(a)) {}
  StatusOr<rpc::StatisticsAnswer> statistics() override { return answer; }
};

QueryConnector queries(StatusOr<rpc::StatisticsAnswer> answer, SchedulerFlags* seen = nullptr) {
  return [answer = std::move(answer), seen](
             const ClusterSession&, const SchedulerFlags& flags,
             const CliIo&) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
    if (seen != nullptr) *seen = flags;
    return std::unique_ptr<rpc::QueryClient>(std::make_unique<FakeQueries>(answer));
  };
}

TEST(SdiagCmd, PrintsTheOperatorsStatistics) {
  FakeCluster fake;
  FakeCli cli;
  SchedulerFlags seen;
  rpc::StatisticsAnswer answer{FakeCli::kNow - 1, statistics()};
  EXPECT_EQ(runSdiagWith({"--scheduler", "10.0.0.1:9443", "-a", "--context=c1"}, cli.io(),
                         fake.connector(), queries(answer, &seen)),
            0);
  EXPECT_EQ(cli.out(), formatSdiag(statistics(), context()));
  EXPECT_EQ(cli.err(), "");
  EXPECT_EQ(seen.address, "10.0.0.1:9443");
  EXPECT_EQ(fake.lastFlags.context, "c1");
}

// sdiag.c: slurm_perror("slurm_get_statistics"), with Slurm's words for the failure.
TEST(SdiagCmd, Errors) {
  FakeCluster fake;
  FakeCli denied;
  EXPECT_EQ(runSdiagWith({}, denied.io(), fake.connector(),
                         queries(Status(StatusCode::kPermissionDenied,
                                        "user \"bob\" cannot list accounts.kubeslurm.io"))),
            1);
  EXPECT_EQ(denied.out(), "");
  EXPECT_EQ(denied.err(),
            "slurm_get_statistics: Access/permission denied: user \"bob\" cannot list "
            "accounts.kubeslurm.io\n");
  FakeCli down;
  EXPECT_EQ(runSdiagWith({}, down.io(), fake.connector(),
                         queries(Status(StatusCode::kUnavailable, "no leader"))),
            1);
  EXPECT_EQ(down.err(),
            "slurm_get_statistics: Unable to contact slurm controller (connect failure): no "
            "leader\n");
  // Options are checked before anything is asked.
  FakeCli reset;
  EXPECT_EQ(runSdiagWith({"-r"}, reset.io(), fake.connector(), queries(rpc::StatisticsAnswer{})),
            1);
  EXPECT_EQ(fake.lastFlags.context, "");
  FakeCli noValue;
  EXPECT_EQ(runSdiagWith({"--scheduler"}, noValue.io(), fake.connector(),
                         queries(rpc::StatisticsAnswer{})),
            1);
  EXPECT_EQ(noValue.err().substr(0, 14), "sdiag: error: ");
}

// The multi-call name: `sdiag` runs the command, and `kubeslurm` lists it.
TEST(SdiagCmd, IsACommandName) {
  const auto& names = slurmCommandNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "sdiag"), names.end());
  FakeCli cli;
  EXPECT_EQ(runCli("sdiag", {"--usage"}, cli.io()), 0);
  EXPECT_EQ(cli.out(), "Usage: sdiag [-M cluster] [-aritT]\n");
  FakeCli sub;
  EXPECT_EQ(runCli("kubeslurm", {"sdiag", "-V"}, sub.io()), 0);
  EXPECT_EQ(sub.out(), "slurm-wlm 22.05.8\n");
}

}  // namespace
}  // namespace kubeslurm::cli

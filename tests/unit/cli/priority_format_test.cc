// sprio and sshare against the reference outputs of a real Slurm 22.05.8
// (../shared/reference/slurm-22.05.md, "sprio, sshare, sdiag"), and the rules of
// src/sprio/{sprio,print,sort}.c and src/sshare/process.c that the reference does not show.
#include "kubeslurm/cli/priority_format.h"

#include <gtest/gtest.h>

#include "kubeslurm/cli/getopt.h"

namespace kubeslurm::cli {
namespace {

rpc::PriorityWeights referenceWeights(bool tres) {
  rpc::PriorityWeights w;
  w.age = 1000;
  w.fairshare = 10000;
  w.jobSize = 1000;
  w.partition = 1000;
  if (tres) w.tres = "GRES/gpu=1000";
  return w;
}

rpc::PendingJob job(std::int64_t id, double fairshare, double jobSize, double tres,
                    std::uint32_t priority) {
  rpc::PendingJob j;
  j.jobId = id;
  j.partition = "train";
  j.user = "root";
  j.priority.fairshare = fairshare;
  j.priority.jobSize = jobSize;
  j.priority.partition = 100;
  j.priority.tresGpu = tres;
  j.priority.priority = priority;
  return j;
}

SprioOptions sprioOptions(const std::vector<std::string>& args) {
  const SprioParse parse = parseSprioArgs(args);
  EXPECT_FALSE(parse.exit.has_value());
  return parse.options;
}

// Phase 1: no TRES weight, so no TRES column; 353 = 254 + 100 (the job-size factor rounds).
TEST(Sprio, Phase1MatchesTheReference) {
  const CommandOutput out =
      formatSprio({job(4, 0, 253.97, 0, 353)}, referenceWeights(false), sprioOptions({}));
  EXPECT_EQ(out.out,
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION\n"
            "              4 train            353          0          0          0        254  "
            "      100\n");
  EXPECT_EQ(out.exitCode, 0);
}

// Phase 2: the TRES column, jobs by id although 21 has the higher priority (sort "i").
TEST(Sprio, Phase2MatchesTheReference) {
  const CommandOutput out =
      formatSprio({job(21, 10000, 127.1, 250, 10477), job(20, 3333.33, 127.1, 250, 3810)},
                  referenceWeights(true), sprioOptions({}));
  EXPECT_EQ(out.out,
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION                 TRES\n"
            "             20 train           3810          0          0       3333        127  "
            "      100         gres/gpu=250\n"
            "             21 train          10477          0          0      10000        127  "
            "      100         gres/gpu=250\n");
}

// PRIORITY is the truncated sum of the factors (print.c get_priority_from_factors), not a
// rounding: 3333.33 + 126.98 + 100 + 250 = 3810.31 -> 3810.
TEST(Sprio, PriorityIsTheTruncatedSumOfTheFactors) {
  const CommandOutput out = formatSprio({job(20, 3333.33, 126.98, 250.9, 1)},
                                        referenceWeights(true), sprioOptions({"-h", "-o", "%Y"}));
  EXPECT_EQ(out.out, "3811\n");
}

// sbatch -p gpu,spare: a row per partition, each with that partition's factor and the
// priority they sum to, in the order the job names them (priority_multifactor.c _filter_job);
// -p keeps the rows of the partitions it names.
TEST(Sprio, AJobOfSeveralPartitionsHasARowInEach) {
  rpc::PendingJob several = job(7, 1000, 10, 0, 1510);
  several.partition = "spare";  // the job's leading entry
  for (const auto& [name, factor] : {std::pair{"spare", 1000.0}, std::pair{"gpu", 500.0}}) {
    rpc::PriorityFactors f = several.priority;
    f.partition = factor;
    several.partitionPriorities.push_back({name, f});
  }
  const std::vector<rpc::PendingJob> jobs = {several, job(5, 1000, 10, 0, 1110)};
  EXPECT_EQ(formatSprio(jobs, referenceWeights(false), sprioOptions({"-o", "%i %r %Y %P"})).out,
            "JOBID PARTITION PRIORITY PARTITION\n"
            "5 train 1110 100\n"
            "7 spare 2010 1000\n"
            "7 gpu 1510 500\n");
  EXPECT_EQ(
      formatSprio(jobs, referenceWeights(false), sprioOptions({"-h", "-p", "gpu", "-o", "%i %r"}))
          .out,
      "7 gpu\n");
}

TEST(Sprio, WeightsLine) {
  const CommandOutput out = formatSprio({}, referenceWeights(true), sprioOptions({"-w"}));
  EXPECT_EQ(out.out,
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION                 TRES\n"
            "        Weights                               1       1000      10000       1000  "
            "     1000        GRES/gpu=1000\n");
}

TEST(Sprio, UserColumnAppearsWithUserFilterAndFilters) {
  auto a = job(5, 1, 1, 0, 10);
  a.user = "alice";
  auto b = job(6, 1, 1, 0, 10);
  b.user = "bob";
  const CommandOutput out =
      formatSprio({a, b}, referenceWeights(false), sprioOptions({"-u", "bob", "-o", "%i %u"}));
  EXPECT_EQ(out.out, "JOBID USER\n6 bob\n");
  const CommandOutput def =
      formatSprio({a, b}, referenceWeights(false), sprioOptions({"-h", "--user=alice"}));
  EXPECT_EQ(def.out.substr(0, 34), "              5 train        alice");  // %.8u: right, 8
}

TEST(Sprio, JobsThatMatchNothingSayso) {
  const CommandOutput out =
      formatSprio({job(4, 0, 1, 0, 1)}, referenceWeights(false), sprioOptions({"-j", "99"}));
  EXPECT_EQ(out.out, "Unable to find jobs matching user/id(s) specified\n");
}

TEST(Sprio, HeldJobsAreNotListed) {
  const CommandOutput out = formatSprio({job(4, 0, 1, 0, 0), job(5, 0, 1, 0, 7)},
                                        referenceWeights(false), sprioOptions({"-h", "-o", "%i"}));
  EXPECT_EQ(out.out, "5\n");
}

TEST(Sprio, SortDescendingByPriority) {
  const CommandOutput out =
      formatSprio({job(1, 10, 0, 0, 110), job(2, 50, 0, 0, 150)}, referenceWeights(false),
                  sprioOptions({"-h", "-S", "-y", "-o", "%i"}));
  EXPECT_EQ(out.out, "2\n1\n");
}

TEST(Sprio, NormalizedFactors) {
  const CommandOutput out = formatSprio({job(20, 3333.33, 127, 0, 1)}, referenceWeights(false),
                                        sprioOptions({"-h", "-n", "-o", "%i %f"}));
  EXPECT_EQ(out.out, "20 0.3333330\n");
}

// A width of millions (found by fuzz_cli_args) is capped rather than printed.
TEST(Sprio, HugeWidthsAreCapped) {
  const CommandOutput out = formatSprio({job(4, 0, 1, 0, 1)}, referenceWeights(false),
                                        sprioOptions({"-h", "-o", "%.504444444Y"}));
  EXPECT_EQ(out.out.size(), static_cast<std::size_t>(kMaxFieldWidth) + 1);
}

TEST(Sprio, BadOptionsAsGetoptSaysThem) {
  SprioParse parse = parseSprioArgs({"-x"});
  ASSERT_TRUE(parse.exit);
  EXPECT_EQ(parse.exit->err,
            "sprio: invalid option -- 'x'\nTry \"sprio --help\" for more information\n");
  parse = parseSprioArgs({"-l", "-o", "%i"});
  ASSERT_TRUE(parse.exit);
  EXPECT_EQ(parse.exit->exitCode, 1);
  const CommandOutput out =
      formatSprio({job(4, 0, 1, 0, 1)}, referenceWeights(false), sprioOptions({"-o", "%i %Z"}));
  EXPECT_EQ(out.err, "sprio: error: Invalid job format specification: Z\n");
}

// sshare phase 2 (Fair Tree): all six rows, byte for byte.
std::vector<rpc::FairShareRow> phase2Rows() {
  return {
      {"root", "", "", 0, 0, 0.0, 26622.4, 1.0, 0.0},
      {"root", "root", "root", 1, 1, 0.009901, 0, 0.0, 1.0},
      {"ml-team", "", "root", 1, 60, 0.594059, 26622.4, 1.0, 0.0},
      {"ml-team", "root", "ml-team", 2, 1, 1.0, 26622.4, 1.0, 0.333333},
      {"research", "", "root", 1, 40, 0.396040, 0, 0.0, 0.0},
      {"research", "root", "research", 2, 1, 1.0, 0, 0.0, 1.0},
  };
}

TEST(Sshare, Phase2MatchesTheReference) {
  const CommandOutput out = formatSshare(phase2Rows(), true, parseSshareArgs({}).options, "root");
  EXPECT_EQ(out.out,
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
            "FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- "
            "---------- \n"
            "root                                          0.000000       26622      1.000000     "
            "       \n"
            " root                      root          1    0.009901           0      0.000000   "
            "1.000000 \n"
            " ml-team                                60    0.594059       26622      1.000000     "
            "       \n"
            "  ml-team                  root          1    1.000000       26622      1.000000   "
            "0.333333 \n"
            " research                               40    0.396040           0      0.000000     "
            "       \n"
            "  research                 root          1    1.000000           0      0.000000   "
            "1.000000 \n");
}

TEST(Sshare, OnlyTheCallersUserRowsWithoutAll) {
  const CommandOutput mine =
      formatSshare(phase2Rows(), true, parseSshareArgs({"-n"}).options, "alice");
  EXPECT_EQ(mine.out.find(" root      "), std::string::npos);  // no user rows for alice
  EXPECT_NE(mine.out.find(" ml-team "), std::string::npos);
  const CommandOutput all =
      formatSshare(phase2Rows(), true, parseSshareArgs({"-a", "-n", "-U"}).options, "alice");
  EXPECT_EQ(std::count(all.out.begin(), all.out.end(), '\n'), 3);
}

TEST(Sshare, ParsableAndFormat) {
  const CommandOutput out = formatSshare(
      phase2Rows(), true, parseSshareArgs({"-P", "-o", "acc,RawU,fairs", "-A", "ml-team"}).options,
      "root");
  EXPECT_EQ(out.out,
            "Account|RawUsage|FairShare\n"
            " ml-team|26622|\n"
            "  ml-team|26622|0.333333\n");
  const CommandOutput bad =
      formatSshare(phase2Rows(), true, parseSshareArgs({"-o", "Restarts"}).options, "root");
  EXPECT_EQ(bad.err, "sshare: error: Invalid field requested: \"Restarts\"\n");
  EXPECT_EQ(bad.exitCode, 1);
}

TEST(Sshare, ClassicFairShareShowsTheFactorOnEveryRow) {
  const CommandOutput out = formatSshare(
      phase2Rows(), false, parseSshareArgs({"-n", "-a", "-o", "Account,FairShare"}).options, "x");
  EXPECT_EQ(out.out.substr(0, 32), "root                   0.000000 ");
}

TEST(Sshare, LongNamesAreCutWithAPlus) {
  std::vector<rpc::FairShareRow> rows = {
      {"root", "", "", 0, 0, 0, 0, 0, 0},
      {"a-very-long-account-name", "", "root", 1, 1, 1, 0, 0, 0}};
  const CommandOutput out =
      formatSshare(rows, true, parseSshareArgs({"-n", "-o", "Account"}).options, "x");
  EXPECT_EQ(out.out, "root                 \n a-very-long-accoun+ \n");
}

TEST(Sshare, HeadersAreCutWithoutAPlus) {
  // print_fields_header prints "%*.*s ": a narrow column cuts its name and marks nothing.
  const CommandOutput out = formatSshare(
      phase2Rows(), true, parseSshareArgs({"-a", "-o", "Account%3,RawUsage%3"}).options, "root");
  EXPECT_EQ(out.out.substr(0, out.out.find('\n', out.out.find('\n') + 1) + 1),
            "Acc Raw \n--- --- \n")
      << out.out;
}

}  // namespace
}  // namespace kubeslurm::cli

// `sreport user TopUsage`, the cluster reports and `job SizesByAccount`: their output field for
// field (Slurm 22.05.8's user_reports.c user_top, cluster_reports.c, job_reports.c, common.c's
// widths and time formats, print_fields.c; the job report against a capture of the real
// sreport), their conditions and complaints, and the command reading the operator's store and
// the live jobs.
#include <memory>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/accounting/usage_report.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sreport_format.h"
#include "kubeslurm/rpc/client.h"
#include "tests/unit/cli/captured_runs.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using accounting::AssociationUsage;
using testing::FakeCli;
using testing::FakeCluster;

constexpr std::uint64_t kHour = 3600;
constexpr std::int64_t kHourSeconds = 3600;

SreportContext context() {
  SreportContext c;
  c.now = FakeCli::kNow;  // 2026-11-21T04:30:00Z
  return c;
}

CommandOutput report(const std::vector<std::string>& args, const SreportData& data) {
  const SreportParse parse = parseSreportArgs(args, context());
  if (parse.exit) return *parse.exit;
  return formatSreport(data, parse, context());
}

CommandOutput topUsage(const std::vector<std::string>& args,
                       const std::vector<AssociationUsage>& usage,
                       const std::map<std::string, std::string>& names = {}) {
  return report(args, SreportData{usage, {}, names, {}});
}

const std::vector<AssociationUsage> kUsage = {
    {"alice", "team-a", {{"cpu", kHour * 64 * 2}, {"gres/gpu", kHour * 8 * 2}}},
    {"alice", "team-b", {{"cpu", 90}}},
    {"bob", "team-b", {{"cpu", 8 * kHour}, {"gres/gpu", kHour * 4 * 3}}},
};

// The default report: the last day, CPU minutes, Cluster/Login/Proper Name/Account/Used/Energy,
// right-aligned, most CPU first; Used and Energy 8 wide while the top user's CPU seconds have
// eight digits or fewer. 90 CPU-seconds print as "2" (printf's %.0f of 1.5).
TEST(SreportTopUsage, DefaultReport) {
  const CommandOutput out = topUsage({"user", "TopUsage"}, kUsage, {{"alice", "Alice Liddell"}});
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.exitCode, 0);
  EXPECT_EQ(out.out,
            "--------------------------------------------------------------------------------\n"
            "Top 10 Users 2026-11-20T00:00:00 - 2026-11-20T23:59:59 (86400 secs)\n"
            "Usage reported in CPU Minutes\n"
            "--------------------------------------------------------------------------------\n"
            "  Cluster     Login     Proper Name         Account     Used   Energy \n"
            "--------- --------- --------------- --------------- -------- -------- \n"
            "kubeslurm     alice   Alice Liddell          team-a     7680        0 \n"
            "kubeslurm       bob                          team-b      480        0 \n"
            "kubeslurm     alice   Alice Liddell          team-b        2        0 \n");
}

// -T names the TRES (one line each, "TRES" usage, TresName instead of Energy); the first one
// orders the users; -t Hours; -P; start= and end= round to the hour.
TEST(SreportTopUsage, TresHoursParsable) {
  const CommandOutput out = topUsage({"-T", "gres/gpu,cpu", "-t", "hours", "-P", "user", "top",
                                      "start=2026-11-20T10:20", "end=2026-11-20T18:40:00"},
                                     kUsage);
  EXPECT_EQ(out.out,
            "--------------------------------------------------------------------------------\n"
            "Top 10 Users 2026-11-20T10:00:00 - 2026-11-20T18:59:59 (32400 secs)\n"
            "Usage reported in TRES Hours\n"
            "--------------------------------------------------------------------------------\n"
            "Cluster|Login|Proper Name|Account|TRES Name|Used\n"
            "kubeslurm|alice||team-a|gres/gpu|16\n"
            "kubeslurm|alice||team-a|cpu|128\n"
            "kubeslurm|bob||team-b|gres/gpu|12\n"
            "kubeslurm|bob||team-b|cpu|8\n"
            "kubeslurm|alice||team-b|gres/gpu|0\n"
            "kubeslurm|alice||team-b|cpu|0\n");
}

// group: one line per user, accounts joined; TopCount; Users= (lower-cased); -n; -p; Format=.
TEST(SreportTopUsage, ConditionsAndFormat) {
  EXPECT_EQ(
      topUsage({"-n", "-p", "user", "top", "group", "TopCount=1", "format=login,acc,used"}, kUsage)
          .out,
      "alice|team-a, team-b|7682|\n");
  EXPECT_EQ(topUsage({"-n", "-P", "-t", "s", "user", "top", "users=BOB", "format=l,u"}, kUsage).out,
            "bob|28800\n");
  // Kubernetes user names keep their case: Users= matches them case-insensitively.
  const std::vector<AssociationUsage> mixed = {{"Alice@Corp", "a", {{"cpu", 60}}}};
  EXPECT_EQ(topUsage({"-n", "-P", "user", "top", "users=alice@corp", "format=l,u"}, mixed).out,
            "Alice@Corp|1\n");
  // A bare word is a user name (user_reports.c: !end || "Users").
  EXPECT_EQ(
      topUsage({"-n", "-P", "user", "top", "alice", "accounts=team-b", "format=l,a"}, kUsage).out,
      "alice|team-b\n");
  // -s name orders by login; Used keeps its width from the top user even with Format=Used%3.
  EXPECT_EQ(topUsage({"-n", "-s", "name", "user", "top", "format=login%6,used%3"}, kUsage).out,
            " alice     7680 \n"
            " alice        2 \n"
            "   bob      480 \n");
  // -s Time needs all of "Time" (xstrncasecmp over 6 characters); "Ti" is unknown.
  EXPECT_EQ(topUsage({"-n", "-s", "name", "-s", "time", "user", "top", "format=login"}, kUsage).out,
            "    alice \n      bob \n    alice \n");
  EXPECT_EQ(topUsage({"-n", "-s", "ti", "user", "top", "format=login"}, kUsage).err,
            "unknown timesort format ti");
  // A long value is cut with '+'.
  EXPECT_EQ(topUsage({"-n", "user", "top", "format=a%5", "TopCount=1"}, kUsage).out, "team+ \n");
}

// The Used column widens past eight digits of the top user's seconds (sreport_set_usage_col_width).
TEST(SreportTopUsage, UsedColumnWidensWithTheLargestUsage) {
  const std::vector<AssociationUsage> big = {{"alice", "a", {{"cpu", 1234567890}}}};
  // 20576131.5 minutes: %.0f rounds half to even.
  EXPECT_EQ(topUsage({"-n", "user", "top", "format=used"}, big).out, "  20576132 \n");
  EXPECT_EQ(topUsage({"-n", "-t", "seconds", "user", "top", "format=used"}, big).out,
            "1234567890 \n");
}

// What sreport refuses or complains of, in its words.
TEST(SreportTopUsage, Errors) {
  EXPECT_EQ(topUsage({"user"}, kUsage).err, "too few arguments for keyword:user\n");
  EXPECT_EQ(topUsage({"user", "sizes"}, kUsage).err,
            "Not valid report sizes\nValid user reports are, \"Top\"\n");
  EXPECT_EQ(topUsage({"frobnicate"}, kUsage).err, "invalid keyword: frobnicate\n");
  EXPECT_EQ(topUsage({"-T", "bogus", "user", "top"}, kUsage).err,
            "sreport: fatal: No valid TRES given\n");
  const CommandOutput percent = topUsage({"-t", "percent", "user", "top"}, kUsage);
  EXPECT_EQ(percent.exitCode, 1);
  EXPECT_NE(percent.err.find("no percentage"), std::string::npos);
  const CommandOutput cluster = topUsage({"cluster", "Utilization"}, kUsage);
  EXPECT_EQ(cluster.exitCode, 1);
  EXPECT_NE(cluster.err.find("does not make the cluster Utilization report yet"),
            std::string::npos);
  EXPECT_EQ(topUsage({"cluster", "bogus"}, kUsage).err,
            "Not valid report bogus\nValid cluster reports are, \"AccountUtilizationByUser\", "
            "\"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and "
            "\"WCKeyUtilizationByUser\"\n");
  EXPECT_NE(topUsage({"job", "SizesByWckey"}, kUsage).err.find("does not make the job"),
            std::string::npos);
  EXPECT_NE(topUsage({"resv", "Utilization"}, kUsage).err.find("does not make the resv"),
            std::string::npos);
  EXPECT_EQ(topUsage({}, kUsage).exitCode, 1);
  EXPECT_EQ(topUsage({"-x"}, kUsage).err,
            "sreport: invalid option -- 'x'\nTry \"sreport --help\" for more information\n");
  // An unknown condition or field is said, and the report still printed, exit 1.
  const CommandOutput unknown =
      topUsage({"-n", "-P", "user", "top", "bogus=1", "format=login,nope"}, kUsage);
  EXPECT_EQ(
      unknown.err,
      " Unknown condition: bogus=1\nUse keyword set to modify value\n Unknown field 'nope'\n");
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_EQ(unknown.out, "alice\nbob\nalice\n");
  EXPECT_EQ(topUsage({"-n", "user", "top", "TopCount=x"}, kUsage).err,
            "sreport: error: Invalid value for TopCount (x)\n");
}

// The account tree: root > team (> team-a, team-b), ops; alice runs in team-a and team-b, bob
// in team-b.
const std::vector<accounting::AccountEdge> kAccounts = {
    {"team", ""}, {"team-a", "team"}, {"team-b", "team"}, {"ops", ""}};

// cluster AccountUtilizationByUser: root first, each account's users before its sub-accounts,
// an account's usage its subtree's; accounts right-aligned 15 wide, Login blank on account lines;
// Used's width from root's CPU seconds (cluster_reports.c, cluster_report_functions.c).
TEST(SreportAccountUtilization, HierarchicalWithSubtreeUsage) {
  const CommandOutput out =
      report({"cluster", "AccountUtilizationByUser"}, SreportData{kUsage, kAccounts, {}, {}});
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.out,
            "--------------------------------------------------------------------------------\n"
            "Cluster/Account/User Utilization 2026-11-20T00:00:00 - 2026-11-20T23:59:59 (86400 "
            "secs)\n"
            "Usage reported in CPU Minutes\n"
            "--------------------------------------------------------------------------------\n"
            "  Cluster         Account     Login     Proper Name     Used   Energy \n"
            "--------- --------------- --------- --------------- -------- -------- \n"
            "kubeslurm            root                               8162        0 \n"
            "kubeslurm            team                               8162        0 \n"
            "kubeslurm          team-a                               7680        0 \n"
            "kubeslurm          team-a     alice                     7680        0 \n"
            "kubeslurm          team-b                                482        0 \n"
            "kubeslurm          team-b     alice                        2        0 \n"
            "kubeslurm          team-b       bob                      480        0 \n");
}

// Tree: Account 20 wide, left-aligned, each level one space in, a user's line one deeper than
// its account (slurmdb_tree_name_get); Accounts= keeps a subtree, whose top then has no indent;
// -T gres/gpu -t hours -P.
TEST(SreportAccountUtilization, TreeSubtreeAndTres) {
  const SreportData data{kUsage, kAccounts, {{"bob", "Bob Builder"}}, {}};
  EXPECT_EQ(report({"-n", "cluster", "Acc", "tree", "format=acc,login,used"}, data).out,
            "root                               8162 \n"
            " team                              8162 \n"
            "  team-a                           7680 \n"
            "   team-a                alice     7680 \n"
            "  team-b                            482 \n"
            "   team-b                alice        2 \n"
            "   team-b                  bob      480 \n");
  EXPECT_EQ(report({"-n", "-P", "-T", "gres/gpu", "-t", "hours", "cluster", "a", "tree",
                    "accounts=team-b"},
                   data)
                .out,
            "kubeslurm|team-b|||gres/gpu|12\n"
            "kubeslurm| team-b|alice||gres/gpu|0\n"
            "kubeslurm| team-b|bob|Bob Builder|gres/gpu|12\n");
  // Users= asks for users' associations: no account lines.
  EXPECT_EQ(report({"-n", "-P", "cluster", "a", "users=alice", "format=acc,login"}, data).out,
            "team-a|alice\nteam-b|alice\n");
}

// cluster UserUtilizationByAccount: one line per user and account, most CPU first.
TEST(SreportUserUtilization, ByAccount) {
  const CommandOutput out =
      report({"-t", "s", "cluster", "UserUtilizationByAccount"}, SreportData{kUsage, {}, {}, {}});
  EXPECT_EQ(out.out,
            "--------------------------------------------------------------------------------\n"
            "Cluster/User/Account Utilization 2026-11-20T00:00:00 - 2026-11-20T23:59:59 (86400 "
            "secs)\n"
            "Usage reported in CPU Seconds\n"
            "--------------------------------------------------------------------------------\n"
            "  Cluster     Login     Proper Name         Account     Used   Energy \n"
            "--------- --------- --------------- --------------- -------- -------- \n"
            "kubeslurm     alice                          team-a   460800        0 \n"
            "kubeslurm       bob                          team-b    28800        0 \n"
            "kubeslurm     alice                          team-b       90        0 \n");
  EXPECT_EQ(report({"-n", "-P", "cluster", "ua", "accounts=team-b", "format=login"},
                   SreportData{kUsage, {}, {}, {}})
                .out,
            "bob\nalice\n");
  // TopCount and group belong to user TopUsage.
  EXPECT_EQ(report({"-n", "cluster", "ua", "group"}, SreportData{kUsage, {}, {}, {}}).exitCode, 0);
  EXPECT_EQ(report({"-n", "cluster", "ua", "topcount=1"}, SreportData{kUsage, {}, {}, {}}).err,
            " Unknown condition: topcount=1\nUse keyword set to modify value\n");
}

struct Store {
  std::vector<accounting::JobRecord> records;
  std::optional<Status> failure;  // answered instead of the records
  std::vector<rpc::JobRecordQuery> asked;
};

class StoredRecords final : public testing::NoQueries {
 public:
  explicit StoredRecords(std::shared_ptr<Store> store) : store_(std::move(store)) {}
  StatusOr<std::vector<accounting::JobRecord>> listJobRecords(
      const rpc::JobRecordQuery& query) override {
    store_->asked.push_back(query);
    if (store_->failure) return *store_->failure;
    return store_->records;
  }

 private:
  std::shared_ptr<Store> store_;
};

// job SizesByAccount (job_reports.c, job_report_functions.c) against Slurm 22.05.8's sreport
// over slurmdbd on MariaDB: tests/integration/slurm_diff/sreport/sreport-22.05.8.txt, made by
// capture.sh beside it. Its database: research > team-a, team-b; ops; three jobs run by uid 0
// from 2026-11-20T01:00:00Z, as these records.
accounting::JobRecord sizedRun(std::int64_t id, const std::string& account,
                               const std::string& allocTres, std::int64_t hours) {
  constexpr std::int64_t kStart = FakeCli::kNow - 27 * kHourSeconds - 1800;  // 2026-11-20T01:00Z
  accounting::JobRecord r;
  r.jobId = id;
  r.user = "root";
  r.account = account;
  r.partition = "debug";
  r.eligibleTime = kStart;
  r.startTime = kStart;
  r.endTime = kStart + hours * kHourSeconds;
  r.allocTres = allocTres;
  r.state = "COMPLETED";
  return r;
}

SreportData sizedRuns() {
  SreportData data;
  data.accounts = {{"research", ""}, {"team-a", "research"}, {"team-b", "research"}, {"ops", ""}};
  data.records = {sizedRun(1, "team-a", "cpu=64,mem=500G,node=1,gres/gpu=8", 2),
                  sizedRun(2, "team-b", "cpu=8,node=1,gres/gpu=1", 1),
                  sizedRun(3, "ops", "cpu=16,node=1", 1)};
  return data;
}

// Every captured sreport command, byte for byte: the header block and columns, root's line by
// default (root's association holds every run), AcctAsParent, Accounts= (the outermost account
// takes a run), FlatView, PrintJobCount, -T gres/gpu (buckets still by CPUs), the percentage
// formats, Grouping= (widths, individual, bounds out of order counted twice), Jobs= (an id counts
// only when a comma follows it), a bare cluster word, and the errors.
TEST(SreportJobSizes, AsSlurmPrintsThem) {
  const auto capture =
      testing::loadCapture("tests/integration/slurm_diff/sreport/sreport-22.05.8.txt");
  std::size_t compared = 0;
  for (const auto& [command, runs] : capture) {
    if (command.rfind("sreport ", 0) != 0) continue;
    std::vector<std::string> args;
    std::istringstream words(command.substr(8));
    for (std::string word; words >> word;) args.push_back(word);
    const CommandOutput out = report(args, sizedRuns());
    EXPECT_EQ(out.out, runs.front().out) << command;
    EXPECT_EQ(out.err, runs.front().err) << command;
    EXPECT_EQ(out.exitCode, runs.front().code) << command;
    ++compared;
  }
  EXPECT_EQ(compared, 21U);
}

// What the capture cannot show: the wckey reports kubeslurm does not make, Wckeys= (no run has
// one here), the refusal of percentages by the reports that need the cluster's capacity.
TEST(SreportJobSizes, WhatKubeslurmDoesNotKeep) {
  CommandOutput out = report({"job", "SizesByWcKey"}, sizedRuns());
  EXPECT_EQ(out.exitCode, 1);
  EXPECT_NE(out.err.find("does not make the job SizesByWcKey report"), std::string::npos);
  EXPECT_EQ(report({"-n", "job", "sizes", "kubeslurm", "wckeys=x"}, sizedRuns()).out, "");
  out = report({"-n", "-P", "job", "sizes", "nodes=gpu-1", "format=a"}, sizedRuns());
  EXPECT_EQ(out.exitCode, 1);
  EXPECT_NE(out.err.find("nodes=gpu-1 is left out"), std::string::npos);
  EXPECT_EQ(out.out, "root|1440|7680|0|0|0|100.00%\n");
  EXPECT_NE(report({"-t", "percent", "cluster", "a"}, sizedRuns()).err.find("no percentage"),
            std::string::npos);
}

// The command: the store's records from the window's start, a live job's record in place of the
// store's older one of the same run (its usage so far), the live jobs of the namespace.
TEST(SreportCmd, UsageFromTheStoreAndTheLiveJobs) {
  const std::int64_t start = FakeCli::kNow - 4 * kHourSeconds;  // 00:30, rounds to 01:00
  auto store = std::make_shared<Store>();
  accounting::JobRecord old;
  old.jobId = 3;
  old.user = "alice";
  old.account = "team-a";
  old.startTime = FakeCli::kNow - 10 * kHourSeconds;
  old.endTime = FakeCli::kNow - 2 * kHourSeconds;  // 02:30
  old.allocTres = "cpu=4,node=1";
  accounting::JobRecord stale = old;  // job 8, as the store last saw it
  stale.jobId = 8;
  stale.endTime.reset();
  stale.startTime = FakeCli::kNow - 300;
  stale.allocTres = "cpu=1000";
  store->records = {old, stale};
  const QueryConnector queries = [&](const ClusterSession&, const SchedulerFlags&,
                                     const CliIo&) -> StatusOr<std::unique_ptr<rpc::QueryClient>> {
    return std::unique_ptr<rpc::QueryClient>(std::make_unique<StoredRecords>(store));
  };
  api::SlurmJobObject job;
  job.name = "j8";
  job.namespaceName = "default";
  job.user = "bob";
  job.request.jobName = "train";
  job.request.account = "team-b";
  job.status.emplace();
  job.status->jobId = 8;
  job.status->state = "RUNNING";
  job.status->submitTime = FakeCli::kNow - 600;
  job.status->startTime = FakeCli::kNow - 300;
  job.status->nodeList = "gpu-001";
  FakeCluster fake;
  fake.objects["slurmjobs"] = {api::encodeSlurmJob(job)};
  FakeCli cli;
  EXPECT_EQ(runSreportWith({"-n", "-P", "-t", "seconds", "user", "top", "start=2026-11-21T00:30:00",
                            "end=now", "format=login,account,used"},
                           cli.io(), fake.connector(), queries),
            0);
  EXPECT_EQ(cli.err(), "");
  // The window is 01:00 to 05:00 (now, 04:30, rounds up); alice: 4 CPUs from 01:00 to 02:30;
  // bob: 1 CPU for the 300 s up to now.
  EXPECT_EQ(cli.out(), "alice|team-a|21600\nbob|team-b|300\n");
  ASSERT_EQ(store->asked.size(), 1U);
  EXPECT_EQ(store->asked[0].from, start + 1800);
  EXPECT_EQ(store->asked[0].namespaceName, "default");

  // The cluster report reads the Account objects for the tree.
  fake.objects["accounts"] = {
      nlohmann::json{{"metadata", {{"name", "team"}}}, {"spec", nlohmann::json::object()}},
      nlohmann::json{{"metadata", {{"name", "team-b"}}}, {"spec", {{"parent", "team"}}}}};
  FakeCli tree;
  EXPECT_EQ(
      runSreportWith({"-n", "-P", "-t", "seconds", "cluster", "AccountUtilizationByUser",
                      "start=2026-11-21T00:30:00", "end=now", "tree", "format=account,login,used"},
                     tree.io(), fake.connector(), queries),
      0);
  EXPECT_EQ(tree.err(), "");
  EXPECT_EQ(tree.out(),
            "root||21900\n"
            " team||300\n"
            "  team-b||300\n"
            "   team-b|bob|300\n"
            " team-a||21600\n"  // no Account object: under root
            "  team-a|alice|21600\n");

  // An operator that keeps no records: the live jobs, and a warning that they are all.
  store->failure = Status(StatusCode::kFailedPrecondition, "this operator keeps no job records");
  FakeCli liveOnly;
  EXPECT_EQ(runSreportWith({"-n", "-P", "-t", "seconds", "user", "top", "start=2026-11-21T00:30:00",
                            "end=now", "format=login,used"},
                           liveOnly.io(), fake.connector(), queries),
            0);
  EXPECT_EQ(liveOnly.out(), "bob|300\n");
  EXPECT_NE(liveOnly.err().find("keeps no job records"), std::string::npos);
  // A store that fails: an error, no report that would pass for complete.
  store->failure = Status(StatusCode::kUnavailable, "connection refused");
  FakeCli failing;
  EXPECT_EQ(runSreportWith({"user", "top"}, failing.io(), fake.connector(), queries), 1);
  EXPECT_EQ(failing.out(), "");

  // The job report gets the records themselves, and the tree.
  store->failure.reset();
  FakeCli sizes;
  EXPECT_EQ(runSreportWith({"-n", "-P", "-t", "seconds", "job", "sizes", "AcctAsParent",
                            "start=2026-11-21T00:30:00", "end=now", "format=a"},
                           sizes.io(), fake.connector(), queries),
            0);
  EXPECT_EQ(sizes.err(), "");
  // alice's whole run (8 h of 4 CPUs, not only its part of the window); bob's 300 s.
  EXPECT_EQ(sizes.out(),
            "team|300|0|0|0|0|0.26%\n"
            "team-a|115200|0|0|0|0|99.74%\n");

  // No query API: sreport has nothing to read.
  FakeCli none;
  EXPECT_EQ(runSreportWith({"user", "top"}, none.io(), fake.connector(), {}), 1);
  EXPECT_NE(none.err().find("no query API"), std::string::npos);
}

}  // namespace
}  // namespace kubeslurm::cli

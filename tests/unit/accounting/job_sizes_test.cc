// sreport's `job SizesByAccount` arithmetic against a table computed by hand: which runs count
// (Slurm 22.05.8 src/api/job_report_functions.c _process_grouped_report, with slurmdbd's job
// query for a window), the buckets, the account each run is charged to, and the TRES-seconds.
#include "kubeslurm/accounting/job_sizes.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::accounting {
namespace {

constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kStart = 1'763'596'800;  // 2025-11-20T00:00:00Z
constexpr std::int64_t kEnd = kStart + 24 * kHour;
constexpr std::int64_t kNow = kEnd + 5 * kHour;

JobRecord run(std::int64_t id, const std::string& user, const std::string& account,
              const std::string& allocTres, std::int64_t start, std::optional<std::int64_t> end) {
  JobRecord r;
  r.jobId = id;
  r.user = user;
  r.account = account;
  r.partition = "gpu";
  r.submitTime = start - 60;
  r.eligibleTime = start - 60;
  r.startTime = start;
  r.endTime = end;
  r.allocTres = allocTres;
  r.state = end ? "COMPLETED" : "RUNNING";
  return r;
}

// team-a and team-b are research's; ops is root's.
const std::vector<AccountEdge> kAccounts = {
    {"research", ""}, {"team-a", "research"}, {"team-b", "research"}, {"ops", ""}};

std::vector<JobRecord> records() {
  std::vector<JobRecord> r;
  // 64 CPUs, 8 GPUs for 2 h.
  r.push_back(run(1, "alice", "team-a", "cpu=64,mem=500G,node=1,gres/gpu=8", kStart + kHour,
                  kStart + 3 * kHour));
  // Its requeued attempt: every attempt is a run of its own (JOBCOND_FLAG_DUP).
  JobRecord again = run(1, "alice", "team-a", "cpu=64,node=1,gres/gpu:h100=8", kStart + 4 * kHour,
                        kStart + 5 * kHour);
  again.attempt = 1;
  r.push_back(again);
  // 8 CPUs, 1 GPU, from 1 h before the window to 1 h into it: its whole 2 h count.
  r.push_back(run(2, "Bob", "team-b", "cpu=8,node=1,gres/gpu=1", kStart - kHour, kStart + kHour));
  // 600 CPUs still running since 2 h before the window's end: 7 h up to now, window or not.
  r.push_back(run(3, "carol", "ops", "cpu=600,node=10", kEnd - 2 * kHour, std::nullopt));
  // Runs the window's query leaves out: ended before it; eligible only after it.
  r.push_back(run(4, "alice", "team-a", "cpu=1", kStart - 3 * kHour, kStart - kHour));
  JobRecord late = run(5, "alice", "team-a", "cpu=1", kEnd + kHour, kEnd + 2 * kHour);
  late.eligibleTime = kEnd;
  r.push_back(late);
  // Runs the report leaves out: never ran; an array's own record; no CPUs in its allocation.
  JobRecord waiting = run(6, "alice", "team-a", "", kStart, std::nullopt);
  waiting.startTime.reset();
  r.push_back(waiting);
  JobRecord array = run(7, "alice", "team-a", "cpu=4", kStart, kStart + kHour);
  array.arrayTasks = "0-3";
  r.push_back(array);
  r.push_back(run(8, "alice", "team-a", "node=1", kStart, kStart + kHour));
  return r;
}

JobSizesQuery query() {
  JobSizesQuery q;
  q.window = {kStart, kEnd};
  return q;
}

std::vector<std::string> names(const JobSizesReport& report) {
  std::vector<std::string> out;
  for (const AccountJobSizes& a : report.accounts) out.push_back(a.account);
  return out;
}

// Root's association holds every run: without FlatView, AcctAsParent or Accounts= the report
// is one line, root's. Buckets [0,49] [50,249] [250,499] [500,999] [1000,inf); CPU-seconds.
TEST(JobSizes, RootHoldsEveryRunByDefault) {
  const JobSizesReport report = jobSizesByAccount(records(), kAccounts, query(), kNow);
  ASSERT_EQ(report.buckets.size(), 5U);
  EXPECT_EQ(report.buckets[0].min, 0U);
  EXPECT_EQ(report.buckets[0].max, 49U);
  EXPECT_EQ(report.buckets[4].min, 1000U);
  EXPECT_TRUE(report.buckets[4].orMore);
  ASSERT_EQ(names(report), std::vector<std::string>{"root"});
  const AccountJobSizes& root = report.accounts[0];
  EXPECT_EQ(root.runs, (std::vector<std::uint64_t>{1, 2, 0, 1, 0}));
  EXPECT_EQ(root.tresSeconds,
            (std::vector<std::uint64_t>{8 * 2 * kHour, 64 * 3 * kHour, 0, 600 * 7 * kHour, 0}));
  EXPECT_EQ(root.totalRuns, 4U);
  EXPECT_EQ(report.clusterTresSeconds, root.totalTresSeconds);
}

// AcctAsParent: root's sub-accounts (or the named accounts'); a run goes to the one above it.
TEST(JobSizes, AccountsAsParentsListTheirSubAccounts) {
  JobSizesQuery q = query();
  q.accountsAsParents = true;
  JobSizesReport report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), (std::vector<std::string>{"ops", "research"}));
  EXPECT_EQ(report.accounts[1].totalRuns, 3U);

  q.accounts = {"research"};
  report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_EQ(report.clusterRuns, 3U);  // carol's run is under neither
}

// Accounts= names the lines; a run under two of them goes to the outer one (slurmdbd's lft
// order); a run under none is left out.
TEST(JobSizes, NamedAccountsTakeTheirSubtrees) {
  JobSizesQuery q = query();
  q.accounts = {"team-a"};
  JobSizesReport report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), std::vector<std::string>{"team-a"});
  EXPECT_EQ(report.clusterRuns, 2U);

  q.accounts = {"team-a", "research", "nosuch"};
  report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), std::vector<std::string>{"research"});
  EXPECT_EQ(report.clusterRuns, 3U);

  // An account no Account object names hangs under root, as in the cluster reports.
  q.accounts = {"ops"};
  report = jobSizesByAccount(records(), {}, q, kNow);
  EXPECT_EQ(names(report), std::vector<std::string>{"ops"});
}

// FlatView: each run's own account; Accounts= then selects runs by account.
TEST(JobSizes, FlatViewIsEachRunsAccount) {
  JobSizesQuery q = query();
  q.flatView = true;
  q.accountsAsParents = true;  // ignored
  JobSizesReport report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), (std::vector<std::string>{"ops", "team-a", "team-b"}));
  q.accounts = {"team-b"};
  report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(names(report), std::vector<std::string>{"team-b"});
}

// The size is the CPUs whatever TRES is reported ("FIXME: This only works for CPUS now"); the
// usage is that TRES's count times the whole run; typed GPUs count as gres/gpu.
TEST(JobSizes, GpuSecondsInBucketsByCpus) {
  JobSizesQuery q = query();
  q.tres = "gres/gpu";
  q.grouping = {8, 64};
  const JobSizesReport report = jobSizesByAccount(records(), kAccounts, q, kNow);
  ASSERT_EQ(report.buckets.size(), 3U);
  const AccountJobSizes& root = report.accounts.at(0);
  EXPECT_EQ(root.runs, (std::vector<std::uint64_t>{0, 1, 3}));
  EXPECT_EQ(root.tresSeconds, (std::vector<std::uint64_t>{0, 1 * 2 * kHour, 8 * 3 * kHour}));
}

// Grouping=individual: a bucket per size a run has. Bounds out of order overlap, and a run in
// two buckets counts twice, totals too, as Slurm's loop does.
TEST(JobSizes, IndividualAndUnsortedGroupings) {
  JobSizesQuery q = query();
  q.individual = true;
  JobSizesReport report = jobSizesByAccount(records(), kAccounts, q, kNow);
  ASSERT_EQ(report.buckets.size(), 3U);
  EXPECT_EQ(report.buckets[0].min, 8U);
  EXPECT_EQ(report.buckets[1].max, 64U);
  EXPECT_EQ(report.buckets[2].min, 600U);

  q.individual = false;
  q.grouping = {250, 50};  // [0,249] [250,49] [50,inf)
  report = jobSizesByAccount(records(), kAccounts, q, kNow);
  EXPECT_EQ(report.accounts.at(0).runs, (std::vector<std::uint64_t>{3, 0, 3}));
  EXPECT_EQ(report.clusterRuns, 6U);
}

// Users= (case-blind), Partitions= and Jobs= narrow the runs.
TEST(JobSizes, UsersPartitionsAndJobs) {
  JobSizesQuery q = query();
  q.users = {"bob"};
  EXPECT_EQ(jobSizesByAccount(records(), kAccounts, q, kNow).clusterRuns, 1U);
  q = query();
  q.partitions = {"cpu"};
  EXPECT_EQ(jobSizesByAccount(records(), kAccounts, q, kNow).clusterRuns, 0U);
  EXPECT_TRUE(jobSizesByAccount(records(), kAccounts, q, kNow).accounts.empty());
  q = query();
  q.jobIds = {1, 3};
  EXPECT_EQ(jobSizesByAccount(records(), kAccounts, q, kNow).clusterRuns, 3U);
}

}  // namespace
}  // namespace kubeslurm::accounting

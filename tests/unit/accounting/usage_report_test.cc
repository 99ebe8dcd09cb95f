// sreport's window and usage arithmetic (kubeslurm/accounting/usage_report.h), each rule pinned to
// the Slurm 22.05.8 source it follows.
#include "kubeslurm/accounting/usage_report.h"

#include <gtest/gtest.h>

namespace kubeslurm::accounting {
namespace {

// 2026-11-21T04:30:00Z.
constexpr std::int64_t kNow = 1795235400;
constexpr std::int64_t kMidnight = 1795219200;  // 2026-11-21T00:00:00Z
constexpr std::int64_t kHour = 3600;
constexpr std::int64_t kMinute = 60;

// slurmdb_report_set_start_end_time: no start and no end is yesterday's midnight to today's.
TEST(ReportWindow, DefaultsToYesterday) {
  const ReportWindow w = reportWindow(std::nullopt, std::nullopt, kNow, 0);
  EXPECT_EQ(w.start, kMidnight - 86400);
  EXPECT_EQ(w.end, kMidnight);
  // Midnight is local: two hours east of UTC, today began at 22:00Z yesterday.
  const ReportWindow east = reportWindow(std::nullopt, std::nullopt, kNow, 2 * kHour);
  EXPECT_EQ(east.end, kMidnight - 2 * kHour);
  EXPECT_EQ(east.start, kMidnight - 2 * kHour - 86400);
}

// Seconds from 30 add a minute, then minutes from 30 add an hour; both go.
TEST(ReportWindow, RoundsEachBoundToTheNearestHour) {
  const std::int64_t ten = kMidnight - 14 * kHour;  // 10:00 the day before
  EXPECT_EQ(reportWindow(ten + 29 * kMinute + 29, kNow, kNow, 0).start, ten);
  EXPECT_EQ(reportWindow(ten + 29 * kMinute + 30, kNow, kNow, 0).start, ten + kHour);
  EXPECT_EQ(reportWindow(ten + 30 * kMinute, kNow, kNow, 0).start, ten + kHour);
  EXPECT_EQ(reportWindow(ten + 59 * kMinute + 59, kNow, kNow, 0).start, ten + kHour);
  EXPECT_EQ(reportWindow(ten, ten + 5 * kHour + 31 * kMinute, kNow, 0).end, ten + 6 * kHour);
  // Rounded in local time: half an hour east, 10:10Z is 10:40 there, which rounds to 11:00
  // local, 10:30Z.
  EXPECT_EQ(reportWindow(ten + 10 * kMinute, kNow, kNow, 1800).start, ten + 1800);
}

// sanity_check_endtime: an end in the future is now (04:30, which rounds to 05:00); a window
// shorter than an hour is an hour.
TEST(ReportWindow, EndsNoLaterThanNowAndLastsAnHour) {
  EXPECT_EQ(reportWindow(kMidnight, kNow + 86400, kNow, 0).end, kMidnight + 5 * kHour);
  const ReportWindow tiny = reportWindow(kMidnight, kMidnight + 60, kNow, 0);
  EXPECT_EQ(tiny.start, kMidnight);
  EXPECT_EQ(tiny.end, kMidnight + kHour);
  // A start after the default end.
  const ReportWindow late = reportWindow(kMidnight + 2 * kHour, std::nullopt, kNow, 0);
  EXPECT_EQ(late.end, late.start + kHour);
}

TEST(TresCounts, MemoryInMegabytesAndGpusOfEveryType) {
  const auto counts = tresCounts("billing=64,cpu=64,gres/gpu=8,mem=500G,node=1");
  EXPECT_EQ(counts.at("cpu"), 64U);
  EXPECT_EQ(counts.at("mem"), 512000U);
  EXPECT_EQ(counts.at("gres/gpu"), 8U);
  EXPECT_EQ(counts.at("node"), 1U);
  EXPECT_EQ(tresCounts("mem=16000M").at("mem"), 16000U);
  EXPECT_EQ(tresCounts("mem=2T").at("mem"), 2097152U);
  EXPECT_EQ(tresCounts("mem=2048").at("mem"), 2048U);
  // Typed only: gres/gpu is their sum; listed, it stands.
  const auto typed = tresCounts("cpu=2,gres/gpu:a100=4,gres/gpu:h100=8");
  EXPECT_EQ(typed.at("gres/gpu"), 12U);
  EXPECT_EQ(typed.at("gres/gpu:h100"), 8U);
  EXPECT_EQ(tresCounts("gres/gpu=8,gres/gpu:h100=8").at("gres/gpu"), 8U);
  // What does not parse is left out, not guessed.
  const auto bad = tresCounts("cpu=x,=3,mem=5Q,node,gres/gpu=-1,billing=2");
  EXPECT_EQ(bad.size(), 1U);
  EXPECT_EQ(bad.at("billing"), 2U);
}

// A run; a start of 0 is none (it never started).
JobRecord run(const std::string& user, const std::string& account, std::int64_t start,
              std::optional<std::int64_t> end, const std::string& tres = "cpu=8,gres/gpu=2") {
  JobRecord r;
  r.user = user;
  r.account = account;
  if (start != 0) r.startTime = start;
  r.endTime = end;
  r.allocTres = tres;
  return r;
}

// The rollups charge AllocTRES times the seconds inside the window.
TEST(AssociationUsage, AllocationTimesOverlapWithTheWindow) {
  const ReportWindow window{kMidnight - 86400, kMidnight};
  const std::vector<JobRecord> records = {
      // Began before the window: only its part inside counts (2 h).
      run("alice", "team-a", window.start - kHour, window.start + 2 * kHour),
      // Ends after it: up to the window's end (1 h).
      run("alice", "team-a", window.end - kHour, window.end + 5 * kHour),
      // Still running at now: up to the window's end (3 h).
      run("bob", "team-b", window.end - 3 * kHour, std::nullopt, "cpu=1"),
      // Another account of alice's: an association of its own.
      run("alice", "team-b", window.start, window.start + 60, "cpu=1"),
      // Outside the window, never started, no allocation: nothing.
      run("carol", "team-a", window.end, window.end + kHour),
      run("dave", "team-a", window.start - 2 * kHour, window.start),
      run("erin", "team-a", 0, std::nullopt, "cpu=1"),
      run("frank", "team-a", window.start, window.end, ""),
      // An array's own record: its tasks' records count, not it.
      [&] {
        JobRecord array = run("gina", "team-a", window.start, window.end);
        array.arrayTasks = "0-7";
        return array;
      }(),
  };
  const std::vector<AssociationUsage> usage = associationUsage(records, window, kNow);
  ASSERT_EQ(usage.size(), 3U);
  EXPECT_EQ(
      usage[0],
      (AssociationUsage{"alice", "team-a", {{"cpu", kHour * 8 * 3}, {"gres/gpu", kHour * 2 * 3}}}));
  EXPECT_EQ(usage[1], (AssociationUsage{"alice", "team-b", {{"cpu", 60}}}));
  EXPECT_EQ(usage[2], (AssociationUsage{"bob", "team-b", {{"cpu", 3 * kHour}}}));
  // A running job's usage ends at now when the window reaches past it.
  const ReportWindow today{kMidnight, kMidnight + 86400};
  const auto running =
      associationUsage({run("bob", "b", kMidnight, std::nullopt, "cpu=1")}, today, kNow);
  ASSERT_EQ(running.size(), 1U);
  EXPECT_EQ(running[0].allocSeconds.at("cpu"), static_cast<std::uint64_t>(kNow - kMidnight));
}

// slurmdb_get_hierarchical_sorted_assoc_list: root, then under each account its users before its
// sub-accounts, each by name; an account's usage is its subtree's. An account with nothing
// used below it has no line.
TEST(AccountUsageTree, HierarchicalOrderAndSubtreeSums) {
  const std::vector<AccountEdge> accounts = {
      {"zeta", ""}, {"ml", ""}, {"ml-b", "ml"}, {"ml-a", "ml"}, {"idle", "ml"}};
  const std::vector<AssociationUsage> usage = {
      {"bob", "ml-a", {{"cpu", 10}}}, {"alice", "ml-a", {{"cpu", 5}, {"gres/gpu", 1}}},
      {"carol", "ml", {{"cpu", 1}}},  {"dave", "zeta", {{"cpu", 100}}},
      {"erin", "ml-b", {{"cpu", 2}}},
  };
  const std::vector<AccountUsageRow> rows = accountUsageTree(usage, accounts, {});
  std::vector<std::string> order;
  order.reserve(rows.size());
  for (const AccountUsageRow& r : rows) order.push_back(r.account + "/" + r.user);
  EXPECT_EQ(order,
            (std::vector<std::string>{"root/", "ml/", "ml/carol", "ml-a/", "ml-a/alice", "ml-a/bob",
                                      "ml-b/", "ml-b/erin", "zeta/", "zeta/dave"}));
  EXPECT_EQ(rows[0].allocSeconds,
            (std::map<std::string, std::uint64_t>{{"cpu", 118}, {"gres/gpu", 1}}));
  EXPECT_EQ(rows[1].allocSeconds.at("cpu"), 18U);
  EXPECT_EQ(rows[1].parent, "root");
  EXPECT_EQ(rows[3].allocSeconds.at("cpu"), 15U);
  EXPECT_EQ(rows[3].parent, "ml");
  EXPECT_EQ(rows[4].allocSeconds.at("cpu"), 5U);

  // Accounts= (with sub-accounts): ml's subtree only.
  std::vector<std::string> subtree;
  for (const AccountUsageRow& r : accountUsageTree(usage, accounts, {"ml-a", "zeta"})) {
    subtree.push_back(r.account + "/" + r.user);
  }
  EXPECT_EQ(subtree,
            (std::vector<std::string>{"ml-a/", "ml-a/alice", "ml-a/bob", "zeta/", "zeta/dave"}));
}

// The Account objects are written by people: a parent that does not exist, or parents that go
// round in a cycle, put the account under root rather than lose its usage or loop.
TEST(AccountUsageTree, UnknownParentsAndCyclesHangUnderRoot) {
  const std::vector<AccountEdge> accounts = {
      {"a", "b"}, {"b", "c"}, {"c", "a"}, {"lost", "nowhere"}, {"root", "a"}};
  const std::vector<AssociationUsage> usage = {
      {"u", "a", {{"cpu", 1}}}, {"v", "lost", {{"cpu", 2}}}, {"w", "unlisted", {{"cpu", 4}}}};
  const std::vector<AccountUsageRow> rows = accountUsageTree(usage, accounts, {});
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].account, "root");
  EXPECT_EQ(rows[0].allocSeconds.at("cpu"), 7U);
  std::uint64_t users = 0;
  for (const AccountUsageRow& r : rows) {
    if (!r.user.empty()) users += r.allocSeconds.at("cpu");
  }
  EXPECT_EQ(users, 7U);  // every association once
}

}  // namespace
}  // namespace kubeslurm::accounting

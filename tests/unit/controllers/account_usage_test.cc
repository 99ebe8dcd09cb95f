// Fair-share usage across cycles and leaders (account_usage.h): the ledger starts a term from the
// persisted Account statuses and then carries its own figures, so a status write lost to a
// conflict loses nothing; the statuses it persists carry sshare's columns and the jobs each
// account runs.
#include "controllers/account_usage.h"

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

constexpr core::Time kT0 = 1795000000;
constexpr core::Duration kHalfLife = 100;

core::Account association(std::string name, double rawUsage, std::string user = "") {
  core::Account a;
  a.name = std::move(name);
  a.parent = a.name == "root" ? "" : "root";
  a.rawUsage = rawUsage;
  a.user = std::move(user);
  return a;
}

// As buildSnapshot makes it from the Accounts' persisted status: `rawUsage` as of `asOf`.
core::Snapshot persisted(double rawUsage, core::Time asOf) {
  core::Snapshot s;
  s.config.priority.decayHalfLife = kHalfLife;
  s.accounts = {association("root", 0), association("nlp", rawUsage)};
  s.usageTime = asOf;
  return s;
}

TEST(UsageLedgerTest, ATermStartsFromThePersistedUsageAndDecaysIt) {
  UsageLedger ledger;
  core::Snapshot s = persisted(800, kT0);
  ledger.advance(s, kT0 + kHalfLife);
  EXPECT_DOUBLE_EQ(s.accounts[1].rawUsage, 400);
  EXPECT_EQ(s.usageTime, kT0 + kHalfLife);
}

TEST(UsageLedgerTest, LaterCyclesCarryTheLedgersFiguresNotTheStatusesThatMayBeStale) {
  UsageLedger ledger;
  core::Snapshot first = persisted(800, kT0);
  ledger.advance(first, kT0 + kHalfLife);
  // The status write failed: the next cycle's snapshot still says 800 as of kT0.
  core::Snapshot second = persisted(800, kT0);
  ledger.advance(second, kT0 + 2 * kHalfLife);
  EXPECT_DOUBLE_EQ(second.accounts[1].rawUsage, 200) << "400 kept, decayed one half-life";
  EXPECT_EQ(second.usageTime, kT0 + 2 * kHalfLife);
}

TEST(UsageLedgerTest, ANewTermReadsThePersistedUsageAgain) {
  UsageLedger ledger;
  core::Snapshot first = persisted(800, kT0);
  ledger.advance(first, kT0 + kHalfLife);
  ledger.reset();
  // Another leader persisted 1000 meanwhile.
  core::Snapshot next = persisted(1000, kT0 + kHalfLife);
  ledger.advance(next, kT0 + 2 * kHalfLife);
  EXPECT_DOUBLE_EQ(next.accounts[1].rawUsage, 500);
}

// The GPU-seconds of a cycle run from the cycle before: none in a term's first cycle (the leader
// before counted up to its last), the running job's since then in the next.
TEST(UsageLedgerTest, GpuSecondsCountFromTheCycleBeforeAndNotInATermsFirst) {
  UsageLedger ledger;
  core::Snapshot s = persisted(0, kT0 - 3600);
  s.nodes.resize(1);
  s.nodes[0].allocatable.gpus = 8;
  core::Job running;
  running.id = 1;
  running.account = "nlp";
  running.user = "alice";
  running.gpusPerNode = 4;
  running.phase = core::JobPhase::kRunning;
  running.startTime = kT0 - 3600;
  running.allocatedNodes = {0};
  s.jobs.push_back(running);
  core::Snapshot first = s;
  ledger.advance(first, kT0);
  EXPECT_TRUE(ledger.lastGpuSeconds().empty());
  core::Snapshot second = s;
  ledger.advance(second, kT0 + 15);
  ASSERT_EQ(ledger.lastGpuSeconds().size(), 1U);
  EXPECT_DOUBLE_EQ(ledger.lastGpuSeconds().at({"nlp", "alice"}), 4.0 * 15);
  ledger.reset();
  EXPECT_TRUE(ledger.lastGpuSeconds().empty());
}

core::Job job(core::JobId id, std::string account, core::JobPhase phase) {
  core::Job j;
  j.id = id;
  j.account = std::move(account);
  j.phase = phase;
  return j;
}

api::Account account(std::string name, double rawUsage) {
  api::Account a;
  a.metadata.name = std::move(name);
  a.status.rawUsage = rawUsage;
  return a;
}

TEST(AccountStatusesTest, EachAccountGetsItsUsageFairShareAndJobs) {
  SnapshotIndex index;
  index.snapshot.accounts = {association("root", 0), association("nlp", 42),
                             association("nlp", 7, "alice")};
  index.snapshot.jobs = {
      job(1, "nlp", core::JobPhase::kRunning), job(2, "nlp", core::JobPhase::kPending),
      job(3, "nlp", core::JobPhase::kRunning), job(4, "vision", core::JobPhase::kPending)};
  index.jobKeys = {{1, "ns/a"}, {2, "ns/b"}, {3, "ns/c"}, {4, "ns/d"}};
  core::FairShareRow nlpRow;
  nlpRow.account = "nlp";
  nlpRow.normShares = 0.5;
  nlpRow.effectiveUsage = 0.25;
  nlpRow.fairShare = 0.75;
  core::FairShareRow aliceRow = nlpRow;
  aliceRow.user = "alice";
  aliceRow.fairShare = 0.1;
  // Job 3 ended this cycle (moved out of RUNNING): it runs no more, and is not pending either.
  const std::vector<api::Account> statuses = accountStatuses(
      {account("nlp", 1), account("vision", 9)}, index, {aliceRow, nlpRow}, {"ns/c"}, kT0);
  ASSERT_EQ(statuses.size(), 2U);
  const api::AccountStatus& nlp = statuses[0].status;
  EXPECT_EQ(statuses[0].metadata.name, "nlp");
  EXPECT_EQ(nlp.rawUsage, 42) << "the account association's, not a user's";
  EXPECT_EQ(nlp.normShares, 0.5);
  EXPECT_EQ(nlp.effectiveUsage, 0.25);
  EXPECT_EQ(nlp.fairShare, 0.75) << "the account's row, not alice's";
  EXPECT_EQ(nlp.runningJobs, 1);
  EXPECT_EQ(nlp.pendingJobs, 1);
  EXPECT_EQ(nlp.lastDecay, kT0);
  const api::AccountStatus& vision = statuses[1].status;
  EXPECT_EQ(vision.rawUsage, 9) << "no association in the snapshot: kept";
  EXPECT_FALSE(vision.fairShare.has_value());
  EXPECT_EQ(vision.runningJobs, 0);
  EXPECT_EQ(vision.pendingJobs, 1);
  EXPECT_EQ(vision.lastDecay, kT0);
}

}  // namespace
}  // namespace kubeslurm::controllers

#include "controllers/accounting_writer.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "kubeslurm/accounting/sqlite_store.h"

namespace kubeslurm::controllers {
namespace {

using std::chrono::milliseconds;

api::SlurmJobObject job(std::int64_t id, const std::string& state, const std::string& version) {
  api::SlurmJobObject j;
  j.name = "job-" + std::to_string(id);
  j.namespaceName = "team-a";
  j.user = "alice";
  j.request.jobName = "train";
  j.request.account = "nlp";
  j.request.partition = "gpu";
  j.status.emplace();
  j.status->jobId = id;
  j.status->state = state;
  j.status->submitTime = 1000;
  if (state != "PENDING") {
    j.status->startTime = 1100;
    j.status->nodeList = "gpu-1";
  }
  if (state == "COMPLETED") j.status->endTime = 1200;
  auto& meta = j.raw.edit()["metadata"];
  meta["uid"] = "uid-" + std::to_string(id);
  meta["resourceVersion"] = version;
  return j;
}

// A store on disk of the test's own.
class AccountingWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "accounting-writer-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = accounting::SqliteStore::open((dir_ / "accounting.db").string());
    ASSERT_TRUE(store.isOk()) << store.status().toString();
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Writes to the store, unless `failures` batches are still to fail first.
  RecordSink sink() {
    return [this](std::span<const accounting::JobRecord> records) -> StatusOr<std::size_t> {
      ++batches_;
      if (failures_ > 0) {
        --failures_;
        return Status(StatusCode::kUnavailable, "database is down");
      }
      return store_->write(records);
    };
  }

  static AccountingWriterOptions options() {
    AccountingWriterOptions o;
    o.cluster = "kubeslurm";
    o.firstRetry = milliseconds(10);
    o.maxRetry = milliseconds(40);
    return o;
  }

  std::vector<accounting::JobRecord> stored() {
    accounting::JobFilter all;
    all.cluster = "kubeslurm";
    return *store_->query(all);
  }

  // Until the writer's queue is empty (a few seconds at most).
  static bool drained(const AccountingWriter& writer) {
    for (int i = 0; i < 500; ++i) {
      if (writer.stats().queued == 0) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  std::filesystem::path dir_;
  std::unique_ptr<accounting::SqliteStore> store_;
  std::atomic<int> failures_{0};
  std::atomic<int> batches_{0};
};

// Issue 21: each job's record reaches the store off the loop; a finished job's retention may
// proceed only once its ended record is committed; an object that did not change is not
// written again.
TEST_F(AccountingWriterTest, RecordsReachTheStoreAndAnEndedOneReleasesRetention) {
  AccountingWriter writer(sink(), options());
  const SharedList<api::SlurmJobObject> jobs = {job(1, "COMPLETED", "10"), job(2, "RUNNING", "11"),
                                                job(3, "PENDING", "12")};
  writer.offer(jobs, {});
  ASSERT_TRUE(drained(writer));
  const std::vector<accounting::JobRecord> records = stored();
  ASSERT_EQ(records.size(), 3U);
  EXPECT_EQ(records[0].state, "COMPLETED");
  EXPECT_EQ(records[0].partition, "gpu");
  EXPECT_EQ(records[1].state, "RUNNING");
  EXPECT_TRUE(writer.endedRecordWritten(jobs[0]));
  EXPECT_FALSE(writer.endedRecordWritten(jobs[1]));
  EXPECT_FALSE(writer.endedRecordWritten(jobs[2]));

  const int before = batches_;
  writer.offer(jobs, {});  // nothing changed
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(batches_, before);

  // Job 2 ends: its new object is written, and its retention released.
  const SharedList<api::SlurmJobObject> later = {
      job(1, "COMPLETED", "10"), job(2, "COMPLETED", "20"), job(3, "PENDING", "12")};
  writer.offer(later, {});
  ASSERT_TRUE(drained(writer));
  EXPECT_EQ(batches_, before + 1);
  EXPECT_EQ(stored()[1].state, "COMPLETED");
  EXPECT_TRUE(writer.endedRecordWritten(later[1]));
  EXPECT_EQ(writer.stats().recordsWritten, 4U);
}

// A database that fails keeps the records queued and the finished jobs unreleased; they are
// written once it answers again, nothing lost and nothing twice.
TEST_F(AccountingWriterTest, ADatabaseOutageLosesNothing) {
  failures_ = 3;
  AccountingWriter writer(sink(), options());
  const SharedList<api::SlurmJobObject> jobs = {job(1, "COMPLETED", "10")};
  writer.offer(jobs, {});
  ASSERT_TRUE(drained(writer));
  EXPECT_EQ(writer.stats().batchesFailed, 3U);
  EXPECT_EQ(stored().size(), 1U);
  EXPECT_TRUE(writer.endedRecordWritten(jobs[0]));
}

// A writer that stops writes what it holds; a new one (the next leader) offers every job it
// lists again, which the store's upsert keeps as one record each.
TEST_F(AccountingWriterTest, ANewLeaderWritesEveryJobAgainAsOneRecord) {
  const SharedList<api::SlurmJobObject> jobs = {job(1, "COMPLETED", "10"), job(2, "RUNNING", "11")};
  {
    AccountingWriter first(sink(), options());
    first.offer(jobs, {});
  }
  EXPECT_EQ(stored().size(), 2U);
  AccountingWriter second(sink(), options());
  EXPECT_FALSE(second.endedRecordWritten(jobs[0]));  // not until this leader has written it
  second.offer(jobs, {});
  ASSERT_TRUE(drained(second));
  EXPECT_EQ(stored().size(), 2U);
  EXPECT_TRUE(second.endedRecordWritten(jobs[0]));
}

}  // namespace
}  // namespace kubeslurm::controllers

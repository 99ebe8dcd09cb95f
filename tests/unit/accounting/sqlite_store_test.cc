#include "kubeslurm/accounting/sqlite_store.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

namespace kubeslurm::accounting {
namespace {

// A database file of the test's own, on disk, removed with its WAL at the end.
class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "accounting-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = (dir_ / "accounting.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<SqliteStore> open() {
    auto store = SqliteStore::open(path_);
    EXPECT_TRUE(store.isOk()) << store.status().toString();
    return store.isOk() ? std::move(store).value() : nullptr;
  }

  std::filesystem::path dir_;
  std::string path_;
};

// The records of cluster "kubeslurm", narrowed by `narrow`.
JobFilter filter(const std::function<void(JobFilter&)>& narrow = nullptr) {
  JobFilter f;
  f.cluster = "kubeslurm";
  if (narrow) narrow(f);
  return f;
}

JobRecord run(std::int64_t id, const std::string& user, const std::string& state,
              std::int64_t start, std::optional<std::int64_t> end) {
  JobRecord r;
  r.cluster = "kubeslurm";
  r.jobId = id;
  r.name = "train";
  r.user = user;
  r.namespaceName = "team-a";
  r.account = user == "alice" ? "nlp" : "vision";
  r.partition = "gpu";
  r.qos = "normal";
  r.submitTime = start - 60;
  r.eligibleTime = start - 60;
  r.startTime = start;
  r.endTime = end;
  r.state = state;
  r.exitCode = "0:0";
  r.reason = "None";
  r.reqTres = "cpu=4,mem=64G,node=4,billing=4,gres/gpu=32";
  r.allocTres = r.reqTres;
  r.gpuType = "h100";
  r.nodes = 4;
  r.cpus = 4;
  r.gpus = 32;
  r.nodeList = "gpu-[001-004]";
  r.reqNodes = 4;
  r.priority = 4242;
  r.timeLimitMinutes = 120;
  r.workDir = "/home/" + user;
  return r;
}

TEST_F(SqliteStoreTest, ARecordComesBackAsWrittenWithItsSteps) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  JobRecord r = run(7, "alice", "COMPLETED", 1000, 4600);
  r.arrayJobId = 6;
  r.arrayTaskId = 1;
  r.steps = {StepRecord{"0", "hostname", 1010, 1011, "COMPLETED", "0:0", 4, 8, 4, "gpu-[001-004]"},
             StepRecord{"batch", "batch", 1000, 4600, "COMPLETED", "0:0", 1, 1, 1, "gpu-001"}};
  ASSERT_EQ(*store->write({&r, 1}), 1U);
  const auto got = store->query(filter());
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front(), r);
  // Another cluster's records are another's.
  EXPECT_TRUE(store->query(filter([](JobFilter& f) { f.cluster = "other"; }))->empty());
}

// Issue 21: a run written twice (a restart, a failover, a batch retried after its commit's
// answer was lost) is one record; a late write of an earlier phase never undoes its end.
TEST_F(SqliteStoreTest, WritesAreIdempotentAndNeverGoBackInARunsLife) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  const JobRecord running = run(7, "alice", "RUNNING", 1000, std::nullopt);
  JobRecord ended = run(7, "alice", "FAILED", 1000, 2000);
  ended.exitCode = "3:0";
  ended.steps = {StepRecord{"0", "python", 1001, 1999, "FAILED", "3:0", 4, 4, 4, "gpu-[001-004]"}};
  ASSERT_EQ(*store->write({&running, 1}), 1U);
  ASSERT_EQ(*store->write({&ended, 1}), 1U);
  ASSERT_EQ(*store->write({&ended, 1}), 1U);    // the same again: still one record
  EXPECT_EQ(*store->write({&running, 1}), 0U);  // stale: left out
  auto got = store->query(filter());
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front(), ended);

  // A requeued job's next run is a record of its own.
  JobRecord again = run(7, "alice", "RUNNING", 2100, std::nullopt);
  again.attempt = 1;
  ASSERT_EQ(*store->write({&again, 1}), 1U);
  got = store->query(filter([](JobFilter& f) { f.jobIds = {7}; }));
  ASSERT_EQ(got->size(), 2U);
  EXPECT_EQ((*got)[0].attempt, 0);
  EXPECT_EQ((*got)[1].attempt, 1);
}

// sacct -S/-E: the runs whose time overlaps the window, a running one lasting on and a pending
// one starting at its submission; then -u, -A, -s, -j (an array's id names its tasks).
TEST_F(SqliteStoreTest, QueriesSelectByWindowUserAccountStateAndId) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  std::vector<JobRecord> records = {
      run(1, "alice", "COMPLETED", 1000, 2000),        // before the window
      run(2, "alice", "COMPLETED", 4000, 6000),        // across its start
      run(3, "bob", "FAILED", 6000, 7000),             // inside
      run(4, "bob", "RUNNING", 8000, std::nullopt),    // running since before its end
      run(5, "alice", "PENDING", 9500, std::nullopt),  // submitted after it
  };
  records[4].startTime.reset();
  records[3].arrayJobId = 3;
  records[3].arrayTaskId = 0;
  ASSERT_EQ(*store->write(records), 5U);
  auto ids = [](const StatusOr<std::vector<JobRecord>>& got) {
    std::vector<std::int64_t> out;
    for (const JobRecord& r : *got) out.push_back(r.jobId);
    return out;
  };
  const JobFilter window = filter([](JobFilter& f) {
    f.from = 5000;
    f.to = 9000;
  });
  EXPECT_EQ(ids(store->query(window)), (std::vector<std::int64_t>{2, 3, 4}));
  JobFilter narrowed = window;
  narrowed.users = {"bob"};
  EXPECT_EQ(ids(store->query(narrowed)), (std::vector<std::int64_t>{3, 4}));
  narrowed = window;
  narrowed.accounts = {"nlp"};
  EXPECT_EQ(ids(store->query(narrowed)), (std::vector<std::int64_t>{2}));
  narrowed = window;
  narrowed.states = {"FAILED", "RUNNING"};
  EXPECT_EQ(ids(store->query(narrowed)), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ids(store->query(filter([](JobFilter& f) { f.jobIds = {3}; }))),
            (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ids(store->query(filter([](JobFilter& f) { f.limit = 2; }))),
            (std::vector<std::int64_t>{1, 2}));
}

// A batch is one transaction: one record the database refuses leaves none of the batch.
TEST_F(SqliteStoreTest, ABatchIsWrittenWhole) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  const JobRecord first = run(1, "alice", "COMPLETED", 1000, 2000);
  ASSERT_EQ(*store->write({&first, 1}), 1U);
  {
    // A trigger refuses job 3, as a constraint of a later schema might.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.job_id = 3 "
                           "BEGIN SELECT RAISE(ABORT, 'refused'); END",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::vector<JobRecord> batch = {run(2, "alice", "COMPLETED", 1000, 2000),
                                  run(3, "bob", "COMPLETED", 1000, 2000)};
  const auto written = store->write(batch);
  EXPECT_FALSE(written.isOk());
  EXPECT_NE(written.status().message().find("refused"), std::string::npos)
      << written.status().toString();
  auto got = store->query(filter());
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front().jobId, 1);
}

// Records outlive the operator: a store opened again (a restart, the next leader on the same
// volume) reads what the last one committed, and migrates nothing twice.
TEST_F(SqliteStoreTest, RecordsSurviveReopeningAndTheSchemaIsVersioned) {
  {
    auto store = open();
    ASSERT_NE(store, nullptr);
    JobRecord r = run(9, "alice", "COMPLETED", 1000, 2000);
    r.interactive = true;  // srun from a login host
    ASSERT_EQ(*store->write({&r, 1}), 1U);
    EXPECT_EQ(*store->schemaVersion(), SqliteStore::kSchemaVersion);
  }
  auto store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->schemaVersion(), SqliteStore::kSchemaVersion);
  ASSERT_EQ(store->query(filter())->size(), 1U);
  EXPECT_TRUE(store->query(filter())->front().interactive);
  store.reset();

  // A file of version 1 (before sacct's extra fields and interactive allocations) is migrated
  // when opened, its records kept, the new fields at their defaults: the time limit absent
  // (UNLIMITED), a batch job.
  sqlite3* v1 = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &v1), SQLITE_OK);
  for (const char* undo :
       {"ALTER TABLE jobs DROP COLUMN array_tasks", "ALTER TABLE jobs DROP COLUMN priority",
        "ALTER TABLE jobs DROP COLUMN time_limit_minutes", "ALTER TABLE jobs DROP COLUMN work_dir",
        "ALTER TABLE jobs DROP COLUMN req_nodes", "ALTER TABLE steps DROP COLUMN cpus",
        "ALTER TABLE jobs DROP COLUMN interactive",
        "DELETE FROM schema_migrations WHERE version >= 2"}) {
    ASSERT_EQ(sqlite3_exec(v1, undo, nullptr, nullptr, nullptr), SQLITE_OK) << undo;
  }
  sqlite3_close(v1);
  store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->schemaVersion(), SqliteStore::kSchemaVersion);
  const auto migrated = store->query(filter());
  ASSERT_EQ(migrated->size(), 1U);
  EXPECT_EQ(migrated->front().jobId, 9);
  EXPECT_EQ(migrated->front().timeLimitMinutes, std::nullopt);
  EXPECT_EQ(migrated->front().reqNodes, 0);
  EXPECT_FALSE(migrated->front().interactive);  // a batch job, as every job was before
  store.reset();

  // A file a newer operator migrated further is refused, not written in a shape it cannot read.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "INSERT INTO schema_migrations VALUES (99, 0)", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  const auto newer = SqliteStore::open(path_);
  ASSERT_FALSE(newer.isOk());
  EXPECT_NE(newer.status().message().find("schema version 99"), std::string::npos);
}

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsRefused) {
  {
    std::FILE* f = std::fopen(path_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a database, but long enough to have a header of its own.....\n", f);
    std::fclose(f);
  }
  EXPECT_FALSE(SqliteStore::open(path_).isOk());
  EXPECT_FALSE(SqliteStore::open((dir_ / "missing" / "x.db").string()).isOk());
}

TEST(RunPhase, EndedStatesAreFurtherOnThanRunningOnesThanWaitingOnes) {
  EXPECT_EQ(runPhase("PENDING"), 0);
  EXPECT_EQ(runPhase("REQUEUED"), 0);
  EXPECT_EQ(runPhase("RUNNING"), 1);
  EXPECT_EQ(runPhase("COMPLETING"), 1);
  for (const char* ended :
       {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY"}) {
    EXPECT_EQ(runPhase(ended), 2) << ended;
  }
  JobRecord stored;
  stored.state = "COMPLETED";
  JobRecord next;
  next.state = "RUNNING";
  EXPECT_FALSE(recordSupersedes(next, stored));
  next.state = "COMPLETED";
  EXPECT_TRUE(recordSupersedes(next, stored));
}

}  // namespace
}  // namespace kubeslurm::accounting

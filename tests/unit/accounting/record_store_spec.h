// What every job-record store must do (kubeslurm/accounting/record_store.h), written once and
// run against each backend: SQLite on disk (sqlite_store_test.cc, a unit test) and a real
// PostgreSQL server (tests/integration/accounting/postgres_store_test.cc). Include it in one
// source of a test binary and instantiate RecordStoreSpec with that backend's rig.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/accounting/record_store.h"

namespace kubeslurm::accounting {

// One test's database in one backend: empty when the rig is made, there until it goes.
class StoreRig {
 public:
  virtual ~StoreRig() = default;
  // A store on this test's database (again on the same one when called again).
  virtual StatusOr<std::unique_ptr<RecordStore>> open() = 0;
  // SQL straight on the database, past the store: a test's way to change what the store finds.
  virtual void execute(const std::string& sql) = 0;
  // Makes the database refuse any insert of job `jobId` (a trigger), as a constraint of a later
  // schema might.
  virtual void refuseJob(std::int64_t jobId) = 0;
};

using RigFactory = std::function<std::unique_ptr<StoreRig>()>;

class RecordStoreSpec : public ::testing::TestWithParam<RigFactory> {
 protected:
  void SetUp() override {
    rig_ = GetParam()();
    ASSERT_NE(rig_, nullptr);
  }
  std::unique_ptr<RecordStore> open() {
    auto store = rig_->open();
    EXPECT_TRUE(store.isOk()) << store.status().toString();
    return store.isOk() ? std::move(store).value() : nullptr;
  }

  std::unique_ptr<StoreRig> rig_;
};

namespace spec {

// The records of cluster "kubeslurm", narrowed by `narrow`.
inline JobFilter filter(const std::function<void(JobFilter&)>& narrow = nullptr) {
  JobFilter f;
  f.cluster = "kubeslurm";
  if (narrow) narrow(f);
  return f;
}

inline JobRecord run(std::int64_t id, const std::string& user, const std::string& state,
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

}  // namespace spec

TEST_P(RecordStoreSpec, ARecordComesBackAsWrittenWithItsSteps) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  JobRecord r = spec::run(7, "alice", "COMPLETED", 1000, 4600);
  r.arrayJobId = 6;
  r.arrayTaskId = 1;
  r.steps = {StepRecord{"0", "hostname", 1010, 1011, "COMPLETED", "0:0", 4, 8, 4, "gpu-[001-004]"},
             StepRecord{"batch", "batch", 1000, 4600, "COMPLETED", "0:0", 1, 1, 1, "gpu-001"}};
  ASSERT_EQ(*store->write({&r, 1}), 1U);
  const auto got = store->query(spec::filter());
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front(), r);
  // Another cluster's records are another's.
  EXPECT_TRUE(store->query(spec::filter([](JobFilter& f) { f.cluster = "other"; }))->empty());
}

// Issue 21: a run written twice (a restart, a failover, a batch retried after its commit's
// answer was lost) is one record; a late write of an earlier phase never undoes its end.
TEST_P(RecordStoreSpec, WritesAreIdempotentAndNeverGoBackInARunsLife) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  const JobRecord running = spec::run(7, "alice", "RUNNING", 1000, std::nullopt);
  JobRecord ended = spec::run(7, "alice", "FAILED", 1000, 2000);
  ended.exitCode = "3:0";
  ended.steps = {StepRecord{"0", "python", 1001, 1999, "FAILED", "3:0", 4, 4, 4, "gpu-[001-004]"}};
  ASSERT_EQ(*store->write({&running, 1}), 1U);
  ASSERT_EQ(*store->write({&ended, 1}), 1U);
  ASSERT_EQ(*store->write({&ended, 1}), 1U);    // the same again: still one record
  EXPECT_EQ(*store->write({&running, 1}), 0U);  // stale: left out
  auto got = store->query(spec::filter());
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front(), ended);

  // A requeued job's next run is a record of its own.
  JobRecord again = spec::run(7, "alice", "RUNNING", 2100, std::nullopt);
  again.attempt = 1;
  ASSERT_EQ(*store->write({&again, 1}), 1U);
  got = store->query(spec::filter([](JobFilter& f) { f.jobIds = {7}; }));
  ASSERT_EQ(got->size(), 2U);
  EXPECT_EQ((*got)[0].attempt, 0);
  EXPECT_EQ((*got)[1].attempt, 1);
}

// sacct -S/-E: the runs whose time overlaps the window, a running one lasting on and a pending
// one starting at its submission; then -u, -A, -s, -j (an array's id names its tasks).
TEST_P(RecordStoreSpec, QueriesSelectByWindowUserAccountStateAndId) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  std::vector<JobRecord> records = {
      spec::run(1, "alice", "COMPLETED", 1000, 2000),        // before the window
      spec::run(2, "alice", "COMPLETED", 4000, 6000),        // across its start
      spec::run(3, "bob", "FAILED", 6000, 7000),             // inside
      spec::run(4, "bob", "RUNNING", 8000, std::nullopt),    // running since before its end
      spec::run(5, "alice", "PENDING", 9500, std::nullopt),  // submitted after it
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
  const JobFilter window = spec::filter([](JobFilter& f) {
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
  narrowed = window;
  narrowed.namespaces = {"team-b"};
  EXPECT_TRUE(store->query(narrowed)->empty());
  EXPECT_EQ(ids(store->query(spec::filter([](JobFilter& f) { f.jobIds = {3}; }))),
            (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ids(store->query(spec::filter([](JobFilter& f) { f.limit = 2; }))),
            (std::vector<std::int64_t>{1, 2}));
  // A page after (2, 0): the next runs by job id and attempt.
  EXPECT_EQ(ids(store->query(spec::filter([](JobFilter& f) {
              f.after = std::pair<std::int64_t, std::int64_t>{2, 0};
              f.limit = 2;
            }))),
            (std::vector<std::int64_t>{3, 4}));
}

// A batch is one transaction: one record the database refuses leaves none of the batch.
TEST_P(RecordStoreSpec, ABatchIsWrittenWhole) {
  auto store = open();
  ASSERT_NE(store, nullptr);
  const JobRecord first = spec::run(1, "alice", "COMPLETED", 1000, 2000);
  ASSERT_EQ(*store->write({&first, 1}), 1U);
  rig_->refuseJob(3);
  std::vector<JobRecord> batch = {spec::run(2, "alice", "COMPLETED", 1000, 2000),
                                  spec::run(3, "bob", "COMPLETED", 1000, 2000)};
  const auto written = store->write(batch);
  EXPECT_FALSE(written.isOk());
  EXPECT_NE(written.status().message().find("refused"), std::string::npos)
      << written.status().toString();
  auto got = store->query(spec::filter());
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  ASSERT_EQ(got->size(), 1U);
  EXPECT_EQ(got->front().jobId, 1);
}

// Records outlive the operator: a store opened again (a restart, the next leader) reads what
// the last one committed, and migrates nothing twice; a database of version 1 is migrated with
// its records kept; one a newer operator migrated further is refused.
TEST_P(RecordStoreSpec, RecordsSurviveReopeningAndTheSchemaIsVersioned) {
  {
    auto store = open();
    ASSERT_NE(store, nullptr);
    JobRecord r = spec::run(9, "alice", "COMPLETED", 1000, 2000);
    r.interactive = true;  // srun from a login host
    ASSERT_EQ(*store->write({&r, 1}), 1U);
    EXPECT_EQ(*store->schemaVersion(), RecordStore::kSchemaVersion);
  }
  auto store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->schemaVersion(), RecordStore::kSchemaVersion);
  ASSERT_EQ(store->query(spec::filter())->size(), 1U);
  EXPECT_TRUE(store->query(spec::filter())->front().interactive);
  store.reset();

  // Version 1: before sacct's extra fields and interactive allocations. The new fields come
  // back at their defaults: the time limit absent (UNLIMITED), a batch job.
  for (const char* undo :
       {"ALTER TABLE jobs DROP COLUMN array_tasks", "ALTER TABLE jobs DROP COLUMN priority",
        "ALTER TABLE jobs DROP COLUMN time_limit_minutes", "ALTER TABLE jobs DROP COLUMN work_dir",
        "ALTER TABLE jobs DROP COLUMN req_nodes", "ALTER TABLE steps DROP COLUMN cpus",
        "ALTER TABLE jobs DROP COLUMN interactive",
        "DELETE FROM schema_migrations WHERE version >= 2"}) {
    rig_->execute(undo);
  }
  store = open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->schemaVersion(), RecordStore::kSchemaVersion);
  const auto migrated = store->query(spec::filter());
  ASSERT_EQ(migrated->size(), 1U);
  EXPECT_EQ(migrated->front().jobId, 9);
  EXPECT_EQ(migrated->front().timeLimitMinutes, std::nullopt);
  EXPECT_EQ(migrated->front().reqNodes, 0);
  EXPECT_FALSE(migrated->front().interactive);  // a batch job, as every job was before
  store.reset();

  rig_->execute("INSERT INTO schema_migrations VALUES (99, 0)");
  const auto newer = rig_->open();
  ASSERT_FALSE(newer.isOk());
  EXPECT_NE(newer.status().message().find("schema version 99"), std::string::npos);
}

}  // namespace kubeslurm::accounting

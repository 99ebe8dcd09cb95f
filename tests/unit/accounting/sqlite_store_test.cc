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

#include "tests/unit/accounting/record_store_spec.h"

namespace kubeslurm::accounting {
namespace {

// A database file of the test's own, on disk, removed with its WAL at the end.
class SqliteRig final : public StoreRig {
 public:
  SqliteRig() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "accounting-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir_ = pattern;
    path_ = (dir_ / "accounting.db").string();
  }
  ~SqliteRig() override { std::filesystem::remove_all(dir_); }
  SqliteRig(const SqliteRig&) = delete;
  SqliteRig& operator=(const SqliteRig&) = delete;

  StatusOr<std::unique_ptr<RecordStore>> open() override {
    auto store = SqliteStore::open(path_);
    if (!store.isOk()) return store.status();
    return std::unique_ptr<RecordStore>(std::move(store).value());
  }
  void execute(const std::string& sql) override {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }
  void refuseJob(std::int64_t jobId) override {
    execute("CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.job_id = " +
            std::to_string(jobId) + " BEGIN SELECT RAISE(ABORT, 'refused'); END");
  }

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& path() const { return path_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

INSTANTIATE_TEST_SUITE_P(Sqlite, RecordStoreSpec, ::testing::Values(RigFactory([] {
                           return std::make_unique<SqliteRig>();
                         })));

TEST(SqliteStore, AFileThatIsNotADatabaseIsRefused) {
  const SqliteRig rig;
  {
    std::FILE* f = std::fopen(rig.path().c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a database, but long enough to have a header of its own.....\n", f);
    std::fclose(f);
  }
  EXPECT_FALSE(SqliteStore::open(rig.path()).isOk());
  EXPECT_FALSE(SqliteStore::open((rig.dir() / "missing" / "x.db").string()).isOk());
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

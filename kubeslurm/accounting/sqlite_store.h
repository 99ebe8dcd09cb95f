// Job records in SQLite on disk (issue 21's default backend: it works out of the box, for the
// demo and a single-replica install). One file; its schema is versioned (schema_migrations) and
// brought up to date when the store opens, in one transaction, so an operator that is killed
// mid-migration leaves the previous version intact. An operator older than the file refuses it
// rather than writing records it cannot read back.
//
// Writes are batches, each one transaction: all its records or none. Each record is an upsert
// keyed by (cluster, job id, attempt) that leaves a stored record of the same run alone when the
// stored one is further on (job_records.h, recordSupersedes), so repeating a batch (after a
// restart, a failover, or a commit whose answer was lost) changes nothing. The journal is a
// write-ahead log synced at each commit (synchronous=FULL): a committed batch survives a crash
// of the process and of the machine.
//
// Thread safety: one connection, used under a mutex; any thread may call any method.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/base/status.h"

struct sqlite3;

namespace kubeslurm::accounting {

class SqliteStore {
 public:
  // The schema version this code writes and reads.
  static constexpr std::int64_t kSchemaVersion = 3;

  // Opens the database at `path`, creating it, and migrates it to kSchemaVersion.
  static StatusOr<std::unique_ptr<SqliteStore>> open(const std::string& path);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Writes `records` in one transaction. A record whose run's stored record is further on is
  // left out (not an error); the answer counts the records written.
  StatusOr<std::size_t> write(std::span<const JobRecord> records);

  // The records `filter` selects, with their steps, by job id and attempt.
  StatusOr<std::vector<JobRecord>> query(const JobFilter& filter);

  // The schema version of the file (kSchemaVersion once open() succeeded).
  StatusOr<std::int64_t> schemaVersion();

 private:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  Status migrate();

  std::mutex mutex_;
  sqlite3* db_;
};

}  // namespace kubeslurm::accounting

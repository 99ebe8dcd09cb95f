// Job records in SQLite on disk (issue 21's default backend: it works out of the box, for the
// demo and a single-replica install). One file; its schema is versioned (schema_migrations) and
// brought up to date when the store opens, in one transaction, so an operator that is killed
// mid-migration leaves the previous version intact. An operator older than the file refuses it
// rather than writing records it cannot read back.
//
// The rules every store keeps (one transaction per batch, idempotent upserts, a newer schema
// refused) are record_store.h's. The journal is a write-ahead log synced at each commit
// (synchronous=FULL): a committed batch survives a crash of the process and of the machine.
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
#include "kubeslurm/accounting/record_store.h"
#include "kubeslurm/base/status.h"

struct sqlite3;

namespace kubeslurm::accounting {

class SqliteStore final : public RecordStore {
 public:
  // Opens the database at `path`, creating it, and migrates it to kSchemaVersion.
  static StatusOr<std::unique_ptr<SqliteStore>> open(const std::string& path);
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  StatusOr<std::size_t> write(std::span<const JobRecord> records) override;
  StatusOr<std::vector<JobRecord>> query(const JobFilter& filter) override;
  StatusOr<std::int64_t> schemaVersion() override;

 private:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  Status migrate();

  std::mutex mutex_;
  sqlite3* db_;
};

}  // namespace kubeslurm::accounting

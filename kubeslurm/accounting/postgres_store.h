// Job records in PostgreSQL (issue 21's backend for an HA install: every operator replica
// reaches the same database, so a failover loses no record and the new leader reads what the
// old one wrote). The schema and its versions are record_store.h's, in PostgreSQL's dialect;
// the migrations run when the store opens, in one transaction under an advisory lock, so two
// replicas that open it at once apply each version once and a replica killed mid-migration
// leaves the previous version intact.
//
// The connection is libpq's (Debian's libpq5: the protocol, TLS and authentication as
// PostgreSQL's own client does them, which we would not write by hand). `dsn` is a libpq
// connection string or URI (`host=db port=5432 dbname=kubeslurm user=... sslmode=verify-full`,
// `postgresql://...`); the chart hands it over from a Secret. A connection lost between calls
// is made again on the next call; one lost inside a transaction fails that call, whose batch
// the writer keeps and sends again (its upserts make the repeat harmless).
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

struct pg_conn;

namespace kubeslurm::accounting {

class PostgresStore final : public RecordStore {
 public:
  // Connects with `dsn` and migrates the database to kSchemaVersion.
  static StatusOr<std::unique_ptr<PostgresStore>> open(const std::string& dsn);
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  StatusOr<std::size_t> write(std::span<const JobRecord> records) override;
  StatusOr<std::vector<JobRecord>> query(const JobFilter& filter) override;
  StatusOr<std::int64_t> schemaVersion() override;

 private:
  explicit PostgresStore(pg_conn* connection) : connection_(connection) {}
  Status migrate();
  // The connection, made again when it was lost (under mutex_).
  Status connected();

  std::mutex mutex_;
  pg_conn* connection_;
};

}  // namespace kubeslurm::accounting

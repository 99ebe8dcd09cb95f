// Where job records are kept (issue 21): SQLite on disk for a single replica (sqlite_store.h),
// PostgreSQL for an HA install (postgres_store.h). One schema, versioned the same in both (the
// same migrations, each written in its database's dialect), and the same rules: a write is one
// transaction, each record an upsert keyed by (cluster, job id, attempt) that leaves a stored
// record of the same run alone when the stored one is further on (job_records.h,
// recordSupersedes), so a batch written twice changes nothing; a store newer than the code is
// refused rather than written.
//
// Thread safety: any thread may call any method (each store serialises its connection).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::accounting {

class RecordStore {
 public:
  // The schema version this code writes and reads.
  static constexpr std::int64_t kSchemaVersion = 3;

  virtual ~RecordStore() = default;

  // Writes `records` in one transaction. A record whose run's stored record is further on is
  // left out (not an error); the answer counts the records written.
  virtual StatusOr<std::size_t> write(std::span<const JobRecord> records) = 0;

  // The records `filter` selects, with their steps, by job id and attempt.
  virtual StatusOr<std::vector<JobRecord>> query(const JobFilter& filter) = 0;

  // The schema version of the database (kSchemaVersion once it opened).
  virtual StatusOr<std::int64_t> schemaVersion() = 0;
};

}  // namespace kubeslurm::accounting

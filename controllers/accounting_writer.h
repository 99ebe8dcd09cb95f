// The operator's side of lasting accounting (issue 21; docs/accounting.md): job records written
// to the store from the SlurmJobs, off the scheduling loop.
//
// The SlurmJob is the outbox. Each cycle offers every job; a job whose object changed since it
// was last offered (its resourceVersion) has its record queued, a newer record of a run
// replacing a queued older one; a worker thread writes the queue in batches, one transaction
// each, and retries with a growing pause while the store fails. The cycle never waits for the
// database: offering costs a map lookup per unchanged job. Retention asks endedRecordWritten()
// before it deletes a finished job, so a job's record is committed before its object goes: an
// operator restart, a failover or a database outage loses nothing (a new leader offers every
// job it lists, and the store's upsert makes the repeats harmless), and a job that finished
// while no operator ran is written when the next one lists it.
//
//   offer (loop thread)          worker thread
//   ───────────────────          ─────────────
//   object changed ─► queued ──► batch written ─► committed (ended run: retention may delete)
//                       ▲             │
//                       └── failed ◄──┘  (kept; retried after 1 s, 2 s, ... 30 s)
//
// Thread safety: offer() and endedRecordWritten() from the loop; the worker is internal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controllers/shared_list.h"
#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/accounting/slurmjob_records.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::controllers {

// Writes a batch in one transaction: all of it or none (accounting::SqliteStore::write).
using RecordSink =
    std::function<StatusOr<std::size_t>(std::span<const accounting::JobRecord> records)>;

struct AccountingWriterOptions {
  std::string cluster = "kubeslurm";
  std::size_t batchSize = 1000;
  std::chrono::milliseconds firstRetry{1000};
  std::chrono::milliseconds maxRetry{30000};
  // Told of each failed batch (for the log); may be empty.
  std::function<void(const Status&)> failed;
};

struct AccountingWriterStats {
  std::uint64_t recordsWritten = 0;
  std::uint64_t batchesFailed = 0;
  std::size_t queued = 0;
};

class AccountingWriter {
 public:
  AccountingWriter(RecordSink sink, AccountingWriterOptions options);
  // Writes what is queued once more (one try), then stops the worker.
  ~AccountingWriter();
  AccountingWriter(const AccountingWriter&) = delete;
  AccountingWriter& operator=(const AccountingWriter&) = delete;

  // Queues the records of the jobs whose objects changed since their last offer. `partitions`
  // give the records the partition and time limit of a job that named none, and their memory
  // defaults; `nodeMemoryMb`, each partition's first node's memory, what a job that holds all of
  // each node's memory is charged (accounting::RecordContext).
  void offer(const SharedList<api::SlurmJobObject>& jobs,
             const std::vector<api::Partition>& partitions,
             const std::map<std::string, std::uint64_t>& nodeMemoryMb = {});

  // Whether the ended record of the job's current run is committed: until it is, retention
  // keeps the job.
  bool endedRecordWritten(const api::SlurmJobObject& job) const;

  AccountingWriterStats stats() const;

 private:
  using Run = std::pair<std::int64_t, std::int64_t>;  // job id, attempt
  struct Queued {
    accounting::JobRecord record;
    std::uint64_t sequence = 0;  // which offer queued it: a newer one replaces it
  };
  // Jobs whose objects changed, handed from the loop to the worker, which makes their records.
  struct Changes {
    std::shared_ptr<const accounting::RecordContext> context;
    std::vector<std::shared_ptr<const api::SlurmJobObject>> jobs;
  };
  void work();
  // Makes the records of the changes handed over and queues them; called and returns locked.
  void takeInbox(std::unique_lock<std::mutex>& lock);

  RecordSink sink_;
  AccountingWriterOptions options_;
  // The loop's own. The documents offered last time, held so that their addresses are not
  // reused: an informer hands an unchanged object to every cycle as the same document, so most
  // jobs are known by a pointer lookup. A new document (a changed object, or a relist's copy of
  // an unchanged one) is compared by its resourceVersion, kept by uid.
  struct Seen {
    api::SharedJson document;
    std::uint64_t generation = 0;
  };
  std::unordered_map<const nlohmann::json*, Seen> seen_;
  std::uint64_t generation_ = 0;
  std::unordered_map<std::string, std::string> offered_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Changes> inbox_;
  std::size_t inboxJobs_ = 0;
  std::map<Run, Queued> queue_;
  std::set<Run> endedWritten_;
  std::uint64_t nextSequence_ = 0;
  AccountingWriterStats stats_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kubeslurm::controllers

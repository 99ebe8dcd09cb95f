#include "controllers/accounting_writer.h"

#include <algorithm>
#include <unordered_set>

#include "controllers/arrays.h"
#include "controllers/job_object.h"

namespace kubeslurm::controllers {

AccountingWriter::AccountingWriter(RecordSink sink, AccountingWriterOptions options)
    : sink_(std::move(sink)), options_(std::move(options)), worker_([this] { work(); }) {}

AccountingWriter::~AccountingWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void AccountingWriter::offer(const SharedList<api::SlurmJobObject>& jobs,
                             const std::vector<api::Partition>& partitions) {
  accounting::RecordContext context;
  context.cluster = options_.cluster;
  if (const api::Partition* fallback = jobPartition(slurm::JobRequest{}, partitions, nullptr)) {
    context.defaultPartition = fallback->metadata.name;
  }
  for (const api::Partition& p : partitions) {
    context.partitionDefaultTime[p.metadata.name] = api::partitionDefaultTime(p.spec);
  }
  std::vector<accounting::JobRecord> changed;
  for (const api::SlurmJobObject& job : jobs) {
    const api::ObjectMeta meta = jobMetadata(job);
    auto [it, fresh] = offered_.try_emplace(meta.uid, meta.resourceVersion);
    if (!fresh && it->second == meta.resourceVersion) continue;
    it->second = meta.resourceVersion;
    if (auto record = accounting::recordOfSlurmJob(job, isArrayParent(job), context)) {
      changed.push_back(std::move(*record));
    }
  }
  // Jobs that are gone leave no state behind (checked when there could be much of it).
  const bool prune = offered_.size() > 2 * jobs.size() + 1024;
  std::unordered_set<std::string> live;
  std::set<Run> liveRuns;
  if (prune) {
    for (const api::SlurmJobObject& job : jobs) {
      live.insert(jobMetadata(job).uid);
      if (job.status && job.status->jobId) {
        liveRuns.emplace(*job.status->jobId, job.status->restarts.value_or(0));
      }
    }
    std::erase_if(offered_, [&live](const auto& entry) { return !live.contains(entry.first); });
  }
  if (changed.empty() && !prune) return;
  {
    std::lock_guard lock(mutex_);
    for (accounting::JobRecord& record : changed) {
      const Run run{record.jobId, record.attempt};
      queue_[run] = Queued{std::move(record), nextSequence_++};
    }
    if (prune) {
      std::erase_if(endedWritten_, [&liveRuns](const Run& run) { return !liveRuns.contains(run); });
    }
  }
  wake_.notify_one();
}

bool AccountingWriter::endedRecordWritten(const api::SlurmJobObject& job) const {
  if (!job.status || !job.status->jobId) return true;  // no id, no record to wait for
  std::lock_guard lock(mutex_);
  return endedWritten_.contains(Run{*job.status->jobId, job.status->restarts.value_or(0)});
}

AccountingWriterStats AccountingWriter::stats() const {
  std::lock_guard lock(mutex_);
  AccountingWriterStats out = stats_;
  out.queued = queue_.size();
  return out;
}

void AccountingWriter::work() {
  std::unique_lock lock(mutex_);
  std::chrono::milliseconds pause{0};
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is written
    std::vector<accounting::JobRecord> batch;
    std::vector<std::pair<Run, std::uint64_t>> taken;
    for (auto it = queue_.begin(); it != queue_.end() && batch.size() < options_.batchSize; ++it) {
      batch.push_back(it->second.record);
      taken.emplace_back(it->first, it->second.sequence);
    }
    lock.unlock();
    StatusOr<std::size_t> written = sink_(batch);
    if (!written.isOk() && options_.failed) options_.failed(written.status());
    lock.lock();
    if (written.isOk()) {
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const auto it = queue_.find(taken[i].first);
        // A newer record of the run queued meanwhile stays for the next batch.
        if (it != queue_.end() && it->second.sequence == taken[i].second) queue_.erase(it);
        if (accounting::runPhase(batch[i].state) == 2) endedWritten_.insert(taken[i].first);
      }
      stats_.recordsWritten += *written;
      pause = std::chrono::milliseconds{0};
      continue;
    }
    ++stats_.batchesFailed;
    if (stopping_) return;  // the next leader writes what this one could not
    pause = pause.count() == 0 ? options_.firstRetry : std::min(pause * 2, options_.maxRetry);
    wake_.wait_for(lock, pause, [this] { return stopping_; });
  }
}

}  // namespace kubeslurm::controllers

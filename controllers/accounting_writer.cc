#include "controllers/accounting_writer.h"

#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

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

namespace {

const std::string kNone;

// metadata.uid and metadata.resourceVersion as cached, without decoding the rest of the metadata
// (labels, annotations, owners): offering an unchanged job must cost next to nothing.
std::pair<const std::string&, const std::string&> identityOf(const api::SlurmJobObject& job) {
  const nlohmann::json& raw = *job.raw;
  if (!raw.is_object()) return {kNone, kNone};
  const auto meta = raw.find("metadata");
  if (meta == raw.end() || !meta->is_object()) return {kNone, kNone};
  const auto text = [&meta](const char* key) -> const std::string& {
    const auto it = meta->find(key);
    return it != meta->end() && it->is_string() ? it->get_ref<const std::string&>() : kNone;
  };
  return {text("uid"), text("resourceVersion")};
}

}  // namespace

void AccountingWriter::offer(const SharedList<api::SlurmJobObject>& jobs,
                             const std::vector<api::Partition>& partitions,
                             const std::map<std::string, std::uint64_t>& nodeMemoryMb) {
  Changes changes;
  ++generation_;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const api::SlurmJobObject& job = jobs[i];
    const nlohmann::json* document = &*job.raw;
    if (const auto same = seen_.find(document); same != seen_.end()) {
      same->second.generation = generation_;
      continue;
    }
    if (!job.raw->empty()) seen_.emplace(document, Seen{job.raw, generation_});
    const auto [uid, version] = identityOf(job);
    const auto known = offered_.find(uid);
    if (known != offered_.end() && known->second == version) continue;
    if (known == offered_.end()) {
      offered_.emplace(uid, version);
    } else {
      known->second = version;
    }
    changes.jobs.push_back(jobs.shared(i));
  }
  // Documents replaced or gone are let go; jobs that are gone leave no state behind (checked
  // when there could be much of it).
  if (seen_.size() > jobs.size()) {
    std::erase_if(seen_,
                  [this](const auto& entry) { return entry.second.generation != generation_; });
  }
  const bool prune = offered_.size() > 2 * jobs.size() + 1024;
  std::unordered_set<std::string> live;
  std::set<Run> liveRuns;
  if (prune) {
    for (const api::SlurmJobObject& job : jobs) {
      live.insert(identityOf(job).first);
      if (job.status && job.status->jobId) {
        liveRuns.emplace(*job.status->jobId, job.status->restarts.value_or(0));
      }
    }
    std::erase_if(offered_, [&live](const auto& entry) { return !live.contains(entry.first); });
  }
  if (changes.jobs.empty() && !prune) return;
  // The records are made on the worker: the loop only hands over the jobs that changed.
  auto context = std::make_shared<accounting::RecordContext>();
  context->cluster = options_.cluster;
  if (const api::Partition* fallback = jobPartition(slurm::JobRequest{}, partitions, nullptr)) {
    context->defaultPartition = fallback->metadata.name;
  }
  for (const api::Partition& p : partitions) {
    context->partitionDefaultTime[p.metadata.name] = api::partitionDefaultTime(p.spec);
    context->partitionMemory[p.metadata.name] = api::partitionMemory(p.spec);
  }
  context->nodeMemoryMb = nodeMemoryMb;
  changes.context = std::move(context);
  {
    std::lock_guard lock(mutex_);
    inboxJobs_ += changes.jobs.size();
    if (!changes.jobs.empty()) inbox_.push_back(std::move(changes));
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
  out.queued = queue_.size() + inboxJobs_;
  return out;
}

void AccountingWriter::takeInbox(std::unique_lock<std::mutex>& lock) {
  std::vector<Changes> inbox;
  inbox.swap(inbox_);
  lock.unlock();
  std::vector<accounting::JobRecord> records;
  std::size_t jobs = 0;
  for (const Changes& changes : inbox) {
    jobs += changes.jobs.size();
    for (const auto& job : changes.jobs) {
      if (auto record = accounting::recordOfSlurmJob(*job, isArrayParent(*job), *changes.context)) {
        records.push_back(std::move(*record));
      }
    }
  }
  lock.lock();
  for (accounting::JobRecord& record : records) {
    const Run run{record.jobId, record.attempt};
    queue_[run] = Queued{std::move(record), nextSequence_++};
  }
  inboxJobs_ -= jobs;
}

void AccountingWriter::work() {
  std::unique_lock lock(mutex_);
  std::chrono::milliseconds pause{0};
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty() || !inbox_.empty(); });
    if (!inbox_.empty()) takeInbox(lock);
    if (queue_.empty()) {
      if (stopping_) return;  // everything is written
      continue;
    }
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

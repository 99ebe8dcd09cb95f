#include "controllers/assumed_gangs.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <set>
#include <utility>

#include "controllers/job_object.h"

namespace kubeslurm::controllers {

AssumedGangs::AssumedGangs(std::size_t workers, std::function<void()> ended)
    : ended_(std::move(ended)) {
  workers_.reserve(std::max<std::size_t>(workers, 1));
  for (std::size_t i = 0; i < std::max<std::size_t>(workers, 1); ++i) {
    workers_.emplace_back([this] { work(); });
  }
}

AssumedGangs::~AssumedGangs() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void AssumedGangs::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Queued admissions run before a stop: each was assumed, and its caller waits for it.
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    if (running_ == 0 && queue_.empty()) idle_.notify_all();
  }
}

void AssumedGangs::assume(StartedGang gang, std::vector<api::Pod> pods, Admission admission) {
  auto outcome = std::make_shared<Outcome>();
  const std::string key = gang.key;
  gangs_[key] = Gang{std::move(gang), share(std::move(pods)), outcome, ++assumed_, 0};
  auto task = [this, outcome, admission = std::move(admission)] {
    const auto began = std::chrono::steady_clock::now();
    Status result;
    std::vector<api::Pod> admitted;
    bool dropped = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      dropped = dropQueued_;
    }
    if (dropped) {
      result = Status(StatusCode::kAborted, "admission not started: the operator is stopping");
    } else {
      // A worker thread: nothing a job's objects make a library throw may end the operator.
      try {
        result = admission(&admitted);
      } catch (const std::exception& e) {
        result = Status(StatusCode::kInternal, std::string("admission threw: ") + e.what());
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      outcome->result = std::move(result);
      outcome->admitted = std::move(admitted);
      outcome->seconds = seconds;
      outcome->done = true;
    }
    if (ended_) ended_();
  };
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(std::move(task));
  }
  wake_.notify_one();
}

std::vector<FinishedAdmission> AssumedGangs::finished() {
  std::vector<std::pair<std::uint64_t, FinishedAdmission>> ended;
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = gangs_.begin(); it != gangs_.end();) {
    Gang& gang = it->second;
    if (!gang.outcome || !gang.outcome->done) {
      ++it;
      continue;
    }
    Outcome& outcome = *gang.outcome;
    ended.emplace_back(gang.order,
                       FinishedAdmission{gang.started, outcome.result, outcome.seconds});
    if (!outcome.result.isOk()) {
      it = gangs_.erase(it);
      continue;
    }
    // The pods as written: with the in-pod runtime they name the step Secret the API server
    // named, which the plan's pods could only stand in for.
    if (!outcome.admitted.empty()) gang.pods = share(std::move(outcome.admitted));
    gang.outcome.reset();
    gang.firstLook = 0;
    ++it;
  }
  std::sort(ended.begin(), ended.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<FinishedAdmission> out;
  out.reserve(ended.size());
  for (auto& [order, admission] : ended) out.push_back(std::move(admission));
  return out;
}

std::vector<std::shared_ptr<api::Pod>> AssumedGangs::share(std::vector<api::Pod> pods) {
  std::vector<std::shared_ptr<api::Pod>> shared;
  shared.reserve(pods.size());
  for (api::Pod& pod : pods) shared.push_back(std::make_shared<api::Pod>(std::move(pod)));
  return shared;
}

void AssumedGangs::addUnseen(SharedList<api::Pod>& pods, core::Time now, core::Duration timeout) {
  if (gangs_.empty()) return;
  // Job key -> pod names of any attempt, for the gangs held here only: a cycle's input holds
  // every pod of the cluster.
  std::map<std::string, std::set<std::string>> seen;
  for (const api::Pod& pod : pods) {
    if (!isRankPod(pod)) continue;
    std::string key = pod.metadata.namespaceName + "/" + podJobName(pod);
    if (!gangs_.contains(key)) continue;
    seen[std::move(key)].insert(pod.metadata.name);
  }
  std::vector<std::shared_ptr<api::Pod>> unseen;
  for (auto it = gangs_.begin(); it != gangs_.end();) {
    Gang& gang = it->second;
    const std::set<std::string>& names = seen[it->first];
    std::vector<std::shared_ptr<api::Pod>> missing;
    for (const std::shared_ptr<api::Pod>& pod : gang.pods) {
      if (!names.contains(pod->metadata.name)) missing.push_back(pod);
    }
    if (!gang.outcome) {  // Admitted
      if (gang.firstLook == 0) gang.firstLook = now;
      if (missing.empty() || now - gang.firstLook > timeout) {
        it = gangs_.erase(it);
        continue;
      }
    }
    unseen.insert(unseen.end(), missing.begin(), missing.end());
    ++it;
  }
  // After the loop: `seen` was read off `pods` as the caller gave it.
  for (std::shared_ptr<api::Pod>& pod : unseen) pods.push_back(std::move(pod));
}

bool AssumedGangs::admitting(const std::string& key) const {
  const auto it = gangs_.find(key);
  return it != gangs_.end() && it->second.outcome != nullptr;
}

void AssumedGangs::forget(const std::string& key) {
  const auto it = gangs_.find(key);
  if (it != gangs_.end() && !it->second.outcome) gangs_.erase(it);
}

void AssumedGangs::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return running_ == 0 && queue_.empty(); });
}

void AssumedGangs::finishRunning() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    dropQueued_ = true;
  }
  waitIdle();
}

void AssumedGangs::clear() {
  waitIdle();
  gangs_.clear();
}

}  // namespace kubeslurm::controllers

// What a scheduling cycle's report becomes outside the controllers: the Prometheus metrics, and
// the state the query API answers sprio, sshare, sdiag, squeue --start and sbatch --test-only
// from.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "controllers/reconciler.h"
#include "controllers/will_run.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/metrics/operator_metrics.h"
#include "kubeslurm/rpc/query_state.h"

namespace kubeslurm::op {

void publishMetrics(metrics::OperatorMetrics& m, const controllers::CycleReport& report,
                    double cycleSeconds);

// The query API's view of the scheduler: replaced whole after each cycle, so a call reads one
// consistent cycle without holding a lock while it encodes the answer.
class QueryPublisher {
 public:
  QueryPublisher(const core::PriorityConfig& priority, std::int64_t serverStart)
      : priority_(priority), serverStart_(serverStart) {}

  using Cluster = controllers::WillRunCluster;

  // Takes the report's cluster objects (the last use of them in a cycle).
  void publish(controllers::CycleReport& report, double cycleSeconds, std::int64_t now);

  // Leadership ended: another replica's plans are the truth now.
  void clear() {
    const std::lock_guard lock(mutex_);
    state_.reset();
    cluster_.reset();
  }

  std::shared_ptr<const Cluster> cluster() const {
    const std::lock_guard lock(mutex_);
    return cluster_;
  }

  std::shared_ptr<const rpc::QueryState> current() const {
    const std::lock_guard lock(mutex_);
    return state_;
  }

 private:
  kubeslurm::core::PriorityConfig priority_;
  std::int64_t serverStart_;
  std::uint64_t cycles_ = 0;
  double totalSeconds_ = 0;
  double maxSeconds_ = 0;
  std::uint64_t totalStarted_ = 0;
  std::uint64_t totalBackfilled_ = 0;
  mutable std::mutex mutex_;
  std::shared_ptr<const rpc::QueryState> state_;
  std::shared_ptr<const Cluster> cluster_;
};

}  // namespace kubeslurm::op

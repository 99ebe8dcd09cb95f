// Many independent round trips in flight at once, from the calling thread: the operator's writes
// (a gang's ranks, the jobs' statuses) and the node simulator's (pod statuses), which one at a
// time would each wait for every one before them.
#pragma once

#include <cstddef>
#include <functional>

#include "kubeslurm/base/status.h"

namespace kubeslurm::kube {

// Runs task(i) for every i in [0, n) on at most `parallelism` threads, the calling thread among
// them. With stopOnFailure no task starts after the first failure (tasks already running
// finish). Returns the first failure in time order. A thread that cannot be started is replaced
// by the calling thread's own work.
Status runBounded(std::size_t n, std::size_t parallelism, bool stopOnFailure,
                  const std::function<Status(std::size_t)>& task);

}  // namespace kubeslurm::kube

// Many API requests in flight at once, from the calling thread: the controllers' writes are
// independent round trips (a gang's ranks, the jobs' statuses), and one at a time a cycle would
// wait for each in turn.
#pragma once

#include <cstddef>
#include <functional>

#include "kubeslurm/base/status.h"

namespace kubeslurm::controllers {

// Runs task(i) for every i in [0, n) on at most `parallelism` threads, the calling thread among
// them. With stopOnFailure no task starts after the first failure (tasks already running
// finish). Returns the first failure in time order. A thread that cannot be started is replaced
// by the calling thread's own work.
Status runBounded(std::size_t n, std::size_t parallelism, bool stopOnFailure,
                  const std::function<Status(std::size_t)>& task);

}  // namespace kubeslurm::controllers

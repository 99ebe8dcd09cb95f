// `squeue` with everything outside its arguments injectable: the cluster, the query API, and
// for -i/--iterate the wait between listings and the clock (squeue.c main's loop).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kubeslurm/cli/cli_io.h"
#include "kubeslurm/cli/kube_access.h"

namespace kubeslurm::cli {

struct SqueueEnvironment {
  Connector connect;
  // The operator's query API for SCHEDNODES; empty or unreachable, "(null)" is shown.
  QueryConnector queries{};
  // -i: waits this long after a listing; returning false ends the loop (a test's stop; a user
  // ends squeue with Ctrl-C, whose default action ends the process, as with Slurm's squeue).
  // Empty: std::this_thread::sleep_for.
  std::function<bool(std::chrono::seconds)> sleep{};
  // The time of each listing after the first: seconds since the epoch and the local zone's
  // UTC offset then. Empty: the first listing's CliIo::now plus the seconds waited.
  std::function<std::pair<std::int64_t, std::int32_t>()> clock{};
  // At most this many listings (0: no bound, as Slurm: until interrupted).
  int maxIterations = 0;
};

// Returns 1 when any listing failed (squeue.c keeps iterating and exits 1 once stopped).
int runSqueueIn(const std::vector<std::string>& args, CliIo& io,
                const SqueueEnvironment& environment);

}  // namespace kubeslurm::cli

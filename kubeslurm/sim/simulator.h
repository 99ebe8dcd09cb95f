// Discrete-event replay of a workload through the real scheduler, core::plan(), in simulated
// time. Nothing here schedules: the simulator only keeps the cluster's books and applies plans.
//
//   events: submissions (trace submit time) and completions (start + min(run, time limit))
//   at each instant with events, in this order:
//     1. fair-share usage advances to now (core::advanceUsage) over the jobs that ran until now
//     2. completions free their nodes; submissions join the queue
//     3. plan(snapshot, now, budget); preemptions then starts are applied
//   Extra passes: again at the same instant while a budget-limited pass started something; every
//   `scheduleInterval` while jobs wait (optional); and at the instants when a waiting job's
//   --begin or --switches wait runs out.
//
// The simulator checks every start the plan returns (the job is pending; the node count is
// within its request; nodes are distinct, up, and have room) and refuses one that is not
// valid, counting it in SimulationResult::rejectedStarts. A correct core never trips it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kubeslurm/base/status.h"
#include "kubeslurm/core/model.h"
#include "kubeslurm/sim/metrics.h"
#include "kubeslurm/sim/workload.h"

namespace kubeslurm::sim {

struct Progress {
  std::size_t finished = 0;  // jobs that left the system
  std::size_t total = 0;
  std::size_t pending = 0;
  std::size_t running = 0;
  std::int64_t elapsed = 0;  // simulated seconds from the trace's origin
  std::uint64_t planCalls = 0;
};

struct SimulationOptions {
  core::Budget budget;
  // 0: plan only at submissions, completions and timers. Slurm's main loop also runs on a
  // timer because priorities grow with age between events; with a strict priority policy a
  // periodic pass can start a job that no event would.
  core::Duration scheduleInterval = 0;
  // Called after every scheduling instant; the caller throttles its own output.
  std::function<void(const Progress&)> progress;
};

struct SimulationResult {
  std::vector<JobOutcome> jobs;  // in Workload::jobs order
  Metrics metrics;
  std::uint64_t planCalls = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t rejectedStarts = 0;
  std::vector<std::string> diagnostics;  // the first few rejected starts, explained
};

StatusOr<SimulationResult> simulate(const Workload& workload, const SimulationOptions& options);

}  // namespace kubeslurm::sim

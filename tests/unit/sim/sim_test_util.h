// Builders for small synthetic workloads in the simulator's tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kubeslurm/sim/simulator.h"
#include "kubeslurm/sim/trace.h"
#include "kubeslurm/sim/workload.h"

namespace kubeslurm::sim::testing {

struct JobSpec {
  std::int64_t submit = 0;
  std::uint32_t procs = 1;  // = GPUs, spread over nodes by the workload's rule
  std::int64_t run = 10;
  std::int64_t limit = -1;  // -1: the run time (perfect estimate)
  std::string user = {};
};

inline Trace swfTrace(const std::vector<JobSpec>& specs) {
  Trace trace;
  trace.format = TraceFormat::kSwf;
  std::uint64_t id = 0;
  for (const JobSpec& spec : specs) {
    TraceJob job;
    job.id = ++id;
    job.submit = spec.submit;
    job.procs = spec.procs;
    job.runTime = spec.run;
    if (spec.limit > 0) job.requestedTime = spec.limit;
    job.user = spec.user;
    trace.jobs.push_back(job);
  }
  return trace;
}

inline WorkloadOptions clusterOf(std::uint32_t nodes, std::uint32_t gpusPerNode,
                                 core::SchedulingPolicy policy) {
  WorkloadOptions options;
  options.cluster.nodeCount = nodes;
  options.cluster.gpusPerNode = gpusPerNode;
  options.config.policy = policy;
  return options;
}

// A deterministic pseudo-random mix of sizes and run times (a 64-bit LCG, so the test data is
// the same everywhere).
inline std::vector<JobSpec> randomJobs(std::size_t count, std::uint32_t maxProcs,
                                       std::uint64_t seed) {
  std::uint64_t state = seed;
  const auto next = [&state](std::uint64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33U) % bound;
  };
  std::vector<JobSpec> jobs;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < count; ++i) {
    t += static_cast<std::int64_t>(next(40));
    JobSpec job;
    job.submit = t;
    job.procs = 1 + static_cast<std::uint32_t>(next(maxProcs));
    job.run = static_cast<std::int64_t>(next(600));
    // Over-estimates up to 3x, and now and then an under-estimate that gets the job killed.
    job.limit = next(10) == 0 ? std::max<std::int64_t>(1, job.run / 2)
                              : job.run + static_cast<std::int64_t>(next(2 * 600));
    job.user = std::to_string(next(5));
    jobs.push_back(job);
  }
  return jobs;
}

}  // namespace kubeslurm::sim::testing

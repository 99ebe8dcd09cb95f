// Scheduling core benchmarks (Google Benchmark). They measure and report; they assert nothing.
//
//   BM_Memory         RSS with 5,000 nodes and 50,000 jobs held, after one plan (MiB counters)
//   BM_PlaceGang/N    one main-pass placement decision for a job of the benchmark mix
//   BM_PlanCycle/N    one full plan() with backfill: 10,000 pending, running scaled to the cluster
//
// Run: build/bin/core_bench (RelWithDebInfo), e.g. --benchmark_repetitions=5.
#include <fstream>
#include <string>

#include <benchmark/benchmark.h>

#include "kubeslurm/core/capacity_index.h"
#include "kubeslurm/core/cluster_state.h"
#include "kubeslurm/core/job_view.h"
#include "kubeslurm/core/placement.h"
#include "tests/bench/core/workload.h"

namespace kubeslurm::core::bench {
namespace {

// Resident and peak resident set from /proc/self/status (kB): I/O, so here and not in the core.
double statusMiB(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) / 1024.0;
  }
  return 0;
}

WorkloadSpec specFor(std::size_t nodes) {
  WorkloadSpec spec;
  spec.nodes = nodes;
  spec.running = 2000 * nodes / 5000;
  spec.pending = 10000;
  return spec;
}

void memory(benchmark::State& state) {
  const double before = statusMiB("VmRSS:");
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    WorkloadSpec spec;
    spec.nodes = 5000;
    spec.running = 2000;
    spec.pending = 48000;
    const Snapshot snapshot = makeWorkload(spec);
    const Plan plan = core::plan(snapshot, kNow, Budget{});
    state.counters["rss_MiB"] = statusMiB("VmRSS:");
    state.counters["rss_growth_MiB"] = statusMiB("VmRSS:") - before;
    state.counters["jobs"] = static_cast<double>(snapshot.jobs.size());
    benchmark::DoNotOptimize(plan.starts.data());
  }
  state.counters["peak_rss_MiB"] = statusMiB("VmHWM:");
}
BENCHMARK(memory)->Name("BM_Memory")->Iterations(1)->Unit(benchmark::kMillisecond);

void placeGang(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  WorkloadBuilder builder(specFor(nodes));
  const Snapshot snapshot = builder.build();
  ClusterState cluster(snapshot, kNow);
  CapacityIndex index(cluster);
  Placer placer(cluster, index);
  // A rotating set of pending jobs of the mix (indices into the snapshot's pending tail).
  std::vector<JobView> views;
  for (std::uint32_t j = 0; j < snapshot.jobs.size() && views.size() < 256; ++j) {
    if (snapshot.jobs[j].phase != JobPhase::kPending || snapshot.jobs[j].partition != "train")
      continue;
    views.push_back(makeJobView(cluster, j, 0, kNow));
  }
  std::vector<NodeIndex> out;
  std::size_t k = 0;
  std::size_t placed = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    placed += placer.placeNow(views[k], out) ? 1u : 0u;
    benchmark::DoNotOptimize(out.data());
    k = (k + 1) % views.size();
  }
  state.counters["placed_fraction"] =
      static_cast<double>(placed) / static_cast<double>(state.iterations());
}
BENCHMARK(placeGang)
    ->Name("BM_PlaceGang")
    ->Arg(500)
    ->Arg(5000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);

// The largest gang of the mix on an empty cluster: the whole leaf choice and node pick.
void placeGang64(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  WorkloadSpec spec = specFor(nodes);
  spec.running = 0;
  spec.pending = 1;
  Snapshot snapshot = makeWorkload(spec);
  snapshot.jobs[0].minNodes = snapshot.jobs[0].maxNodes = 64;
  snapshot.jobs[0].gpusPerNode = 8;
  snapshot.jobs[0].partition = "train";
  ClusterState cluster(snapshot, kNow);
  CapacityIndex index(cluster);
  Placer placer(cluster, index);
  const JobView view = makeJobView(cluster, 0, 0, kNow);
  std::vector<NodeIndex> out;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    benchmark::DoNotOptimize(placer.placeNow(view, out));
  }
}
BENCHMARK(placeGang64)->Name("BM_PlaceGang64")->Arg(5000)->Unit(benchmark::kMicrosecond);

void planCycle(benchmark::State& state) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const Snapshot snapshot = makeWorkload(specFor(nodes));
  Plan last;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    last = core::plan(snapshot, kNow, Budget{});
    benchmark::DoNotOptimize(last.starts.data());
  }
  std::size_t running = 0;
  for (const Job& j : snapshot.jobs) running += j.phase == JobPhase::kRunning ? 1u : 0u;
  state.counters["running"] = static_cast<double>(running);
  state.counters["pending"] = static_cast<double>(snapshot.jobs.size() - running);
  state.counters["starts"] = last.stats.jobsStarted;
  state.counters["backfilled"] = last.stats.jobsBackfilled;
  state.counters["reservations"] = last.stats.reservations;
  state.counters["bf_tested"] = last.stats.backfillDepth;
}
BENCHMARK(planCycle)
    ->Name("BM_PlanCycle")
    ->Arg(500)
    ->Arg(5000)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kubeslurm::core::bench

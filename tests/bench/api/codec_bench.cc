// Codec throughput (kubeslurm/api): a realistic ~4 KB rank pod as the API server returns it.
// MB/s counts the pod's JSON text size for every variant so the figures compare directly.
#include <cstdint>
#include <string>

#include <benchmark/benchmark.h>

#include "kubeslurm/api/core_v1.h"
#include "tests/unit/api/fixtures.h"

namespace {

using kubeslurm::api::Json;

const std::string& podText() {
  static const std::string kText = Json::parse(kubeslurm::api::testing::kRunningPodJson).dump();
  return kText;
}

void setBytes(benchmark::State& state) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(podText().size()));
  state.counters["pod_bytes"] = static_cast<double>(podText().size());
}

// JSON text -> nlohmann::json: the floor under every decode.
void parsePodJson(benchmark::State& state) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    Json parsed = Json::parse(podText());
    benchmark::DoNotOptimize(parsed);
  }
  setBytes(state);
}
BENCHMARK(parsePodJson)->Name("BM_ParsePodJson");

// JSON text -> Pod: what an informer pays per watch event.
void parseAndDecodePod(benchmark::State& state) {
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    auto pod = kubeslurm::api::decodePod(Json::parse(podText()));
    if (!pod.isOk()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(pod);
  }
  setBytes(state);
}
BENCHMARK(parseAndDecodePod)->Name("BM_ParseAndDecodePod");

// nlohmann::json -> Pod alone.
void decodePodOnly(benchmark::State& state) {
  const Json parsed = Json::parse(podText());
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    auto pod = kubeslurm::api::decodePod(parsed);
    benchmark::DoNotOptimize(pod);
  }
  setBytes(state);
}
BENCHMARK(decodePodOnly)->Name("BM_DecodePod");

// Pod -> nlohmann::json (unchanged object: every field compared and left as it was).
void encodePodOnly(benchmark::State& state) {
  const auto pod = kubeslurm::api::decodePod(Json::parse(podText()));
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    Json out = kubeslurm::api::encodePod(*pod);
    benchmark::DoNotOptimize(out);
  }
  setBytes(state);
}
BENCHMARK(encodePodOnly)->Name("BM_EncodePod");

// Pod -> JSON text, as sent on an update.
void encodePodToText(benchmark::State& state) {
  const auto pod = kubeslurm::api::decodePod(Json::parse(podText()));
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): the benchmark loop
    std::string out = kubeslurm::api::encodePod(*pod).dump();
    benchmark::DoNotOptimize(out);
  }
  setBytes(state);
}
BENCHMARK(encodePodToText)->Name("BM_EncodePodToText");

}  // namespace

// The operator's accounting writer at issue 21's scale: what offering every job costs each
// scheduling cycle (the loop's share), and how fast the worker drains records to SQLite on this
// machine's disk. Measures; asserts nothing.
//
//   build/bin/accounting_writer_bench [--jobs 50000] [--dir /tmp]
//
// Phases, each timed on the loop's thread: the first offer (every job new: its record made and
// queued), then the wait until the worker has committed them all; offers with nothing changed
// (the steady state); offers with 1% of the jobs changed (a busy cycle). The baseline, from the
// same run, is translating every job to its record, which a writer without the
// resourceVersion gate would pay each cycle. Ends with one line of JSON.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "controllers/accounting_writer.h"
#include "kubeslurm/accounting/slurmjob_records.h"
#include "kubeslurm/accounting/sqlite_store.h"

namespace kubeslurm::controllers {
namespace {

using Clock = std::chrono::steady_clock;

double millis(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Job `i`: a 4-node, 32-GPU gang, finished for most, running for a tenth.
api::SlurmJobObject job(std::int64_t i, std::int64_t version) {
  api::SlurmJobObject j;
  j.name = "train-" + std::to_string(i);
  j.namespaceName = "team-" + std::to_string(i % 20);
  j.user = "user" + std::to_string(i % 200);
  j.request.jobName = "train";
  j.request.account = "account" + std::to_string(i % 50);
  j.request.partition = "gpu";
  j.request.nodes = slurm::NodeRange{4, std::nullopt};
  j.request.gres = {slurm::GresRequest{"gpu", "h100", 8}};
  j.request.timeLimit = slurm::TimeLimit{86400};
  j.status.emplace();
  j.status->jobId = i + 1;
  j.status->submitTime = 1795000000 + i;
  j.status->startTime = 1795000100 + i;
  j.status->nodeList =
      "gpu-[" + std::to_string(100 + i % 800) + "-" + std::to_string(103 + i % 800) + "]";
  if (i % 10 == 0) {
    j.status->state = "RUNNING";
  } else {
    j.status->state = "COMPLETED";
    j.status->endTime = 1795003700 + i;
    j.status->exitCode = "0:0";
  }
  auto& meta = j.raw.edit()["metadata"];
  meta["uid"] = "uid-" + std::to_string(i);
  meta["resourceVersion"] = std::to_string(version);
  return j;
}

int run(int argc, char** argv) {
  std::int64_t jobs = 50000;
  std::string base = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--jobs") jobs = std::atoll(argv[i + 1]);
    if (flag == "--dir") base = argv[i + 1];
  }
  std::string dir = base + "/accounting-writer-bench-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return 1;
  auto store = accounting::SqliteStore::open(dir + "/accounting.db");
  if (!store.isOk()) {
    std::cerr << store.status().toString() << "\n";
    return 1;
  }
  std::vector<api::SlurmJobObject> objects;
  objects.reserve(static_cast<std::size_t>(jobs));
  for (std::int64_t i = 0; i < jobs; ++i) objects.push_back(job(i, 1));
  SharedList<api::SlurmJobObject> list(objects);
  const std::vector<api::Partition> partitions;

  // Baseline: every job's record made, as an ungated writer would each cycle.
  Clock::time_point began = Clock::now();
  std::size_t made = 0;
  for (const api::SlurmJobObject& j : list) {
    if (accounting::recordOfSlurmJob(j, false, {}).has_value()) ++made;
  }
  const double translateAll = millis(began);

  AccountingWriter writer(
      [s = store->get()](std::span<const accounting::JobRecord> records) {
        return s->write(records);
      },
      AccountingWriterOptions{});
  began = Clock::now();
  writer.offer(list, partitions);
  const double firstOffer = millis(began);
  while (writer.stats().queued > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double drained = millis(began);

  constexpr int kRounds = 20;
  began = Clock::now();
  for (int r = 0; r < kRounds; ++r) writer.offer(list, partitions);
  const double unchanged = millis(began) / kRounds;

  double busy = 0;
  const std::int64_t changedPerRound = std::max<std::int64_t>(jobs / 100, 1);
  for (int r = 0; r < kRounds; ++r) {
    for (std::int64_t k = 0; k < changedPerRound; ++k) {
      const std::int64_t i = (r * changedPerRound + k) % jobs;
      list.replace(static_cast<std::size_t>(i), job(i, 2 + r));
    }
    began = Clock::now();
    writer.offer(list, partitions);
    busy += millis(began);
  }
  busy /= kRounds;
  while (writer.stats().queued > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  const double rate = static_cast<double>(jobs) / (drained / 1000.0);
  std::cout << "jobs " << jobs << " (" << made << " records)\n"
            << "baseline: every job's record made: " << translateAll << " ms\n"
            << "first offer (all new): " << firstOffer << " ms on the loop; committed after "
            << drained << " ms (" << static_cast<std::int64_t>(rate) << " records/s)\n"
            << "offer, nothing changed: " << unchanged << " ms (" << translateAll / unchanged
            << "x less than the baseline)\n"
            << "offer, 1% changed: " << busy << " ms\n";
  std::cout << "{\"jobs\":" << jobs << ",\"translate_all_ms\":" << translateAll
            << ",\"first_offer_ms\":" << firstOffer << ",\"drained_ms\":" << drained
            << ",\"records_per_s\":" << rate << ",\"unchanged_offer_ms\":" << unchanged
            << ",\"busy_offer_ms\":" << busy << "}\n";
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace kubeslurm::controllers

int main(int argc, char** argv) { return kubeslurm::controllers::run(argc, argv); }

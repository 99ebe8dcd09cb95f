// The accounting store at the scale issue 21 names: --records job records (1,000,000) of 200
// users in 50 accounts over 180 days, a tenth of them with two steps, written in batches of
// --batch (1,000) to SQLite on this machine's disk (or, with --postgres, to the PostgreSQL
// database a libpq connection string names), then `sacct -u U -S <a month ago>`'s query.
// Measures; asserts nothing.
//
//   build/bin/accounting_store_bench [--records 1000000] [--batch 1000] [--dir /tmp]
//   build/bin/accounting_store_bench --postgres "host=127.0.0.1 port=P user=postgres dbname=D"
//
// Each figure has a baseline from the same run, since these machines are noisy: ingest against
// one record per transaction (a few thousand of them), the query against the same selection
// made to scan the table (unary + keeps SQLite from any index; PostgreSQL's planner is told not
// to use one). Bytes per record are the file's (and its write-ahead log's) after a checkpoint,
// or PostgreSQL's tables with their indexes. Ends with one line of JSON.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include "kubeslurm/accounting/postgres_store.h"
#include "kubeslurm/accounting/sqlite_store.h"

namespace kubeslurm::accounting {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::int64_t kNow = 1795000000;
constexpr std::int64_t kDay = 86400;

double seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Record `i`, reproducibly (a multiplicative hash spreads users, accounts and times).
JobRecord record(std::int64_t i) {
  const auto h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
  JobRecord r;
  r.cluster = "kubeslurm";
  r.jobId = 1000 + i;
  r.user = "user" + std::to_string(h % 200);
  r.account = "account" + std::to_string(h % 200 % 50);
  r.namespaceName = "team-" + std::to_string(h % 200 % 50);
  r.name = "train-" + std::to_string(h % 997);
  r.partition = "gpu";
  r.qos = "normal";
  const std::int64_t end = kNow - static_cast<std::int64_t>((h >> 20) % (180 * kDay));
  const std::int64_t length = 60 + static_cast<std::int64_t>((h >> 40) % (8 * 3600));
  r.submitTime = end - length - 120;
  r.eligibleTime = r.submitTime;
  r.startTime = end - length;
  r.endTime = end;
  r.state = (h >> 8) % 10 == 0 ? "FAILED" : "COMPLETED";
  r.exitCode = r.state == "FAILED" ? "1:0" : "0:0";
  r.reason = "None";
  const std::int64_t nodes = 1 + static_cast<std::int64_t>((h >> 12) % 4);
  r.nodes = nodes;
  r.cpus = nodes * 8;
  r.gpus = nodes * 8;
  r.reqTres = "cpu=" + std::to_string(r.cpus) + ",mem=" + std::to_string(nodes * 512) +
              "G,node=" + std::to_string(nodes) + ",billing=" + std::to_string(r.cpus) +
              ",gres/gpu=" + std::to_string(r.gpus);
  r.allocTres = r.reqTres;
  r.gpuType = "h100";
  const auto first = static_cast<std::int64_t>(100 + h % 800);
  r.nodeList = "gpu-[" + std::to_string(first) + "-" + std::to_string(first + nodes - 1) + "]";
  if (i % 10 == 0) {
    r.steps = {StepRecord{"batch", "batch", r.startTime, r.endTime, r.state, r.exitCode, 1, 1, 1,
                          "gpu-100"},
               StepRecord{"0", "torchrun", r.startTime, r.endTime, r.state, r.exitCode, nodes,
                          nodes, nodes, r.nodeList}};
  }
  return r;
}

std::int64_t fileBytes(const std::filesystem::path& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::int64_t>(size);
}

int run(int argc, char** argv) {
  std::int64_t records = 1000000;
  std::int64_t batch = 1000;
  std::filesystem::path base = std::filesystem::temp_directory_path();
  std::string dsn;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--records") records = std::max<std::int64_t>(std::atoll(argv[i + 1]), 1);
    if (flag == "--batch") batch = std::max<std::int64_t>(std::atoll(argv[i + 1]), 1);
    if (flag == "--dir") base = argv[i + 1];
    if (flag == "--postgres") dsn = argv[i + 1];
  }
  std::string pattern = (base / "accounting-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "cannot make a directory under " << base << "\n";
    return 1;
  }
  const std::filesystem::path dir = pattern;
  const std::filesystem::path path = dir / "accounting.db";
  const bool postgres = !dsn.empty();
  std::unique_ptr<RecordStore> store;
  if (postgres) {
    auto opened = PostgresStore::open(dsn);
    if (!opened.isOk()) {
      std::cerr << opened.status().toString() << "\n";
      return 1;
    }
    store = std::move(opened).value();
  } else {
    auto opened = SqliteStore::open(path.string());
    if (!opened.isOk()) {
      std::cerr << opened.status().toString() << "\n";
      return 1;
    }
    store = std::move(opened).value();
  }

  // Baseline: one record per transaction (a commit, and its sync, each).
  const std::int64_t single = std::min<std::int64_t>(2000, records);
  auto began = Clock::now();
  for (std::int64_t i = 0; i < single; ++i) {
    const JobRecord r = record(i);
    if (!store->write({&r, 1}).isOk()) return 1;
  }
  const double singleRate = static_cast<double>(single) / seconds(began);

  std::cerr << "writing " << records << " records in batches of " << batch << "\n";
  began = Clock::now();
  std::vector<JobRecord> chunk;
  for (std::int64_t i = 0; i < records; i += batch) {
    chunk.clear();
    for (std::int64_t j = i; j < std::min(records, i + batch); ++j) chunk.push_back(record(j));
    auto written = store->write(chunk);
    if (!written.isOk()) {
      std::cerr << written.status().toString() << "\n";
      return 1;
    }
  }
  const double batchSeconds = seconds(began);
  const double batchRate = static_cast<double>(records) / batchSeconds;

  // sacct -u user7 -S <a month ago>: median of 5.
  JobFilter filter;
  filter.cluster = "kubeslurm";
  filter.users = {"user7"};
  filter.from = kNow - 30 * kDay;
  filter.to = kNow;
  std::vector<double> times;
  std::size_t found = 0;
  for (int k = 0; k < 5; ++k) {
    began = Clock::now();
    auto got = store->query(filter);
    times.push_back(seconds(began));
    if (!got.isOk()) return 1;
    found = got->size();
  }
  std::sort(times.begin(), times.end());
  const double queryMs = times[2] * 1e3;
  store.reset();

  // The same selection made to scan the table, and the store's size.
  const std::string where = std::string(postgres ? "\"user\"" : "+user") +
                            " = 'user7' AND COALESCE(end_time, 9223372036854775807) >= " +
                            std::to_string(kNow - 30 * kDay) +
                            " AND COALESCE(start_time, submit_time, 0) <= " + std::to_string(kNow);
  std::int64_t scanned = -1;
  double scanMs = 0;
  std::int64_t bytes = 0;
  if (postgres) {
    PGconn* connection = PQconnectdb(dsn.c_str());
    for (const char* off : {"SET enable_indexscan = off", "SET enable_bitmapscan = off",
                            "SET enable_indexonlyscan = off", "VACUUM ANALYZE jobs"}) {
      PQclear(PQexec(connection, off));
    }
    began = Clock::now();
    PGresult* counted = PQexec(connection, ("SELECT COUNT(*) FROM jobs WHERE " + where).c_str());
    scanMs = seconds(began) * 1e3;
    if (PQresultStatus(counted) == PGRES_TUPLES_OK) scanned = std::atoll(PQgetvalue(counted, 0, 0));
    PQclear(counted);
    PGresult* size = PQexec(
        connection, "SELECT pg_total_relation_size('jobs') + pg_total_relation_size('steps')");
    if (PQresultStatus(size) == PGRES_TUPLES_OK) bytes = std::atoll(PQgetvalue(size, 0, 0));
    PQclear(size);
    PQfinish(connection);
  } else {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
    const std::string scan =
        "SELECT COUNT(*) FROM jobs WHERE +cluster = 'kubeslurm' AND +state <> '' AND " + where;
    began = Clock::now();
    const int scanResult = sqlite3_exec(
        db, scan.c_str(),
        [](void* out, int, char** values, char**) {
          *static_cast<std::int64_t*>(out) = std::atoll(values[0]);
          return 0;
        },
        &scanned, nullptr);
    scanMs = seconds(began) * 1e3;
    if (scanResult != SQLITE_OK) std::cerr << "scan: " << sqlite3_errmsg(db) << "\n";
    sqlite3_close(db);
    bytes = fileBytes(path) + fileBytes(dir.string() + "/accounting.db-wal");
  }
  std::filesystem::remove_all(dir);

  std::printf("== accounting store: %lld records (%s) ==\n", static_cast<long long>(records),
              postgres ? "PostgreSQL, libpq" : "SQLite, synchronous=FULL, WAL");
  std::printf(
      "ingest, batches of %lld: %.0f records/s (%.1f s); one per transaction: %.0f/s; "
      "batched/single %.1fx\n",
      static_cast<long long>(batch), batchRate, batchSeconds, singleRate, batchRate / singleRate);
  std::printf(
      "sacct -u user7 -S <30 days ago>: %zu records in %.1f ms; the same scanning the "
      "table %.1f ms (%lld found, %.1fx)\n",
      found, queryMs, scanMs, static_cast<long long>(scanned), scanMs / std::max(queryMs, 1e-3));
  std::printf("bytes per record on disk: %.0f\n",
              static_cast<double>(bytes) / static_cast<double>(records + single));
  std::printf(
      "{\"store\":\"%s\",\"records\":%lld,\"batch\":%lld,\"ingest_per_s\":%.0f,\"single_per_s\":%."
      "0f,"
      "\"query_ms\":%.2f,\"query_records\":%zu,\"scan_ms\":%.2f,\"bytes_per_record\":%.0f}\n",
      postgres ? "postgresql" : "sqlite", static_cast<long long>(records),
      static_cast<long long>(batch), batchRate, singleRate, queryMs, found, scanMs,
      static_cast<double>(bytes) / static_cast<double>(records + single));
  return 0;
}

}  // namespace
}  // namespace kubeslurm::accounting

int main(int argc, char** argv) { return kubeslurm::accounting::run(argc, argv); }

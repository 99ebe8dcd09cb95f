// The order both stores (sqlite_store.cc, postgres_store.cc) bind a record's columns in and
// read them back, the columns' names in that order, and the statements both run, written from
// those names: a column is added here once and lines up in both.
//
//   Binder: bind(std::string_view), bind(std::int64_t), bind(const std::optional<std::int64_t>&)
//   Row:    text(), integer(), optionalInteger(): the next column of the row
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kubeslurm/accounting/job_records.h"

namespace kubeslurm::accounting {

// The columns of `jobs`, in the order bindJobColumns binds them. "user" is quoted: a reserved
// word in PostgreSQL, and a quoted identifier to SQLite as well.
inline constexpr std::array<std::string_view, 32> kJobColumns = {"cluster",
                                                                 "job_id",
                                                                 "attempt",
                                                                 "array_job_id",
                                                                 "array_task_id",
                                                                 "name",
                                                                 "\"user\"",
                                                                 "namespace",
                                                                 "account",
                                                                 "partition",
                                                                 "qos",
                                                                 "submit_time",
                                                                 "eligible_time",
                                                                 "start_time",
                                                                 "end_time",
                                                                 "state",
                                                                 "phase",
                                                                 "exit_code",
                                                                 "reason",
                                                                 "req_tres",
                                                                 "alloc_tres",
                                                                 "gpu_type",
                                                                 "nodes",
                                                                 "cpus",
                                                                 "gpus",
                                                                 "node_list",
                                                                 "array_tasks",
                                                                 "priority",
                                                                 "time_limit_minutes",
                                                                 "work_dir",
                                                                 "req_nodes",
                                                                 "interactive"};
// The columns of `steps`, in the order bindStepColumns binds them; the run's key first.
inline constexpr std::array<std::string_view, 13> kStepColumns = {
    "cluster", "job_id",    "attempt", "step_id", "name",      "start_time", "end_time",
    "state",   "exit_code", "tasks",   "nodes",   "node_list", "cpus"};
inline constexpr std::size_t kRunKeyColumns = 3;

// How a store's SQL marks its nth parameter (from 1): SQLite's "?", PostgreSQL's "$n".
using ParameterMark = std::string (*)(std::size_t n);

inline std::string columnList(std::span<const std::string_view> columns) {
  std::string out;
  for (std::string_view column : columns) out += (out.empty() ? "" : ", ") + std::string(column);
  return out;
}

inline std::string parameterList(ParameterMark mark, std::size_t count) {
  std::string out;
  for (std::size_t n = 1; n <= count; ++n) out += (n == 1 ? "" : ", ") + mark(n);
  return out;
}

// "cluster = <1> AND job_id = <2> AND attempt = <3>": a run's key.
inline std::string runKeyCondition(ParameterMark mark) {
  std::string out;
  for (std::size_t n = 1; n <= kRunKeyColumns; ++n) {
    out += (n == 1 ? "" : " AND ") + std::string(kStepColumns[n - 1]) + " = " + mark(n);
  }
  return out;
}

// A run's row, inserted or replaced; a stored run further on (a higher phase) is left as it is.
inline std::string upsertJobSql(ParameterMark mark) {
  std::string sql = "INSERT INTO jobs (" + columnList(kJobColumns) + ") VALUES (" +
                    parameterList(mark, kJobColumns.size()) +
                    ") ON CONFLICT (cluster, job_id, attempt) DO UPDATE SET ";
  for (std::size_t i = kRunKeyColumns; i < kJobColumns.size(); ++i) {
    const std::string column(kJobColumns[i]);
    sql += (i == kRunKeyColumns ? "" : ", ") + column + " = excluded." + column;
  }
  return sql + " WHERE excluded.phase >= jobs.phase";
}

inline std::string deleteStepsSql(ParameterMark mark) {
  return "DELETE FROM steps WHERE " + runKeyCondition(mark);
}

inline std::string insertStepSql(ParameterMark mark) {
  return "INSERT INTO steps (" + columnList(kStepColumns) + ") VALUES (" +
         parameterList(mark, kStepColumns.size()) + ")";
}

// A run's steps, by step id as bytes: `byteOrder` is what makes the store compare them so
// (PostgreSQL's ` COLLATE "C"`; SQLite's default already does).
inline std::string selectStepsSql(ParameterMark mark, std::string_view byteOrder) {
  return "SELECT " + columnList(std::span(kStepColumns).subspan(kRunKeyColumns)) +
         " FROM steps WHERE " + runKeyCondition(mark) + " ORDER BY step_id" +
         std::string(byteOrder);
}

// "SELECT <the columns readJobColumns reads> FROM jobs": every column but the phase.
inline std::string selectJobsSql() {
  std::string sql = "SELECT ";
  bool first = true;
  for (std::string_view column : kJobColumns) {
    if (column == "phase") continue;
    sql += (first ? "" : ", ") + std::string(column);
    first = false;
  }
  return sql + " FROM jobs";
}

// (cluster, job id, attempt): the key of a run, the first columns of both tables.
template <typename Binder>
void bindRunKey(const JobRecord& r, Binder& b) {
  b.bind(std::string_view(r.cluster));
  b.bind(r.jobId);
  b.bind(r.attempt);
}

// A run's row of `jobs`, key first; its phase (runPhase) in its column.
template <typename Binder>
void bindJobColumns(const JobRecord& r, Binder& b) {
  bindRunKey(r, b);
  b.bind(r.arrayJobId);
  b.bind(r.arrayTaskId);
  for (const std::string* text :
       {&r.name, &r.user, &r.namespaceName, &r.account, &r.partition, &r.qos}) {
    b.bind(std::string_view(*text));
  }
  b.bind(r.submitTime);
  b.bind(r.eligibleTime);
  b.bind(r.startTime);
  b.bind(r.endTime);
  b.bind(std::string_view(r.state));
  b.bind(static_cast<std::int64_t>(runPhase(r.state)));
  for (const std::string* text : {&r.exitCode, &r.reason, &r.reqTres, &r.allocTres, &r.gpuType}) {
    b.bind(std::string_view(*text));
  }
  b.bind(r.nodes);
  b.bind(r.cpus);
  b.bind(r.gpus);
  b.bind(std::string_view(r.nodeList));
  b.bind(std::string_view(r.arrayTasks));
  b.bind(r.priority);
  b.bind(r.timeLimitMinutes);
  b.bind(std::string_view(r.workDir));
  b.bind(r.reqNodes);
  b.bind(std::int64_t{r.interactive ? 1 : 0});
}

// The same columns as a query selects them (no phase).
template <typename Row>
JobRecord readJobColumns(Row& row) {
  JobRecord r;
  r.cluster = row.text();
  r.jobId = row.integer();
  r.attempt = row.integer();
  r.arrayJobId = row.optionalInteger();
  r.arrayTaskId = row.optionalInteger();
  for (std::string* text : {&r.name, &r.user, &r.namespaceName, &r.account, &r.partition, &r.qos}) {
    *text = row.text();
  }
  r.submitTime = row.optionalInteger();
  r.eligibleTime = row.optionalInteger();
  r.startTime = row.optionalInteger();
  r.endTime = row.optionalInteger();
  for (std::string* text :
       {&r.state, &r.exitCode, &r.reason, &r.reqTres, &r.allocTres, &r.gpuType}) {
    *text = row.text();
  }
  r.nodes = row.integer();
  r.cpus = row.integer();
  r.gpus = row.integer();
  r.nodeList = row.text();
  r.arrayTasks = row.text();
  r.priority = row.optionalInteger();
  r.timeLimitMinutes = row.optionalInteger();
  r.workDir = row.text();
  r.reqNodes = row.integer();
  r.interactive = row.integer() != 0;
  return r;
}

// A step's row of `steps`, after its run's key.
template <typename Binder>
void bindStepColumns(const JobRecord& run, const StepRecord& s, Binder& b) {
  bindRunKey(run, b);
  b.bind(std::string_view(s.stepId));
  b.bind(std::string_view(s.name));
  b.bind(s.startTime);
  b.bind(s.endTime);
  b.bind(std::string_view(s.state));
  b.bind(std::string_view(s.exitCode));
  b.bind(s.tasks);
  b.bind(s.nodes);
  b.bind(std::string_view(s.nodeList));
  b.bind(s.cpus);
}

// The step columns as a query selects them (without the run's key).
template <typename Row>
StepRecord readStepColumns(Row& row) {
  StepRecord s;
  s.stepId = row.text();
  s.name = row.text();
  s.startTime = row.optionalInteger();
  s.endTime = row.optionalInteger();
  s.state = row.text();
  s.exitCode = row.text();
  s.tasks = row.integer();
  s.nodes = row.integer();
  s.nodeList = row.text();
  s.cpus = row.integer();
  return s;
}

}  // namespace kubeslurm::accounting

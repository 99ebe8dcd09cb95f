// The order both stores (sqlite_store.cc, postgres_store.cc) bind a record's columns in and
// read them back: their upserts, inserts and selects name the columns in this order, so a
// column is added here once and lines up in both.
//
//   Binder: bind(std::string_view), bind(std::int64_t), bind(const std::optional<std::int64_t>&)
//   Row:    text(), integer(), optionalInteger(): the next column of the row
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kubeslurm/accounting/job_records.h"

namespace kubeslurm::accounting {

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

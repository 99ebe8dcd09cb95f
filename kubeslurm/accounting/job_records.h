// Lasting job accounting: what a finished (or running) job leaves behind once its SlurmJob is
// gone, as records a store keeps (sqlite_store.h) and sacct, sreport and chargeback read back.
//
// A record is one run of a job: Slurm's "job id + attempt" (a requeued job runs again under its
// id; sacct --duplicates shows each run). Its key is (cluster, job id, attempt), so writing the
// same run twice -- after an operator restart, a failover, or a retry of a batch the database
// lost -- leaves one record (issue 21: idempotent upserts). Writers may race or repeat: a record
// replaces the stored one of its run unless the stored one is further on (recordSupersedes), so a
// late RUNNING write never turns a COMPLETED run back into a running one.
//
// Times are Unix seconds; absent is "not yet" (a pending job has no start). TRES are Slurm's
// text ("cpu=64,mem=500G,node=1,billing=64,gres/gpu=8"), as sacct prints ReqTRES and AllocTRES.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kubeslurm::accounting {

// One step of a run (srun inside the batch script, "N.0", "N.1", ... and "N.batch").
struct StepRecord {
  std::string stepId;  // "0", "1", "batch", "extern"
  std::string name;
  std::optional<std::int64_t> startTime;
  std::optional<std::int64_t> endTime;
  std::string state;     // COMPLETED, FAILED, CANCELLED, ...
  std::string exitCode;  // "0:0"
  std::int64_t tasks = 0;
  std::int64_t cpus = 0;
  std::int64_t nodes = 0;
  std::string nodeList;
  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

struct JobRecord {
  std::string cluster;
  std::int64_t jobId = 0;
  std::int64_t attempt = 0;  // restarts before this run (status.restarts)
  std::optional<std::int64_t> arrayJobId;
  std::optional<std::int64_t> arrayTaskId;
  // An array's own record while its tasks are not split off (sacct's "A_[0-7]"): the task ids
  // it stands for; "" for any other run.
  std::string arrayTasks;
  std::string name;
  std::string user;  // the authenticated submitter's Slurm name
  std::string namespaceName;
  std::string account;
  std::string partition;
  std::string qos;
  std::optional<std::int64_t> submitTime;
  std::optional<std::int64_t> eligibleTime;
  std::optional<std::int64_t> startTime;
  std::optional<std::int64_t> endTime;
  std::string state;     // Slurm's name: PENDING, RUNNING, COMPLETED, FAILED, ...
  std::string exitCode;  // "0:0"
  std::string reason;    // why it ended (or waits), Slurm's reason name; "" for none
  std::optional<std::int64_t> priority;
  std::optional<std::int64_t> timeLimitMinutes;  // absent: UNLIMITED
  std::string workDir;
  std::string reqTres;
  std::string allocTres;      // empty until it runs
  std::string gpuType;        // the GPU type it asked for ("h100"), "" for any
  std::int64_t reqNodes = 0;  // the minimum it asked for
  bool interactive = false;   // an allocation for srun or salloc from a login host: no batch step
  std::int64_t nodes = 0;     // allocated: 0 until it runs
  std::int64_t cpus = 0;
  std::int64_t gpus = 0;
  std::string nodeList;           // allocated: "" until it runs
  std::vector<StepRecord> steps;  // srun's steps, by step id (the batch step is implied)
  friend bool operator==(const JobRecord&, const JobRecord&) = default;
};

// How far a run has got: 0 waiting, 1 running (or suspended, completing), 2 ended. Unknown
// states count as waiting.
int runPhase(const std::string& state);

// Whether `next` may replace `stored`, a record of the same run: unless `stored` is further on.
// Among records of one phase the later write wins (a reason or a step added).
bool recordSupersedes(const JobRecord& next, const JobRecord& stored);

// Which records a query returns. Empty lists match everything.
struct JobFilter {
  std::string cluster;
  // The window (sacct -S/-E): runs whose time overlaps [from, to]. A run's time starts at its
  // start (its submission while it waits) and lasts until its end, or on while it has none.
  std::optional<std::int64_t> from;
  std::optional<std::int64_t> to;
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  std::vector<std::string> states;
  std::vector<std::int64_t> jobIds;  // the job id or the array job id
  std::vector<std::string> namespaces;
  // A page: the runs after this one (job id, attempt), in that order, at most `limit`.
  std::optional<std::pair<std::int64_t, std::int64_t>> after;
  std::size_t limit = 0;  // 0: no limit
};

}  // namespace kubeslurm::accounting

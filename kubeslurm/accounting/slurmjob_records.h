// A job's accounting record from its SlurmJob: what sacct shows of a live job, and what the
// operator writes to the store at each of the job's transitions (so a record read back months
// later prints as the live job did). Pure: the object and what the cluster's partitions say in,
// the record out.
//
// The rules are slurmctld's and slurmdbd's as sacct shows them (Slurm 22.05; the sources are
// named in kubeslurm/cli/sacct_format.h): a job that never got nodes has no node list and no
// AllocTRES; a job cancelled while pending starts when it ends; a job is eligible once only
// resources hold it back (a hold, a dependency or a begin time leave it ineligible).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kubeslurm/accounting/job_records.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::accounting {

// What a record needs besides the job: the cluster it belongs to and the partition defaults a
// job without -p or --time gets.
struct RecordContext {
  std::string cluster = "kubeslurm";
  std::string defaultPartition;
  std::map<std::string, slurm::TimeLimit> partitionDefaultTime;
  std::map<std::string, api::PartitionMemory> partitionMemory;
  // The memory (MB) of each partition's first node: what a job that gets all of each node's
  // memory is charged per node (api::recordedMemory). A partition missing here, no mem=.
  std::map<std::string, std::uint64_t> nodeMemoryMb;
};

// The record of the job's current run (status.restarts is its attempt); nullopt until the job
// has an id. `arrayParent`: the job is an array's own object, whose record stands for the tasks
// not split off yet (arrayTasks). The caller decides which objects are array parents: the
// operator by controller reference, a reader by label.
std::optional<JobRecord> recordOfSlurmJob(const api::SlurmJobObject& job, bool arrayParent,
                                          const RecordContext& context);

// The TRES text slurmdbd hands sacct, names sorted ("billing=4,cpu=4,gres/gpu=32,mem=2000G,
// node=4"), for `nodes` nodes of the request with `cpus` CPUs and `tasks` tasks, its memory as
// api::recordedMemory counts it in `partition` (started: placed by then).
std::string tresText(const slurm::JobRequest& request, std::int64_t cpus, std::int64_t nodes,
                     std::int64_t tasks, const std::string& partition, bool started,
                     const RecordContext& context);

}  // namespace kubeslurm::accounting

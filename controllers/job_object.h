// What every controller asks of a SlurmJob object and the pods made for it: its key, its
// metadata, its partition and default account, and whether a pod is one of its ranks. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::controllers {

// What the operator's SlurmJob cache keeps of a job's batch script (leanSlurmJob, cluster_view.h):
// a stand-in. A script is up to a MiB and read only when the job's gang is admitted: the binder
// reads it from the job itself then (GangBinder::admit), as the array controller does before it
// copies an array's spec into its tasks. A script that happens to be this text is read the same
// way. The stand-in is a valid script, so what checks a cached job's pods (admission holds,
// --test-only) sees a job with a script.
inline constexpr std::string_view kScriptNotCached =
    "#!/bin/sh\n# kubeslurm: the batch script is read from the SlurmJob at admission\n";

// The account of a job that names none: the Account that lists its namespace (the first by name
// when several do), as Slurm uses a user's default account; else root, the top of the tree every
// cluster has ("" when there are no Accounts at all).
std::string defaultAccountFor(const std::vector<api::Account>& accounts, const std::string& ns);

// The key a job has in SnapshotIndex::jobKeys and JobProblem: "ns/name".
std::string jobKey(const api::SlurmJobObject& job);

// A job's metadata as cached (uid, labels, creationTimestamp...): the SlurmJob codec models only
// name and namespace. Just those two when the cached metadata does not decode.
api::ObjectMeta jobMetadata(const api::SlurmJobObject& job);

// The SlurmJob a pod was made for: its owner of kind SlurmJob, else its job-name label; "" for
// any other pod.
std::string podJobName(const api::Pod& pod);

// A pod the operator made for a SlurmJob: owned by a SlurmJob or labelled with its name.
bool isRankPod(const api::Pod& pod);

// The names of a partition list as sbatch -p a,b writes it, in order, empty names skipped.
std::vector<std::string_view> partitionNames(std::string_view list);

// The partitions a job may run in: spec.partition as sbatch -p a,b writes it, each name once, in
// the order given (empty names skipped), else the default one (spec.default, else the only
// partition). Empty when a name is unknown or there is no default; `message` then says why, as
// sbatch would: slurmctld refuses the whole list when one name is unknown.
std::vector<const api::Partition*> jobPartitions(const slurm::JobRequest& request,
                                                 const std::vector<api::Partition>& partitions,
                                                 std::string* message);

// The first of jobPartitions: the one whose DefaultTime a job without --time gets, and where a
// pending job is counted. nullptr when there is none.
const api::Partition* jobPartition(const slurm::JobRequest& request,
                                   const std::vector<api::Partition>& partitions,
                                   std::string* message);

// The partition a job's record shows while it waits (status.partition), as slurmctld's job
// record holds it: the list as given (sbatch -p a,b), else the default partition it goes to;
// "" when there is none.
std::string submittedPartition(const slurm::JobRequest& request,
                               const std::vector<api::Partition>& partitions);

// The partition a rank pod was made for (its partition annotation); "" without one.
std::string admittedPartition(const api::Pod& rankPod);

// The partition a job runs in: `admittedIn` (admittedPartition of its current attempt's ranks)
// when it has started, else status.partition where it names one partition, else the first it
// names (jobPartition), else the first name it asked for. `name` gets its name; nullptr when no
// such partition exists (any more: a deleted partition still has jobs running in it).
const api::Partition* runningPartition(const api::SlurmJobObject& job, std::string_view admittedIn,
                                       const std::vector<api::Partition>& partitions,
                                       std::string& name);

}  // namespace kubeslurm::controllers

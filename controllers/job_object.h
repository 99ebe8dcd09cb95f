// What every controller asks of a SlurmJob object and the pods made for it: its key, its
// metadata, its partition and default account, and whether a pod is one of its ranks. Pure.
#pragma once

#include <string>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/slurm/sbatch_options.h"

namespace kubeslurm::controllers {

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

// The partition a job runs in: spec.partition, else the default one (spec.default, else the
// only partition). nullptr when there is none; `message` then says why, as sbatch would.
const api::Partition* jobPartition(const slurm::JobRequest& request,
                                   const std::vector<api::Partition>& partitions,
                                   std::string* message);

}  // namespace kubeslurm::controllers

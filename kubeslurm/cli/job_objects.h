// What the CLI's commands read from SlurmJob, Partition and Account objects beyond their codecs:
// the array bookkeeping labels the operator writes (controllers/arrays.h), the partition
// defaults a job without -p or --time gets (api/slurmjob.h has a job's state and partition), and
// the Accounts of a list.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/kube/client.h"
#include "kubeslurm/slurm/names.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

// The SlurmJobs of a SlurmJobList; objects that do not decode are left out (the operator marks
// them Valid=False; a listing command has nothing to show for them).
std::vector<api::SlurmJobObject> decodeJobList(const kube::Json& list);

// The Accounts of an AccountList. One that does not decode is left out (the operator reports it
// on the object): `leftOut` says which and why, for a command to say so.
struct AccountList {
  struct LeftOut {
    std::string name;
    std::string reason;
  };
  std::vector<api::Account> accounts;
  std::vector<LeftOut> leftOut;
};
AccountList decodeAccountList(const kube::Json& list);

// A label of the job's metadata as cached; "" when absent.
std::string labelOf(const api::SlurmJobObject& job, std::string_view key);

// An array's own SlurmJob (spec.array, and not one of its tasks): never a row of its own.
bool isArrayParent(const api::SlurmJobObject& job);

// The tasks of an array that have no SlurmJob with an id yet (the operator makes them 64 a
// cycle): pending in the array's record, as Slurm's meta record holds its pending tasks, so that
// squeue and scontrol show them from the moment sbatch printed the array's id.
struct UnmadeTasks {
  // The array's object as these tasks' stand-in: PENDING, on no node, its id the array job id
  // (arrayTaskId unset), the reason the array's status gives while it is pending, else None.
  api::SlurmJobObject standIn;
  std::vector<std::uint32_t> taskIds;  // ascending
};
// Per array id, of the arrays among `jobs` that have an id and such tasks.
std::map<std::int64_t, UnmadeTasks> unmadeArrayTasks(const std::vector<api::SlurmJobObject>& jobs);

struct PartitionDefaults {
  std::string defaultPartition;  // shown for a job that names none
  std::map<std::string, slurm::TimeLimit> defaultTime;
  std::map<std::string, api::PartitionMemory> memory;
  std::vector<api::Partition> partitions;  // those that decode, by name
};

// From a PartitionList (controllers/snapshot.cc jobPartition's rule): the partition marked
// default (the first by name), else the only one; a job without --time gets its partition's
// default time (or max time).
PartitionDefaults partitionDefaults(const kube::Json& list);

}  // namespace kubeslurm::cli

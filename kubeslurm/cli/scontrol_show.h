// `scontrol show job|partition|node` as Slurm 22.05 prints them, as pure functions of decoded
// objects and `now`: no I/O, no clock. scontrol_cmd.cc fetches the objects.
//
// Sources of truth (Slurm 22.05.8): src/api/job_info.c (slurm_sprint_job_info),
// src/api/partition_info.c (slurm_sprint_partition_info), src/api/node_info.c
// (slurm_sprint_node_table), and ../shared/reference/slurm-22.05.md ("scontrol show job",
// "Job arrays"). Each record ends with a blank line ("\n\n"), or is one line with -o.
//
// What we cannot know is printed as Slurm prints an unset value (docs/cli.md "scontrol"):
// UserId/GroupId carry the user and the namespace with the uid 4294967294 (Slurm's NO_VAL:
// there are no Unix ids in the cluster), AllocNode:Sid=(null):0, TRES without mem= for a job.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/api/kubeslurm_types.h"
#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/command_output.h"
#include "kubeslurm/cli/sinfo_format.h"
#include "kubeslurm/slurm/time_format.h"

namespace kubeslurm::cli {

struct ShowContext {
  slurm::EpochSeconds now = 0;
  std::int32_t utcOffsetSeconds = 0;
  bool oneLiner = false;  // -o
};

// The job records for `show job [ID]`: ID is "N" (job N, or every record of array N) or "N_T";
// none shows every job. `jobs` are the namespace's SlurmJobs (array parents included: they
// give the throttle); `partitions` give the default partition and time limits. Pending tasks
// of an array print as one record, as slurmctld keeps them ("JobId=6 ArrayJobId=6
// ArrayTaskId=2-7%2 ArrayTaskThrottle=2").
// `nodeMemoryMb` gives the memory (MB) of a partition's first node, which slurmctld counts as
// "all of each node's memory" for a job that asks for none where no DefMemPer* applies; it is
// asked only for such a job, and without it (or an answer) their TRES has no mem=.
using NodeMemoryLookup = std::function<std::optional<std::uint64_t>(const std::string& partition)>;
CommandOutput formatShowJobs(const std::vector<api::SlurmJobObject>& jobs,
                             const std::vector<api::Partition>& partitions,
                             const std::optional<std::string>& id, const ShowContext& context,
                             const NodeMemoryLookup& nodeMemoryMb = {});

// `show partition [NAME]`.
CommandOutput formatShowPartitions(const std::vector<api::Partition>& partitions,
                                   const std::vector<api::Node>& nodes,
                                   const std::vector<NodeFacts>& facts,
                                   const std::optional<std::string>& name,
                                   const ShowContext& context);

// `show node [NAME]` (NAME may be a hostlist).
CommandOutput formatShowNodes(const std::vector<api::Partition>& partitions,
                              const std::vector<api::Node>& nodes,
                              const std::vector<NodeFacts>& facts,
                              const std::optional<std::string>& name, const ShowContext& context);

}  // namespace kubeslurm::cli

// A job step inside a kubeslurm job: which ranks run how many tasks, and the environment each
// task sees. `srun` (kubeslurm/inpod) computes the layout once and sends every rank its tasks; the
// step agent on each rank starts them with taskEnvironment(). PURE.
//
// Slurm's semantics are followed as 22.05 implements them: srun's defaults inside an allocation
// (src/srun/libsrun/opt.c, srun_job.c, launch.c), the step's node and task selection
// (src/slurmctld/step_mgr.c), the task distribution (src/common/slurm_step_layout.c) and the
// variables a step's task gets (src/common/env.c, src/slurmd/slurmstepd/task.c;
// shared/reference/slurm-22.05.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kubeslurm/base/status.h"

namespace kubeslurm::step {

// The allocation a step is carved from, as the batch step's environment describes it (the rank
// pod's SLURM_* variables): srun reads it from its own environment.
struct StepAllocation {
  std::int64_t jobId = 0;
  std::vector<std::string> nodes;  // SLURM_JOB_NODELIST expanded: rank order
  // SLURM_NTASKS of the job (0: one per node). layoutStep does not read it: srun's default task
  // count reaches it as StepRequest::ntasks, the way srun reads SLURM_NTASKS.
  std::uint32_t ntasks = 0;
  std::uint32_t cpusPerNode = 1;  // SLURM_CPUS_ON_NODE
  std::uint32_t gpusPerNode = 0;  // SLURM_GPUS_ON_NODE
};

// What `srun` was asked for: srun's option values once its input environment variables and
// its command line are applied, in that order (parseSrunArguments does both). Inside a batch
// step srun DOES read the job's SLURM_NTASKS (-n), SLURM_JOB_NUM_NODES (-N; not SLURM_NNODES),
// SLURM_NTASKS_PER_NODE, SLURM_DISTRIBUTION (-m) and SRUN_CPUS_PER_TASK (-c; 22.05 no longer
// reads SLURM_CPUS_PER_TASK) through the env_vars table of src/srun/libsrun/opt.c: that is how a
// bare `srun cmd` in a 4-task script runs 4 tasks. So an unset field here is one neither given
// nor inherited, and layoutStep then does what srun does for an option nobody set (all of the
// allocation's nodes, one task each); it never falls back to StepAllocation::ntasks by itself.
struct StepRequest {
  std::optional<std::uint32_t> nodes;          // -N/--nodes (the minimum of min[-max])
  std::optional<std::uint32_t> maxNodes;       // the max of -N min-max; unset: equal to nodes
  std::optional<std::uint32_t> ntasks;         // -n/--ntasks
  std::optional<std::uint32_t> ntasksPerNode;  // --ntasks-per-node
  std::optional<std::uint32_t> cpusPerTask;    // -c/--cpus-per-task
  std::vector<std::string> nodelist;           // -w, expanded (hostnames)
  std::vector<std::string> exclude;            // -x, expanded
  // -m as given ("", "block", "cyclic:block", "plane=4", "pack", ...; case-insensitive). A
  // bare "plane" must carry its size: parseSrunArguments folds SLURM_DIST_PLANESIZE into it.
  std::string distribution;
  // -N came from SLURM_JOB_NUM_NODES rather than the command line: srun then yields to the
  // allocation's node count when they disagree, and `-m pack` drops the node minimum to 1.
  bool nodesFromEnvironment = false;
};

struct StepNode {
  std::uint32_t rank = 0;  // the node's index in the job (SLURM_NODEID of the job)
  std::string hostname;
  std::vector<std::uint32_t> tasks;  // global task ids (SLURM_PROCID) on this node, ascending
};

struct StepLayout {
  std::vector<StepNode> nodes;  // in job-rank order; every one has at least one task
  std::uint32_t ntasks = 0;
  // SLURM_DISTRIBUTION: "block", "cyclic", "block:cyclic", "plane", "cyclic,pack", ...
  std::string distribution;
  std::uint32_t planeSize = 0;  // SLURM_DIST_PLANESIZE when distribution is "plane"
  // --ntasks-per-node as srun keeps it: unset when srun dropped it ("can't honor
  // --ntasks-per-node ...") or it was never set; SLURM_NTASKS_PER_NODE is then inherited.
  std::optional<std::uint32_t> ntasksPerNode;
  // Lines srun prints on stderr before it runs, verbatim with their "srun: " prefix
  // ("srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1").
  std::vector<std::string> warnings;
};

// A parsed -m/--distribution (verify_dist_type in src/common/proc_args.c). `name` is what
// SLURM_DISTRIBUTION shows for its levels ("block:cyclic", "plane"; empty while the node level
// is left to srun's default); `nodeLevel` the part that places tasks on nodes.
struct TaskDistribution {
  enum class NodeLevel { kDefault, kBlock, kCyclic, kPlane, kArbitrary };
  NodeLevel nodeLevel = NodeLevel::kDefault;
  std::string name;
  std::uint32_t planeSize = 0;
  bool pack = false;
  bool noPack = false;
};

// kInvalidArgument with srun's error lines (each without "srun: error: ", joined by "\n"):
// "Invalid --distribution specification", preceded for a plane without a valid size by
// "Invalid plane size or size not specified". `planeSizeEnvironment` is SLURM_DIST_PLANESIZE,
// where a bare "plane" takes its size from.
StatusOr<TaskDistribution> parseDistribution(std::string_view text,
                                             std::optional<std::string_view> planeSizeEnvironment);

// The step's layout, or why srun gives up. The message is the text after "srun: error: "; when
// srun prints several error lines, the later ones follow a "\n" with their own prefix.
//  - kInvalidArgument: srun refuses the request itself ("Only allocated 4 nodes asked for 5",
//    "Requested node n2 is also in the excluded list.", "Invalid --distribution specification");
//  - kResourceExhausted: slurmctld refuses the step ("Unable to create step for job 7:
//    Requested node configuration is not available", "... More processors requested than
//    permitted");
//  - kUnavailable: slurmctld answers "Requested nodes are busy", on which srun waits for ever
//    (message: "Job 7 step creation temporarily disabled, retrying (Requested nodes are busy)");
//  - kUnimplemented: --distribution=arbitrary, which needs SLURM_HOSTFILE.
// The allocation is modelled as kubeslurm has it: every node up, the same CPU count on each, no
// memory limits, and no other step holding CPUs (a step here never waits for another to end).
StatusOr<StepLayout> layoutStep(const StepAllocation& allocation, const StepRequest& request);

// The variables one task of the step adds to (or replaces in) the batch environment it
// inherits, names and formats as Slurm 22.05 sets them (srun's setup_env and
// env_array_for_step in src/common/env.c, slurmstepd's exec_task in
// src/slurmd/slurmstepd/task.c): SLURM_STEP_ID/SLURM_STEPID, SLURM_PROCID, SLURM_LOCALID,
// SLURM_NODEID (the node's index within the step), SLURM_GTIDS, SLURM_STEP_NODELIST,
// SLURM_STEP_NUM_NODES, SLURM_STEP_NUM_TASKS, SLURM_STEP_TASKS_PER_NODE, SLURM_NNODES,
// SLURM_NTASKS, SLURM_NPROCS, SLURM_TASKS_PER_NODE (these four describe the step),
// SLURM_DISTRIBUTION, SLURM_CPUS_ON_NODE, SLURMD_NODENAME, the GPU variables, and
// SLURM_CPUS_PER_TASK / SLURM_NTASKS_PER_NODE only while srun has them set. SLURM_JOB_NODELIST,
// SLURM_NODELIST and SLURM_JOB_NUM_NODES stay the job's. Left to others: SLURM_JOB_NAME (-J)
// and SLURM_LABELIO (-l) to srun's caller, SLURM_TASK_PID and SLURM_UMASK to the step agent,
// SLURM_TOPOLOGY_ADDR to the rank pod's own environment. Left out as meaningless without
// Slurm's wire protocol: SLURM_SRUN_COMM_HOST/PORT, SLURM_STEP_LAUNCHER_PORT,
// SLURM_LAUNCH_NODE_IPADDR. `stepNodeIndex` indexes layout.nodes; `localId` the task within
// that node.
std::map<std::string, std::string> taskEnvironment(const StepAllocation& allocation,
                                                   const StepRequest& request,
                                                   const StepLayout& layout, std::uint32_t stepId,
                                                   std::uint32_t stepNodeIndex,
                                                   std::uint32_t localId);

// Variables of the batch environment that a step's task does not inherit: ROCR_VISIBLE_DEVICES,
// which Slurm sets only in the batch step (shared/reference/slurm-22.05.md).
std::vector<std::string> taskEnvironmentRemovals();

// The environment srun passes a step's tasks, from its own (`environment`) and its --export
// tokens (launch_slurm.c _build_user_env, 22.05). Without --export (no tokens): all of it.
// Otherwise the tokens are read in order up to a NONE: NAME=VALUE sets NAME, NAME copies srun's
// value when it has one, ALL (any case) selects everything; then srun's variables are merged
// over them: all of them with ALL (so they win over a listed value), else only those whose
// names start with "SLURM" (SLURMD_NODENAME too, as env_array_merge_slurm matches).
std::map<std::string, std::string> exportedEnvironment(
    const std::map<std::string, std::string>& environment,
    const std::vector<std::string>& exportTokens);

// "0,1,...,n-1": CUDA_VISIBLE_DEVICES as slurmd sets it for n GPUs. Inside a pod the device
// plugin exposes exactly the allocated GPUs, renumbered from 0, so the ordinals are 0..n-1.
std::string gpuOrdinals(std::uint32_t count);

}  // namespace kubeslurm::step

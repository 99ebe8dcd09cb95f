#include "kubeslurm/step/step_layout.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::step {
namespace {

using Tasks = std::vector<std::vector<std::uint32_t>>;

// The reference cluster's job 2 (shared/reference/slurm-22.05.md, "Batch step environment"):
// 4 nodes, 1 CPU and 8 GPUs each, 4 tasks.
StepAllocation referenceAllocation() {
  StepAllocation allocation;
  allocation.jobId = 2;
  allocation.nodes = {"gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004"};
  allocation.ntasks = 4;
  allocation.cpusPerNode = 1;
  allocation.gpusPerNode = 8;
  return allocation;
}

StepAllocation eightCpus() {
  StepAllocation allocation = referenceAllocation();
  allocation.cpusPerNode = 8;
  return allocation;
}

// What srun holds before its command line inside that job: SLURM_NTASKS=4,
// SLURM_JOB_NUM_NODES=4 and SLURM_NTASKS_PER_NODE=1 read through opt.c's env_vars table.
StepRequest inheritedRequest() {
  StepRequest request;
  request.ntasks = 4;
  request.nodes = 4;
  request.maxNodes = 4;
  request.nodesFromEnvironment = true;
  request.ntasksPerNode = 1;
  return request;
}

Tasks tasksOf(const StepLayout& layout) {
  Tasks tasks;
  for (const StepNode& node : layout.nodes) tasks.push_back(node.tasks);
  return tasks;
}

std::vector<std::string> hostsOf(const StepLayout& layout) {
  std::vector<std::string> hosts;
  for (const StepNode& node : layout.nodes) hosts.push_back(node.hostname);
  return hosts;
}

// Reference: "The srun step ran tasks 0-3 on gpu-node-001..004, each with SLURM_LOCALID=0" and
// "SLURM_DISTRIBUTION=cyclic"; the cyclic comes from _create_job_step_create_request() in
// src/srun/libsrun/launch.c (tasks <= nodes: cyclic, else block).
TEST(StepLayout, ReferenceStepRunsOneTaskPerNodeCyclic) {
  const StatusOr<StepLayout> layout = layoutStep(referenceAllocation(), inheritedRequest());
  ASSERT_TRUE(layout.isOk()) << layout.status().message();
  EXPECT_EQ(tasksOf(*layout), (Tasks{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(hostsOf(*layout), referenceAllocation().nodes);
  EXPECT_EQ(layout->nodes[3].rank, 3U);
  EXPECT_EQ(layout->ntasks, 4U);
  EXPECT_EQ(layout->distribution, "cyclic");
  EXPECT_EQ(layout->ntasksPerNode, std::optional<std::uint32_t>(1));
  EXPECT_TRUE(layout->warnings.empty());
}

// The variables the reference's step adds (reference paragraph after "Batch step
// environment"), for task 2 on gpu-node-003; names and formats from env_array_for_step() and
// setup_env() in src/common/env.c and exec_task() in src/slurmd/slurmstepd/task.c.
TEST(StepLayout, ReferenceTaskEnvironment) {
  const StepAllocation allocation = referenceAllocation();
  const StepRequest request = inheritedRequest();
  const StatusOr<StepLayout> layout = layoutStep(allocation, request);
  ASSERT_TRUE(layout.isOk());
  const std::map<std::string, std::string> expected = {
      {"CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"},
      {"GPU_DEVICE_ORDINAL", "0,1,2,3,4,5,6,7"},
      {"SLURMD_NODENAME", "gpu-node-003"},
      {"SLURM_CPUS_ON_NODE", "1"},
      {"SLURM_DISTRIBUTION", "cyclic"},
      {"SLURM_GTIDS", "2"},
      {"SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", "1(x4)"},
      {"SLURM_LOCALID", "0"},
      {"SLURM_NNODES", "4"},
      {"SLURM_NODEID", "2"},
      {"SLURM_NPROCS", "4"},
      {"SLURM_NTASKS", "4"},
      {"SLURM_NTASKS_PER_NODE", "1"},
      {"SLURM_PROCID", "2"},
      {"SLURM_STEPID", "0"},
      {"SLURM_STEP_GPUS", "0,1,2,3,4,5,6,7"},
      {"SLURM_STEP_ID", "0"},
      {"SLURM_STEP_NODELIST", "gpu-node-[001-004]"},
      {"SLURM_STEP_NUM_NODES", "4"},
      {"SLURM_STEP_NUM_TASKS", "4"},
      {"SLURM_STEP_TASKS_PER_NODE", "1(x4)"},
      {"SLURM_TASKS_PER_NODE", "1(x4)"},
  };
  EXPECT_EQ(taskEnvironment(allocation, request, *layout, 0, 2, 0), expected);
  // "ROCR_VISIBLE_DEVICES is only in the batch step."
  EXPECT_EQ(taskEnvironmentRemovals(), std::vector<std::string>{"ROCR_VISIBLE_DEVICES"});
}

// A second task on a node: SLURM_LOCALID counts within the node, SLURM_GTIDS lists the node's
// tasks, SLURM_NODEID is the node's index in the step (not in the job), -c shows up as
// SLURM_CPUS_PER_TASK and, with the --exact it implies, narrows SLURM_CPUS_ON_NODE.
TEST(StepLayout, TaskEnvironmentOfASecondTaskOnAStepNode) {
  const StepAllocation allocation = eightCpus();
  StepRequest request = inheritedRequest();
  request.ntasksPerNode.reset();
  request.exclude = {"gpu-node-001"};
  request.nodes = 2;
  request.maxNodes = 2;
  request.nodesFromEnvironment = false;
  request.cpusPerTask = 2;
  const StatusOr<StepLayout> layout = layoutStep(allocation, request);
  ASSERT_TRUE(layout.isOk()) << layout.status().message();
  ASSERT_EQ(tasksOf(*layout), (Tasks{{0, 1}, {2, 3}}));
  ASSERT_EQ(hostsOf(*layout), (std::vector<std::string>{"gpu-node-002", "gpu-node-003"}));
  const auto env = taskEnvironment(allocation, request, *layout, 3, 1, 1);
  EXPECT_EQ(env.at("SLURM_PROCID"), "3");
  EXPECT_EQ(env.at("SLURM_LOCALID"), "1");
  EXPECT_EQ(env.at("SLURM_NODEID"), "1");
  EXPECT_EQ(env.at("SLURM_GTIDS"), "2,3");
  EXPECT_EQ(env.at("SLURM_STEP_ID"), "3");
  EXPECT_EQ(env.at("SLURM_STEP_NODELIST"), "gpu-node-[002-003]");
  EXPECT_EQ(env.at("SLURM_STEP_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(env.at("SLURM_CPUS_PER_TASK"), "2");
  EXPECT_EQ(env.at("SLURM_CPUS_ON_NODE"), "4");
  EXPECT_EQ(env.at("SLURM_DISTRIBUTION"), "block");
  EXPECT_EQ(env.count("SLURM_NTASKS_PER_NODE"), 0U);
  EXPECT_EQ(env.count("SLURM_JOB_NODELIST"), 0U);  // stays the job's
  EXPECT_EQ(env.count("SLURM_NODELIST"), 0U);
}

struct LayoutCase {
  const char* name;
  StepAllocation allocation;
  StepRequest request;
  Tasks tasks;
  std::vector<std::string> hosts;
  std::string distribution;
  std::vector<std::string> warnings;
};

StepRequest with(StepRequest request, void (*change)(StepRequest&)) {
  change(request);
  return request;
}

const std::vector<std::string> kAll = {"gpu-node-001", "gpu-node-002", "gpu-node-003",
                                       "gpu-node-004"};

TEST(StepLayout, LayoutsFollowSlurm) {
  const std::vector<LayoutCase> cases = {
      // _opt_verify(), opt.c: -n below the inherited node count shrinks the step, with the
      // warning srun prints; --ntasks-per-node=1 still matches 1 task on 1 node.
      {"srun -n1",
       referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.ntasks = 1; }),
       {{0}},
       {"gpu-node-001"},
       "cyclic",
       {"srun: Warning: can't run 1 processes on 4 nodes, setting nnodes to 1"}},
      // _task_layout_block(), slurm_step_layout.c: counts from a cyclic pass (2,2,1,1), ids
      // handed out node by node; block because 6 tasks > 4 nodes (launch.c).
      {"srun -n6 on 8-CPU nodes",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 6;
              r.ntasksPerNode.reset();
            }),
       {{0, 1}, {2, 3}, {4}, {5}},
       kAll,
       "block",
       {}},
      // _task_layout_cyclic().
      {"srun -n6 -m cyclic",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 6;
              r.ntasksPerNode.reset();
              r.distribution = "cyclic";
            }),
       {{0, 4}, {1, 5}, {2}, {3}},
       kAll,
       "cyclic",
       {}},
      // _task_layout_plane(): one task per node first, then blocks of the plane size.
      {"srun -n6 -m plane=4",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 6;
              r.ntasksPerNode.reset();
              r.distribution = "plane=4";
            }),
       {{0, 1, 2}, {3}, {4}, {5}},
       kAll,
       "plane",
       {}},
      // The inherited SLURM_NTASKS_PER_NODE=1 cannot hold 4 tasks on 2 nodes: srun says so
      // and drops it (opt.c); the first 2 nodes of the job are picked (step_mgr.c).
      {"srun -N2",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.nodes = 2;
              r.maxNodes = 2;
              r.nodesFromEnvironment = false;
            }),
       {{0, 1}, {2, 3}},
       {"gpu-node-001", "gpu-node-002"},
       "block",
       {"srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the "
        "requested tasks 4 with the number of requested nodes 2. Ignoring --ntasks-per-node."}},
      // --ntasks-per-node with no task count: tasks = nodes x per-node, and it caps each
      // node's share (srun passes it as the plane size).
      {"srun -N2 --ntasks-per-node=2 (no SLURM_NTASKS)",
       eightCpus(),
       [] {
         StepRequest r;
         r.nodes = 2;
         r.maxNodes = 2;
         r.ntasksPerNode = 2;
         return r;
       }(),
       {{0, 1}, {2, 3}},
       {"gpu-node-001", "gpu-node-002"},
       "block",
       {}},
      // -w names a node: the node count follows the list, -n1 shrinks the inherited 4.
      {"srun -n1 -w gpu-node-003",
       referenceAllocation(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 1;
              r.nodelist = {"gpu-node-003"};
            }),
       {{0}},
       {"gpu-node-003"},
       "cyclic",
       {"srun: Warning: can't run 1 processes on 4 nodes, setting nnodes to 1"}},
      // job_step_create_allocation() (srun_job.c): -x trims the allocation, then the first
      // nodes left are used.
      {"srun -N3 -n4 -x gpu-node-001",
       eightCpus(),
       [] {
         StepRequest r;
         r.nodes = 3;
         r.maxNodes = 3;
         r.ntasks = 4;
         r.exclude = {"gpu-node-001"};
         return r;
       }(),
       {{0, 1}, {2}, {3}},
       {"gpu-node-002", "gpu-node-003", "gpu-node-004"},
       "block",
       {}},
      // -N beyond the task count: srun lowers it to the tasks (opt.c).
      {"srun -N5 (4 tasks)",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.nodes = 5;
              r.maxNodes = 5;
              r.nodesFromEnvironment = false;
            }),
       {{0}, {1}, {2}, {3}},
       kAll,
       "cyclic",
       {"srun: Warning: can't run 4 processes on 5 nodes, setting nnodes to 4"}},
      // create_srun_job() (srun_job.c): an inherited node count above the allocation's yields.
      {"SLURM_JOB_NUM_NODES=6 in a 4-node job",
       eightCpus(),
       [] {
         StepRequest r;
         r.nodes = 6;
         r.maxNodes = 6;
         r.nodesFromEnvironment = true;
         r.ntasks = 6;
         return r;
       }(),
       {{0, 1}, {2, 3}, {4}, {5}},
       kAll,
       "block",
       {"srun: error: SLURM_JOB_NUM_NODES environment variable conflicts with allocated node "
        "count (6 != 4)."}},
      // -w longer than -N's maximum: srun drops the last names (opt.c _opt_verify).
      {"srun -N1 -w gpu-node-[001-002]",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.nodes = 1;
              r.maxNodes = 1;
              r.nodesFromEnvironment = false;
              r.ntasksPerNode.reset();
              r.nodelist = {"gpu-node-001", "gpu-node-002"};
            }),
       {{0, 1, 2, 3}},
       {"gpu-node-001"},
       "block",
       {"srun: error: Required nodelist includes more nodes than permitted by max-node count "
        "(2 > 1). Eliminating nodes from the nodelist."}},
      // -m pack with an inherited -N: the node minimum drops to 1 (opt.c), slurmctld then takes
      // as few nodes as the CPUs allow (step_mgr.c) and fills them (_task_layout_block).
      {"srun -n6 -m block,pack",
       eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 6;
              r.ntasksPerNode.reset();
              r.distribution = "block,pack";
            }),
       {{0, 1, 2, 3, 4, 5}},
       {"gpu-node-001"},
       "block,pack",
       {}},
      // No input at all (SLURM_NTASKS etc. unset): a task on every node (_set_ntasks).
      {"nothing set",
       referenceAllocation(),
       StepRequest{},
       {{0}, {1}, {2}, {3}},
       kAll,
       "cyclic",
       {}},
      // -c with tasks that fit: cyclic, one per node.
      {"srun -c2",
       eightCpus(),
       with(inheritedRequest(), [](StepRequest& r) { r.cpusPerTask = 2; }),
       {{0}, {1}, {2}, {3}},
       kAll,
       "cyclic",
       {}},
  };
  for (const LayoutCase& c : cases) {
    SCOPED_TRACE(c.name);
    const StatusOr<StepLayout> layout = layoutStep(c.allocation, c.request);
    ASSERT_TRUE(layout.isOk()) << layout.status().message();
    EXPECT_EQ(tasksOf(*layout), c.tasks);
    EXPECT_EQ(hostsOf(*layout), c.hosts);
    EXPECT_EQ(layout->distribution, c.distribution);
    EXPECT_EQ(layout->warnings, c.warnings);
  }
}

TEST(StepLayout, PlaneSizeReachesTheEnvironment) {
  StepRequest request = inheritedRequest();
  request.ntasks = 6;
  request.ntasksPerNode.reset();
  request.distribution = "plane=4";
  const StatusOr<StepLayout> layout = layoutStep(eightCpus(), request);
  ASSERT_TRUE(layout.isOk());
  EXPECT_EQ(layout->planeSize, 4U);
  const auto env = taskEnvironment(eightCpus(), request, *layout, 1, 0, 2);
  EXPECT_EQ(env.at("SLURM_DISTRIBUTION"), "plane");
  EXPECT_EQ(env.at("SLURM_DIST_PLANESIZE"), "4");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "3,1(x3)");
  EXPECT_EQ(env.at("SLURM_GTIDS"), "0,1,2");
}

struct ErrorCase {
  const char* name;
  StepAllocation allocation;
  StepRequest request;
  StatusCode code;
  std::string message;
};

TEST(StepLayout, RefusalsCarrySrunsMessages) {
  const std::vector<ErrorCase> cases = {
      // step_mgr.c _pick_step_nodes(): 8 CPUs wanted on 4 single-CPU nodes.
      {"srun -n8 on 1-CPU nodes", referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.ntasks = 8; }),
       StatusCode::kResourceExhausted,
       "Unable to create step for job 2: More processors requested than permitted"},
      {"srun -c2 on 1-CPU nodes", referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.cpusPerTask = 2; }),
       StatusCode::kResourceExhausted,
       "Unable to create step for job 2: More processors requested than permitted"},
      // A -w node outside the job: node_name2bitmap()/bit_super_set() fail.
      {"srun -w login1", referenceAllocation(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.ntasks = 1;
              r.nodelist = {"login1"};
            }),
       StatusCode::kResourceExhausted,
       "Unable to create step for job 2: Requested node configuration is not available"},
      // _job_create_structure(), srun_job.c: the inherited -N 4 cannot fit 3 nodes left.
      {"srun -x gpu-node-001 (inherited -N4)", referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.exclude = {"gpu-node-001"}; }),
       StatusCode::kInvalidArgument,
       "Only allocated 3 nodes asked for 4\nsrun: error: Are required nodes explicitly "
       "excluded?"},
      {"srun -N5 -n8", eightCpus(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.nodes = 5;
              r.maxNodes = 5;
              r.nodesFromEnvironment = false;
              r.ntasks = 8;
              r.ntasksPerNode.reset();
            }),
       StatusCode::kInvalidArgument, "Only allocated 4 nodes asked for 5"},
      // job_step_create_allocation(), srun_job.c.
      {"srun -w gpu-node-002 -x gpu-node-002", referenceAllocation(),
       with(inheritedRequest(),
            [](StepRequest& r) {
              r.nodelist = {"gpu-node-002"};
              r.exclude = {"gpu-node-002"};
            }),
       StatusCode::kInvalidArgument,
       "Requested node gpu-node-002 is also in the excluded list.\nsrun: error: Job not "
       "submitted."},
      // _opt_verify() checks; several errors come out together.
      {"-n 0 and -N 3-2", referenceAllocation(),
       [] {
         StepRequest r;
         r.ntasks = 0;
         r.nodes = 3;
         r.maxNodes = 2;
         return r;
       }(),
       StatusCode::kInvalidArgument,
       "invalid number of tasks (-n 0)\nsrun: error: invalid number of nodes (-N 3-2)"},
      // MaxTasksPerNode (512 by default) in step_create().
      {"600 tasks on one node",
       [] {
         StepAllocation a = eightCpus();
         a.nodes = {"n1"};
         a.cpusPerNode = 1024;
         return a;
       }(),
       [] {
         StepRequest r;
         r.ntasks = 600;
         return r;
       }(),
       StatusCode::kResourceExhausted,
       "Unable to create step for job 2: Task count specification invalid"},
      {"-m arbitrary", referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.distribution = "arbitrary"; }),
       StatusCode::kUnimplemented,
       "kubeslurm does not support --distribution=arbitrary (it needs SLURM_HOSTFILE)"},
      {"-m bogus", referenceAllocation(),
       with(inheritedRequest(), [](StepRequest& r) { r.distribution = "bogus"; }),
       StatusCode::kInvalidArgument, "Invalid --distribution specification"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    const StatusOr<StepLayout> layout = layoutStep(c.allocation, c.request);
    ASSERT_FALSE(layout.isOk());
    EXPECT_EQ(layout.status().code(), c.code);
    EXPECT_EQ(layout.status().message(), c.message);
  }
}

// verify_dist_type() and format_task_dist_states() in src/common/proc_args.c.
// launch_slurm.c _build_user_env (22.05): what srun --export passes to the tasks.
TEST(StepLayout, ExportedEnvironment) {
  const std::map<std::string, std::string> env = {
      {"PATH", "/usr/bin"}, {"EDITOR", "vi"}, {"SLURM_JOB_ID", "7"}, {"SLURMD_NODENAME", "n0"}};
  using Env = std::map<std::string, std::string>;
  EXPECT_EQ(exportedEnvironment(env, {}), env);
  EXPECT_EQ(exportedEnvironment(env, {"NONE"}),
            (Env{{"SLURMD_NODENAME", "n0"}, {"SLURM_JOB_ID", "7"}}));
  // Tokens after NONE are not read; those before it are.
  EXPECT_EQ(exportedEnvironment(env, {"EDITOR", "NONE", "PATH"}),
            (Env{{"EDITOR", "vi"}, {"SLURMD_NODENAME", "n0"}, {"SLURM_JOB_ID", "7"}}));
  // A name srun does not have is left out; NAME=VALUE is taken as given.
  EXPECT_EQ(exportedEnvironment(env, {"UNSET", "X=1=2"}),
            (Env{{"SLURMD_NODENAME", "n0"}, {"SLURM_JOB_ID", "7"}, {"X", "1=2"}}));
  // ALL in any case: all of srun's, over the listed values; a listed SLURM_ value loses too.
  auto all = exportedEnvironment(env, {"all", "EDITOR=emacs", "SLURM_JOB_ID=9", "Y=2"});
  EXPECT_EQ(all.at("EDITOR"), "vi");
  EXPECT_EQ(all.at("SLURM_JOB_ID"), "7");
  EXPECT_EQ(all.at("Y"), "2");
  EXPECT_EQ(all.at("PATH"), "/usr/bin");
}

TEST(StepLayout, ParseDistribution) {
  using Level = TaskDistribution::NodeLevel;
  struct Case {
    const char* text;
    Level level;
    std::string name;
    bool pack;
    bool noPack;
  };
  const std::vector<Case> cases = {
      {"", Level::kDefault, "", false, false},
      {"block", Level::kBlock, "block", false, false},
      {"Cyclic", Level::kCyclic, "cyclic", false, false},
      {"*", Level::kBlock, "block", false, false},
      {"block:*", Level::kBlock, "block:cyclic", false, false},
      {"*:*:*", Level::kBlock, "block:cyclic:cyclic", false, false},
      {"cyclic:block:*", Level::kCyclic, "cyclic:block:block", false, false},
      {"cyclic:fcyclic", Level::kCyclic, "cyclic:fcyclic", false, false},
      {"pack", Level::kDefault, "", true, false},
      {"cyclic,nopack", Level::kCyclic, "cyclic", false, true},
      {"hostfile", Level::kArbitrary, "arbitrary", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const StatusOr<TaskDistribution> dist = parseDistribution(c.text, std::nullopt);
    ASSERT_TRUE(dist.isOk()) << dist.status().message();
    EXPECT_EQ(dist->nodeLevel, c.level);
    EXPECT_EQ(dist->name, c.name);
    EXPECT_EQ(dist->pack, c.pack);
    EXPECT_EQ(dist->noPack, c.noPack);
  }
  for (const char* bad : {"bogus", ",block", "block,bogus", "block:block:block:block", "fcyclic"}) {
    SCOPED_TRACE(bad);
    const StatusOr<TaskDistribution> dist = parseDistribution(bad, std::nullopt);
    ASSERT_FALSE(dist.isOk());
    EXPECT_EQ(dist.status().message(), "Invalid --distribution specification");
  }
  // _parse_plane_dist(): the size after '=' or from SLURM_DIST_PLANESIZE.
  for (const char* bad : {"plane", "plane=0", "plane=x", "plane=3000000000"}) {
    SCOPED_TRACE(bad);
    const StatusOr<TaskDistribution> dist = parseDistribution(bad, std::nullopt);
    ASSERT_FALSE(dist.isOk());
    EXPECT_EQ(dist.status().message(),
              "Invalid plane size or size not specified\nInvalid --distribution specification");
  }
  const StatusOr<TaskDistribution> fromEnvironment = parseDistribution("plane", "3");
  ASSERT_TRUE(fromEnvironment.isOk());
  EXPECT_EQ(fromEnvironment->planeSize, 3U);
  EXPECT_EQ(fromEnvironment->nodeLevel, Level::kPlane);
}

}  // namespace
}  // namespace kubeslurm::step

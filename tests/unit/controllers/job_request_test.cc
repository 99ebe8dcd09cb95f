#include "controllers/job_request.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::controllers {
namespace {

slurm::GresRequest gpu(std::uint64_t count, std::string type = {}) {
  slurm::GresRequest gres;
  gres.type = std::move(type);
  gres.count = count;
  return gres;
}

api::Partition partition(std::optional<std::int64_t> defaultSeconds,
                         std::optional<std::int64_t> maxSeconds) {
  api::Partition part;
  part.metadata.name = "gpu";
  if (defaultSeconds) part.spec.defaultTime = api::SlurmDuration{"", {defaultSeconds}};
  if (maxSeconds) part.spec.maxTime = api::SlurmDuration{"", {maxSeconds}};
  return part;
}

// A partition without memory settings (slurm.conf's defaults: DefMemPerNode=UNLIMITED).
const api::PartitionSpec kNoDefaults;

TEST(NodeRequest, GresIsPerNodeAndTypedEntriesAdd) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{4, std::nullopt};
  request.gres = {gpu(8)};
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->minNodes, 4U);
  EXPECT_EQ(nodes->maxNodes, 4U);
  EXPECT_EQ(nodes->gpusPerNode, 8U);
  EXPECT_EQ(nodes->tasksPerNode, 1U);
  EXPECT_EQ(nodes->cpuMillisPerNode, 1000U);

  request.gres = {gpu(2, "a100"), gpu(2, "a100")};
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->gpusPerNode, 4U);
}

TEST(NodeRequest, JobWideGpusSpreadOverTheNodes) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, 4};
  request.gpus = {gpu(12)};
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->gpusPerNode, 6U);
  EXPECT_EQ(nodes->maxNodes, 4U);
  request.gpus = {gpu(13)};
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->gpusPerNode, 7U);  // rounded up: no node gets fewer
}

TEST(NodeRequest, TasksDriveGpusPerTaskAndCpus) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, std::nullopt};
  request.ntasks = 8;
  request.cpusPerTask = 6;
  request.gpusPerTask = {gpu(2)};
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->tasksPerNode, 4U);
  EXPECT_EQ(nodes->gpusPerNode, 8U);
  EXPECT_EQ(nodes->cpuMillisPerNode, 24000U);
}

// --mincpus is a floor on each node's CPUs (pn_min_cpus): above the tasks' CPUs it is what each
// node is asked for, and memory per CPU counts every one; below them it changes nothing.
TEST(NodeRequest, MinCpusIsAFloorOnEachNodesCpus) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, std::nullopt};
  request.ntasksPerNode = 2;
  request.minCpusPerNode = 6;
  request.memPerCpuMb = 100;
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->cpuMillisPerNode, 6000U);
  EXPECT_EQ(nodes->memoryBytesPerNode, 600ULL << 20);
  request.cpusPerTask = 4;
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->cpuMillisPerNode, 8000U);
}

// -n 16 --ntasks-per-node=8 is 16 tasks at most 8 to a node: two nodes, not eight tasks on one
// (cons_tres caps a node's tasks at ntasks_per_node; slurmctld's record shows NumNodes=2, pinned
// by the slurmctld differential test's tasks_and_tasks_per_node case).
TEST(NodeRequest, TasksOverTasksPerNodeSetTheNodeCount) {
  slurm::JobRequest request;
  request.ntasks = 16;
  request.ntasksPerNode = 8;
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->minNodes, 2U);
  EXPECT_EQ(nodes->maxNodes, 2U);
  EXPECT_EQ(nodes->tasksPerNode, 8U);

  request.ntasks = 17;  // a third node for the seventeenth task
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->minNodes, 3U);

  // Within a -N range the tasks raise the minimum; a range they do not fit is left as asked.
  request.nodes = slurm::NodeRange{2, 4};
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->minNodes, 3U);
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->maxNodes, 4U);
  request.nodes = slurm::NodeRange{1, std::nullopt};
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->minNodes, 1U);
}

// build_feature_list (job_scheduler.c): ',' is '&'; an operator with no name before it, an
// unclosed bracket or a count that is not positive is not read at all. The core plans the
// conjunctive forms: every node has one feature of each clause; and a matching OR joined to
// them by '&' (all nodes share one of its features).
TEST(ConstraintTerms, AsSlurmctldReadsThem) {
  using Clauses = std::vector<std::vector<std::string>>;
  using Features = std::vector<std::string>;
  struct Case {
    std::string text;
    bool wellFormed;
    std::optional<Clauses> clauses;  // none: a form the core does not plan
    Features matching = {};
  };
  const std::vector<Case> cases = {
      {"a100", true, Clauses{{"a100"}}},
      {"a100&ib", true, Clauses{{"a100"}, {"ib"}}},
      {"a100,ib", true, Clauses{{"a100"}, {"ib"}}},
      {"a100&", true, Clauses{{"a100"}}},   // slurmctld takes the trailing '&'
      {"!a100", true, Clauses{{"!a100"}}},  // a name no node has: refused at submission
      {"a100|ib", true, Clauses{{"a100", "ib"}}},
      {"a100|ib|h100", true, Clauses{{"a100", "ib", "h100"}}},
      {"(a100|h100)&ib", true, Clauses{{"a100", "h100"}, {"ib"}}},
      {"ib&(a100|h100)", true, Clauses{{"ib"}, {"a100", "h100"}}},
      {"(a100&ib)&x", true, Clauses{{"a100"}, {"ib"}, {"x"}}},
      {"(a100|h100)|x", true, Clauses{{"a100", "h100", "x"}}},
      {"a100&ib|x", true, std::nullopt},  // left to right in Slurm: (a100&ib)|x
      {"(a100&ib)|x", true, std::nullopt},
      {"(a100|ib)x&c", true, std::nullopt},
      {"[a100|ib]", true, Clauses{}, Features{"a100", "ib"}},
      {"[a100|ib]&x", true, Clauses{{"x"}}, Features{"a100", "ib"}},
      {"x,[r1|r2|r3]", true, Clauses{{"x"}}, Features{"r1", "r2", "r3"}},
      {"(a|b)&[r1|r2]&c", true, Clauses{{"a", "b"}, {"c"}}, Features{"r1", "r2"}},
      {"[r1]", true, Clauses{}, Features{"r1"}},
      {"[r1|r2]|x", true, std::nullopt},  // '|' joining the bracket: Slurm's own reading
      {"x|y&[r1|r2]", true, std::nullopt},
      {"[r1&r2]", true, std::nullopt},  // a bracket of '&' (XAND) is not planned
      {"[r1|r2]*2", true, std::nullopt},
      {"[r1|r2]x", true, std::nullopt},
      {"a100*2", true, std::nullopt},
      {"", true, Clauses{}},
      {"&a100", false, std::nullopt},
      {"a100&&ib", false, std::nullopt},
      {"[a100", false, std::nullopt},
      {"a100]", false, std::nullopt},
      {"a100*0", false, std::nullopt},
      {"(a100*2)", false, std::nullopt},
      {"(a|b", false, std::nullopt},
      {"[a]&[b]", false, std::nullopt},
  };
  for (const Case& c : cases) {
    const ConstraintTerms terms = constraintTerms(c.text);
    EXPECT_EQ(terms.wellFormed, c.wellFormed) << c.text;
    EXPECT_EQ(terms.clauses, c.clauses) << c.text;
    EXPECT_EQ(terms.matching, c.matching) << c.text;
  }
  EXPECT_EQ(constraintTerms("(a100|ib)&ib").features,
            (std::vector<std::string>{"a100", "ib", "ib"}));
}

// The core is given the conjunctive form; a form it does not plan that skipped the webhook is a
// problem with the reason, not a job waiting for a node with a feature named "[a|b]".
TEST(CoreJob, ConstraintsAreTheConjunctiveForm) {
  slurm::JobRequest request;
  request.constraint = "a100,ib";
  auto job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"a100", "ib"}));
  EXPECT_TRUE(job->constraintAnyOf.empty());
  request.constraint = "(a100|h100)&ib";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"ib"}));
  EXPECT_EQ(job->constraintAnyOf, (std::vector<std::vector<std::string>>{{"a100", "h100"}}));
  // Each feature once; an OR clause a required feature satisfies asks nothing more.
  request.constraint = "ib&ib&(h100|a100|h100)&(a100|h100)&(ib|roce)";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"ib"}));
  EXPECT_EQ(job->constraintAnyOf, (std::vector<std::vector<std::string>>{{"a100", "h100"}}));
  // A matching OR: its features once each, in order; moot when a required feature is one.
  request.constraint = "ib&[rack2|rack1|rack2]";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"ib"}));
  EXPECT_EQ(job->matchingOneOf, (std::vector<std::string>{"rack2", "rack1"}));
  request.constraint = "rack1&[rack1|rack2]";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_TRUE(job->matchingOneOf.empty());
  std::string many = "[f0";
  for (int i = 1; i <= 64; ++i) many += "|f" + std::to_string(i);
  request.constraint = many + "]";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_FALSE(job.isOk());
  EXPECT_EQ(job.status().message(),
            "Invalid feature specification (more than 64 features in [...])");
  request.constraint = "a100*2";
  job = coreJob(request, partition(std::nullopt, std::nullopt), 7, "alice", 0, 8);
  ASSERT_FALSE(job.isOk());
  EXPECT_EQ(job.status().message(),
            "Invalid feature specification (kubeslurm does not plan a*N, [...] beyond [a|b] "
            "joined by &, or & and | mixed outside parentheses)");
}

TEST(NodeRequest, AgreeingGpuOptionsAreAcceptedConflictingOnesRefused) {
  slurm::JobRequest request;
  request.nodes = slurm::NodeRange{2, std::nullopt};
  request.gres = {gpu(8)};
  request.gpusPerNode = {gpu(8)};
  request.gpus = {gpu(16)};
  EXPECT_TRUE(nodeRequest(request, kNoDefaults).isOk());
  request.gpusPerNode = {gpu(4)};
  auto conflicting = nodeRequest(request, kNoDefaults);
  ASSERT_FALSE(conflicting.isOk());
  EXPECT_EQ(conflicting.status().message(), "Invalid generic resource (gres) specification");
}

TEST(NodeRequest, MemoryOptions) {
  slurm::JobRequest request;
  request.memPerNodeMb = 1024;
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->memoryBytesPerNode, std::uint64_t{1} << 30);
  request.memPerNodeMb.reset();
  request.cpusPerTask = 4;
  request.memPerCpuMb = 100;
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->memoryBytesPerNode, 400U << 20);
  request.memPerCpuMb.reset();
  request.gres = {gpu(2)};
  request.memPerGpuMb = 1000;
  EXPECT_EQ(nodeRequest(request, kNoDefaults)->memoryBytesPerNode, 2000U << 20);
  // --mem=0: all of each node's memory. The node is the job's, its CPUs and GPUs are not.
  request.memPerNodeMb = 0;
  auto whole = nodeRequest(request, kNoDefaults);
  EXPECT_TRUE(whole->allMemory);
  EXPECT_FALSE(whole->wholeNode);
  EXPECT_EQ(whole->memoryBytesPerNode, 0U);
}

// The memory a job gets per node, by what it asked and the partition's settings, in slurmctld's
// order: the job's own --mem, --mem-per-cpu or --mem-per-gpu (_validate_job_desc sets
// JOB_MEM_SET); else, for a job with GPUs, DefMemPerGPU (cons_tres _verify_node_state clears the
// per-node default for it); else DefMemPerNode, else DefMemPerCPU (_validate_job_desc); else, or
// with --mem=0 / --mem-per-cpu=0, all of each node's memory (job_test.c "Allocate all node
// memory"). MaxMemPerCPU turns memory per CPU past it into more CPUs (_valid_pn_min_mem).
struct MemoryCase {
  const char* name;
  std::optional<std::uint64_t> mem, memPerCpu, memPerGpu;
  std::uint32_t gpus;
  std::uint32_t cpusPerTask;
  api::PartitionSpec partition;
  std::uint64_t wantMb;  // per node; 0: all of the node's memory
  std::uint64_t wantCpus;
};

api::PartitionSpec memorySpec(std::optional<std::int64_t> defNode,
                              std::optional<std::int64_t> defCpu,
                              std::optional<std::int64_t> defGpu,
                              std::optional<std::int64_t> maxNode = std::nullopt,
                              std::optional<std::int64_t> maxCpu = std::nullopt) {
  api::PartitionSpec spec;
  spec.defMemPerNode = defNode;
  spec.defMemPerCpu = defCpu;
  spec.defMemPerGpu = defGpu;
  spec.maxMemPerNode = maxNode;
  spec.maxMemPerCpu = maxCpu;
  return spec;
}

TEST(NodeRequest, MemoryAsSlurmctldAllocatesIt) {
  const std::vector<MemoryCase> cases = {
      {"nothing asked, no default: all of it", {}, {}, {}, 0, 1, {}, 0, 1},
      {"a GPU job, no default: all of it", {}, {}, {}, 4, 1, {}, 0, 1},
      {"DefMemPerNode", {}, {}, {}, 0, 1, memorySpec(8000, {}, {}), 8000, 1},
      {"DefMemPerCPU times CPUs", {}, {}, {}, 0, 4, memorySpec({}, 1000, {}), 4000, 4},
      {"DefMemPerNode wins over DefMemPerCPU",
       {},
       {},
       {},
       0,
       4,
       memorySpec(8000, 1000, {}),
       8000,
       4},
      {"DefMemPerNode=0 still wins: all of it", {}, {}, {}, 0, 4, memorySpec(0, 1000, {}), 0, 4},
      {"DefMemPerGPU times GPUs", {}, {}, {}, 4, 1, memorySpec({}, {}, 10000), 40000, 1},
      {"DefMemPerGPU before DefMemPerNode",
       {},
       {},
       {},
       2,
       1,
       memorySpec(8000, {}, 10000),
       20000,
       1},
      {"DefMemPerGPU is for GPU jobs", {}, {}, {}, 0, 2, memorySpec({}, 500, 10000), 1000, 2},
      {"DefMemPerGPU alone, CPU job: all of it", {}, {}, {}, 0, 1, memorySpec({}, {}, 10000), 0, 1},
      {"--mem beats every default", 3000, {}, {}, 4, 1, memorySpec(8000, {}, 10000), 3000, 1},
      {"--mem=0: all of it", 0, {}, {}, 4, 1, memorySpec(8000, {}, 10000), 0, 1},
      {"--mem-per-cpu=0: all of it", {}, 0, {}, 0, 1, memorySpec(8000, {}, {}), 0, 1},
      {"--mem-per-gpu beats DefMemPerGPU", {}, {}, 500, 4, 1, memorySpec({}, {}, 10000), 2000, 1},
      {"MaxMemPerCPU: twice the CPUs, half the memory each",
       {},
       3000,
       {},
       0,
       2,
       memorySpec({}, {}, {}, {}, 2000),
       6000,
       4},
      {"MaxMemPerCPU applies to DefMemPerCPU too",
       {},
       {},
       {},
       0,
       1,
       memorySpec({}, 5000, {}, {}, 2000),
       5001,
       3},
      {"MaxMemPerCPU: a CPU per MaxMemPerCPU of --mem",
       10000,
       {},
       {},
       0,
       1,
       memorySpec({}, {}, {}, {}, 4000),
       10000,
       3},
      {"MaxMemPerNode leaves the request alone",
       10000,
       {},
       {},
       0,
       1,
       memorySpec({}, {}, {}, 4000, {}),
       10000,
       1},
  };
  for (const MemoryCase& c : cases) {
    SCOPED_TRACE(c.name);
    slurm::JobRequest request;
    request.memPerNodeMb = c.mem;
    request.memPerCpuMb = c.memPerCpu;
    request.memPerGpuMb = c.memPerGpu;
    if (c.gpus > 0) request.gres = {gpu(c.gpus)};
    request.cpusPerTask = c.cpusPerTask;
    auto nodes = nodeRequest(request, c.partition);
    ASSERT_TRUE(nodes.isOk());
    EXPECT_EQ(nodes->memoryBytesPerNode, c.wantMb << 20);
    EXPECT_EQ(nodes->allMemory, c.wantMb == 0);
    EXPECT_FALSE(nodes->wholeNode);
    EXPECT_EQ(nodes->cpuMillisPerNode, c.wantCpus * 1000);
  }
}

TEST(NodeRequest, HugeMemoryTimesManyCpusDoesNotWrap) {
  slurm::JobRequest request;
  request.memPerCpuMb = std::uint64_t{1} << 62;
  request.cpusPerTask = 1024;
  auto nodes = nodeRequest(request, kNoDefaults);
  ASSERT_TRUE(nodes.isOk());
  EXPECT_EQ(nodes->memoryBytesPerNode, UINT64_MAX);
}

// The cluster the hostlists are resolved against.
constexpr std::size_t kNodes = 16;

TEST(CoreJob, TimeLimitDefaultsFromThePartition) {
  slurm::JobRequest request;
  request.jobName = "train";
  request.account = "vision";
  auto job = coreJob(request, partition(3600, 86400), 7, "alice", 1000, kNodes);
  ASSERT_TRUE(job.isOk());
  EXPECT_EQ(job->id, 7U);
  EXPECT_EQ(job->timeLimit, 3600);
  EXPECT_EQ(job->partition, "gpu");
  EXPECT_EQ(job->user, "alice");
  EXPECT_EQ(job->submitTime, 1000);
  // DefaultTime absent: MaxTime; both absent: UNLIMITED.
  EXPECT_EQ(coreJob(request, partition(std::nullopt, 86400), 7, "a", 0, kNodes)->timeLimit, 86400);
  EXPECT_EQ(coreJob(request, partition(std::nullopt, std::nullopt), 7, "a", 0, kNodes)->timeLimit,
            core::kUnlimited);
  request.timeLimit = slurm::TimeLimit{600};
  EXPECT_EQ(coreJob(request, partition(3600, 86400), 7, "a", 0, kNodes)->timeLimit, 600);
}

TEST(CoreJob, HostlistsAndConstraints) {
  slurm::JobRequest request;
  request.nodeList = "gpu-[001-002]";
  request.excludeList = "gpu-009";
  request.constraint = "h100&ib";
  request.shared = slurm::SharedMode::kExclusive;
  request.requeue = false;
  request.hold = true;
  request.contiguous = true;
  auto job = coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->requiredNodes, (std::vector<std::string>{"gpu-001", "gpu-002"}));
  EXPECT_EQ(job->excludedNodes, (std::vector<std::string>{"gpu-009"}));
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"h100", "ib"}));
  EXPECT_TRUE(job->exclusive);
  EXPECT_FALSE(job->requeue);
  EXPECT_TRUE(job->held);
  EXPECT_TRUE(job->contiguous);

  request.nodeList = "gpu-[5-3]";  // Slurm: "Invalid range"
  EXPECT_FALSE(coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes).isOk());
}

// --gres=gpu:H100:8 runs only where the GPUs are H100s: the type is a constraint, beside -C's.
TEST(CoreJob, GpuTypesAreConstraintsOnTheNodesGpuTypes) {
  slurm::JobRequest request;
  request.constraint = "ib";
  request.gres = {slurm::GresRequest{"gpu", "H100", 8}};
  request.gpusPerTask = {slurm::GresRequest{"gpu", "h100", 1}};
  request.ntasksPerNode = 8;
  auto job = coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->constraints, (std::vector<std::string>{"ib", "gpu-type:h100"}));
  request.gres = {slurm::GresRequest{"gpu", "", 8}};
  request.gpusPerTask.clear();
  EXPECT_EQ(coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes)->constraints,
            (std::vector<std::string>{"ib"}));
}

// spec.gres is a tenant's list, as long as the object may be: 100,000 typed entries, half of them
// repeats, give each type once, in the order first named, in work that grows with the list.
TEST(CoreJob, AHostileListOfGpuTypesIsReadOnceEach) {
  slurm::JobRequest request;
  for (int i = 0; i < 100000; ++i) {
    request.gres.push_back(slurm::GresRequest{"gpu", "T" + std::to_string(i % 50000), 1});
  }
  const std::vector<std::string> types = requiredGpuTypeFeatures(request);
  ASSERT_EQ(types.size(), 50000U);
  EXPECT_EQ(types.front(), "gpu-type:t0");
  EXPECT_EQ(types.back(), "gpu-type:t49999");
}

TEST(GpuTypeFeatures, FromTheAdminsLabelElseTheWordsOfTheGpuProduct) {
  EXPECT_EQ(gpuTypeFeatures("", "NVIDIA-H100-80GB-HBM3"),
            (std::vector<std::string>{"gpu-type:nvidia", "gpu-type:h100", "gpu-type:80gb",
                                      "gpu-type:hbm3"}));
  EXPECT_EQ(gpuTypeFeatures("", "NVIDIA-A100-SXM4-80GB"),
            (std::vector<std::string>{"gpu-type:nvidia", "gpu-type:a100", "gpu-type:sxm4",
                                      "gpu-type:80gb"}));
  // The admin's list wins, as gres.conf's Type= does.
  EXPECT_EQ(gpuTypeFeatures("h100, Hopper", "NVIDIA-H100-80GB-HBM3"),
            (std::vector<std::string>{"gpu-type:h100", "gpu-type:hopper"}));
  EXPECT_EQ(gpuTypeFeatures(" , ", "Tesla-T4"),
            (std::vector<std::string>{"gpu-type:tesla", "gpu-type:t4"}));
  EXPECT_TRUE(gpuTypeFeatures("", "").empty());
}

// A hostlist of more hosts than the cluster has nodes names a node that does not exist, which
// slurmctld refuses as ESLURM_INVALID_NODE_NAME ("Invalid node name specified"). Found without
// expanding it: the 17 bytes below name 4,194,304 hosts (security review C3), and the answer
// must cost no more than a cluster's worth of names.
TEST(CoreJob, AHostlistLargerThanTheClusterIsAnInvalidNodeNameFoundWithoutExpandingIt) {
  slurm::JobRequest request;
  for (const std::string list : {"a[0-65535]b[0-63]", "gpu-[001-017]", "n[0-9][0-9][0-9][0-9]"}) {
    for (const bool exclude : {false, true}) {
      request.nodeList = exclude ? "" : list;
      request.excludeList = exclude ? list : "";
      const auto began = std::chrono::steady_clock::now();
      auto job = coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes);
      const auto took = std::chrono::steady_clock::now() - began;
      ASSERT_FALSE(job.isOk()) << list;
      EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(job.status().message(), "Invalid node name specified") << list;
      EXPECT_LT(took, std::chrono::milliseconds(50)) << list;
    }
  }
  // Past Slurm's own MAX_RANGE the parse refuses first, with Slurm's words.
  request.nodeList = "x[0-99999999]";
  request.excludeList.clear();
  EXPECT_EQ(
      coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes).status().message(),
      "--nodelist: _parse_single_range: Too many hosts in range `0-99999999'");
  // As many hosts as nodes is within bounds: the names are resolved (an unknown one then waits
  // as ReqNodeNotAvail in the core).
  request.nodeList = "gpu-[001-016]";
  request.excludeList.clear();
  auto job = coreJob(request, partition(std::nullopt, std::nullopt), 1, "a", 0, kNodes);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->requiredNodes.size(), 16U);
}

}  // namespace
}  // namespace kubeslurm::controllers

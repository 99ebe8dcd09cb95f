// sacct's formatter against the reference outputs (../shared/reference/slurm-22.05.md,
// "sacct") and Slurm 22.05's src/sacct/{options.c,print.c} and src/common/print_fields.c.
#include "kubeslurm/cli/sacct_format.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "kubeslurm/accounting/slurmjob_records.h"
#include "kubeslurm/accounting/sqlite_store.h"
#include "kubeslurm/cli/job_objects.h"

namespace kubeslurm::cli {
namespace {

// 2026-11-21T04:35:12Z, when the reference's job 2 was submitted and started.
constexpr std::int64_t kT0 = 1795235712;
constexpr std::int64_t kNow = kT0 + 600;

api::SlurmJobObject job(std::int64_t id, const std::string& name, const std::string& state) {
  api::SlurmJobObject j;
  j.name = name + "-abcde";
  j.namespaceName = "default";
  j.user = "root";
  j.request.jobName = name;
  j.request.partition = "train";
  j.request.account = "root";
  j.request.nodes = slurm::NodeRange{4, std::nullopt};
  j.request.ntasksPerNode = 1;
  j.request.gres = {slurm::GresRequest{"gpu", "", 8}};
  j.request.timeLimit = slurm::TimeLimit{3600};
  j.status.emplace();
  j.status->jobId = id;
  j.status->state = state;
  j.status->submitTime = kT0;
  if (state != "PENDING") {
    j.status->startTime = kT0;
    j.status->nodeList = "gpu-node-[001-004]";
  }
  if (state != "PENDING" && state != "RUNNING") {
    j.status->endTime = kT0 + 40;
    j.status->exitCode = "0:0";
  }
  return j;
}

api::SlurmJobObject task(std::int64_t id, std::int64_t arrayId, std::int64_t taskId,
                         const std::string& state) {
  api::SlurmJobObject j = job(id, "arr", state);
  j.request.nodes = slurm::NodeRange{1, std::nullopt};
  j.request.gres.clear();
  j.request.array = slurm::ArraySpec{{0, 1, 2}, std::nullopt};
  j.status->arrayJobId = arrayId;
  j.status->arrayTaskId = taskId;
  if (state != "PENDING") j.status->nodeList = "gpu-node-00" + std::to_string(taskId + 1);
  j.raw.edit()["metadata"]["labels"]["kubeslurm.io/array-task"] = std::to_string(taskId);
  return j;
}

api::SlurmJobObject arrayParent(std::int64_t id) {
  api::SlurmJobObject j = job(id, "arr", "PENDING");
  j.request.array = slurm::ArraySpec{{0, 1, 2}, std::nullopt};
  return j;
}

SacctContext context(std::string user = "root") {
  SacctContext c;
  c.now = kNow;
  c.user = std::move(user);
  return c;
}

CommandOutput run(const std::vector<api::SlurmJobObject>& jobs,
                  const std::vector<std::string>& args, const SacctContext& c = context()) {
  const SacctParse parse = parseSacctArgs(args, c);
  if (parse.exit) return *parse.exit;
  return formatSacct(jobs, parse, c);
}

api::JobStepStatus srunStep(std::int64_t id, const std::string& name, std::int64_t nodes,
                            const std::string& state, const std::string& exitCode) {
  api::JobStepStatus s;
  s.stepId = id;
  s.name = name;
  s.nodes = nodes;
  s.tasks = nodes;
  s.cpus = nodes;  // 1 CPU per node in the reference's job
  s.nodeList = nodes == 4 ? "gpu-node-[001-004]" : "gpu-node-001";
  s.startTime = kT0 + 1;
  s.endTime = kT0 + 20;
  s.state = state;
  s.exitCode = exitCode;
  return s;
}

// Reference "Phase 2": the job line, the batch step, and the two srun steps (`srun bash` on 4
// nodes, then on 1) that the rank-0 pod reported in status.steps.
TEST(SacctFormat, ReferenceDefaultFormat) {
  api::SlurmJobObject j = job(2, "x", "COMPLETED");
  j.status->steps = {srunStep(0, "bash", 4, "COMPLETED", "0:0"),
                     srunStep(1, "bash", 1, "COMPLETED", "0:0")};
  const CommandOutput out = run({j}, {});
  EXPECT_EQ(out.out,
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "2                     x      train       root          4  COMPLETED      0:0 \n"
            "2.batch           batch                  root          1  COMPLETED      0:0 \n"
            "2.0                bash                  root          4  COMPLETED      0:0 \n"
            "2.1                bash                  root          1  COMPLETED      0:0 \n");
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.exitCode, 0);
  // -X: the allocation only; -j 2.1: that step only (options.c job.step selection).
  EXPECT_EQ(run({j}, {"-X", "-n", "-o", "JobID"}).out, "2            \n");
  EXPECT_EQ(run({j}, {"-j", "2.1", "-n", "-P", "-o", "JobID,JobName,NNodes,NTasks,JobIDRaw"}).out,
            "2.1|bash|1|1|2.1\n");
}

// A failed step keeps its own state and exit code; a step killed by a signal shows "0:S".
TEST(SacctFormat, StepStatesAndExitCodes) {
  api::SlurmJobObject j = job(3, "x", "FAILED");
  j.status->exitCode = "2:0";
  j.status->steps = {srunStep(0, "train.py", 4, "FAILED", "2:0"),
                     srunStep(1, "sleep", 1, "CANCELLED", "0:15")};
  EXPECT_EQ(run({j}, {"-n", "-P", "-o", "JobID,State,ExitCode"}).out,
            "3|FAILED|2:0\n3.batch|FAILED|2:0\n3.0|FAILED|2:0\n3.1|CANCELLED|0:15\n");
}

// An interactive allocation (srun or salloc from a login host) ran no script: Slurm records no
// batch step for it (batch_flag 0), only srun's steps.
TEST(SacctFormat, AnInteractiveAllocationHasNoBatchStep) {
  api::SlurmJobObject j = job(4, "hostname", "COMPLETED");
  j.request.interactive = true;
  j.script.clear();
  j.status->steps = {srunStep(0, "hostname", 2, "COMPLETED", "0:0")};
  EXPECT_EQ(run({j}, {"-n", "-P", "-o", "JobID,JobName,State"}).out,
            "4|hostname|COMPLETED\n4.0|hostname|COMPLETED\n");
}

// Reference: sacct -X -P --format=JobID,...,AllocTRES. The reference job had all of each
// node's memory (512000M, no --mem); here it asks for it, since a request without --mem does
// not say how much memory a node has.
TEST(SacctFormat, ReferenceParsableAllocations) {
  api::SlurmJobObject j = job(2, "x", "COMPLETED");
  j.request.memPerNodeMb = 512000;
  const CommandOutput out = run(
      {j}, {"-X", "-P",
            "--format=JobID,JobName,State,ExitCode,Start,End,Elapsed,NNodes,NodeList,AllocTRES"});
  EXPECT_EQ(out.out,
            "JobID|JobName|State|ExitCode|Start|End|Elapsed|NNodes|NodeList|AllocTRES\n"
            "2|x|COMPLETED|0:0|2026-11-21T04:35:12|2026-11-21T04:35:52|00:00:40|4|"
            "gpu-node-[001-004]|billing=4,cpu=4,gres/gpu=32,mem=2000G,node=4\n");
}

// What docs/accounting.md's chargeback pipeline reads (the guides' AllocGRES, renamed
// AllocTRES): user, the gres/gpu entry it sums, and the seconds. With --state the window ends
// at --starttime unless --endtime is given (slurmdb_defs.c slurmdb_job_cond_def_start_end), so
// the guides' command without -E finds nothing, on Slurm as here.
TEST(SacctFormat, TheChargebackPipelinesFields) {
  api::SlurmJobObject j = job(2, "x", "COMPLETED");
  j.request.memPerNodeMb = 512000;
  const std::vector<std::string> asked = {"--allocations",
                                          "--starttime=2026-11-01",
                                          "--state=COMPLETED",
                                          "--format=User,AllocTRES,ElapsedRaw",
                                          "-P",
                                          "-n"};
  EXPECT_EQ(run({j}, asked).out, "");
  std::vector<std::string> toNow = asked;
  toNow.push_back("--endtime=now");
  const CommandOutput out = run({j}, toNow);
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.out, j.user + "|billing=4,cpu=4,gres/gpu=32,mem=2000G,node=4|40\n");
}

// print_fields.c: -p ends every field with '|', -n drops the header.
TEST(SacctFormat, ParsableWithTrailingDelimiterAndNoHeader) {
  const CommandOutput out =
      run({job(2, "x", "COMPLETED")}, {"-X", "-p", "-n", "-o", "jobid,state"});
  EXPECT_EQ(out.out, "2|COMPLETED|\n");
  const CommandOutput delim =
      run({job(2, "x", "COMPLETED")}, {"-X", "-P", "--delimiter=,", "-o", "jobid,jobname"});
  EXPECT_EQ(delim.out, "JobID,JobName\n2,x\n");
}

// Reference: "cancelled shows CANCELLED+" (print.c: "CANCELLED by <uid>", cut to 10 with '+').
TEST(SacctFormat, CancelledIsTruncatedWithAPlus) {
  const CommandOutput out = run({job(3, "x", "CANCELLED")}, {"-X", "-n", "-o", "jobid,state"});
  EXPECT_EQ(out.out, "3            CANCELLED+ \n");
  const CommandOutput parsable = run({job(3, "x", "CANCELLED")}, {"-X", "-P", "-n", "-o", "state"});
  EXPECT_EQ(parsable.out, "CANCELLED by 0\n");
}

// Reference: "array tasks are 5_0...5_7"; the array's own object is no line of its own.
TEST(SacctFormat, ArrayTasks) {
  const std::vector<api::SlurmJobObject> jobs = {arrayParent(5), task(6, 5, 0, "COMPLETED"),
                                                 task(7, 5, 1, "RUNNING"),
                                                 task(8, 5, 2, "PENDING")};
  EXPECT_EQ(run(jobs, {"-X", "-n", "-P", "-o", "jobid,jobidraw,state"}).out,
            "5_0|6|COMPLETED\n5_1|7|RUNNING\n5_2|8|PENDING\n");
  EXPECT_EQ(run(jobs, {"-X", "-n", "-P", "-o", "jobid", "-j", "5_1"}).out, "5_1\n");
  EXPECT_EQ(run(jobs, {"-X", "-n", "-P", "-o", "jobid", "-j", "5"}).out, "5_0\n5_1\n5_2\n");
  // A task that started has its batch step.
  EXPECT_EQ(run(jobs, {"-n", "-P", "-o", "jobid,nodelist", "-j", "5_1"}).out,
            "5_1|gpu-node-002\n5_1.batch|gpu-node-002\n");
  // Before the tasks exist, the array's record stands for them.
  EXPECT_EQ(run({arrayParent(9)}, {"-X", "-n", "-P", "-o", "jobid"}).out, "9_[0-2]\n");
  // Tasks not made yet still wait in it, as in Slurm's meta record, while the array runs.
  api::SlurmJobObject running = arrayParent(9);
  running.status->state = "RUNNING";
  running.status->startTime = kT0;
  EXPECT_EQ(
      run({running, task(10, 9, 0, "RUNNING")}, {"-X", "-n", "-P", "-o", "jobid,state,end"}).out,
      "9_0|RUNNING|Unknown\n9_[1-2]|PENDING|Unknown\n");
  // An array that ended leaves a task deleted by hand out.
  api::SlurmJobObject ended = arrayParent(9);
  ended.status->state = "COMPLETED";
  EXPECT_EQ(run({ended, task(10, 9, 0, "COMPLETED")}, {"-X", "-n", "-P", "-o", "jobid"}).out,
            "9_0\n");
}

// Reference: "sacct -j 99999 prints only the header, rc=0".
TEST(SacctFormat, UnknownJobPrintsTheHeader) {
  const CommandOutput out = run({job(2, "x", "COMPLETED")}, {"-j", "99999"});
  EXPECT_EQ(out.out,
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n");
  EXPECT_EQ(out.exitCode, 0);
}

// Reference: -o Restarts; options.c's field loop.
TEST(SacctFormat, FieldList) {
  const CommandOutput bad = run({}, {"-o", "Restarts"});
  EXPECT_EQ(bad.err, "sacct: error: Invalid field requested: \"Restarts\"\n");
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(run({}, {"-o", "AllocGRES"}).err,
            "sacct: fatal: AllocGRES has been removed, please use AllocTRES\n");
  // Names match case-insensitively by prefix, first in the table: "sta" is Start.
  EXPECT_EQ(run({}, {"-P", "-o", "sta,JOBNAME, nnodes"}).out, "Start|JobName|NNodes\n");
  // "%N" sets the width; it is the field table's, so the last one given wins everywhere.
  EXPECT_EQ(run({}, {"-o", "jobid%5,jobname%-4,jobid%3"}).out, "Job JobN Job \n--- ---- --- \n");
  // An empty item ends the list.
  EXPECT_EQ(run({}, {"-P", "-o", "jobid,,state"}).out, "JobID\n");
  // A prefix of ALL is every field.
  const CommandOutput all = run({}, {"-P", "-o", "a"});
  EXPECT_TRUE(all.out.starts_with("Account|AdminComment|AllocCPUS|")) << all.out;
  EXPECT_TRUE(all.out.ends_with("|WCKeyID|WorkDir\n")) << all.out;
  // $SACCT_FORMAT replaces the default list.
  SacctContext c = context();
  c.envFormat = "jobid,user";
  EXPECT_EQ(run({}, {"-P"}, c).out, "JobID|User\n");
  EXPECT_EQ(run({}, {"-o", "jobid", "-l"}).err,
            "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
            "remove one and retry.\n");
  EXPECT_EQ(run({}, {"-b", "-P"}).out, "JobID|State|ExitCode\n");
}

TEST(SacctFormat, LongValuesAreCutWithAPlus) {
  api::SlurmJobObject j = job(2, "a-very-long-name", "COMPLETED");
  j.status->nodeList = "gpu-node-[001-003,005]";
  EXPECT_EQ(run({j}, {"-X", "-n", "-o", "jobname,nodelist,alloccpus%1"}).out,
            "a-very-lo+ gpu-node-[001-+ 4 \n");
}

// A pending job: no start or end ("Unknown"), no nodes ("None assigned"), no allocation.
TEST(SacctFormat, PendingJob) {
  const CommandOutput out = run(
      {job(4, "x", "PENDING")},
      {"-X", "-n", "-P", "-o", "jobid,state,start,end,elapsed,nodelist,nnodes,alloctres,reqtres"});
  EXPECT_EQ(out.out,
            "4|PENDING|Unknown|Unknown|00:00:00|None assigned|4||billing=4,cpu=4,gres/gpu=32,"
            "node=4\n");
}

// A running job: End "Unknown", Elapsed up to now, Timelimit from the request.
TEST(SacctFormat, RunningJob) {
  const CommandOutput out =
      run({job(3, "x", "RUNNING")},
          {"-X", "-n", "-P", "-o", "state,end,elapsed,timelimit,cluster,user"});
  EXPECT_EQ(out.out, "RUNNING|Unknown|00:10:00|01:00:00|kubeslurm|root\n");
}

// slurmdb_job_cond_def_start_end: without -j, jobs since local midnight, the caller's only.
TEST(SacctFormat, DefaultWindowAndUser) {
  api::SlurmJobObject old = job(1, "old", "COMPLETED");
  old.status->submitTime = kT0 - 86400;
  old.status->startTime = kT0 - 86400;
  old.status->endTime = kT0 - 86400 + 60;
  api::SlurmJobObject longRunning = job(2, "long", "RUNNING");
  longRunning.status->submitTime = kT0 - 86400;
  longRunning.status->startTime = kT0 - 86400;
  api::SlurmJobObject other = job(3, "other", "COMPLETED");
  other.user = "bob";
  const std::vector<api::SlurmJobObject> jobs = {old, longRunning, other};
  const std::vector<std::string> fmt = {"-X", "-n", "-P", "-o", "jobid"};
  auto with = [&fmt](std::vector<std::string> extra) {
    extra.insert(extra.end(), fmt.begin(), fmt.end());
    return extra;
  };
  EXPECT_EQ(run(jobs, fmt).out, "2\n");
  EXPECT_EQ(run(jobs, with({"-a"})).out, "2\n3\n");
  EXPECT_EQ(run(jobs, with({"-u", "bob"})).out, "3\n");
  // -j reaches back to the epoch and every user.
  EXPECT_EQ(run(jobs, with({"-j", "1,3"})).out, "1\n3\n");
  EXPECT_EQ(run(jobs, with({"-a", "-S", "2026-11-20"})).out, "1\n2\n3\n");
  // In a zone east of UTC the local day began before 00:00Z.
  SacctContext east = context();
  east.utcOffsetSeconds = 5 * 3600;
  EXPECT_EQ(run(jobs, fmt, east).out, "2\n");
}

// as_mysql_jobacct_process.c _state_time_string: with -s and no -S, jobs in the state now.
TEST(SacctFormat, StateFilter) {
  const std::vector<api::SlurmJobObject> jobs = {job(1, "a", "COMPLETED"), job(2, "b", "RUNNING"),
                                                 job(3, "c", "CANCELLED"), job(4, "d", "PENDING")};
  const std::vector<std::string> fmt = {"-X", "-n", "-P", "-o", "jobid"};
  auto with = [&fmt](std::vector<std::string> extra) {
    extra.insert(extra.end(), fmt.begin(), fmt.end());
    return extra;
  };
  EXPECT_EQ(run(jobs, with({"-s", "r,pd"})).out, "2\n4\n");
  // Ended states count within [-S, -E]; the default window is the instant now.
  EXPECT_EQ(run(jobs, with({"-s", "CD,cancelled"})).out, "");
  // -E defaults to -S: a window of one instant.
  EXPECT_EQ(run(jobs, with({"-s", "CD,cancelled", "-S", "2026-11-21"})).out, "");
  EXPECT_EQ(run(jobs, with({"-s", "CD,cancelled", "-S", "2026-11-21", "-E", "now"})).out, "1\n3\n");
  EXPECT_EQ(run(jobs, with({"-s", "bogus"})).err,
            "sacct: fatal: unrecognized job state value 'bogus'\n");
  EXPECT_EQ(run(jobs, with({"-s", "CG"})).err,
            "sacct: fatal: job state CG is not supported / accounted\n");
}

TEST(SacctFormat, OtherFilters) {
  api::SlurmJobObject a = job(1, "a", "COMPLETED");
  api::SlurmJobObject b = job(2, "b", "COMPLETED");
  b.request.partition = "debug";
  b.request.account = "ml";
  const std::vector<api::SlurmJobObject> jobs = {a, b};
  const std::vector<std::string> fmt = {"-X", "-n", "-P", "-o", "jobid"};
  auto with = [&fmt](std::vector<std::string> extra) {
    extra.insert(extra.end(), fmt.begin(), fmt.end());
    return extra;
  };
  EXPECT_EQ(run(jobs, with({"-r", "debug"})).out, "2\n");
  EXPECT_EQ(run(jobs, with({"-A", "ML"})).out, "2\n");
  EXPECT_EQ(run(jobs, with({"--name", "a"})).out, "1\n");
}

TEST(SacctFormat, ArgumentErrors) {
  const CommandOutput stray = run({}, {"foo", "bar"});
  EXPECT_EQ(stray.err,
            "sacct: error: Unknown arguments:\nsacct: error:  foo\nsacct: error:  bar\n");
  EXPECT_EQ(stray.exitCode, 1);
  const CommandOutput time = run({}, {"-S", "yesterdayish"});
  EXPECT_EQ(time.exitCode, 1);
  EXPECT_TRUE(time.err.starts_with("Invalid time specification (pos=")) << time.err;
  const CommandOutput order = run({}, {"-S", "2026-11-21T05:00", "-E", "2026-11-21T04:00"});
  EXPECT_EQ(order.err,
            "sacct: error: Start time (2026-11-21T05:00:00) requested is after end time "
            "(2026-11-21T04:00:00).\n");
  EXPECT_EQ(run({}, {"-z"}).err, "sacct: invalid option -- 'z'\n");
  EXPECT_EQ(run({}, {"-j", "abc"}).err, "sacct: fatal: Bad job/step specified: abc\n");
  EXPECT_EQ(run({}, {"-j", "5x"}).exitCode, 0);
  EXPECT_EQ(run({}, {"-e"}).out.substr(0, 40), "Account             AdminComment        ");
}

}  // namespace
}  // namespace kubeslurm::cli

namespace kubeslurm::cli {
namespace {

// Issue 21: sacct months back reads records, not SlurmJobs. A job's record written to the store
// and read back prints, every field of sacct's table, as the live job did: finished jobs with
// srun steps, a running one, a held one, a cancelled-while-pending one, an array before and
// after its tasks, a per-node GPU type and a time limit from the partition's default.
TEST(SacctFormat, RecordsReadBackFromTheStorePrintAsTheLiveJobsDid) {
  api::SlurmJobObject completed = job(2, "x", "COMPLETED");
  completed.status->steps = {srunStep(0, "bash", 4, "COMPLETED", "0:0"),
                             srunStep(1, "bash", 1, "CANCELLED", "0:15")};
  completed.request.memPerNodeMb = 512000;
  completed.status->priority = 4242;
  completed.request.workDir = "/home/root";
  api::SlurmJobObject failed = job(3, "train", "FAILED");
  failed.status->exitCode = "2:0";
  failed.request.gres = {slurm::GresRequest{"gpu", "h100", 8}};
  failed.request.timeLimit.reset();  // the partition's default
  api::SlurmJobObject running = job(4, "serve", "RUNNING");
  running.request.qos = "high";
  api::SlurmJobObject held = job(10, "later", "PENDING");
  held.status->reason = "JobHeldUser";
  api::SlurmJobObject cancelled = job(11, "never", "CANCELLED");
  cancelled.status->startTime.reset();
  cancelled.status->nodeList.clear();
  const std::vector<api::SlurmJobObject> live = {completed,
                                                 failed,
                                                 running,
                                                 held,
                                                 cancelled,
                                                 arrayParent(5),
                                                 task(6, 5, 0, "COMPLETED"),
                                                 task(7, 5, 1, "RUNNING"),
                                                 arrayParent(12)};
  SacctContext c = context();
  c.partitionDefaultTime["train"] = slurm::TimeLimit{7200};

  std::string dir = (std::filesystem::temp_directory_path() / "sacct-records-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::vector<accounting::JobRecord> read;
  {
    auto store = accounting::SqliteStore::open(dir + "/accounting.db");
    ASSERT_TRUE(store.isOk()) << store.status().toString();
    const accounting::RecordContext recordContext{c.clusterName, c.defaultPartition,
                                                  c.partitionDefaultTime, c.partitionMemory,
                                                  c.nodeMemoryMb};
    std::vector<accounting::JobRecord> records;
    for (const api::SlurmJobObject& j : live) {
      records.push_back(*accounting::recordOfSlurmJob(j, isArrayParent(j), recordContext));
    }
    ASSERT_EQ(*(*store)->write(records), records.size());
    accounting::JobFilter all;
    all.cluster = c.clusterName;
    read = *(*store)->query(all);
    ASSERT_EQ(read.size(), live.size());
  }
  std::filesystem::remove_all(dir);

  // Each with a line it must have, so that the comparison cannot pass on two empty tables.
  const std::vector<std::pair<std::vector<std::string>, std::string>> runs = {
      {{"-a", "-S", "2026-11-20", "-P", "-o", "ALL"}, "|2.1|"},
      {{"-a", "-S", "2026-11-20", "-o", "ALL%30"}, "12_[0-2]"},
      {{"-a", "-s", "PD,R,CD,F,CA", "-S", "2026-11-20", "-E", "2026-11-22", "-X", "-P"},
       "12_[0-2]|arr|"}};
  for (const auto& [args, line] : runs) {
    const SacctParse parse = parseSacctArgs(args, c);
    ASSERT_FALSE(parse.exit);
    const CommandOutput fromLive = formatSacct(live, parse, c);
    EXPECT_EQ(formatSacct(read, parse, c).out, fromLive.out) << args.back();
    EXPECT_NE(fromLive.out.find(line), std::string::npos) << fromLive.out;
  }
}

// slurmdbd keeps a record per run of a requeued job; sacct shows the newest, -D each.
TEST(SacctFormat, ARequeuedJobShowsItsLastRunUnlessDuplicatesAreAsked) {
  api::SlurmJobObject first = job(2, "x", "PREEMPTED");
  api::SlurmJobObject second = job(2, "x", "RUNNING");
  second.status->restarts = 1;
  const accounting::RecordContext rc;
  const std::vector<accounting::JobRecord> records = {
      *accounting::recordOfSlurmJob(first, false, rc),
      *accounting::recordOfSlurmJob(second, false, rc)};
  const SacctContext c = context();
  const auto print = [&](std::vector<std::string> args) {
    const SacctParse parse = parseSacctArgs(args, c);
    return formatSacct(records, parse, c).out;
  };
  EXPECT_EQ(print({"-X", "-n", "-P", "-o", "jobid,state", "-j", "2"}), "2|RUNNING\n");
  EXPECT_EQ(print({"-D", "-X", "-n", "-P", "-o", "jobid,state", "-j", "2"}),
            "2|PREEMPTED\n2|RUNNING\n");
}

}  // namespace
}  // namespace kubeslurm::cli

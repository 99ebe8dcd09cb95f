// squeue's output, pinned against ../shared/reference/slurm-22.05.md (the section each test
// names) and, for rules the reference does not show, against Slurm 22.05.8's src/squeue
// (print.c _print_str, opts.c, sort.c), as the test says.
#include "kubeslurm/cli/squeue_format.h"

#include <gtest/gtest.h>

#include "kubeslurm/slurm/array_spec.h"
#include "kubeslurm/slurm/dependency.h"

namespace kubeslurm::cli {
namespace {

// 2026-11-21T04:30:00Z
constexpr std::int64_t kNow = 1795235400;

const std::string kHeader =
    "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n";

struct JobBuilder {
  api::SlurmJobObject job;

  JobBuilder(std::int64_t id, std::string name, std::string state) {
    job.name = "j" + std::to_string(id);
    job.namespaceName = "default";
    job.user = "root";
    job.request.jobName = std::move(name);
    job.request.partition = "train";
    job.status.emplace();
    job.status->jobId = id;
    job.status->state = std::move(state);
    job.status->submitTime = kNow - 100;
  }
  JobBuilder& nodes(std::uint32_t n) {
    job.request.nodes = slurm::NodeRange{n, std::nullopt};
    return *this;
  }
  JobBuilder& running(const std::string& nodeList, std::int64_t secondsAgo) {
    job.status->state = "RUNNING";
    job.status->reason = "None";
    job.status->nodeList = nodeList;
    job.status->startTime = kNow - secondsAgo;
    return *this;
  }
  JobBuilder& reason(std::string text) {
    job.status->reason = std::move(text);
    return *this;
  }
  JobBuilder& priority(std::int64_t p) {
    job.status->priority = p;
    return *this;
  }
  JobBuilder& task(std::int64_t arrayJobId, std::int64_t taskId) {
    job.status->arrayJobId = arrayJobId;
    job.status->arrayTaskId = taskId;
    job.raw.edit()["metadata"]["labels"]["kubeslurm.io/array-job"] = "arr";
    job.raw.edit()["metadata"]["labels"]["kubeslurm.io/array-task"] = std::to_string(taskId);
    return *this;
  }
  JobBuilder& dependency(const std::string& text) {
    job.request.dependency = slurm::parseDependency(text).value();
    return *this;
  }
  JobBuilder& user(std::string name) {
    job.user = std::move(name);
    return *this;
  }
  JobBuilder& partition(std::string name) {
    job.request.partition = std::move(name);
    return *this;
  }
  api::SlurmJobObject build() const { return job; }
};

CommandOutput squeue(const std::vector<std::string>& args,
                     const std::vector<api::SlurmJobObject>& jobs,
                     const std::map<std::int64_t, std::string>& schedNodes = {}) {
  SqueueParse parse = parseSqueueArgs(args);
  if (parse.exit) return *parse.exit;
  SqueueContext context;
  context.schedNodes = schedNodes;
  context.now = kNow;
  context.defaultPartition = "train";
  context.partitionDefaultTime["train"] = slurm::TimeLimit{7 * 86400};
  context.partitionDefaultTime["debug"] = slurm::TimeLimit{3600};
  return formatSqueue(jobs, parse.options, context);
}

// The reference's three x.sbatch jobs: 2 and 3 running on a leaf each, 4 pending.
std::vector<api::SlurmJobObject> threeJobs() {
  return {
      JobBuilder(2, "x", "RUNNING").nodes(4).running("gpu-node-[001-004]", 9).build(),
      JobBuilder(3, "x", "RUNNING").nodes(4).running("gpu-node-[005-008]", 1).build(),
      JobBuilder(4, "x", "PENDING").nodes(4).reason("Resources").build(),
  };
}

// "sinfo and squeue on an empty cluster": the header alone.
TEST(SqueueFormat, EmptyClusterPrintsTheHeader) {
  const CommandOutput got = squeue({}, {});
  EXPECT_EQ(got.out, kHeader);
  EXPECT_EQ(got.err, "");
  EXPECT_EQ(got.exitCode, 0);
}

// "sbatch and squeue": two 4-node jobs running, a third pending; pending first, then the
// running jobs latest start first (sort.c: a start-time pass, then "P,t,-p").
TEST(SqueueFormat, ReferenceRunningAndPending) {
  const CommandOutput got = squeue({}, threeJobs());
  EXPECT_EQ(got.out, kHeader +
                         "                 4     train        x     root PD       0:00      4 "
                         "(Resources)\n"
                         "                 3     train        x     root  R       0:01      4 "
                         "gpu-node-[005-008]\n"
                         "                 2     train        x     root  R       0:09      4 "
                         "gpu-node-[001-004]\n");
}

// --mincpus: a started job holds that many CPUs on each node at least, as scontrol's NumCPUs
// counts them; a pending one shows what its tasks ask.
TEST(SqueueFormat, CpusOfAMinCpusJob) {
  api::SlurmJobObject running =
      JobBuilder(2, "x", "RUNNING").nodes(2).running("gpu-[1-2]", 5).build();
  running.request.minCpusPerNode = 12;
  api::SlurmJobObject pending = JobBuilder(3, "x", "PENDING").nodes(2).reason("Resources").build();
  pending.request.minCpusPerNode = 12;
  EXPECT_EQ(squeue({"-h", "-o", "%i %C"}, {running, pending}).out, "3 2\n2 24\n");
}

// "sbatch and squeue": squeue --start before the backfill pass (no estimate: N/A; SCHEDNODES
// is NULL, printed "(null)").
TEST(SqueueFormat, ReferenceStartBeforeBackfill) {
  const CommandOutput got = squeue({"--start"}, threeJobs());
  EXPECT_EQ(got.out,
            "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
            "SCHEDNODES           NODELIST(REASON)\n"
            "                 4     train        x     root PD                 N/A      4 "
            "(null)               (Resources)\n");
}

// "sbatch and squeue": after backfill the START_TIME column holds the estimate.
TEST(SqueueFormat, StartShowsTheEstimate) {
  std::vector<api::SlurmJobObject> jobs = threeJobs();
  jobs[2].status->estimatedStart = 1795238708;  // 2026-11-21T05:25:08Z
  const CommandOutput got = squeue({"--start", "-h"}, jobs);
  EXPECT_EQ(got.out,
            "                 4     train        x     root PD 2026-11-21T05:25:08      4 "
            "(null)               (Resources)\n");
}

// "sbatch and squeue": after backfill, SCHEDNODES names the nodes reserved for the job (here
// from the operator's query API).
TEST(SqueueFormat, StartShowsTheReservedNodes) {
  std::vector<api::SlurmJobObject> jobs = threeJobs();
  jobs[2].status->estimatedStart = 1795238708;  // 2026-11-21T05:25:08Z
  const CommandOutput got = squeue({"--start", "-h"}, jobs, {{4, "gpu-node-[001-004]"}});
  EXPECT_EQ(got.out,
            "                 4     train        x     root PD 2026-11-21T05:25:08      4 "
            "gpu-node-[001-004]   (Resources)\n");
}

// "sbatch and squeue": squeue -j 99999 for an unknown job, rc=1, nothing on stdout.
TEST(SqueueFormat, UnknownJobIdIsAnError) {
  const CommandOutput got = squeue({"-j", "99999"}, threeJobs());
  EXPECT_EQ(got.out, "");
  EXPECT_EQ(got.err, "slurm_load_jobs error: Invalid job id specified\n");
  EXPECT_EQ(got.exitCode, 1);
  // Several ids are loaded as the whole job list: unknown ones just match nothing.
  const CommandOutput two = squeue({"-h", "--jobs=99999,4"}, threeJobs());
  EXPECT_EQ(two.exitCode, 0);
  EXPECT_EQ(two.out,
            "                 4     train        x     root PD       0:00      4 (Resources)\n");
}

// "Job arrays": sbatch --array=0-7%2 -> 6; tasks 0 and 1 run, 2-7 pend behind the throttle.
std::vector<api::SlurmJobObject> arrayJobs() {
  api::SlurmJobObject parent = JobBuilder(6, "arr", "PENDING").build();
  parent.name = "arr";
  parent.request.array = slurm::parseArraySpec("0-7%2").value();
  parent.request.arrayText = "0-7%2";
  std::vector<api::SlurmJobObject> jobs = {parent};
  jobs.push_back(JobBuilder(7, "arr", "RUNNING").task(6, 0).running("gpu-node-001", 2).build());
  jobs.push_back(JobBuilder(8, "arr", "RUNNING").task(6, 1).running("gpu-node-002", 2).build());
  for (int t = 2; t <= 7; ++t) {
    jobs.push_back(
        JobBuilder(100 + t, "arr", "PENDING").task(6, t).reason("JobArrayTaskLimit").build());
  }
  return jobs;
}

TEST(SqueueFormat, ReferenceArrayCollapsesPendingTasks) {
  const CommandOutput got = squeue({}, arrayJobs());
  EXPECT_EQ(got.out, kHeader +
                         "         6_[2-7%2]     train      arr     root PD       0:00      1 "
                         "(JobArrayTaskLimit)\n"
                         "               6_0     train      arr     root  R       0:02      1 "
                         "gpu-node-001\n"
                         "               6_1     train      arr     root  R       0:02      1 "
                         "gpu-node-002\n");
}

// "Job arrays": squeue -r shows one line per pending task.
TEST(SqueueFormat, ReferenceArrayOneLinePerTask) {
  const CommandOutput got = squeue({"-r", "-h", "-t", "PD"}, arrayJobs());
  std::string expected;
  for (int t = 2; t <= 7; ++t) {
    expected += "               6_" + std::to_string(t) +
                "     train      arr     root PD       0:00      1 (JobArrayTaskLimit)\n";
  }
  EXPECT_EQ(got.out, expected);
  // Pending tasks have no ids of their own in Slurm: %A is the array's (the meta record's).
  EXPECT_EQ(squeue({"-r", "-h", "-o", "%i %A %K"}, arrayJobs()).out,
            "6_2 6 2\n6_3 6 3\n6_4 6 4\n6_5 6 5\n6_6 6 6\n6_7 6 7\n6_0 7 0\n6_1 8 1\n");
}

// Tasks the operator has not made yet (256 a cycle; none before the first cycle after sbatch)
// wait in the array's record, as in Slurm's meta record: squeue shows the whole array from the
// moment sbatch printed its id, with the reason its made tasks wait for.
TEST(SqueueFormat, TasksNotYetMadeWaitInTheArraysRecord) {
  std::vector<api::SlurmJobObject> jobs = arrayJobs();
  jobs.erase(jobs.begin() + 5, jobs.end());  // tasks 4-7 not made yet
  EXPECT_EQ(squeue({"-h", "-o", "%i %t %r"}, jobs).out,
            "6_[2-7%2] PD JobArrayTaskLimit\n6_0 R None\n6_1 R None\n");
  EXPECT_EQ(squeue({"-h", "-r", "-t", "PD", "-o", "%i %A"}, jobs).out,
            "6_2 6\n6_3 6\n6_4 6\n6_5 6\n6_6 6\n6_7 6\n");
  EXPECT_EQ(squeue({"-h", "-j", "6_5", "-o", "%i %t"}, jobs).out, "6_5 PD\n");
  EXPECT_EQ(squeue({"-h", "-t", "R", "-o", "%i"}, jobs).out, "6_0\n6_1\n");

  // Right after sbatch: the array has its id and no task yet.
  const std::vector<api::SlurmJobObject> fresh = {jobs.front()};
  EXPECT_EQ(squeue({"-h", "-o", "%i %t %r"}, fresh).out, "6_[0-7%2] PD None\n");
  EXPECT_EQ(squeue({"-h", "-j", "6", "-o", "%i"}, fresh).out, "6_[0-7%2]\n");
  // A cancelled array makes its tasks cancelled: none of them waits; nor do the tasks scancel
  // cancelled before they were made (spec.cancelTasks).
  api::SlurmJobObject cancelled = jobs.front();
  cancelled.raw.edit()["spec"]["cancel"] = true;
  EXPECT_EQ(squeue({"-h"}, {cancelled}).out, "");
  api::SlurmJobObject someCancelled = jobs.front();
  someCancelled.raw.edit()["spec"]["cancelTasks"] = "1-2,6";
  EXPECT_EQ(squeue({"-h", "-o", "%i"}, {someCancelled}).out, "6_[0,3-5,7%2]\n");
}

// -j A selects every task of array A; -j A_T one task (print.c _filter_job).
TEST(SqueueFormat, JobSelectorsForArrays) {
  EXPECT_EQ(squeue({"-h", "-j", "6_1", "-o", "%i"}, arrayJobs()).out, "6_1\n");
  EXPECT_EQ(squeue({"-h", "-j6", "-o", "%i %A %F %K"}, arrayJobs()).out,
            "6_[2-7%2] 6 6 2-7%2\n6_0 7 6 0\n6_1 8 6 1\n");
  EXPECT_EQ(squeue({"-h", "-j", "6_9"}, arrayJobs()).out, "");
}

// One pending task left is a plain task row: slurmctld turns the meta record into that task
// (job_mgr.c, "This is the last task of the job array").
TEST(SqueueFormat, SinglePendingTaskIsNotCollapsed) {
  std::vector<api::SlurmJobObject> jobs = arrayJobs();
  jobs.resize(4);  // parent, 6_0, 6_1, 6_2: an array of three
  jobs.front().request.array = slurm::parseArraySpec("0-2%2").value();
  EXPECT_EQ(squeue({"-h", "-t", "PD", "-o", "%i"}, jobs).out, "6_2\n");
}

// "Dependencies": squeue -o '%.10i %.6j %.2t %.25E %R'. Job 11 failed, 9 is still running
// (filtered out here with -t PD; the reference shows only the two pending jobs).
TEST(SqueueFormat, ReferenceDependencies) {
  std::vector<api::SlurmJobObject> jobs = {
      JobBuilder(9, "a", "RUNNING").running("gpu-node-001", 30).build(),
      JobBuilder(10, "b", "PENDING").reason("Dependency").dependency("afterok:9").build(),
      JobBuilder(11, "f", "FAILED").build(),
      JobBuilder(12, "g", "PENDING")
          .reason("DependencyNeverSatisfied")
          .dependency("afterok:11")
          .build(),
  };
  jobs[2].status->exitCode = "3:0";
  const CommandOutput got = squeue({"-t", "PD", "-o", "%.10i %.6j %.2t %.25E %R"}, jobs);
  EXPECT_EQ(got.out,
            "     JOBID   NAME ST                DEPENDENCY NODELIST(REASON)\n"
            "        12      g PD        afterok:11(failed) (DependencyNeverSatisfied)\n"
            "        10      b PD    afterok:9(unfulfilled) (Dependency)\n");
  // "Dependencies": once satisfied the dependency is (null).
  jobs[0].status->state = "COMPLETED";
  EXPECT_EQ(squeue({"-h", "-j", "10", "-o", "%E"}, jobs).out, "(null)\n");
}

// "sprio, sshare, sdiag" phase 2: the higher priority pends first.
TEST(SqueueFormat, ReferencePendingByPriority) {
  std::vector<api::SlurmJobObject> jobs = {
      JobBuilder(20, "pend-ml", "PENDING").nodes(2).reason("Priority").priority(3810).build(),
      JobBuilder(21, "pend-rs", "PENDING").nodes(2).reason("Resources").priority(10477).build(),
  };
  EXPECT_EQ(squeue({"-h"}, jobs).out,
            "                21     train  pend-rs     root PD       0:00      2 (Resources)\n"
            "                20     train  pend-ml     root PD       0:00      2 (Priority)\n");
}

// print.c _print_str: "%.N" right-justifies and cuts; "%N" left-justifies and always cuts;
// NODELIST is printed whole when right-justified (cut_output false) but cut when left.
TEST(SqueueFormat, WidthAndTruncationRules) {
  std::vector<api::SlurmJobObject> jobs = {
      JobBuilder(5, "abcdefghij", "RUNNING").running("gpu-node-[001-004]", 5).build()};
  EXPECT_EQ(squeue({"-h", "-o", "[%.4j][%4j][%12j][%j]"}, jobs).out,
            "[abcd][abcd][abcdefghij  ][abcdefghij]\n");
  EXPECT_EQ(squeue({"-h", "-o", "[%.6N][%6N][%.6R]"}, jobs).out,
            "[gpu-node-[001-004]][gpu-no][gpu-node-[001-004]]\n");
  // The header follows the same rules ("%.3i" -> "JOB"; a right-justified NODELIST is whole).
  EXPECT_EQ(squeue({"-o", "%.3i|%.3N|%3N|%10t|"}, {}).out, "JOB|NODELIST|NOD|ST        |\n");
  // Text before the first '%' is printed as is; an unknown letter prints its token back.
  const CommandOutput bad = squeue({"-h", "-o", "id=%i %z"}, jobs);
  EXPECT_EQ(bad.out, "id=5 %z\n");
  EXPECT_EQ(bad.err, "squeue: error: Invalid job format specification: z\n");
}

// print.c _print_secs: M:SS, H:MM:SS, D-HH:MM:SS; TIME_LIMIT/TIME_LEFT from the partition's
// default when no --time.
TEST(SqueueFormat, TimeFormats) {
  std::vector<api::SlurmJobObject> jobs = {
      JobBuilder(1, "a", "RUNNING").running("n1", 65).build(),
      JobBuilder(2, "b", "RUNNING").running("n2", 3 * 3600 + 4 * 60 + 5).build(),
      JobBuilder(3, "c", "RUNNING").running("n3", 2 * 86400 + 3600).build(),
  };
  jobs[0].request.timeLimit = slurm::TimeLimit{3600};
  EXPECT_EQ(squeue({"-h", "-S", "i", "-o", "%i %M %l %L"}, jobs).out,
            "1 1:05 1:00:00 58:55\n"
            "2 3:04:05 7-00:00:00 6-20:55:55\n"
            "3 2-01:00:00 7-00:00:00 4-23:00:00\n");
}

// A start a second ahead of the local clock (the operator's clock, rounded) is not "INVALID".
TEST(SqueueFormat, StartAheadOfTheLocalClock) {
  std::vector<api::SlurmJobObject> jobs = {JobBuilder(1, "a", "RUNNING").running("n1", -1).build()};
  EXPECT_EQ(squeue({"-h", "-o", "%M"}, jobs).out, "0:00\n");
}

// -O (parse_long_format): "name[:[.]width[suffix]]", width 20 when not given.
TEST(SqueueFormat, LongFormat) {
  const CommandOutput got = squeue({"-O", "jobid,name:.6,state:10|,reasonlist:0"}, threeJobs());
  EXPECT_EQ(got.out,
            "JOBID                 NAMESTATE     |NODELIST(REASON)\n"
            "4                        xPENDING   |(Resources)\n"
            "3                        xRUNNING   |gpu-node-[005-008]\n"
            "2                        xRUNNING   |gpu-node-[001-004]\n");
}

// -l: the date line, then STATE and TIME_LIMIT (its header cut to 9: "TIME_LIMI").
TEST(SqueueFormat, LongListing) {
  const CommandOutput got = squeue({"-l", "-j", "4"}, threeJobs());
  EXPECT_EQ(got.out,
            "Sat Nov 21 04:30:00 2026\n"
            "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES "
            "NODELIST(REASON)\n"
            "                 4     train        x     root  PENDING       0:00 7-00:00:00      4 "
            "(Resources)\n");
}

// Filters: -u, -p, -t with long and compact names, "all" (opts.c, print.c _filter_job).
TEST(SqueueFormat, Filters) {
  std::vector<api::SlurmJobObject> jobs = threeJobs();
  jobs.push_back(JobBuilder(5, "y", "COMPLETED").user("alice").partition("debug").build());
  jobs.push_back(JobBuilder(6, "z", "PENDING").user("alice").partition("debug").build());
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-u", "alice"}, jobs).out, "6\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-p", "debug", "-t", "all"}, jobs).out, "5\n6\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "--states=cd,R"}, jobs).out, "5\n3\n2\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-t", "running"}, jobs).out, "3\n2\n");
  // A job the operator has not numbered yet is not shown.
  jobs.push_back(JobBuilder(0, "new", "").build());
  jobs.back().status.reset();
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-p", "train"}, jobs).out, "4\n3\n2\n");
}

// sbatch -p debug,train: pending, the job shows the list as given and is listed under each of
// its partitions (squeue's _filter_job splits it); running, the one it started in (pack_job
// sends part_ptr's name for a job that is not pending). Its time limit is the first's default.
TEST(SqueueFormat, AJobOfSeveralPartitions) {
  std::vector<api::SlurmJobObject> jobs;
  jobs.push_back(
      JobBuilder(7, "w", "PENDING").partition("debug,train").reason("Resources").build());
  jobs.push_back(JobBuilder(8, "r", "PENDING").partition("debug,train").running("n1", 5).build());
  jobs.back().status->partition = "train";
  EXPECT_EQ(squeue({"-h", "-o", "%i %P %l"}, jobs).out, "7 debug,train 1:00:00\n8 train 1:00:00\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-p", "train"}, jobs).out, "7\n8\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-p", "debug"}, jobs).out, "7\n");
}

TEST(SqueueFormat, ArgumentErrors) {
  const CommandOutput state = squeue({"-t", "bogus"}, {});
  EXPECT_EQ(state.exitCode, 1);
  EXPECT_EQ(state.err.substr(0, state.err.find('\n')),
            "squeue: error: Invalid job state specified: bogus");
  EXPECT_EQ(squeue({"-j", "abc"}, {}).err, "squeue: error: Invalid job id: abc\n");
  EXPECT_EQ(squeue({"-z"}, {}).err,
            "squeue: invalid option -- 'z'\nTry \"squeue --help\" for more information\n");
  EXPECT_EQ(squeue({"-o", "%i", "-O", "jobid"}, {}).err,
            "squeue: error: -O (--Format) is incompatible with -o (--format)\n");
  EXPECT_EQ(squeue({"extra"}, {}).err, "squeue: error: Unrecognized option: extra\n");
}

// The parser is the shared getopt_long (kubeslurm/cli/getopt.h): glibc's messages, long-option
// prefixes (an ambiguous one lists the candidates), values attached or in the next word.
TEST(SqueueFormat, GetoptRules) {
  EXPECT_EQ(squeue({"--st"}, {}).err,
            "squeue: option '--st' is ambiguous; possibilities: '--start' '--steps' '--states'\n"
            "Try \"squeue --help\" for more information\n");
  EXPECT_EQ(squeue({"--bogus"}, {}).err,
            "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n");
  EXPECT_EQ(squeue({"-o"}, {}).err,
            "squeue: option requires an argument -- 'o'\nTry \"squeue --help\" for more "
            "information\n");
  EXPECT_EQ(squeue({"--format"}, {}).err,
            "squeue: option '--format' requires an argument\nTry \"squeue --help\" for more "
            "information\n");
  EXPECT_EQ(squeue({"--noheader=x"}, {}).err,
            "squeue: option '--noheader' doesn't allow an argument\nTry \"squeue --help\" for "
            "more information\n");
  // "--node" is both --nodes and --nodelist (and --node): the same option, so not ambiguous.
  EXPECT_EQ(squeue({"-ho%i", "--nod", "gpu-node-001", "--", "-j"}, threeJobs()).err,
            "squeue: error: Unrecognized option: -j\n");
  EXPECT_EQ(squeue({"-hj4", "-o%i"}, threeJobs()).out, "4\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-j", "3,2"}, threeJobs()).out, "3\n2\n");
  // An option before a bad word still acts (getopt_long hands them over one by one).
  EXPECT_EQ(squeue({"-t", "bogus", "-z"}, {}).err.substr(0, 50),
            "squeue: error: Invalid job state specified: bogus\n");
  EXPECT_EQ(squeue({"-V"}, {}).out, "slurm-wlm 22.05.8\n");
}

// --me keeps the user list the command fills in (squeue_cmd.cc); a later -u replaces it and a
// later --me replaces -u (opts.c: OPT_LONG_ME and 'u' both reset params.user_list).
TEST(SqueueFormat, MeOption) {
  EXPECT_TRUE(parseSqueueArgs({"--me"}).options.me);
  const SqueueParse meThenUser = parseSqueueArgs({"--me", "-u", "bob"});
  EXPECT_FALSE(meThenUser.options.me);
  EXPECT_EQ(meThenUser.options.users, std::vector<std::string>{"bob"});
  const SqueueParse userThenMe = parseSqueueArgs({"-u", "bob", "--me"});
  EXPECT_TRUE(userThenMe.options.me);
  EXPECT_TRUE(userThenMe.options.users.empty());
  EXPECT_EQ(parseSqueueArgs({"--me=x"}).exit->err,
            "squeue: option '--me' doesn't allow an argument\nTry \"squeue --help\" for more "
            "information\n");
}

// -w/--nodelist: print.c _filter_job keeps a job whose nodes intersect the hostlist
// (hostset_intersects); a job without nodes (pending) never matches. opts.c: a hostlist
// hostset_create refuses is "'X' invalid entry for --nodelist", rc=1.
TEST(SqueueFormat, NodelistFilter) {
  std::vector<api::SlurmJobObject> jobs = threeJobs();
  jobs.push_back(JobBuilder(7, "w", "RUNNING").nodes(1).running("gpu-node-010", 5).build());
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-w", "gpu-node-003"}, jobs).out, "2\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "--nodelist=gpu-node-[004-005]"}, jobs).out, "3\n2\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-w", "gpu-node-[006,010]"}, jobs).out, "3\n7\n");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "--nodes", "gpu-node-010,other"}, jobs).out, "7\n");
  // hostrange_hn_within: "gpu-node-3" is not "gpu-node-003" (the zero padding differs).
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-w", "gpu-node-3"}, jobs).out, "");
  EXPECT_EQ(squeue({"-h", "-o", "%i", "-w", "gpu-node-[009-011]", "-t", "all"}, jobs).out, "7\n");
  const CommandOutput bad = squeue({"-w", "gpu-node-[1-3]x"}, jobs);
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_EQ(bad.err, "squeue: error: 'gpu-node-[1-3]x' invalid entry for --nodelist\n");
  EXPECT_EQ(squeue({"--nodelist=n[5-3]"}, jobs).err,
            "squeue: error: _parse_single_range: Invalid range: `5-3'\n"
            "squeue: error: 'n[5-3]' invalid entry for --nodelist\n");
}

// -i/--iterate: atoi of the value, positive or "--iterate=X" and rc=1 (opts.c); with it the
// date line comes first, as with -l, unless -h (squeue.c main's print_date()).
TEST(SqueueFormat, IterateOption) {
  EXPECT_EQ(parseSqueueArgs({"-i", "5"}).options.iterate, 5);
  EXPECT_EQ(parseSqueueArgs({"--iterate=7s"}).options.iterate, 7);
  EXPECT_EQ(parseSqueueArgs({"-i99999999999"}).options.iterate, 2147483647);
  for (const char* bad : {"0", "-3", "abc"}) {
    const CommandOutput got = squeue({"-i", bad}, {});
    EXPECT_EQ(got.exitCode, 1) << bad;
    EXPECT_EQ(got.err, std::string("squeue: error: --iterate=") + bad + "\n\n");
  }
  EXPECT_EQ(squeue({"-i", "5", "-j", "4"}, threeJobs()).out,
            "Sat Nov 21 04:30:00 2026\n" + kHeader +
                "                 4     train        x     root PD       0:00      4 "
                "(Resources)\n");
  EXPECT_EQ(squeue({"-i", "5", "-h", "-o", "%i", "-j", "4"}, threeJobs()).out, "4\n");
  // The date comes before slurmctld is asked, so before its error too.
  const CommandOutput unknown = squeue({"-i", "5", "-j", "99"}, threeJobs());
  EXPECT_EQ(unknown.out, "Sat Nov 21 04:30:00 2026\n");
  EXPECT_EQ(unknown.err, "slurm_load_jobs error: Invalid job id specified\n");
}

}  // namespace
}  // namespace kubeslurm::cli

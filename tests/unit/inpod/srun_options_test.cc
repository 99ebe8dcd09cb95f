#include "kubeslurm/inpod/srun_options.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/inpod/srun.h"

namespace kubeslurm::inpod {
namespace {

using Args = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

// The srun inputs among the reference batch step's variables (shared/reference/slurm-22.05.md,
// "Batch step environment"), plus ones srun does not read as options.
Env referenceEnvironment() {
  return {
      {"SLURM_JOB_ID", "2"},
      {"SLURM_JOB_NAME", "x"},
      {"SLURM_JOB_NODELIST", "gpu-node-[001-004]"},
      {"SLURM_JOB_NUM_NODES", "4"},
      {"SLURM_NNODES", "4"},
      {"SLURM_NPROCS", "4"},
      {"SLURM_NTASKS", "4"},
      {"SLURM_NTASKS_PER_NODE", "1"},
      {"SLURM_TASKS_PER_NODE", "1(x4)"},
  };
}

SrunInvocation parsed(const Args& args, const Env& env = referenceEnvironment()) {
  StatusOr<SrunInvocation> result = parseSrunArguments(args, env);
  EXPECT_TRUE(result.isOk()) << result.status().message();
  return result.isOk() ? *result : SrunInvocation{};
}

// opt.c's env_vars table: SLURM_NTASKS (-n), SLURM_JOB_NUM_NODES (-N) and
// SLURM_NTASKS_PER_NODE are srun's defaults, which is how `srun cmd` in the reference script
// ran 4 tasks.
TEST(SrunOptions, InheritsTheJobsCountsFromTheEnvironment) {
  const SrunInvocation invocation = parsed({"bash", "-c", "echo $SLURM_PROCID"});
  EXPECT_EQ(invocation.request.ntasks, std::optional<std::uint32_t>(4));
  EXPECT_EQ(invocation.request.nodes, std::optional<std::uint32_t>(4));
  EXPECT_EQ(invocation.request.maxNodes, std::optional<std::uint32_t>(4));
  EXPECT_TRUE(invocation.request.nodesFromEnvironment);
  EXPECT_EQ(invocation.request.ntasksPerNode, std::optional<std::uint32_t>(1));
  EXPECT_EQ(invocation.command, (Args{"bash", "-c", "echo $SLURM_PROCID"}));
  EXPECT_FALSE(invocation.jobName.has_value());  // SLURM_JOB_NAME is only the default
}

// SLURM_NNODES and SLURM_CPUS_PER_TASK are not in 22.05's env_vars (SLURM_JOB_NUM_NODES and
// SRUN_CPUS_PER_TASK are).
TEST(SrunOptions, ReadsOnlyTheVariablesSrunReads) {
  const SrunInvocation invocation =
      parsed({"true"}, {{"SLURM_NNODES", "3"}, {"SLURM_CPUS_PER_TASK", "2"}});
  EXPECT_FALSE(invocation.request.nodes.has_value());
  EXPECT_FALSE(invocation.request.cpusPerTask.has_value());
  const SrunInvocation srunCpus = parsed({"true"}, {{"SRUN_CPUS_PER_TASK", "2"}});
  EXPECT_EQ(srunCpus.request.cpusPerTask, std::optional<std::uint32_t>(2));
}

TEST(SrunOptions, CommandLineOverridesTheEnvironment) {
  const SrunInvocation invocation = parsed({"-N", "2", "--ntasks=3", "hostname"});
  EXPECT_EQ(invocation.request.nodes, std::optional<std::uint32_t>(2));
  EXPECT_FALSE(invocation.request.nodesFromEnvironment);
  EXPECT_EQ(invocation.request.ntasks, std::optional<std::uint32_t>(3));
}

// srun's getopt string starts with '+': the first operand ends the options.
TEST(SrunOptions, OptionsEndAtTheCommand) {
  const SrunInvocation invocation = parsed({"-n", "2", "python", "-u", "x.py", "-n", "3"});
  EXPECT_EQ(invocation.request.ntasks, std::optional<std::uint32_t>(2));
  EXPECT_EQ(invocation.command, (Args{"python", "-u", "x.py", "-n", "3"}));
  EXPECT_EQ(parsed({"-l", "--", "-n", "x"}).command, (Args{"-n", "x"}));
  EXPECT_EQ(parsed({"-", "a"}).command, (Args{"-", "a"}));
}

TEST(SrunOptions, ShortOptionsClusterAndTakeAttachedArguments) {
  const SrunInvocation invocation =
      parsed({"-lK", "-n2", "-c4", "-w", "gpu-node-[001-002]", "true"});
  EXPECT_TRUE(invocation.label);
  EXPECT_TRUE(invocation.killOnBadExit);
  EXPECT_EQ(invocation.request.ntasks, std::optional<std::uint32_t>(2));
  EXPECT_EQ(invocation.request.cpusPerTask, std::optional<std::uint32_t>(4));
  EXPECT_EQ(invocation.request.nodelist, (Args{"gpu-node-001", "gpu-node-002"}));
  // -K's argument is optional: only an attached one counts, and it takes the rest of the
  // cluster ("-Kn2" would make "n2" its value).
  EXPECT_FALSE(parsed({"-K0", "true"}).killOnBadExit);
  const SrunInvocation separate = parsed({"-K", "0"});
  EXPECT_TRUE(separate.killOnBadExit);
  EXPECT_EQ(separate.command, Args{"0"});
}

// glibc getopt_long: unambiguous prefixes of srun's long options.
TEST(SrunOptions, LongOptionPrefixes) {
  EXPECT_EQ(parsed({"--ntasks-per-n=2", "true"}).request.ntasksPerNode,
            std::optional<std::uint32_t>(2));
  EXPECT_EQ(parsed({"--tasks-per", "3", "true"}).request.ntasksPerNode,
            std::optional<std::uint32_t>(3));
  // --cpu_bind and --cpu-bind share a value, so this prefix is not ambiguous.
  EXPECT_EQ(parsed({"--cpu_", "none", "true"}).ignored, Args{"cpu_bind"});
  const SrunInvocation invocation =
      parsed({"--exclud=gpu-node-004", "--lab", "--job-name", "train", "--chdir=/work", "true"});
  EXPECT_EQ(invocation.request.exclude, Args{"gpu-node-004"});
  EXPECT_TRUE(invocation.label);
  EXPECT_EQ(invocation.jobName, std::optional<std::string>("train"));
  EXPECT_EQ(invocation.chdir, std::optional<std::string>("/work"));
}

TEST(SrunOptions, NodeCounts) {
  struct Case {
    const char* arg;
    std::uint32_t min;
    std::uint32_t max;
  };
  // verify_node_count() and _str_to_nodes() in src/common/proc_args.c.
  for (const Case& c : {Case{"3", 3, 3}, Case{"2-4", 2, 4}, Case{"-4", 1, 4},
                        Case{"1k", 1024, 1024}, Case{"2-0", 2, 0}}) {
    SCOPED_TRACE(c.arg);
    const SrunInvocation invocation = parsed({"-N", c.arg, "true"});
    EXPECT_EQ(invocation.request.nodes, std::optional<std::uint32_t>(c.min));
    EXPECT_EQ(invocation.request.maxNodes, std::optional<std::uint32_t>(c.max));
  }
}

TEST(SrunOptions, DistributionAndPlaneSize) {
  EXPECT_EQ(parsed({"-m", "cyclic:block", "true"}).request.distribution, "cyclic:block");
  Env env = referenceEnvironment();
  env["SLURM_DIST_PLANESIZE"] = "4";
  EXPECT_EQ(parsed({"--distribution=plane", "true"}, env).request.distribution, "plane=4");
  env["SLURM_DISTRIBUTION"] = "cyclic";
  EXPECT_EQ(parsed({"true"}, env).request.distribution, "cyclic");
}

TEST(SrunOptions, EnvironmentFlagsAndCounts) {
  Env env = referenceEnvironment();
  env["SLURM_LABELIO"] = "1";
  env["SLURM_KILL_BAD_EXIT"] = "1";
  env["SRUN_EXPORT_ENV"] = "NONE,FOO=1";
  env["SLURM_REMOTE_CWD"] = "/data";
  env["SLURM_DEBUG"] = "2";
  SrunInvocation invocation = parsed({"true"}, env);
  EXPECT_TRUE(invocation.label);
  EXPECT_TRUE(invocation.killOnBadExit);
  EXPECT_EQ(invocation.exportVars, (Args{"NONE", "FOO=1"}));
  // find_quote_token (src/common/env.c): no split inside quotes; quotes around a whole token go.
  EXPECT_EQ(parsed({"--export=A=\"x,y\",'B=1,2',C", "true"}, referenceEnvironment()).exportVars,
            (Args{"A=\"x,y\"", "B=1,2", "C"}));
  EXPECT_EQ(invocation.chdir, std::optional<std::string>("/data"));
  EXPECT_EQ(invocation.verbose, 2);
  // slurm_process_option(): "0" clears a flag read from the environment.
  env["SLURM_LABELIO"] = "0";
  EXPECT_FALSE(parsed({"true"}, env).label);
  EXPECT_EQ(parsed({"-v", "-v", "true"}, {}).verbose, 2);
}

TEST(SrunOptions, IgnoredOptionsAreNamed) {
  const SrunInvocation invocation = parsed(
      {"--mpi=pmix", "--gpus-per-task=1", "-u", "--exclusive", "--mem", "10G", "-t", "5", "true"});
  EXPECT_EQ(invocation.ignored,
            (Args{"mpi", "gpus-per-task", "unbuffered", "exclusive", "mem", "time"}));
  EXPECT_EQ(invocation.command, Args{"true"});
}

// arg_set_cpus_per_task() in src/common/slurm_opt.c.
TEST(SrunOptions, RaisingCpusPerTaskWarns) {
  Env env = referenceEnvironment();
  env["SRUN_CPUS_PER_TASK"] = "2";
  const SrunInvocation invocation = parsed({"-c", "4", "true"}, env);
  EXPECT_EQ(invocation.request.cpusPerTask, std::optional<std::uint32_t>(4));
  EXPECT_EQ(invocation.warnings,
            Args{"srun: Job step's --cpus-per-task value exceeds that of job (4 > 2). Job step "
                 "may never run."});
}

// arg_set_help() and friends exit at once, so what follows is never looked at.
TEST(SrunOptions, HelpUsageAndVersionStopParsing) {
  EXPECT_TRUE(parsed({"--help", "-z"}).help);
  EXPECT_TRUE(parsed({"--usage"}).usage);
  EXPECT_TRUE(parsed({"-V"}).version);
  const StatusOr<SrunInvocation> first = parseSrunArguments({"-z", "--help"}, {});
  ASSERT_FALSE(first.isOk());
  EXPECT_EQ(first.status().message(), "invalid option -- 'z'");
}

struct ErrorCase {
  Args args;
  Env env;
  StatusCode code;
  std::string message;
};

TEST(SrunOptions, ErrorsAreSrunsMessages) {
  const std::vector<ErrorCase> cases = {
      // glibc getopt_long's messages, after "srun: ".
      {{"-z", "true"}, {}, StatusCode::kInvalidArgument, "invalid option -- 'z'"},
      {{"-n"}, {}, StatusCode::kInvalidArgument, "option requires an argument -- 'n'"},
      {{"--nodes"}, {}, StatusCode::kInvalidArgument, "option '--nodes' requires an argument"},
      {{"--lab=1", "true"},
       {},
       StatusCode::kInvalidArgument,
       "option '--label' doesn't allow an argument"},
      {{"--bogus=3", "true"}, {}, StatusCode::kInvalidArgument, "unrecognized option '--bogus=3'"},
      {{"--nod=2", "true"},
       {},
       StatusCode::kInvalidArgument,
       "option '--nod=2' is ambiguous; possibilities: '--nodefile' '--nodelist' '--nodes'"},
      // --cpu_bind is the same option as --cpu-bind, so glibc leaves it out.
      {{"--cpu", "true"},
       {},
       StatusCode::kInvalidArgument,
       "option '--cpu' is ambiguous; possibilities: '--cpu-bind' '--cpu-freq' '--cpus-per-gpu' "
       "'--cpus-per-task'"},
      {{"--exc=x", "true"},
       {},
       StatusCode::kInvalidArgument,
       "option '--exc=x' is ambiguous; possibilities: '--exclude' '--exclusive'"},
      {{"-Kn2", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: Invalid numeric value \"n2\" for --kill-on-bad-exit."},
      // The option setters (exit 255, no "Try" line).
      {{"-N", "x", "true"}, {}, StatusCode::kOutOfRange, "error: \"x\" is not a valid node count"},
      {{"-N", "3-2", "true"},
       {},
       StatusCode::kOutOfRange,
       "error: Maximum node count 2 is less than minimum node count 3"},
      {{"-N", "2-x", "true"},
       {},
       StatusCode::kOutOfRange,
       "error: \"x\" is not a valid node count"},
      {{"-m", "bogus", "true"},
       {},
       StatusCode::kOutOfRange,
       "error: Invalid --distribution specification"},
      {{"-m", "plane", "true"},
       {},
       StatusCode::kOutOfRange,
       "error: Invalid plane size or size not specified\nsrun: error: Invalid --distribution "
       "specification"},
      {{"true"},
       {{"SLURM_JOB_NUM_NODES", "four"}},
       StatusCode::kOutOfRange,
       "error: \"four\" is not a valid node count"},
      // parse_int() (exit 1).
      {{"-n", "0", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: Invalid numeric value \"0\" for --ntasks."},
      {{"--ntasks-per-node=two", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: Invalid numeric value \"two\" for --ntasks-per-node."},
      {{"true"},
       {{"SLURM_NTASKS", "abc"}},
       StatusCode::kFailedPrecondition,
       "error: Invalid numeric value \"abc\" for --ntasks."},
      {{"-n", "3000000000", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: invalid number of tasks (-n -1294967296)"},
      // _opt_args() and _opt_verify() in src/srun/libsrun/opt.c.
      {{"-n", "2"}, {}, StatusCode::kFailedPrecondition, "fatal: No command given to execute."},
      {{"-v", "-Q", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: don't specify both --verbose (-v) and --quiet (-Q)"},
      {{"--exclusive", "--overlap", "true"},
       {},
       StatusCode::kFailedPrecondition,
       "error: --exclusive and --overlap are mutually exclusive"},
      // What kubeslurm refuses.
      {{"--multi-prog", "x.conf"},
       {},
       StatusCode::kUnimplemented,
       "error: kubeslurm's srun does not support --multi-prog"},
      {{"-o", "out.txt", "true"},
       {},
       StatusCode::kUnimplemented,
       "error: kubeslurm's srun does not support --output"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.args.front());
    const StatusOr<SrunInvocation> result = parseSrunArguments(c.args, c.env);
    ASSERT_FALSE(result.isOk());
    EXPECT_EQ(result.status().code(), c.code);
    EXPECT_EQ(result.status().message(), c.message);
  }
}

// -i/--input and SLURM_STDINMODE keep the mode as given (srun decides it against the step's
// task count, fname.c); --pty with an input mode is refused as opt.c _opt_verify refuses it.
TEST(SrunOptions, InputModeAndPty) {
  EXPECT_EQ(parsed({"-i", "none", "cat"}).input, "none");
  EXPECT_EQ(parsed({"--input=3", "cat"}).input, "3");
  EXPECT_EQ(parsed({"cat"}, {{"SLURM_STDINMODE", "all"}}).input, "all");
  EXPECT_EQ(parsed({"--inp=0", "cat"}, {{"SLURM_STDINMODE", "all"}}).input, "0");
  EXPECT_FALSE(parsed({"cat"}).input.has_value());
  EXPECT_TRUE(parsed({"--pty", "bash"}).pty);
  EXPECT_FALSE(parsed({"bash"}).pty);
  const StatusOr<SrunInvocation> both = parseSrunArguments({"--pty", "-i", "0", "bash"}, {});
  ASSERT_FALSE(both.isOk());
  EXPECT_EQ(both.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(both.status().message(), "error: --error/--input/--output are incompatible with --pty");
}

// --jobid (slurm_opt.c arg_set_jobid: parse_int("--jobid", arg, true)): a positive job id, which
// a login host's srun runs its step in.
TEST(SrunOptions, JobIdNamesAPositiveJobId) {
  EXPECT_EQ(parsed({"--jobid=42", "--overlap", "hostname"}).jobId, 42);
  EXPECT_FALSE(parsed({"hostname"}).jobId.has_value());
  for (const char* bad : {"--jobid=0", "--jobid=x"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parseSrunArguments({bad, "true"}, referenceEnvironment()).isOk());
  }
}

// --test-only needs no command (opt.c: "No command given" only without it); the options are kept
// as given, by long name, for the allocation the login CLI plans (-p is --partition, a prefix
// its option, a flag without a value).
TEST(SrunOptions, TestOnlyNeedsNoCommandAndKeepsTheOptionsByName) {
  const SrunInvocation invocation =
      parsed({"-N2", "--part=gpu", "--gres", "gpu:8", "-l", "--test-only"}, {});
  EXPECT_TRUE(invocation.testOnly);
  EXPECT_TRUE(invocation.command.empty());
  using Option = std::pair<std::string, std::optional<std::string>>;
  EXPECT_EQ(invocation.options, (std::vector<Option>{{"nodes", "2"},
                                                     {"partition", "gpu"},
                                                     {"gres", "gpu:8"},
                                                     {"label", std::nullopt},
                                                     {"test-only", std::nullopt}}));
  // The environment's options are not the command line's.
  EXPECT_TRUE(parsed({"true"}).options.empty());
  EXPECT_FALSE(parsed({"true"}).testOnly);
}

// Inside a job the in-pod srun has no way to the operator's planner: it says where to ask.
TEST(SrunOptions, TheInPodSrunSendsTestOnlyToTheLoginShell) {
  std::ostringstream out;
  std::ostringstream err;
  Srun srun(
      referenceEnvironment(),
      SrunSettings{
          .connectTimeout = std::chrono::seconds(1), .workingDirectory = "/", .umask = "0022"},
      out, err);
  EXPECT_EQ(srun.run({"--test-only", "-N", "2", "hostname"}), 1);
  EXPECT_EQ(err.str(),
            "srun: error: --test-only is answered outside a job: run it from a login shell\n");
  EXPECT_EQ(out.str(), "");
}

// salloc reads its own table (src/common/slurm_opt.c, the options with a salloc setter) and its
// own variables (src/salloc/opt.c env_vars); outputs of Debian's salloc 22.05 pinned below.
TEST(SallocOptions, ItsOwnOptionsAndNoCommandNeeded) {
  StatusOr<SallocInvocation> parsed = parseSallocArguments({"-N2", "--no-shell", "--bell"}, {});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_TRUE(parsed->noShell);
  EXPECT_EQ(parsed->bell, SallocInvocation::Bell::kAlways);
  EXPECT_EQ(parsed->killCommandSignal, 0);
  EXPECT_TRUE(parsed->allocation.command.empty());  // the user's shell
  parsed = parseSallocArguments({"--no-bell", "-K", "sh", "-c", "exit 3"}, {});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_EQ(parsed->bell, SallocInvocation::Bell::kNever);
  EXPECT_EQ(parsed->killCommandSignal, SIGTERM);  // -K without a value
  EXPECT_EQ(parsed->allocation.command, (Args{"sh", "-c", "exit 3"}));
  EXPECT_FALSE(parsed->allocation.killOnBadExit);  // salloc's -K is not srun's
  for (const auto& [arg, signal] :
       {std::pair{"-KUSR1", SIGUSR1}, std::pair{"--kill-command=9", 9},
        std::pair{"--kill-command=sigint", SIGINT}, std::pair{"--k=HUP", SIGHUP}}) {
    parsed = parseSallocArguments({arg}, {});
    ASSERT_TRUE(parsed.isOk()) << arg << ": " << parsed.status().message();
    EXPECT_EQ(parsed->killCommandSignal, signal) << arg;
  }
}

TEST(SallocOptions, ItsVariablesAreAllocationOptions) {
  const StatusOr<SallocInvocation> parsed =
      parseSallocArguments({"-t", "5"}, {{"SALLOC_PARTITION", "gpu"},
                                         {"SALLOC_KILL_CMD", "INT"},
                                         {"SALLOC_NO_BELL", "1"},
                                         {"SLURM_NTASKS", "8"},  // srun's, not salloc's
                                         {"SALLOC_TIMELIMIT", "10"}});
  ASSERT_TRUE(parsed.isOk()) << parsed.status().message();
  EXPECT_EQ(parsed->killCommandSignal, SIGINT);
  EXPECT_EQ(parsed->bell, SallocInvocation::Bell::kNever);
  const auto& options = parsed->allocation.options;
  const auto has = [&](std::string_view name, std::string_view value) {
    return std::find_if(options.begin(), options.end(), [&](const auto& option) {
             return option.first == name && option.second == value;
           }) != options.end();
  };
  EXPECT_TRUE(has("partition", "gpu"));
  EXPECT_FALSE(has("ntasks", "8"));
  // The command line after the variables: its -t is the last word.
  ASSERT_FALSE(options.empty());
  EXPECT_EQ(options.back(), (std::pair<std::string, std::optional<std::string>>{"time", "5"}));
}

TEST(SallocOptions, RefusalsAsDebiansSalloc) {
  struct Case {
    Args args;
    std::string message;
    int exitStatus;
  };
  const std::vector<Case> cases = {
      {{"--kill-command=FOO", "true"}, "error: Invalid --kill-command specification", 255},
      {{"-KBAR", "true"}, "error: Invalid --kill-command specification", 255},
      {{"--no", "true"},
       "option '--no' is ambiguous; possibilities: '--no-bell' '--no-kill' '--no-shell' "
       "'--nodefile' '--nodelist' '--nodes'",
       255},
      {{"-l", "true"}, "invalid option -- 'l'", 255},
      {{"--pty", "true"}, "unrecognized option '--pty'", 255},
      {{"--label", "true"}, "unrecognized option '--label'", 255},
  };
  for (const Case& c : cases) {
    const StatusOr<SallocInvocation> parsed = parseSallocArguments(c.args, {});
    ASSERT_FALSE(parsed.isOk()) << c.args.front();
    EXPECT_EQ(parsed.status().message(), c.message) << c.args.front();
    EXPECT_EQ(srunExitStatus(parsed.status()), c.exitStatus) << c.args.front();
  }
}

TEST(SrunOptions, HowSrunEndsAfterAnError) {
  EXPECT_TRUE(srunPrintsTryHelp(Status(StatusCode::kInvalidArgument, "x")));
  EXPECT_FALSE(srunPrintsTryHelp(Status(StatusCode::kOutOfRange, "x")));
  EXPECT_EQ(srunExitStatus(Status(StatusCode::kInvalidArgument, "x")), 255);
  EXPECT_EQ(srunExitStatus(Status(StatusCode::kOutOfRange, "x")), 255);
  EXPECT_EQ(srunExitStatus(Status(StatusCode::kFailedPrecondition, "x")), 1);
  EXPECT_EQ(srunExitStatus(Status(StatusCode::kUnimplemented, "x")), 1);
}

}  // namespace
}  // namespace kubeslurm::inpod

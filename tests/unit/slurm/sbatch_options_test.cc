// sbatch option parsing. Messages and exit codes were captured from the real sbatch 22.05.8
// (Debian's slurm-client, which parses options before it contacts a controller); behaviour
// otherwise cites Slurm 22.05's source (src/sbatch/opt.c, src/common/slurm_opt.c,
// src/common/proc_args.c) or sbatch(1), and ../shared/reference/slurm-22.05.md.
#include "kubeslurm/slurm/sbatch_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kubeslurm::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The reference's jobs/x.sbatch (slurm-22.05.md "Batch script").
constexpr std::string_view kRefScript =
    "#!/bin/bash\n"
    "#SBATCH --nodes=4\n"
    "#SBATCH --ntasks-per-node=1\n"
    "#SBATCH --gres=gpu:8\n"
    "#SBATCH --time=01:00:00\n"
    "#SBATCH --job-name=x\n"
    "env | grep -E '^(SLURM|CUDA|GPU_|ROCR|SBATCH)' | sort\n"
    "srun bash -c 'echo \"task $SLURM_PROCID node=$SLURMD_NODENAME ...\"' | sort\n"
    "sleep ${SLEEP:-90}\n";

constexpr std::string_view kPlain = "#!/bin/sh\necho hi\n";
constexpr std::int64_t kNow = 1795235712;  // 2026-11-21T04:35:12Z

SbatchContext context(std::map<std::string, std::string, std::less<>> env = {}) {
  SbatchContext c;
  c.now = kNow;
  c.cwd = "/home/alice/jobs";
  c.env = std::move(env);
  return c;
}

SbatchParseResult parse(const std::vector<std::string>& argv,
                        const std::optional<std::string>& script = std::string(kPlain),
                        std::map<std::string, std::string, std::less<>> env = {}) {
  return parseSbatch(argv, script, context(std::move(env)));
}

// The request, or a test failure with what sbatch would have printed.
JobRequest request(const std::vector<std::string>& argv,
                   const std::optional<std::string>& script = std::string(kPlain),
                   std::map<std::string, std::string, std::less<>> env = {}) {
  SbatchParseResult result = parse(argv, script, std::move(env));
  if (result.exit) {
    std::string lines;
    for (const auto& l : result.exit->err) lines += l + "\n";
    ADD_FAILURE() << "sbatch exited " << result.exit->exitCode << ":\n" << lines;
    return {};
  }
  if (!result.invocation) {
    ADD_FAILURE() << "no invocation";
    return {};
  }
  return result.invocation->request;
}

// gtest names each table row after its `name`.
template <typename Case>
std::string caseName(const ::testing::TestParamInfo<Case>& row) {
  return row.param.name;
}

// --- #SBATCH directives -----------------------------------------------------------------------

struct DirectiveCase {
  std::string name;
  std::string script;
  std::vector<std::string> words;
};

class DirectiveTest : public ::testing::TestWithParam<DirectiveCase> {};

TEST_P(DirectiveTest, SplitsLeadingCommentBlockAsSlurm) {
  EXPECT_EQ(extractSbatchDirectives(GetParam().script), GetParam().words);
}

INSTANTIATE_TEST_SUITE_P(
    Scripts, DirectiveTest,
    ::testing::Values(
        DirectiveCase{"ReferenceScript",
                      std::string(kRefScript),
                      {"--nodes=4", "--ntasks-per-node=1", "--gres=gpu:8", "--time=01:00:00",
                       "--job-name=x"}},
        // opt.c _opt_batch_script(): the first line with a non-blank before '#' ends the scan.
        DirectiveCase{"StopsAtFirstCommand",
                      "#!/bin/sh\n#SBATCH -N 2\nhostname\n#SBATCH -N 8\n",
                      {"-N", "2"}},
        DirectiveCase{"BlankAndCommentLinesContinue",
                      "#!/bin/sh\n\n# a comment\n   # indented comment\n\t\n#SBATCH -p debug\n",
                      {"-p", "debug"}},
        // Only "#SBATCH" at the start of the line is a directive.
        DirectiveCase{"IndentedDirectiveIsAComment",
                      "#!/bin/sh\n  #SBATCH -N 2\n#SBATCH -N 3\n",
                      {"-N", "3"}},
        DirectiveCase{"NoSpaceAfterMagicWord", "#!/bin/sh\n#SBATCH--nodes=2\n", {"--nodes=2"}},
        // get_argument(): quotes group and vanish, backslash escapes, '#' starts a comment.
        DirectiveCase{"DoubleQuotesGroup",
                      "#!/bin/sh\n#SBATCH --job-name=\"my job\" -p a\n",
                      {"--job-name=my job", "-p", "a"}},
        DirectiveCase{"SingleQuotesKeepDoubleQuotes",
                      "#!/bin/sh\n#SBATCH --comment='say \"hi\"'\n",
                      {"--comment=say \"hi\""}},
        // A backslash escapes a quote or '#', but not a blank: the blank still ends the word
        // (real sbatch: "Invalid directive found in batch script: b#c").
        DirectiveCase{"BackslashDoesNotEscapeBlank",
                      "#!/bin/sh\n#SBATCH --comment=a\\ b\\#c\n",
                      {"--comment=a", "b#c"}},
        DirectiveCase{
            "BackslashEscapesQuote", "#!/bin/sh\n#SBATCH --comment=\\\"x\n", {"--comment=\"x"}},
        DirectiveCase{"HashStartsComment",
                      "#!/bin/sh\n#SBATCH -N 2 # two nodes\n#SBATCH -n 4#tasks\n",
                      {"-N", "2", "-n", "4"}},
        DirectiveCase{
            "QuotedHashIsLiteral", "#!/bin/sh\n#SBATCH --comment=\"#1\"\n", {"--comment=#1"}},
        // A word that copies no character ends the line's words (get_argument() returns NULL);
        // real sbatch ignores the --bogus after "" on such a line.
        DirectiveCase{"EmptyQuotesEndTheLine",
                      "#!/bin/sh\n#SBATCH -N 2 \"\" -n 4\n#SBATCH -p x\n",
                      {"-N", "2", "-p", "x"}},
        DirectiveCase{"SlurmPrefixAccepted", "#!/bin/sh\n#SLURM -N 2\n", {"-N", "2"}},
        DirectiveCase{"HetjobSeparatorStops",
                      "#!/bin/sh\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2\n",
                      {"-N", "1"}},
        DirectiveCase{"NoDirectives", "#!/bin/sh\necho\n", {}}),
    caseName<DirectiveCase>);

// --- getopt_long forms ------------------------------------------------------------------------

struct NodesCase {
  std::string name;
  std::vector<std::string> argv;
  std::uint32_t min;
  std::optional<std::uint32_t> max;
};

class NodesFormTest : public ::testing::TestWithParam<NodesCase> {};

TEST_P(NodesFormTest, AcceptsGetoptSpelling) {
  std::vector<std::string> argv = GetParam().argv;
  argv.emplace_back("job.sh");
  const JobRequest r = request(argv);
  ASSERT_TRUE(r.nodes);
  EXPECT_EQ(r.nodes->min, GetParam().min);
  EXPECT_EQ(r.nodes->max, GetParam().max);
}

INSTANTIATE_TEST_SUITE_P(
    Spellings, NodesFormTest,
    ::testing::Values(NodesCase{"LongEquals", {"--nodes=4"}, 4, std::nullopt},
                      NodesCase{"LongSeparate", {"--nodes", "4"}, 4, std::nullopt},
                      NodesCase{"ShortAttached", {"-N4"}, 4, std::nullopt},
                      NodesCase{"ShortSeparate", {"-N", "4"}, 4, std::nullopt},
                      // getopt clusters flags: -H (hold) then -N with the rest as its value.
                      NodesCase{"ClusteredAfterFlag", {"-HN4"}, 4, std::nullopt},
                      NodesCase{"ClusteredSeparateValue", {"-HN", "4"}, 4, std::nullopt},
                      // An unambiguous prefix of a long option is that option.
                      NodesCase{"UniquePrefix", {"--nodes=4"}, 4, std::nullopt},
                      NodesCase{"Range", {"-N", "2-8"}, 2, 8},
                      // verify_node_count(): "k" multiplies by 1024; a missing minimum is 1.
                      NodesCase{"KiloSuffix", {"-N", "1k"}, 1024, std::nullopt},
                      NodesCase{"MissingMinimum", {"-N", "-3"}, 1, 3},
                      NodesCase{"LastOneWins", {"-N", "2", "--nodes=3"}, 3, std::nullopt}),
    caseName<NodesCase>);

TEST(SbatchGetopt, UniqueLongPrefixSelectsOption) {
  EXPECT_EQ(request({"--partit=debug", "--ntasks-per-n=2", "job.sh"}).partition, "debug");
  EXPECT_EQ(request({"--ntasks-per-n=2", "job.sh"}).ntasksPerNode, 2U);
}

// --mincpus is acted on (slurmctld's pn_min_cpus): kept, and no "kubeslurm ignores" warning.
TEST(SbatchGetopt, MinCpusIsKept) {
  SbatchParseResult result = parse({"--mincpus=16", "x.sh"}, "#!/bin/sh\ntrue\n");
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->request.minCpusPerNode, 16U);
  EXPECT_TRUE(result.invocation->warnings.empty());
  EXPECT_EQ(request({"--minc=4", "job.sh"}).minCpusPerNode, 4U);
}

// --contiguous is acted on (placement.h): kept, and no "kubeslurm ignores" warning.
TEST(SbatchGetopt, ContiguousIsKept) {
  SbatchParseResult result = parse({"--contiguous", "x.sh"}, "#!/bin/sh\ntrue\n");
  ASSERT_TRUE(result.invocation);
  EXPECT_TRUE(result.invocation->request.contiguous);
  EXPECT_TRUE(result.invocation->warnings.empty());
  EXPECT_FALSE(request({"job.sh"}).contiguous);
}

TEST(SbatchGetopt, OptionsStopAtTheScript) {
  SbatchParseResult result = parse({"-N", "2", "job.sh", "-N", "3", "--bogus"});
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->request.nodes->min, 2U);
  EXPECT_THAT(result.invocation->scriptArgs, ElementsAre("-N", "3", "--bogus"));
  EXPECT_EQ(result.invocation->scriptPath, "/home/alice/jobs/job.sh");
}

TEST(SbatchGetopt, DoubleDashEndsOptions) {
  SbatchParseResult result = parse({"-N", "2", "--", "-weird.sh", "a"});
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->scriptPath, "/home/alice/jobs/-weird.sh");
  EXPECT_THAT(result.invocation->scriptArgs, ElementsAre("a"));
}

// An optional argument is only taken with '=': "--exclusive user" makes "user" the script
// (real sbatch: "sbatch: error: Unable to open file user").
TEST(SbatchGetopt, OptionalArgumentNeedsEquals) {
  SbatchParseResult result = parse({"--exclusive", "user", "x.sh"}, std::nullopt);
  ASSERT_TRUE(result.scriptToRead);
  EXPECT_EQ(result.scriptToRead->operand, "user");
}

TEST(SbatchGetopt, ScriptPathResolvesAsSearchPath) {
  EXPECT_EQ(parse({"./x.sh"}).invocation->scriptPath, "./x.sh");
  EXPECT_EQ(parse({"/abs/x.sh"}).invocation->scriptPath, "/abs/x.sh");
  EXPECT_EQ(parse({"sub/x.sh"}).invocation->scriptPath, "/home/alice/jobs/sub/x.sh");
}

// --- errors: exact lines and exit codes from the real sbatch 22.05.8 ----------------------------

struct ErrorCase {
  std::string name;
  std::vector<std::string> argv;
  std::vector<std::string> err;
  int exitCode;
  std::string script = std::string(kPlain);
};

class SbatchErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(SbatchErrorTest, PrintsSlurmMessageAndExitCode) {
  const ErrorCase& c = GetParam();
  SbatchParseResult result = parse(c.argv, c.script);
  ASSERT_TRUE(result.exit) << "accepted";
  EXPECT_EQ(result.exit->err, c.err);
  EXPECT_THAT(result.exit->out, IsEmpty());
  EXPECT_EQ(result.exit->exitCode, c.exitCode);
}

const std::string kTry = "Try \"sbatch --help\" for more information";

INSTANTIATE_TEST_SUITE_P(
    RealSbatch, SbatchErrorTest,
    ::testing::Values(
        ErrorCase{"UnknownLong",
                  {"--bogus", "x.sh"},
                  {"sbatch: unrecognized option '--bogus'", kTry},
                  255},
        ErrorCase{"UnknownLongWithValue",
                  {"--bogus=3", "x.sh"},
                  {"sbatch: unrecognized option '--bogus=3'", kTry},
                  255},
        ErrorCase{"UnknownShort", {"-Z", "x.sh"}, {"sbatch: invalid option -- 'Z'", kTry}, 255},
        ErrorCase{
            "PlusIsNotAnOption", {"-+", "x.sh"}, {"sbatch: invalid option -- '+'", kTry}, 255},
        ErrorCase{
            "ColonIsNotAnOption", {"-:", "x.sh"}, {"sbatch: invalid option -- ':'", kTry}, 255},
        ErrorCase{
            "ShortMissingValue", {"-N"}, {"sbatch: option requires an argument -- 'N'", kTry}, 255},
        ErrorCase{"LongMissingValue",
                  {"--nodes"},
                  {"sbatch: option '--nodes' requires an argument", kTry},
                  255},
        ErrorCase{"FlagWithValue",
                  {"--hold=yes", "x.sh"},
                  {"sbatch: option '--hold' doesn't allow an argument", kTry},
                  255},
        ErrorCase{"AmbiguousPrefix",
                  {"--node=4", "x.sh"},
                  {"sbatch: option '--node=4' is ambiguous; possibilities: '--nodefile' "
                   "'--nodelist' '--nodes'",
                   kTry},
                  255},
        ErrorCase{"BadNodeCount",
                  {"-N", "abc", "x.sh"},
                  {"sbatch: error: \"abc\" is not a valid node count"},
                  255},
        ErrorCase{"BadNodeCountAttached",
                  {"-Nabc", "x.sh"},
                  {"sbatch: error: \"abc\" is not a valid node count"},
                  255},
        // Deviation: Slurm multiplies past the range of long and truncates to int (undefined
        // behaviour in C); we refuse counts that do not fit an int.
        ErrorCase{"NodeCountBeyondIntIsRejected",
                  {"-N", "9223372036854775807k", "x.sh"},
                  {"sbatch: error: \"9223372036854775807k\" is not a valid node count"},
                  255},
        ErrorCase{"NodeRangeReversed",
                  {"-N", "4-2", "x.sh"},
                  {"sbatch: error: Maximum node count 2 is less than minimum node count 4"},
                  255},
        ErrorCase{"NtasksNotANumber",
                  {"-n", "abc", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"abc\" for --ntasks."},
                  1},
        ErrorCase{"NtasksZero",
                  {"-n", "0", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"0\" for --ntasks."},
                  1},
        ErrorCase{"NtasksTrailingGarbage",
                  {"--ntasks=4x", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"4x\" for --ntasks."},
                  1},
        ErrorCase{"CpusPerTaskZero",
                  {"-c", "0", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"0\" for --cpus-per-task."},
                  1},
        ErrorCase{"MinCpusZero",
                  {"--mincpus=0", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"0\" for --mincpus."},
                  1},
        ErrorCase{"NtasksPerNodeBad",
                  {"--ntasks-per-node=x", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"x\" for --ntasks-per-node."},
                  1},
        ErrorCase{
            "BadTime", {"--time=xx", "x.sh"}, {"sbatch: error: Invalid --time specification"}, 255},
        ErrorCase{"TooManyTimeFields",
                  {"--time", "1:00:00:00:00", "x.sh"},
                  {"sbatch: error: Invalid --time specification"},
                  255},
        ErrorCase{"BadTimeMin",
                  {"--time-min=xx", "x.sh"},
                  {"sbatch: error: Invalid --time-min specification"},
                  255},
        ErrorCase{
            "BadMem", {"--mem=abc", "x.sh"}, {"sbatch: error: Invalid --mem specification"}, 255},
        ErrorCase{"BadMemUnit",
                  {"--mem-per-cpu=1Q", "x.sh"},
                  {"sbatch: error: Invalid --mem-per-cpu specification"},
                  255},
        ErrorCase{"BadMemPerGpu",
                  {"--mem-per-gpu=x", "x.sh"},
                  {"sbatch: error: Invalid --mem-per-gpu specification"},
                  255},
        ErrorCase{"MemKindsExclusive",
                  {"--mem=1G", "--mem-per-cpu=1G", "x.sh"},
                  {"sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually "
                   "exclusive."},
                  1},
        ErrorCase{"MemAndMemPerGpuExclusive",
                  {"--mem=1G", "--mem-per-gpu=2G", "x.sh"},
                  {"sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually "
                   "exclusive."},
                  1},
        ErrorCase{"BadExclusive",
                  {"--exclusive=foo", "x.sh"},
                  {"sbatch: error: Invalid --exclusive specification"},
                  255},
        ErrorCase{"NegativePriority",
                  {"--priority=-1", "x.sh"},
                  {"sbatch: error: Priority must be >= 0"},
                  255},
        ErrorCase{"PriorityTooLarge",
                  {"--priority=4294967294", "x.sh"},
                  {"sbatch: error: Priority must be < 4294967294"},
                  255},
        ErrorCase{"NiceOutOfRange",
                  {"--nice=-2147483646", "x.sh"},
                  {"sbatch: error: Invalid --nice value, out of range (+/- 2147483645)"},
                  255},
        ErrorCase{"BadSignal",
                  {"--signal=FOO", "x.sh"},
                  {"sbatch: error: Invalid --signal specification"},
                  255},
        ErrorCase{"BadSignalTime",
                  {"--signal=B:USR1@x", "x.sh"},
                  {"sbatch: error: Invalid --signal specification"},
                  255},
        ErrorCase{"BadOpenMode",
                  {"--open-mode=x", "x.sh"},
                  {"sbatch: error: Invalid --open-mode specification"},
                  255},
        ErrorCase{"BadMailType",
                  {"--mail-type=foo", "x.sh"},
                  {"sbatch: error: Invalid --mail-type specification"},
                  255},
        ErrorCase{"BadSwitches",
                  {"--switches=abc", "x.sh"},
                  {"sbatch: error: Invalid numeric value \"abc\" for --switches."},
                  1},
        ErrorCase{"BadNoKill",
                  {"-kfoo", "x.sh"},
                  {"sbatch: error: Invalid --no-kill specification"},
                  255},
        ErrorCase{"EmptyScriptName", {"-N", "2", ""}, {"sbatch: error: Unable to open file "}, 1},
        ErrorCase{"WrapWithScript",
                  {"--wrap", "echo hi", "x.sh"},
                  {"sbatch: error: Script arguments not permitted with --wrap option"},
                  1},
        ErrorCase{"UnknownGres",
                  {"--gres=foo:2", "x.sh"},
                  {"sbatch: error: Invalid generic resource (gres) specification"},
                  1},
        ErrorCase{"GresBadCount",
                  {"--gres=gpu:a100:x", "x.sh"},
                  {"sbatch: error: Invalid generic resource (gres) specification"},
                  1},
        ErrorCase{"GpusFewerThanNodes",
                  {"--gpus=2", "-N", "4", "x.sh"},
                  {"sbatch: error: Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                   "--gpus-per-socket",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"GpusAsTypeIsOneGpu",
                  {"--gpus=abc", "x.sh"},
                  {"sbatch: error: Failed to validate job spec, --gpus < -N",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"TypedAndUntypedGpus",
                  {"--gres=gpu:a100:2", "--gpus-per-node=2", "x.sh"},
                  {"sbatch: error: Invalid GRES specification (with and without type "
                   "identification)"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"TypedPerNodeBesideUntypedGres",
                  {"--gpus-per-node=a100:2", "x.sh"},
                  {"sbatch: error: Invalid GRES specification (with and without type "
                   "identification)"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"TypedGpusFewerThanNodes",
                  {"-J", "", "--gpus=a100:2,v100:1", "x.sh"},
                  {"sbatch: error: Failed to validate job spec, --gpus < -N",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{
            "GpusPerTaskDisagreesWithNtasksPerNode",
            {"--gpus-per-task=1", "-N", "2", "x.sh"},
            {"sbatch: error: Failed to validate job spec. Based on --gres=gpu/--gpus-per-node "
             "and --gpus-per-task requested number of tasks per node differ from "
             "--ntasks-per-node.",
             "sbatch: error: Invalid generic resource (gres) specification"},
            1,
            std::string(kRefScript)},
        // --gres follows --gpus-per-node in tres_per_node, so its gpu:8 is the per-node count.
        ErrorCase{"GresOverridesGpusPerNode",
                  {"--gpus=3", "--gpus-per-node=2", "x.sh"},
                  {"sbatch: error: Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                   "--gpus-per-socket",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"GpusImplyFewerNodes",
                  {"--gpus=16", "--gpus-per-node=8", "-N", "4", "x.sh"},
                  {"sbatch: error: Failed to validate job spec. Based on --gpu and "
                   "--gres=gpu/--gpus-per-node required nodes (2) doesn't fall between "
                   "min_nodes (4) and max_nodes (4) boundaries.",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"WarningPrecedesGpuError",
                  {"-n", "3", "--gpus-per-task=2", "--gpus=4", "x.sh"},
                  {"sbatch: Warning: can't run 3 processes on 4 nodes, setting nnodes to 3",
                   "sbatch: error: Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= "
                   "--gpus-per-socket",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"GpusPerNodeNotMultipleOfPerTask",
                  {"--gpus-per-node=8", "--gpus-per-task=3", "x.sh"},
                  {"sbatch: error: Failed to validate job spec, --gres=gpu/--gpus-per-node not "
                   "multiple of --gpus-per-task.",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"SlurmPrefixWarningPrecedesError",
                  {"slurmpfx.sh"},
                  {"sbatch: error: Change from #SLURM to #SBATCH in your script and verify the "
                   "options are valid in sbatch",
                   "sbatch: unrecognized option '--bogus'", kTry},
                  255,
                  "#!/bin/sh\n#SLURM -N 2\n#SLURM -n 2\n#SBATCH --bogus\n"},
        ErrorCase{"MemPerGpuWithoutGpus",
                  {"--mem-per-gpu=1G", "--gres=gpu:0", "x.sh"},
                  {"sbatch: error: Requested mem_per_tres=gres:gpu:1024 but did not request "
                   "any GPU.",
                   "sbatch: error: Invalid generic resource (gres) specification"},
                  1,
                  std::string(kRefScript)},
        ErrorCase{"BadNodelist",
                  {"-w", "n[3-1]", "x.sh"},
                  {"sbatch: error: _parse_single_range: Invalid range: `3-1'",
                   "sbatch: error: memory allocation failure"},
                  1},
        // _opt_verify(): the -w host count raised the minimum above -N's maximum.
        ErrorCase{"NodeListLongerThanMaxNodes",
                  {"-w", "n[1-9]", "-N", "2-8", "x.sh"},
                  {"sbatch: error: invalid number of nodes (-N 9-8)"},
                  1},
        ErrorCase{"DeadlineBeforeBegin",
                  {"--begin=now+1hour", "--deadline=now", "x.sh"},
                  {"sbatch: error: Incompatible begin and deadline time specification"},
                  1},
        // Pass 1 validates the command line in order (slurm_process_option() sees
        // set_by_env=true there, so the early-pass filter does not apply).
        ErrorCase{"FirstBadOptionWinsTime",
                  {"--time=xx", "--bogus", "x.sh"},
                  {"sbatch: error: Invalid --time specification"},
                  255},
        ErrorCase{"FirstBadOptionWinsBogus",
                  {"--bogus", "--time=xx", "x.sh"},
                  {"sbatch: unrecognized option '--bogus'", kTry},
                  255},
        // sbatch.c _get_script_buffer().
        ErrorCase{"EmptyScript", {"x.sh"}, {"sbatch: error: Batch script is empty!"}, 1, ""},
        ErrorCase{"WhitespaceScript",
                  {"x.sh"},
                  {"sbatch: error: Batch script contains only whitespace!"},
                  1,
                  "  \n\n"},
        ErrorCase{"NoShebang",
                  {"x.sh"},
                  {"sbatch: error: This does not look like a batch script.  The first",
                   "sbatch: error: line must start with #! followed by the path to an "
                   "interpreter.",
                   "sbatch: error: For instance: #!/bin/sh"},
                  1,
                  "echo hi\n"},
        ErrorCase{"DosLineBreaks",
                  {"x.sh"},
                  {"sbatch: error: Batch script contains DOS line breaks (\\r\\n)",
                   "sbatch: error: instead of expected UNIX line breaks (\\n)."},
                  1,
                  "#!/bin/sh\r\necho hi\r\n"},
        // Directive errors.
        ErrorCase{"NonOptionDirective",
                  {"baddir.sh"},
                  {"sbatch: error: Invalid directive found in batch script: foo"},
                  255,
                  "#!/bin/sh\n#SBATCH foo\necho\n"},
        ErrorCase{"UnknownDirective",
                  {"bogusdir.sh"},
                  {"sbatch: unrecognized option '--bogus'", kTry},
                  255,
                  "#!/bin/sh\n#SBATCH --bogus\necho\n"},
        ErrorCase{"UnmatchedQuote",
                  {"unmatched.sh"},
                  {"sbatch: fatal: unmatched.sh: line 2: Unmatched `\"` in [--job-name=\"abc]"},
                  1,
                  "#!/bin/sh\n#SBATCH --job-name=\"abc\necho\n"},
        // The bracket shows the line from the failing word on, leading blank included.
        ErrorCase{"UnmatchedQuoteLaterWord",
                  {"uq.sh"},
                  {"sbatch: fatal: uq.sh: line 2: Unmatched `\"` in [ \"b c]"},
                  1,
                  "#!/bin/sh\n#SBATCH -J a -o \"b c\n"},
        ErrorCase{"EscapedBlankSplitsWord",
                  {"esc.sh"},
                  {"sbatch: error: Invalid directive found in batch script: b#c"},
                  255,
                  "#!/bin/sh\n#SBATCH --comment=a\\ b\\#c\necho\n"},
        ErrorCase{"BadDirectiveValue",
                  {"badN.sh"},
                  {"sbatch: error: \"abc\" is not a valid node count"},
                  255,
                  "#!/bin/sh\n#SBATCH -N abc\necho\n"},
        // Array and dependency are checked by slurmctld at submission.
        ErrorCase{"BadArray",
                  {"--array=abc", "x.sh"},
                  {"sbatch: error: Batch job submission failed: Invalid job array "
                   "specification"},
                  1},
        ErrorCase{"BadDependency",
                  {"--dependency=afterfoo:1", "x.sh"},
                  {"sbatch: error: Batch job submission failed: Job dependency problem"},
                  1},
        ErrorCase{"PyxisBadMount",
                  {"--container-mounts=relative:/x", "x.sh"},
                  {"sbatch: error: pyxis: mount source must be a relative path, an absolute "
                   "path, \"tmpfs\" or \"umount\"",
                   "sbatch: error: Invalid --container-mounts argument: relative:/x"},
                  255}),
    caseName<ErrorCase>);

// "Invalid time specification (pos=N): TEXT" comes from parse_time() without a prefix.
TEST(SbatchErrors, BadBeginPrintsParseTimeLineFirst) {
  SbatchParseResult result = parse({"--begin=xx", "x.sh"});
  ASSERT_TRUE(result.exit);
  EXPECT_EQ(result.exit->exitCode, 255);
  EXPECT_EQ(result.exit->err.back(), "sbatch: error: Invalid --begin specification");
  EXPECT_EQ(result.exit->err.front(), "Invalid time specification (pos=0): xx");
}

// Real sbatch: "sbatch -N abc nope.sh" reports the node count, not the missing file.
TEST(SbatchErrors, CommandLineIsValidatedBeforeTheScriptIsRead) {
  SbatchParseResult result = parse({"-N", "abc", "nope.sh"}, std::nullopt);
  ASSERT_TRUE(result.exit);
  EXPECT_THAT(result.exit->err, ElementsAre("sbatch: error: \"abc\" is not a valid node count"));
}

TEST(SbatchErrors, ScriptIsRequestedWhenOptionsAreValid) {
  SbatchParseResult result = parse({"-N", "2", "nope.sh"}, std::nullopt);
  ASSERT_TRUE(result.scriptToRead);
  EXPECT_EQ(result.scriptToRead->path, "/home/alice/jobs/nope.sh");
  EXPECT_EQ(result.scriptToRead->operand, "nope.sh");
  EXPECT_EQ(result.scriptToRead->errorExitCode, 1);
  SbatchParseResult stdinResult = parse({"-N", "2"}, std::nullopt);
  ASSERT_TRUE(stdinResult.scriptToRead);
  EXPECT_EQ(stdinResult.scriptToRead->path, "");
}

// sbatch.c _set_exit_code(): SLURM_EXIT_ERROR replaces error_exit, not exit(-1) or exit(1).
TEST(SbatchErrors, SlurmExitErrorChangesErrorExit) {
  auto code = [](const std::vector<std::string>& argv) {
    return parse(argv, std::string(kPlain), {{"SLURM_EXIT_ERROR", "7"}}).exit->exitCode;
  };
  EXPECT_EQ(code({"--wrap=x", "x.sh"}), 7);
  EXPECT_EQ(code({"--array=abc", "x.sh"}), 7);
  EXPECT_EQ(code({"--bogus", "x.sh"}), 255);
  EXPECT_EQ(code({"-n", "0", "x.sh"}), 1);
  EXPECT_EQ(parse({"x.sh"}, std::nullopt, {{"SLURM_EXIT_ERROR", "7"}}).scriptToRead->errorExitCode,
            7);
}

TEST(SbatchErrors, SlurmPrefixWarnsOnce) {
  SbatchParseResult result = parse({"x.sh"}, "#!/bin/sh\n#SLURM -N 2\n#SLURM -n 2\n");
  ASSERT_TRUE(result.invocation);
  EXPECT_THAT(result.invocation->warnings,
              ElementsAre("sbatch: error: Change from #SLURM to #SBATCH in your script and "
                          "verify the options are valid in sbatch"));
  EXPECT_EQ(result.invocation->request.nodes->min, 2U);
}

// --- early exits --------------------------------------------------------------------------------

TEST(SbatchEarlyExit, VersionHelpUsageAndGresHelpExitZero) {
  auto out = [](const std::vector<std::string>& argv) {
    SbatchParseResult result = parse(argv);
    EXPECT_TRUE(result.exit);
    if (!result.exit) return std::vector<std::string>{};
    EXPECT_EQ(result.exit->exitCode, 0);
    return result.exit->out;
  };
  EXPECT_THAT(out({"--version"}), ElementsAre("slurm 22.05.8"));
  EXPECT_THAT(out({"-V", "--bogus"}), ElementsAre("slurm 22.05.8"));
  EXPECT_FALSE(out({"--help"}).empty());
  EXPECT_FALSE(out({"--usage"}).empty());
  // print_gres_help(), as the real sbatch prints it with GresTypes=gpu.
  EXPECT_THAT(out({"--gres=help", "x.sh"}),
              ElementsAre("Valid gres options are:", "gpu[[:type]:count]"));
}

// Early options in a script are skipped in pass 2 (slurm_opt.c sbatch_early_pass).
TEST(SbatchEarlyExit, EarlyOptionsInScriptAreIgnored) {
  const JobRequest r = request({"x.sh"}, "#!/bin/sh\n#SBATCH --version --wrap=hi -N 2\n");
  EXPECT_EQ(r.wrap, "");
  EXPECT_EQ(r.nodes->min, 2U);
}

// --- precedence: script < SBATCH_* < command line (sbatch(1) "INPUT ENVIRONMENT VARIABLES") ---

TEST(SbatchPrecedence, CommandLineBeatsEnvironmentBeatsScript) {
  const std::string script = "#!/bin/sh\n#SBATCH -p fromscript -t 10 -A acct\n";
  EXPECT_EQ(request({"x.sh"}, script).partition, "fromscript");
  EXPECT_EQ(request({"x.sh"}, script, {{"SBATCH_PARTITION", "fromenv"}}).partition, "fromenv");
  EXPECT_EQ(request({"-p", "fromcli", "x.sh"}, script, {{"SBATCH_PARTITION", "fromenv"}}).partition,
            "fromcli");
  const JobRequest r = request({"x.sh"}, script, {{"SBATCH_TIMELIMIT", "20"}});
  EXPECT_EQ(r.timeLimit, TimeLimit{20 * 60});
  EXPECT_EQ(r.account, "acct");
}

TEST(SbatchPrecedence, EnvironmentValuesAreValidated) {
  SbatchParseResult result = parse({"x.sh"}, std::string(kPlain), {{"SBATCH_TIMELIMIT", "xx"}});
  ASSERT_TRUE(result.exit);
  EXPECT_THAT(result.exit->err, ElementsAre("sbatch: error: Invalid --time specification"));
  EXPECT_EQ(result.exit->exitCode, 255);
  result = parse({"x.sh"}, std::string(kPlain), {{"SBATCH_EXCLUSIVE", "bogus"}});
  ASSERT_TRUE(result.exit);
  EXPECT_THAT(result.exit->err, ElementsAre("sbatch: error: Invalid --exclusive specification"));
}

// slurm_process_option(): a flag from the environment is on for "", "yes" or a non-zero
// number and reset otherwise; an empty optional argument means no argument.
TEST(SbatchPrecedence, EnvironmentFlagsFollowSlurmRules) {
  const std::string requeueScript = "#!/bin/sh\n#SBATCH --requeue\n";
  EXPECT_EQ(request({"x.sh"}, requeueScript).requeue, true);
  EXPECT_EQ(request({"x.sh"}, requeueScript, {{"SBATCH_REQUEUE", "0"}}).requeue, std::nullopt);
  EXPECT_EQ(request({"x.sh"}, std::string(kPlain), {{"SBATCH_REQUEUE", "yes"}}).requeue, true);
  EXPECT_EQ(request({"x.sh"}, std::string(kPlain), {{"SBATCH_NO_REQUEUE", "1"}}).requeue, false);
  EXPECT_EQ(request({"x.sh"}, std::string(kPlain), {{"SBATCH_EXCLUSIVE", ""}}).shared,
            SharedMode::kExclusive);
  EXPECT_EQ(request({"x.sh"}, std::string(kPlain), {{"SBATCH_EXCLUSIVE", "user"}}).shared,
            SharedMode::kExclusiveUser);
}

// _validate_memory_options(): a kind given on the command line (or in the script) wins over
// a different kind from the environment.
TEST(SbatchPrecedence, MemoryFromCommandLineDropsEnvironmentKind) {
  const JobRequest r =
      request({"--mem-per-cpu=2G", "x.sh"}, std::string(kPlain), {{"SBATCH_MEM_PER_NODE", "8G"}});
  EXPECT_EQ(r.memPerCpuMb, 2048U);
  EXPECT_EQ(r.memPerNodeMb, std::nullopt);
  SbatchParseResult result = parse({"x.sh"}, std::string(kPlain),
                                   {{"SBATCH_MEM_PER_NODE", "8G"}, {"SBATCH_MEM_PER_CPU", "1G"}});
  ASSERT_TRUE(result.exit);
  EXPECT_THAT(result.exit->err,
              ElementsAre("sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and "
                          "SLURM_MEM_PER_NODE are mutually exclusive."));
}

TEST(SbatchPrecedence, MailTypesAccumulate) {
  const JobRequest r =
      request({"--mail-type=END", "x.sh"}, "#!/bin/sh\n#SBATCH --mail-type=BEGIN,bogus\n");
  ASSERT_TRUE(r.mailType);
  EXPECT_EQ(formatMailType(*r.mailType), "BEGIN,END");
}

// --- the reference script and defaults ----------------------------------------------------------

// slurm-22.05.md "scontrol show job": JobName=x NumNodes=4 NumTasks=4 NtasksPerN:B:S:C=1:0:*:*
// TimeLimit=01:00:00 TresPerNode=gres:gpu:8 WorkDir=/home/alice/jobs StdIn=/dev/null.
TEST(SbatchReference, ReferenceScriptMatchesScontrol) {
  SbatchParseResult result = parse({"x.sbatch"}, std::string(kRefScript));
  ASSERT_TRUE(result.invocation);
  const JobRequest& r = result.invocation->request;
  EXPECT_EQ(r.jobName, "x");
  EXPECT_EQ(r.nodes, (NodeRange{4, std::nullopt}));
  EXPECT_EQ(r.ntasksPerNode, 1U);
  EXPECT_EQ(r.ntasks, 4U);  // _opt_verify(): --ntasks-per-node x a fixed node count
  EXPECT_THAT(r.gres, ElementsAre(GresRequest{"gpu", "", 8}));
  EXPECT_EQ(formatGresList(r.gres), "gpu:8");
  EXPECT_EQ(r.timeLimit, TimeLimit{3600});
  EXPECT_EQ(r.workDir, "/home/alice/jobs");
  EXPECT_EQ(r.input, "/dev/null");
  EXPECT_EQ(r.output, "");  // slurmctld's default, filled in by the codec
  EXPECT_EQ(result.invocation->scriptPath, "/home/alice/jobs/x.sbatch");
  EXPECT_EQ(result.invocation->script, kRefScript);
  EXPECT_THAT(r.ignoredOptions, IsEmpty());
}

TEST(SbatchDefaults, JobNameDefaults) {
  EXPECT_EQ(request({"dir/train.sh"}).jobName, "train.sh");
  EXPECT_EQ(request({"-J", "named", "train.sh"}).jobName, "named");
  EXPECT_EQ(request({"--wrap=hostname"}, std::nullopt).jobName, "wrap");
  // sbatch.c _fill_job_desc_from_opts(): no name and no script file gives "sbatch".
  EXPECT_EQ(request({}).jobName, "sbatch");
  EXPECT_EQ(request({}, std::string(kPlain), {{"SBATCH_JOB_NAME", "envname"}}).jobName, "envname");
  EXPECT_EQ(request({"-J", "", "train.sh"}).jobName, "");  // kept empty, as Slurm keeps it
}

// sbatch.c _script_wrap().
TEST(SbatchDefaults, WrapGeneratesShScript) {
  SbatchParseResult result = parse({"--wrap", "echo after", "-J", "b"}, std::nullopt);
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->script,
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho after\n");
  EXPECT_EQ(result.invocation->scriptPath, "");
  EXPECT_EQ(result.invocation->request.jobName, "b");
}

TEST(SbatchDefaults, PathsAreMadeAbsoluteAgainstChdir) {
  JobRequest r = request({"-o", "out/%j.log", "-e", "/abs/err", "x.sh"});
  EXPECT_EQ(r.output, "/home/alice/jobs/out/%j.log");
  EXPECT_EQ(r.error, "/abs/err");
  r = request({"-D", "sub", "-o", "o.txt", "-i", "none", "x.sh"});
  EXPECT_EQ(r.workDir, "/home/alice/jobs/sub");
  EXPECT_EQ(r.output, "/home/alice/jobs/sub/o.txt");
  EXPECT_EQ(r.input, "/dev/null");
  EXPECT_EQ(request({"-o", "none", "x.sh"}).output, "/dev/null");
}

// --- values
// ---------------------------------------------------------------------------------------

TEST(SbatchValues, TimeLimitsRoundUpToMinutes) {
  EXPECT_EQ(request({"-t", "0:30", "x.sh"}).timeLimit, TimeLimit{60});
  EXPECT_EQ(request({"-t", "90", "x.sh"}).timeLimit, TimeLimit{90 * 60});
  EXPECT_EQ(request({"-t", "1-02:03:04", "x.sh"}).timeLimit, TimeLimit{(26 * 60 + 4) * 60});
  EXPECT_EQ(request({"-t", "0", "x.sh"}).timeLimit, TimeLimit{});  // 0 = no limit
  EXPECT_EQ(request({"-t", "UNLIMITED", "x.sh"}).timeLimit, TimeLimit{});
  EXPECT_EQ(request({"--time-min=45", "x.sh"}).timeMin, TimeLimit{45 * 60});
}

TEST(SbatchValues, MemoryUnits) {
  EXPECT_EQ(request({"--mem=4096", "x.sh"}).memPerNodeMb, 4096U);
  EXPECT_EQ(request({"--mem=64G", "x.sh"}).memPerNodeMb, 65536U);
  EXPECT_EQ(request({"--mem=2T", "x.sh"}).memPerNodeMb, 2097152U);
  EXPECT_EQ(request({"--mem=1025K", "x.sh"}).memPerNodeMb, 2U);  // rounds up
  EXPECT_EQ(request({"--mem=512MB", "x.sh"}).memPerNodeMb, 512U);
  EXPECT_EQ(request({"--mem=0", "x.sh"}).memPerNodeMb, 0U);
  EXPECT_EQ(request({"--mem-per-gpu=8g", "--gpus=1", "x.sh"}).memPerGpuMb, 8192U);
}

TEST(SbatchValues, GpuRequests) {
  JobRequest r = request({"--gres=gpu:a100:2,gpu:a100:1", "x.sh"});
  EXPECT_THAT(r.gres, ElementsAre(GresRequest{"gpu", "a100", 2}, GresRequest{"gpu", "a100", 1}));
  r = request({"--gres=gres:gpu:2", "x.sh"});
  EXPECT_THAT(r.gres, ElementsAre(GresRequest{"gpu", "", 2}));
  r = request({"--gres=gpu", "x.sh"});
  EXPECT_THAT(r.gres, ElementsAre(GresRequest{"gpu", "", 1}));
  EXPECT_THAT(request({"--gres=none", "x.sh"}).gres, IsEmpty());
  EXPECT_THAT(request({"--gres=gpu:0", "x.sh"}).gres, IsEmpty());  // count 0 is dropped
  r = request({"--gpus-per-node=8", "--gpus-per-task=1", "-N", "2", "x.sh"});
  EXPECT_EQ(formatGpuList(r.gpusPerNode), "8");
  EXPECT_EQ(r.ntasksPerNode, 8U);  // gres_job_state_validate(): 8 per node / 1 per task
  EXPECT_EQ(r.ntasks, 2U);         // implicit: one task per node before the GPU check
  r = request({"--gpus=16", "--gpus-per-node=8", "x.sh"});
  EXPECT_EQ(r.nodes, (NodeRange{2, std::nullopt}));  // 16 / 8 nodes
  r = request({"-G", "a100:4,v100:2", "x.sh"});
  EXPECT_EQ(formatGpuList(r.gpus), "a100:4,v100:2");
}

TEST(SbatchValues, SchedulingOptions) {
  JobRequest r = request({"--nice", "--priority=TOP", "--hold", "--parsable", "--test-only",
                          "--requeue", "--exclusive", "-s", "x.sh"});
  EXPECT_EQ(r.nice, 100);  // arg_set_nice(): no value is 100
  EXPECT_EQ(r.priority, kPriorityTop);
  EXPECT_TRUE(r.hold);
  EXPECT_TRUE(r.parsable);
  EXPECT_TRUE(r.testOnly);
  EXPECT_EQ(r.requeue, true);
  EXPECT_EQ(r.shared, SharedMode::kOversubscribe);  // -s after --exclusive wins
  EXPECT_EQ(request({"--exclusive=MCS", "x.sh"}).shared, SharedMode::kExclusiveMcs);
  EXPECT_EQ(request({"--no-requeue", "x.sh"}).requeue, false);
  EXPECT_EQ(request({"--nice=-5", "x.sh"}).nice, -5);
  EXPECT_EQ(request({"--open-mode=Append", "x.sh"}).openMode, OpenMode::kAppend);
}

TEST(SbatchValues, SwitchesWithMaxWait) {
  JobRequest r = request({"--switches=1@00:05:00", "x.sh"});
  EXPECT_EQ(r.switches, 1U);
  EXPECT_EQ(r.switchesWaitSeconds, 300);
  r = request({"--switches=2@abc", "x.sh"});  // a bad time is no time, not an error
  EXPECT_EQ(r.switches, 2U);
  EXPECT_EQ(r.switchesWaitSeconds, std::nullopt);
}

TEST(SbatchValues, SignalForms) {
  EXPECT_EQ(formatSignal(*request({"--signal=B:USR1@90", "x.sh"}).signal), "B:USR1@90");
  EXPECT_EQ(formatSignal(*request({"--signal=SIGTERM", "x.sh"}).signal), "TERM");
  EXPECT_EQ(formatSignal(*request({"--signal=R:10@120", "x.sh"}).signal), "R:USR1@120");
  EXPECT_EQ(request({"--signal=usr2", "x.sh"}).signal, (SignalSpec{12, 60, false, false}));
  EXPECT_EQ(parseSignal("BR:1@5"), (SignalSpec{1, 5, true, true}));
  EXPECT_EQ(parseSignal("USR1@70000"), std::nullopt);
}

TEST(SbatchValues, BeginAndDeadline) {
  const JobRequest r = request({"--begin=now+1hour", "--deadline=now+2hours", "x.sh"});
  EXPECT_EQ(r.begin, kNow + 3600);
  EXPECT_EQ(r.deadline, kNow + 7200);
}

TEST(SbatchValues, ArrayAndDependency) {
  JobRequest r = request({"--array=0-7%2", "-d", "afterok:9", "x.sh"});
  ASSERT_TRUE(r.array);
  EXPECT_EQ(r.array->taskIds.size(), 8U);
  EXPECT_EQ(r.array->maxRunning, 2U);
  EXPECT_EQ(r.arrayText, "0-7%2");
  ASSERT_TRUE(r.dependency);
  EXPECT_EQ(formatDependency(*r.dependency), "afterok:9");
}

// _opt_verify(): -w's host count is the minimum node count; too few tasks shrink the nodes.
TEST(SbatchValues, NodeListAndTaskCountAdjustNodes) {
  EXPECT_EQ(request({"-w", "gpu-node-[001-003]", "x.sh"}).nodes, (NodeRange{3, std::nullopt}));
  EXPECT_EQ(request({"-w", "n[1-2]", "-N", "4", "x.sh"}).nodes, (NodeRange{4, std::nullopt}));
  SbatchParseResult result = parse({"-N", "4", "-n", "2", "x.sh"});
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->request.nodes, (NodeRange{2, std::nullopt}));
  EXPECT_THAT(result.invocation->warnings,
              ElementsAre("sbatch: Warning: can't run 2 processes on 4 nodes, setting nnodes "
                          "to 2"));
  EXPECT_EQ(request({"-N", "2-8", "-n", "4", "x.sh"}).nodes, (NodeRange{2, 4}));
}

TEST(SbatchValues, PyxisContainerFlags) {
  const JobRequest r =
      request({"--container-image=nvcr.io#nvidia/pytorch:24.01-py3",
               "--container-mounts=/data:/data:ro", "--container-workdir=/workspace",
               "--container-env=A,B", "--container-name=train:exec", "x.sh"},
              "#!/bin/sh\n#SBATCH --container-mounts=./ckpt:/ckpt,tmpfs:/tmp\n");
  EXPECT_EQ(r.container.image, "nvcr.io#nvidia/pytorch:24.01-py3");
  EXPECT_THAT(r.container.mounts, ElementsAre("./ckpt:/ckpt", "tmpfs:/tmp", "/data:/data:ro"));
  EXPECT_EQ(r.container.workdir, "/workspace");
  EXPECT_THAT(r.container.env, ElementsAre("A", "B"));
  EXPECT_EQ(r.container.name, "train:exec");
}

// What sbatch ships from its environment: --export's tokens as env_merge_filter() takes them
// (src/common/env.c, 22.05: NAME=VALUE sets, NAME copies the submitter's value when it has one,
// quotes around a whole token come off), and Pyxis's --container-env names when the job's
// environment has them (pyxis_slurmstepd.c spank_import_container_env: the job's value wins).
TEST(SbatchValues, ShippedEnvironmentIsWhatTheUserNamed) {
  const std::map<std::string, std::string, std::less<>> submitter = {{"HOME", "/home/alice"},
                                                                     {"WANDB_PROJECT", "vision"},
                                                                     {"CUDA_VERSION", "12.0.0"},
                                                                     {"SLURM_JOB_ID", "7"},
                                                                     {"TOKEN", "secret"}};
  const auto getenv = [&](std::string_view name) -> std::optional<std::string> {
    const auto it = submitter.find(name);
    if (it == submitter.end()) return std::nullopt;
    return it->second;
  };
  const auto shipped = [&](const std::vector<std::string>& argv) {
    return shippedEnvironment(request(argv), getenv);
  };
  using Env = std::map<std::string, std::string>;
  // The default (ALL) is the whole environment in Slurm; here nothing unnamed leaves the host.
  EXPECT_EQ(shipped({"x.sh"}), Env{});
  EXPECT_EQ(shipped({"--export=ALL", "x.sh"}), Env{});
  EXPECT_EQ(shipped({"--export=ALL,LR=0.1,WANDB_PROJECT,MISSING", "x.sh"}),
            (Env{{"LR", "0.1"}, {"WANDB_PROJECT", "vision"}}));
  EXPECT_EQ(shipped({"--export='A=x,y',B=\"1\"", "x.sh"}), (Env{{"A", "x,y"}, {"B", "\"1\""}}));
  // --container-env: from the environment the job would have.
  EXPECT_EQ(shipped({"--container-env=CUDA_VERSION,MISSING", "x.sh"}),
            (Env{{"CUDA_VERSION", "12.0.0"}}));
  EXPECT_EQ(shipped({"--export=NONE", "--container-env=CUDA_VERSION", "x.sh"}), Env{});
  EXPECT_EQ(shipped({"--export=TOKEN", "--container-env=CUDA_VERSION", "x.sh"}),
            (Env{{"TOKEN", "secret"}}));
  EXPECT_EQ(shipped({"--export=CUDA_VERSION=11.8", "--container-env=CUDA_VERSION", "x.sh"}),
            (Env{{"CUDA_VERSION", "11.8"}}));
  EXPECT_EQ(shipped({"--export=ALL,X=1", "--container-env=CUDA_VERSION", "x.sh"}),
            (Env{{"CUDA_VERSION", "12.0.0"}, {"X", "1"}}));
  // The job's SLURM_* are the operator's.
  EXPECT_EQ(shipped({"--export=SLURM_JOB_ID,SLURM_X=1", "--container-env=SLURM_JOB_ID", "x.sh"}),
            Env{});
}

// Pyxis keeps its state across Slurm's calls, so a different image on the command line is an
// error rather than an override (args.c "specified multiple times").
TEST(SbatchValues, PyxisImageGivenTwiceDiffers) {
  SbatchParseResult result =
      parse({"--container-image=b", "x.sh"}, "#!/bin/sh\n#SBATCH --container-image=a\n");
  ASSERT_TRUE(result.exit);
  EXPECT_THAT(result.exit->err,
              ElementsAre("sbatch: error: pyxis: --container-image specified multiple times",
                          "sbatch: error: Invalid --container-image argument: b"));
  EXPECT_EQ(request({"--container-image=a", "x.sh"}, "#!/bin/sh\n#SBATCH --container-image=a\n")
                .container.image,
            "a");
}

TEST(SbatchValues, UnsupportedOptionsAreRecorded) {
  const JobRequest r = request({"--reservation=maint", "-L", "lic:1", "--reservation=x", "x.sh"});
  EXPECT_THAT(r.ignoredOptions, ElementsAre("--reservation", "--licenses"));
}

// --- helpers ----------------------------------------------------------------------------------

TEST(SbatchHelpers, OptionSpanFollowsGetopt) {
  const std::vector<std::string> argv = {"-N",        "4",   "-N4",    "--nodes", "4",
                                         "--nodes=4", "-HN", "2",      "-H",      "--exclusive",
                                         "x",         "--",  "--node", "-o",      "--partit"};
  EXPECT_EQ(sbatchOptionSpan(argv, 0), 2U);
  EXPECT_EQ(sbatchOptionSpan(argv, 2), 1U);
  EXPECT_EQ(sbatchOptionSpan(argv, 3), 2U);
  EXPECT_EQ(sbatchOptionSpan(argv, 5), 1U);
  EXPECT_EQ(sbatchOptionSpan(argv, 6), 2U);
  EXPECT_EQ(sbatchOptionSpan(argv, 8), 1U);
  EXPECT_EQ(sbatchOptionSpan(argv, 9), 1U);   // optional argument: never the next word
  EXPECT_EQ(sbatchOptionSpan(argv, 10), 0U);  // an operand
  EXPECT_EQ(sbatchOptionSpan(argv, 11), 0U);  // "--"
  EXPECT_EQ(sbatchOptionSpan(argv, 12), 1U);  // ambiguous
  EXPECT_EQ(sbatchOptionSpan(argv, 13), 2U);
  EXPECT_EQ(sbatchOptionSpan(argv, 14), 1U);  // a required argument with nothing after it
}

TEST(SbatchHelpers, MegabyteFormatting) {
  EXPECT_EQ(formatMegabytes(65536), "64G");
  EXPECT_EQ(formatMegabytes(2097152), "2T");
  EXPECT_EQ(formatMegabytes(1000), "1000M");
  EXPECT_EQ(formatMegabytes(0), "0M");
  EXPECT_EQ(parseMegabytes("64G"), 65536U);
  EXPECT_EQ(parseMegabytes("-1"), std::nullopt);
}

TEST(SbatchHelpers, MailTypeNames) {
  EXPECT_EQ(formatMailType(*parseMailType("ALL")),
            "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT");
  EXPECT_EQ(parseMailType("NONE"), 0);
  EXPECT_EQ(parseMailType("bogus"), std::nullopt);
  EXPECT_EQ(formatMailType(*parseMailType("time_limit_80,fail")), "FAIL,TIME_LIMIT_80");
}

TEST(SbatchHelpers, InputEnvironmentNames) {
  const auto& names = sbatchInputEnvNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "SBATCH_PARTITION"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "SLURM_EXIT_ERROR"), names.end());
}

}  // namespace
}  // namespace kubeslurm::slurm

namespace kubeslurm::slurm {
namespace {

// A tenant's --gres is read by the webhook and by every scheduling cycle: a list longer than
// any cluster has GPU types is refused as an invalid specification, before its length costs
// anything, however long it is.
TEST(ParseGresList, AListLongerThanAnyClusterHasTypesIsRefused) {
  std::string list;
  for (std::size_t i = 0; i < kMaxGresEntries; ++i) {
    list += (i == 0 ? "" : ",") + std::string("gpu:t") + std::to_string(i) + ":1";
  }
  const auto most = parseGresList(list, false);
  ASSERT_TRUE(most.has_value());
  EXPECT_EQ(most->size(), kMaxGresEntries);
  EXPECT_FALSE(parseGresList(list + ",gpu:1", false).has_value());

  std::string hostile;
  for (int i = 0; i < 200000; ++i) hostile += "gpu:h100:1,";
  EXPECT_FALSE(parseGresList(hostile, false).has_value());
  EXPECT_FALSE(parseGresList(std::string(400000, ','), true).has_value());
}

}  // namespace
}  // namespace kubeslurm::slurm

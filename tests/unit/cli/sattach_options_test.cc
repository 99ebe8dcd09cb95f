// sattach's command line as src/sattach/opt.c (22.05) reads it: "+hlQuvV" and its long options,
// one <jobid.stepid> operand, _get_pos_int's filters, _opt_verify's checks, glibc's messages.
#include "kubeslurm/cli/sattach_options.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::cli {
namespace {

constexpr const char* kUsage = "Usage: sattach [options] <jobid.stepid>\n";

TEST(SattachOptions, AStepAndItsOptions) {
  const SattachParse parse = parseSattachArguments({"-lQ", "--output-filter=3", "42.1"});
  ASSERT_TRUE(parse.options.has_value()) << parse.err;
  EXPECT_EQ(parse.options->jobId, 42);
  EXPECT_EQ(parse.options->stepId, 1U);
  EXPECT_TRUE(parse.options->label);
  EXPECT_EQ(parse.options->quiet, 1);
  EXPECT_EQ(parse.options->outputFilter, 3U);
  EXPECT_EQ(parse.options->errorFilter, 3U);  // follows the output filter when not given
  EXPECT_EQ(parse.out, "");
  EXPECT_EQ(parse.err, "");
}

TEST(SattachOptions, FiltersApart) {
  const SattachParse parse =
      parseSattachArguments({"--output-filter", "0", "--error-filter=-", "--lay", "7.0"});
  ASSERT_TRUE(parse.options.has_value()) << parse.err;
  EXPECT_EQ(parse.options->outputFilter, 0U);
  EXPECT_FALSE(parse.options->errorFilter.has_value());  // "-": every task
  EXPECT_TRUE(parse.options->layout);
}

TEST(SattachOptions, StdinToOneTaskOrEvery) {
  const SattachParse one = parseSattachArguments({"--input-filter=2", "7.0"});
  ASSERT_TRUE(one.options.has_value()) << one.err;
  EXPECT_EQ(one.options->inputFilter, 2U);
  EXPECT_FALSE(one.options->outputFilter.has_value());  // the input filter leads no other
  const SattachParse every = parseSattachArguments({"--input-filter=-", "7.0"});
  ASSERT_TRUE(every.options.has_value()) << every.err;
  EXPECT_FALSE(every.options->inputFilter.has_value());
  const SattachParse pty = parseSattachArguments({"--pty", "7.0"});
  ASSERT_TRUE(pty.options.has_value()) << pty.err;
  EXPECT_TRUE(pty.options->pty);
}

TEST(SattachOptions, HelpUsageAndVersion) {
  EXPECT_EQ(parseSattachArguments({"--usage"}).out, kUsage);
  EXPECT_EQ(parseSattachArguments({"-V", "1.0"}).out, "slurm 22.05.8\n");
  const SattachParse help = parseSattachArguments({"-h"});
  EXPECT_TRUE(help.out.starts_with(kUsage));
  EXPECT_NE(help.out.find("  -l, --label        prepend task number"), std::string::npos);
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_FALSE(help.options.has_value());
}

TEST(SattachOptions, RefusalsInSlurmsWords) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
    std::string out;
  };
  const std::vector<Case> cases = {
      {{}, "sattach: error: too many parameters\n", kUsage},
      {{"1.0", "2.0"}, "sattach: error: too many parameters\n", kUsage},
      // "+": the options end at the step id.
      {{"1.0", "-l"}, "sattach: error: too many parameters\n", kUsage},
      {{"42"}, "sattach: error: Failed to parse stepid from command line options\n", kUsage},
      {{"x.0"}, "sattach: error: Failed to parse stepid from command line options\n", kUsage},
      {{"--output-filter=x", "1.0"},
       "sattach: error: Invalid numeric value \"x\" for output-filter.\n",
       ""},
      {{"--error-filter=-2", "1.0"},
       "sattach: error: Invalid numeric value \"-2\" for error-filter.\n",
       ""},
      {{"--output-filter=3000000000", "1.0"},
       "sattach: error: Numeric argument 3000000000 to big for output-filter.\n",
       ""},
      {{"-v", "-Q", "1.0"},
       "sattach: error: don't specify both --verbose (-v) and --quiet (-Q)\n",
       ""},
      {{"--pty", "--output-filter=0", "1.0"},
       "sattach: error: don't specify both --pty and I/O filtering\n",
       ""},
      {{"--pty", "--input-filter=-", "1.0"},
       "sattach: error: don't specify both --pty and I/O filtering\n",
       ""},
      {{"--input-filter=1x", "1.0"},
       "sattach: error: Invalid numeric value \"1x\" for input-filter.\n",
       ""},
      {{"--bogus", "1.0"},
       "sattach: unrecognized option '--bogus'\nTry \"sattach --help\" for more information\n",
       ""},
      {{"-z", "1.0"},
       "sattach: invalid option -- 'z'\nTry \"sattach --help\" for more information\n",
       ""},
      {{"--l", "1.0"},
       "sattach: option '--l' is ambiguous; possibilities: '--label' '--layout'\n"
       "Try \"sattach --help\" for more information\n",
       ""},
      {{"--output-filter"},
       "sattach: option '--output-filter' requires an argument\n"
       "Try \"sattach --help\" for more information\n",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.empty() ? "(none)" : c.args.front());
    const SattachParse parse = parseSattachArguments(c.args);
    EXPECT_FALSE(parse.options.has_value());
    EXPECT_EQ(parse.err, c.err);
    EXPECT_EQ(parse.out, c.out);
    EXPECT_EQ(parse.exitCode, 1);
  }
}

}  // namespace
}  // namespace kubeslurm::cli

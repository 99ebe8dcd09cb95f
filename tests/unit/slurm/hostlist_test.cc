// Hostlist expansion and compression, pinned to Slurm 22.05.8's `scontrol` (the lines quoted
// are from ../shared/reference/slurm-22.05.md "Hostlists" or were captured from the real binary;
// tests/integration/slurm_diff checks thousands more against it).
#include "kubeslurm/slurm/hostlist.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::slurm {
namespace {

using Hosts = std::vector<std::string>;

Hosts expand(std::string_view expr) {
  StatusOr<Hosts> hosts = expandHostlist(expr);
  EXPECT_TRUE(hosts.isOk()) << expr << ": " << hosts.status().toString();
  return hosts.isOk() ? *hosts : Hosts{};
}

struct ExpandCase {
  std::string expr;
  Hosts hosts;
};

class ExpandTest : public ::testing::TestWithParam<ExpandCase> {};

TEST_P(ExpandTest, ExpandsAsScontrolShowHostnames) {
  EXPECT_EQ(expand(GetParam().expr), GetParam().hosts);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm2205, ExpandTest,
    ::testing::Values(
        // $ scontrol show hostnames 'gpu-node-[001-004],login[1-2]'
        ExpandCase{
            "gpu-node-[001-004],login[1-2]",
            {"gpu-node-001", "gpu-node-002", "gpu-node-003", "gpu-node-004", "login1", "login2"}},
        // 'rack[1-2]-n[01-02]' -> rack1-n01 rack1-n02 rack2-n01 rack2-n02
        ExpandCase{"rack[1-2]-n[01-02]", {"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"}},
        ExpandCase{"rack[01-02]-gpu[1-3]",
                   {"rack01-gpu1", "rack01-gpu2", "rack01-gpu3", "rack02-gpu1", "rack02-gpu2",
                    "rack02-gpu3"}},
        // With three groups the middle one (the last group of the prefix) varies slowest.
        ExpandCase{
            "a[0-1]b[0-1]c[1-2]",
            {"a0b0c1", "a0b0c2", "a1b0c1", "a1b0c2", "a0b1c1", "a0b1c2", "a1b1c1", "a1b1c2"}},
        ExpandCase{"n[1-2][3-4]", {"n13", "n14", "n23", "n24"}},
        ExpandCase{"n[1,3-4,03]", {"n1", "n3", "n4", "n03"}},
        ExpandCase{"n[3,1,1]", {"n3", "n1", "n1"}},     // order and duplicates kept
        ExpandCase{"a b\tc,,d", {"a", "b", "c", "d"}},  // space, tab, comma all separate
        ExpandCase{"n[1, 3]", {"n1", "n03"}},  // a space inside brackets counts toward the width
        ExpandCase{"n[+3]", {"n03"}},          // strtoul takes a sign; "+3" is two wide
        ExpandCase{"n[1a-3]", {"n01", "n02", "n03"}},  // only the high bound is checked
        ExpandCase{"n[3-]", {"n3"}},
        ExpandCase{"n[99999999999999999999999]", {"n00018446744073709551615"}},  // saturates
        ExpandCase{"abc[12", {"abc]"}},  // unmatched '[': Slurm tacks a ']' on the prefix
        ExpandCase{"[abc", {"abc"}}, ExpandCase{"n[[1-2]", {"n[1", "n[2"}},
        ExpandCase{"n]1[2]", {"n]12"}}, ExpandCase{"n1]", {"n1]"}},
        ExpandCase{"a[ ]b[c", {"a[ ]b]"}}, ExpandCase{"n[1-2]x[3]", {"n1x3", "n2x3"}},
        ExpandCase{"", {}},
        // Pushing n0 after 2^64-1 wraps the range; Slurm formats into a buffer too small.
        ExpandCase{"n18446744073709551615,n0", {"n1844674407370955", "n0"}}));

struct ErrorCase {
  std::string expr;
  std::string diagnostic;  // after "scontrol: error: "; empty: only "Invalid hostlist: ..."
};

class ExpandErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ExpandErrorTest, RejectsWithSlurmsDiagnostic) {
  StatusOr<Hosts> hosts = expandHostlist(GetParam().expr);
  ASSERT_FALSE(hosts.isOk()) << GetParam().expr;
  EXPECT_EQ(hosts.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(hosts.status().message(), GetParam().diagnostic);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm2205, ExpandErrorTest,
    ::testing::Values(
        // "scontrol: error: _parse_single_range: Invalid range: `5-3'" + "Invalid hostlist: n[5-3]"
        ErrorCase{"n[5-3]", "_parse_single_range: Invalid range: `5-3'"},
        // n[1-3]x -> only "Invalid hostlist: n[1-3]x"
        ErrorCase{"n[1-3]x", ""},
        // 'n[1-3]-[a,b]' -> "_parse_single_range: Invalid range: `a'"
        ErrorCase{"n[1-3]-[a,b]", "_parse_single_range: Invalid range: `a'"},
        ErrorCase{"n[]", "_parse_single_range: Invalid range: `'"},
        ErrorCase{"n[1--3]", "_parse_single_range: Invalid range: `1--3'"},
        ErrorCase{"n[0x1]", "_parse_single_range: Invalid range: `0x1'"},
        ErrorCase{"n[1,]", "_parse_single_range: Invalid range: `'"},
        ErrorCase{"n[0-65536]", "_parse_single_range: Too many hosts in range `0-65536'"},
        ErrorCase{"n[1-2]]", ""},
        // Values across a bracket group followed by another group are capped at 65536.
        ErrorCase{"a[0-32767,0-32768]b[1]", ""}));

TEST(ExpandTest, AcceptsTheLargestRange) {
  StatusOr<Hosts> hosts = expandHostlist("n[0-65535]");
  ASSERT_TRUE(hosts.isOk());
  EXPECT_EQ(hosts->size(), 65536u);
  EXPECT_EQ(hosts->back(), "n65535");
}

TEST(HostlistParseTest, BadRangeInAnInnerGroupIsReportedButNotFatal) {
  // Real scontrol prints the error once per outer value and then nothing, with rc=0.
  std::vector<std::string> diagnostics;
  StatusOr<Hostlist> list = Hostlist::parse("a[x]b[1-2]c[1-2],n1", &diagnostics);
  ASSERT_TRUE(list.isOk());
  EXPECT_EQ(diagnostics, (std::vector<std::string>{"_parse_single_range: Invalid range: `x'",
                                                   "_parse_single_range: Invalid range: `x'"}));
  EXPECT_EQ(list->ranged(), "n1");
}

TEST(HostlistParseTest, TooManyRangesInOneBracketIsFatal) {
  // "scontrol: fatal: _parse_range_list: Too many ranges, can't process entire list"
  std::string expr = "n[1";
  for (int i = 1; i < 256 * 1024; ++i) expr += ",1";
  EXPECT_TRUE(Hostlist::parse(expr + "]").isOk());
  StatusOr<Hostlist> list = Hostlist::parse(expr + ",1]");
  ASSERT_FALSE(list.isOk());
  EXPECT_EQ(list.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(list.status().message(),
            "_parse_range_list: Too many ranges, can't process entire list");
}

TEST(HostlistParseTest, HostCountWrapsLikeSlurmsInt) {
  // 2^31 hosts: Slurm's int count goes negative and `show hostnames` prints nothing.
  StatusOr<Hostlist> list = Hostlist::parse("a[0-65535]b[0-32767]");
  ASSERT_TRUE(list.isOk());
  EXPECT_LT(list->count(), 0);
  int printed = 0;
  list->forEachHost([&](std::string_view) { return ++printed < 10; });
  EXPECT_EQ(printed, 0);
  EXPECT_EQ(expandHostlist("a[0-65535]b[0-1023]").status().code(), StatusCode::kResourceExhausted);
}

TEST(HostlistParseTest, RefusesWhatWouldHangSlurm) {
  EXPECT_EQ(Hostlist::parse("a[18446744073709551615]b[1]").status().code(),
            StatusCode::kOutOfRange);
}

TEST(HostlistParseTest, RefusesMoreRangesThanTheLimit) {
  // Slurm caps each bracket group, not their product: this asks for 2^32 ranges.
  EXPECT_EQ(Hostlist::parse("a[0-65535]b[0-65535]c[1]").status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Hostlist::parse("a[0-99]b[0-9]c[1]", nullptr, 1000).isOk());
  StatusOr<Hostlist> tooMany = Hostlist::parse("a[0-99]b[0-9]c[1]", nullptr, 999);
  ASSERT_FALSE(tooMany.isOk());
  EXPECT_EQ(tooMany.status().message(), "hostlist expression makes more than 999 ranges");
  // Inner groups that fail for every outer value push nothing but still cost the work.
  EXPECT_EQ(Hostlist::parse("a[x]b[0-999]c[0-999]d[1]", nullptr, 1000).status().code(),
            StatusCode::kOutOfRange);
}

struct CompressCase {
  Hosts hosts;
  std::string ranged;
  std::string sorted;
};

class CompressTest : public ::testing::TestWithParam<CompressCase> {};

TEST_P(CompressTest, CompressesAsScontrolShowHostlistAndHostlistsorted) {
  EXPECT_EQ(compressHostlist(GetParam().hosts), GetParam().ranged);
  EXPECT_EQ(compressHostlistSorted(GetParam().hosts), GetParam().sorted);
}

INSTANTIATE_TEST_SUITE_P(
    Slurm2205, CompressTest,
    ::testing::Values(
        // $ scontrol show hostlist gpu-node-001,gpu-node-002,gpu-node-003 -> gpu-node-[001-003]
        CompressCase{{"gpu-node-001", "gpu-node-002", "gpu-node-003"},
                     "gpu-node-[001-003]",
                     "gpu-node-[001-003]"},
        // -> gpu-node-[001,003-004],login[1-2]
        CompressCase{{"gpu-node-001", "gpu-node-003", "gpu-node-004", "login1", "login2"},
                     "gpu-node-[001,003-004],login[1-2]",
                     "gpu-node-[001,003-004],login[1-2]"},
        // -> gpu-node-[002,001] (not sorted; hostlistsorted sorts)
        CompressCase{{"gpu-node-002", "gpu-node-001"}, "gpu-node-[002,001]", "gpu-node-[001-002]"},
        // -> gpu-node-[001,001]
        CompressCase{{"gpu-node-001", "gpu-node-001"}, "gpu-node-[001,001]", "gpu-node-[001,001]"},
        // n09,n10,n1 -> n[09-10,1]
        CompressCase{{"n09", "n10", "n1"}, "n[09-10,1]", "n[1,09-10]"},
        // a,b,gpu-node-001 -> a,b,gpu-node-001
        CompressCase{{"a", "b", "gpu-node-001"}, "a,b,gpu-node-001", "a,b,gpu-node-001"},
        // A width that does not change the padding of either number merges: n9,n10 -> n[9-10].
        CompressCase{{"n9", "n10"}, "n[9-10]", "n[9-10]"},
        CompressCase{{"n1", "n02"}, "n[1,02]", "n[1,02]"},
        CompressCase{{"b2", "a1", "b1", "a2", "c"}, "b2,a1,b1,a2,c", "a[1-2],b[1-2],c"},
        // Natural order of prefixes: rack2 before rack10.
        CompressCase{{"rack10n1", "rack2n1"}, "rack10n1,rack2n1", "rack2n1,rack10n1"},
        CompressCase{{}, "", ""}));

TEST(HostlistSortTest, SplitsOverlappingRangesAsSlurmDoes) {
  // $ scontrol show hostlistsorted 'n[1-3],n[2-5]' -> n[1-2,2-3,3-5]
  StatusOr<Hostlist> list = Hostlist::parse("n[1-3],n[2-5]");
  ASSERT_TRUE(list.isOk());
  list->sort();
  EXPECT_EQ(list->ranged(), "n[1-2,2-3,3-5]");
}

TEST(HostlistSortTest, DropsHostsWhereSlurmMergesPaddedAndUnpaddedRanges) {
  // Captured from the real scontrol 22.05.8: `scontrol show hostlistsorted` of the 35 hosts of
  // n[1-10],n[03-4],n[2-24] prints n[1-2,2-3,3-4,4-5,5-6,6-7,7-8,8-9,9-10,10], 19 hosts. We
  // print what Slurm prints, losses included (found by fuzz_hostlist's invariant).
  StatusOr<Hostlist> list = Hostlist::parse("n[1-10],n[03-4],n[2-24]");
  ASSERT_TRUE(list.isOk());
  std::vector<std::string> hosts;
  list->forEachHost([&](std::string_view host) {
    hosts.emplace_back(host);
    return true;
  });
  ASSERT_EQ(hosts.size(), 35U);
  EXPECT_EQ(compressHostlistSorted(hosts), "n[1-2,2-3,3-4,4-5,5-6,6-7,7-8,8-9,9-10,10]");
}

TEST(HostlistSortTest, KeepsSlurmsResultForNumbersTwoToTheThirtyOneApart) {
  // Slurm compares numbers through an int; real scontrol prints n[3000000000] for both.
  for (const char* expr : {"n3000000000,n5", "n[3000000000-3000000001],n[5-6]"}) {
    StatusOr<Hostlist> list = Hostlist::parse(expr);
    ASSERT_TRUE(list.isOk());
    list->sort();
    EXPECT_EQ(list->ranged(), "n[3000000000]") << expr;
  }
}

TEST(NaturalCompareTest, OrdersAsSlurmsStrnatcmp) {
  EXPECT_LT(naturalCompare("rack2", "rack10"), 0);
  EXPECT_LT(naturalCompare("a01", "a1"), 0);  // a leading zero compares as a fraction
  EXPECT_EQ(naturalCompare("a b", "ab"), 0);  // white space is skipped
  EXPECT_GT(naturalCompare("b", "a"), 0);
  EXPECT_EQ(naturalCompare("", ""), 0);
}

TEST(CompressTest, RoundTripsThroughExpansion) {
  const Hosts hosts = {
      "gpu-node-007", "gpu-node-008", "gpu-node-010", "login1", "n9", "n10", "n1", "x", "x",
      "n009"};
  EXPECT_EQ(expand(compressHostlist(hosts)), hosts);
}

TEST(CompressTest, IsLinearInTheNumberOfHosts) {
  // 200k hosts in reverse order: one range each; compression and sorting stay fast.
  Hosts hosts;
  for (int i = 200000; i > 0; --i) hosts.push_back("n" + std::to_string(i));
  const std::string ranged = compressHostlist(hosts);
  EXPECT_EQ(ranged.substr(0, 16), "n[200000,199999,");
  EXPECT_EQ(compressHostlistSorted(hosts), "n[1-200000]");
}

}  // namespace
}  // namespace kubeslurm::slurm

// FieldPrinter against print_fields.c (Slurm 22.05.8): print_fields_header's names and rule,
// print_fields_str's '+', the "%*.*s" cut of dates and sreport's times, numbers printed whole,
// blanks for no value, -p and -P.
#include "kubeslurm/cli/print_fields.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kubeslurm::cli {
namespace {

std::string cellOf(int parsable, int width, Overflow overflow,
                   const std::optional<std::string>& value, bool last = false) {
  std::string out;
  FieldPrinter(parsable).cell(out, width, overflow, value, last);
  return out;
}

TEST(PrintFields, HeaderCutsNamesToTheirColumnsAndRulesThem) {
  const std::vector<PrintColumn> columns = {{"JobID", 12}, {"JobName", -10}, {"Partition", 5}};
  std::string out;
  FieldPrinter(0).header(out, columns);
  EXPECT_EQ(out,
            "       JobID JobName    Parti \n"
            "------------ ---------- ----- \n");
}

TEST(PrintFields, ParsableHeadersEndWithTheDelimiterButTheLastUnderP) {
  const std::vector<PrintColumn> columns = {{"JobID", 12}, {"Partition", 5}};
  std::string p;
  FieldPrinter(1).header(p, columns);
  EXPECT_EQ(p, "JobID|Partition|\n");
  std::string bigP;
  FieldPrinter(2).header(bigP, columns);
  EXPECT_EQ(bigP, "JobID|Partition\n");
  std::string comma;
  FieldPrinter(1, ",").header(comma, columns);
  EXPECT_EQ(comma, "JobID,Partition,\n");
}

TEST(PrintFields, ValuesThatFitArePaddedEitherWay) {
  EXPECT_EQ(cellOf(0, 6, Overflow::kMark, "abc"), "   abc ");
  EXPECT_EQ(cellOf(0, -6, Overflow::kMark, "abc"), "abc    ");
  EXPECT_EQ(cellOf(0, 3, Overflow::kMark, "abc"), "abc ");
}

TEST(PrintFields, TooWideValuesAreMarkedCutOrKept) {
  EXPECT_EQ(cellOf(0, 5, Overflow::kMark, "abcdefg"), "abcd+ ");
  EXPECT_EQ(cellOf(0, -5, Overflow::kMark, "abcdefg"), "abcd+ ");
  EXPECT_EQ(cellOf(0, 5, Overflow::kCut, "abcdefg"), "abcde ");
  EXPECT_EQ(cellOf(0, 5, Overflow::kKeep, "1234567"), "1234567 ");
}

TEST(PrintFields, NoValueIsABlankColumn) {
  EXPECT_EQ(cellOf(0, 4, Overflow::kMark, std::nullopt), "     ");
  EXPECT_EQ(cellOf(0, -4, Overflow::kKeep, std::nullopt), "     ");
  // "%*.*s " of " " at width 0 prints nothing but the space; "%*s " of " " prints the blank.
  EXPECT_EQ(cellOf(0, 0, Overflow::kMark, std::nullopt), " ");
  EXPECT_EQ(cellOf(0, 0, Overflow::kKeep, std::nullopt), "  ");
}

TEST(PrintFields, ParsableValuesAreWholeAndDelimited) {
  EXPECT_EQ(cellOf(1, 3, Overflow::kMark, "abcdefg"), "abcdefg|");
  EXPECT_EQ(cellOf(1, 3, Overflow::kMark, std::nullopt), "|");
  EXPECT_EQ(cellOf(2, 3, Overflow::kMark, "abcdefg", true), "abcdefg");
  EXPECT_EQ(cellOf(2, 3, Overflow::kMark, std::nullopt, true), "");
  EXPECT_EQ(cellOf(2, 3, Overflow::kMark, "x", false), "x|");
}

}  // namespace
}  // namespace kubeslurm::cli

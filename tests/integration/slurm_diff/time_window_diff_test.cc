// Differential test: how sacct and sreport read -S/-E (slurm::parsePastTime) against the REAL
// sacct 22.05 (/usr/bin/sacct, Debian's slurm-client), which prints the window it resolved with
// -v ("sacct: Jobs Eligible in the time window from <ctime> to <ctime>") before it looks for
// accounting storage, so no daemon is needed. The real sacct reads the clock; ours is given the
// moments the run spanned.
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kubeslurm/slurm/time_format.h"
#include "tests/integration/slurm_diff/real_slurm.h"

namespace kubeslurm {
namespace {

constexpr const char* kRealSacct = "/usr/bin/sacct";

// ctime's form, as sacct prints the window ("Thu Dec 25 00:00:00 2025"), in UTC.
std::string ctimeUtc(slurm::EpochSeconds t) {
  const auto seconds = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%a %b %d %H:%M:%S %Y", &tm);
  return text;
}

std::string ourStart(const std::string& input, slurm::EpochSeconds now) {
  const auto t = slurm::parsePastTime(input, now, 0);
  return t.isOk() ? ctimeUtc(*t) : "ERR " + t.status().message();
}

TEST(TimeWindowDiff, SacctStartTimesMatchRealSacct) {
  ASSERT_TRUE(std::filesystem::exists(kRealSacct)) << "install slurm-client";
  const diff::Scratch scratch("kubeslurm-timewindow-");
  const std::string conf =
      scratch.write("slurm.conf", "ClusterName=diff\nSlurmctldHost=localhost\n");
  // Yearless dates in every month (a later month than now is last year's), a day later than
  // today in this month, times of day either side of now, and the forms with a year.
  std::vector<std::string> inputs = {
      "16:00",    "04:00",    "00:00", "23:59", "now-2days", "today", "2026-10-01T08:00",
      "12/25/24", "midnight", "noon"};
  for (int month = 1; month <= 12; ++month) {
    inputs.push_back((month < 10 ? "0" : "") + std::to_string(month) + "/15");
    inputs.push_back((month < 10 ? "0" : "") + std::to_string(month) + "28");
  }
  for (const std::string& input : inputs) {
    diff::ProgramSpec spec;
    spec.path = kRealSacct;
    spec.args = {"-S", input, "-E", "2099-01-01", "-v"};
    spec.env = {{"SLURM_CONF", conf}, {"TZ", "UTC"}, {"PATH", "/usr/bin:/bin"}};
    const auto before = static_cast<slurm::EpochSeconds>(std::time(nullptr));
    const diff::ProgramRun run = diff::runProgram(spec, scratch);
    const auto after = static_cast<slurm::EpochSeconds>(std::time(nullptr));
    const std::string marker = "time window from ";
    const std::size_t at = run.err.find(marker);
    ASSERT_NE(at, std::string::npos) << input << ": " << run.err;
    const std::size_t end = run.err.find(" to ", at);
    const std::string real = run.err.substr(at + marker.size(), end - at - marker.size());
    // The real sacct read its clock somewhere in [before, after].
    bool matched = false;
    for (slurm::EpochSeconds now = before; now <= after && !matched; ++now) {
      matched = ourStart(input, now) == real;
    }
    EXPECT_TRUE(matched) << "-S " << input << ": real sacct " << real << ", ours "
                         << ourStart(input, before);
  }
}

}  // namespace
}  // namespace kubeslurm

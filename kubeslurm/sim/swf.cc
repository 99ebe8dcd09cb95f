#include "kubeslurm/sim/swf.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "kubeslurm/sim/text_util.h"

namespace kubeslurm::sim {
namespace {

constexpr std::size_t kSwfFields = 18;
// Field positions, 0-based.
constexpr std::size_t kId = 0;
constexpr std::size_t kSubmit = 1;
constexpr std::size_t kWait = 2;
constexpr std::size_t kRun = 3;
constexpr std::size_t kAllocProcs = 4;
constexpr std::size_t kReqProcs = 7;
constexpr std::size_t kReqTime = 8;
constexpr std::size_t kStatus = 10;
constexpr std::size_t kUser = 11;
constexpr std::size_t kGroup = 12;
constexpr std::size_t kQueue = 14;
constexpr std::size_t kPartition = 15;

// Beyond 2^53 a double no longer holds every integer; no real trace comes near.
constexpr double kMaxExact = 9007199254740992.0;

struct SkipCounts {
  std::uint64_t neverRan = 0;
  std::uint64_t noSize = 0;
  std::uint64_t noSubmit = 0;
};

Status lineError(std::size_t lineNumber, const std::string& what) {
  return invalidArgument("swf line " + std::to_string(lineNumber) + ": " + what);
}

// "; MaxNodes: 256" -> sets the field when the key is one we use; other comments are ignored.
void readHeaderComment(std::string_view line, Trace& trace) {
  line = internal::trim(line.substr(1));
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view key = internal::trim(line.substr(0, colon));
  const auto value = parseInteger<std::uint64_t>(internal::trim(line.substr(colon + 1)));
  if (!value || *value > std::numeric_limits<std::uint32_t>::max()) return;
  if (key == "MaxNodes") trace.maxNodes = static_cast<std::uint32_t>(*value);
  if (key == "MaxProcs") trace.maxProcs = static_cast<std::uint32_t>(*value);
}

std::string idText(double value) {
  return value < 0 ? std::string() : std::to_string(static_cast<std::int64_t>(value));
}

Status parseRecord(std::size_t lineNumber, std::string_view line, Trace& trace, SkipCounts& skips) {
  const std::vector<std::string_view> tokens = internal::splitWhitespace(line);
  if (tokens.size() != kSwfFields) {
    return lineError(lineNumber, "expected 18 fields, got " + std::to_string(tokens.size()));
  }
  std::array<double, kSwfFields> f{};
  for (std::size_t i = 0; i < kSwfFields; ++i) {
    const auto value = internal::parseNumber(tokens[i]);
    if (!value || std::fabs(*value) >= kMaxExact) {
      return lineError(lineNumber, "field " + std::to_string(i + 1) +
                                       " is not a number: " + internal::quoteForError(tokens[i]));
    }
    // Times and counts are whole seconds and processors; fractions appear only in averages.
    f[i] = std::round(*value);
  }
  if (f[kId] < 0) return lineError(lineNumber, "job id is negative");
  if (f[kRun] < 0) {
    ++skips.neverRan;
    return Status::ok();
  }
  if (f[kSubmit] < 0) {
    ++skips.noSubmit;
    return Status::ok();
  }
  const double procs = f[kReqProcs] > 0 ? f[kReqProcs] : f[kAllocProcs];
  if (procs <= 0) {
    ++skips.noSize;
    return Status::ok();
  }
  if (procs > std::numeric_limits<std::uint32_t>::max()) {
    return lineError(lineNumber, "processor count out of range");
  }
  TraceJob job;
  job.id = static_cast<std::uint64_t>(f[kId]);
  job.submit = static_cast<std::int64_t>(f[kSubmit]);
  job.runTime = static_cast<std::int64_t>(f[kRun]);
  job.traceWait = f[kWait] < 0 ? -1 : static_cast<std::int64_t>(f[kWait]);
  if (f[kReqTime] > 0) job.requestedTime = static_cast<std::int64_t>(f[kReqTime]);
  job.procs = static_cast<std::uint32_t>(procs);
  job.status = f[kStatus] < std::numeric_limits<std::int32_t>::min() ||
                       f[kStatus] > std::numeric_limits<std::int32_t>::max()
                   ? -1
                   : static_cast<std::int32_t>(f[kStatus]);
  job.user = idText(f[kUser]);
  job.group = idText(f[kGroup]);
  job.queue = idText(f[kQueue]);
  job.partition = idText(f[kPartition]);
  trace.jobs.push_back(std::move(job));
  return Status::ok();
}

void noteSkips(const SkipCounts& skips, Trace& trace) {
  const auto note = [&](std::uint64_t count, std::string_view why) {
    if (count == 0) return;
    trace.skipped += count;
    trace.notes.push_back(std::to_string(count) + " jobs skipped: " + std::string(why));
  };
  note(skips.neverRan, "run time -1 (never ran)");
  note(skips.noSubmit, "submit time -1");
  note(skips.noSize, "no processor count");
}

}  // namespace

StatusOr<Trace> parseSwf(std::string_view text, const SwfOptions& options) {
  Trace trace;
  trace.format = TraceFormat::kSwf;
  SkipCounts skips;
  std::size_t records = 0;
  Status status;
  internal::forEachLine(text, [&](std::size_t lineNumber, std::string_view line) {
    if (!status.isOk()) return;
    if (options.maxRecords != 0 && records >= options.maxRecords) return;
    line = internal::trim(line);
    if (line.empty()) return;
    if (line.front() == ';') {
      readHeaderComment(line, trace);
      return;
    }
    ++records;
    status = parseRecord(lineNumber, line, trace, skips);
  });
  if (!status.isOk()) return status;
  noteSkips(skips, trace);
  return trace;
}

}  // namespace kubeslurm::sim

#include "kubeslurm/sim/alibaba.h"

#include <limits>
#include <map>
#include <optional>
#include <string>

#include "kubeslurm/sim/text_util.h"

namespace kubeslurm::sim {
namespace {

constexpr std::uint64_t kMebibyte = 1024ULL * 1024ULL;
constexpr std::uint32_t kWholeGpuMilli = 1000;

// Header name -> column index, for one CSV file.
class Columns {
 public:
  static StatusOr<Columns> read(std::string_view header, std::string_view what) {
    Columns columns;
    columns.what_ = std::string(what);
    const auto names = internal::splitOn(header, ',');
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string name(internal::trim(names[i]));
      if (name.empty()) continue;
      if (!columns.index_.emplace(name, i).second) {
        return invalidArgument(columns.what_ + " line 1: duplicate column \"" + name + "\"");
      }
    }
    columns.count_ = names.size();
    return columns;
  }

  std::optional<std::size_t> find(std::string_view name) const {
    const auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  StatusOr<std::size_t> require(std::string_view name) const {
    if (auto index = find(name)) return *index;
    return invalidArgument(what_ + " line 1: missing column \"" + std::string(name) + "\"");
  }

  std::size_t count() const { return count_; }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::size_t count_ = 0;
};

// One data row, split, with typed accessors whose errors name the line and the column.
class Row {
 public:
  Row(const Columns& columns, std::size_t lineNumber, std::vector<std::string_view> fields)
      : columns_(columns), lineNumber_(lineNumber), fields_(std::move(fields)) {}

  Status checkShape() const {
    if (fields_.size() != columns_.count()) {
      return error("expected " + std::to_string(columns_.count()) + " fields, got " +
                   std::to_string(fields_.size()));
    }
    for (std::string_view field : fields_) {
      if (field.find('"') != std::string_view::npos) {
        return error("quoted CSV fields are not supported");
      }
    }
    return Status::ok();
  }

  std::string_view text(std::size_t column) const { return internal::trim(fields_[column]); }

  StatusOr<std::uint64_t> uintAt(std::size_t column, std::string_view name) const {
    const std::string_view field = text(column);
    if (auto value = parseInteger<std::uint64_t>(field)) return *value;
    return error(std::string(name) +
                 " is not a non-negative integer: " + internal::quoteForError(field));
  }

  // An empty field is "unknown" (nullopt); anything else must be an integer.
  StatusOr<std::optional<std::int64_t>> optionalIntAt(std::size_t column,
                                                      std::string_view name) const {
    const std::string_view field = text(column);
    if (field.empty()) return std::optional<std::int64_t>();
    if (auto value = parseInteger<std::int64_t>(field)) return std::optional<std::int64_t>(*value);
    return error(std::string(name) + " is not an integer: " + internal::quoteForError(field));
  }

  Status error(const std::string& what) const {
    return invalidArgument(columns_.what() + " line " + std::to_string(lineNumber_) + ": " + what);
  }

 private:
  const Columns& columns_;
  std::size_t lineNumber_;
  std::vector<std::string_view> fields_;
};

struct PodColumns {
  std::size_t name = 0, cpuMilli = 0, memoryMib = 0, numGpu = 0, gpuMilli = 0;
  std::optional<std::size_t> gpuSpec, qos, creation, deletion, scheduled;
};

StatusOr<PodColumns> podColumns(const Columns& columns) {
  PodColumns c;
  for (auto [field, name] : {std::pair{&c.name, "name"}, std::pair{&c.cpuMilli, "cpu_milli"},
                             std::pair{&c.memoryMib, "memory_mib"}, std::pair{&c.numGpu, "num_gpu"},
                             std::pair{&c.gpuMilli, "gpu_milli"}}) {
    auto index = columns.require(name);
    if (!index.isOk()) return index.status();
    *field = *index;
  }
  c.gpuSpec = columns.find("gpu_spec");
  c.qos = columns.find("qos");
  c.creation = columns.find("creation_time");
  c.deletion = columns.find("deletion_time");
  c.scheduled = columns.find("scheduled_time");
  if (!c.creation || !c.deletion) {
    return invalidArgument(columns.what() +
                           " line 1: no creation_time/deletion_time columns: a static pod list "
                           "(such as the multigpu50 variant) has no timeline to replay");
  }
  return c;
}

struct PodSkips {
  std::uint64_t neverScheduled = 0;
  std::uint64_t noDeletion = 0;
  std::uint64_t negativeRun = 0;
};

template <typename T>
StatusOr<T> narrow(const Row& row, std::uint64_t value, std::string_view name) {
  if (value > std::numeric_limits<T>::max()) {
    return row.error(std::string(name) + " out of range");
  }
  return static_cast<T>(value);
}

// Fills `job` from `row`; returns false (and counts why) for a pod that cannot be replayed.
StatusOr<bool> readPod(const Row& row, const PodColumns& c, TraceJob& job, PodSkips& skips) {
  auto cpu = row.uintAt(c.cpuMilli, "cpu_milli");
  if (!cpu.isOk()) return cpu.status();
  auto memory = row.uintAt(c.memoryMib, "memory_mib");
  if (!memory.isOk()) return memory.status();
  if (*memory > std::numeric_limits<std::uint64_t>::max() / kMebibyte) {
    return row.error("memory_mib out of range");
  }
  auto numGpu = row.uintAt(c.numGpu, "num_gpu");
  if (!numGpu.isOk()) return numGpu.status();
  auto gpus = narrow<std::uint32_t>(row, *numGpu, "num_gpu");
  if (!gpus.isOk()) return gpus.status();
  auto milli = row.uintAt(c.gpuMilli, "gpu_milli");
  if (!milli.isOk()) return milli.status();
  if (*milli > kWholeGpuMilli) return row.error("gpu_milli above 1000");

  auto creation = row.optionalIntAt(*c.creation, "creation_time");
  if (!creation.isOk()) return creation.status();
  auto deletion = row.optionalIntAt(*c.deletion, "deletion_time");
  if (!deletion.isOk()) return deletion.status();
  std::optional<std::int64_t> scheduled;
  if (c.scheduled) {
    auto value = row.optionalIntAt(*c.scheduled, "scheduled_time");
    if (!value.isOk()) return value.status();
    scheduled = *value;
  }
  if (!creation->has_value()) return row.error("creation_time is empty");
  // Without scheduled_time the pod ran from creation; with it empty the pod never ran.
  if (c.scheduled && !scheduled) {
    ++skips.neverScheduled;
    return false;
  }
  const std::int64_t start = scheduled.value_or(**creation);
  if (!deletion->has_value()) {
    ++skips.noDeletion;
    return false;
  }
  if (**deletion < start || start < **creation) {
    ++skips.negativeRun;
    return false;
  }

  job.name = std::string(row.text(c.name));
  job.cpuMillis = *cpu;
  job.memoryBytes = *memory * kMebibyte;
  job.gpus = *gpus;
  // num_gpu > 0 with gpu_milli 0 would ask for nothing; read it as whole GPUs.
  job.gpuMilli =
      *gpus == 0 ? 0 : (*milli == 0 ? kWholeGpuMilli : static_cast<std::uint32_t>(*milli));
  if (c.gpuSpec) job.gpuSpec = std::string(row.text(*c.gpuSpec));
  if (c.qos) job.qos = std::string(row.text(*c.qos));
  job.submit = **creation;
  job.runTime = **deletion - start;
  job.traceWait = start - **creation;
  return true;
}

void notePodSkips(const PodSkips& skips, Trace& trace) {
  const auto note = [&](std::uint64_t count, std::string_view why) {
    if (count == 0) return;
    trace.skipped += count;
    trace.notes.push_back(std::to_string(count) + " pods skipped: " + std::string(why));
  };
  note(skips.neverScheduled, "never scheduled in the trace (no scheduled_time)");
  note(skips.noDeletion, "no deletion_time");
  note(skips.negativeRun, "deleted before scheduled");
}

// Runs `fn(row)` on each non-empty data line after the header.
template <typename Fn>
Status forEachRow(std::string_view csv, std::string_view what, std::size_t maxRecords,
                  std::optional<Columns>& columns, Fn&& fn) {
  Status status;
  std::size_t records = 0;
  internal::forEachLine(csv, [&](std::size_t lineNumber, std::string_view line) {
    if (!status.isOk()) return;
    if (internal::trim(line).empty()) return;
    if (!columns) {
      auto read = Columns::read(line, what);
      if (!read.isOk()) {
        status = read.status();
        return;
      }
      columns = std::move(*read);
      return;
    }
    if (maxRecords != 0 && records >= maxRecords) return;
    ++records;
    Row row(*columns, lineNumber, internal::splitOn(line, ','));
    status = row.checkShape();
    if (status.isOk()) status = fn(row);
  });
  if (status.isOk() && !columns) return invalidArgument(std::string(what) + ": empty file");
  return status;
}

}  // namespace

StatusOr<Trace> parseAlibabaPods(std::string_view csv, const AlibabaOptions& options) {
  Trace trace;
  trace.format = TraceFormat::kAlibaba;
  PodSkips skips;
  std::optional<Columns> columns;
  std::optional<PodColumns> pod;
  std::uint64_t rowIndex = 0;
  const Status status =
      forEachRow(csv, "alibaba pod list", options.maxRecords, columns, [&](const Row& row) {
        if (!pod) {
          auto found = podColumns(*columns);
          if (!found.isOk()) return found.status();
          pod = *found;
        }
        ++rowIndex;
        TraceJob job;
        job.id = rowIndex;  // the row's place: stable, and unique where names might not be
        auto kept = readPod(row, *pod, job, skips);
        if (!kept.isOk()) return kept.status();
        if (*kept) trace.jobs.push_back(std::move(job));
        return Status::ok();
      });
  if (!status.isOk()) return status;
  // A header with no rows still has to describe a replayable list.
  if (!pod) {
    auto found = podColumns(*columns);
    if (!found.isOk()) return found.status();
  }
  notePodSkips(skips, trace);
  return trace;
}

StatusOr<std::vector<TraceNode>> parseAlibabaNodes(std::string_view csv) {
  std::vector<TraceNode> nodes;
  std::optional<Columns> columns;
  struct {
    std::size_t name = 0, cpu = 0, memory = 0, gpu = 0;
    std::optional<std::size_t> model;
  } c;
  bool resolved = false;
  const auto resolve = [&]() -> Status {
    for (auto [field, name] : {std::pair{&c.name, "sn"}, std::pair{&c.cpu, "cpu_milli"},
                               std::pair{&c.memory, "memory_mib"}, std::pair{&c.gpu, "gpu"}}) {
      auto index = columns->require(name);
      if (!index.isOk()) return index.status();
      *field = *index;
    }
    c.model = columns->find("model");
    resolved = true;
    return Status::ok();
  };
  const Status status = forEachRow(csv, "alibaba node list", 0, columns, [&](const Row& row) {
    if (!resolved) {
      if (Status s = resolve(); !s.isOk()) return s;
    }
    TraceNode node;
    node.name = std::string(row.text(c.name));
    if (node.name.empty()) return row.error("sn is empty");
    auto cpu = row.uintAt(c.cpu, "cpu_milli");
    if (!cpu.isOk()) return cpu.status();
    auto memory = row.uintAt(c.memory, "memory_mib");
    if (!memory.isOk()) return memory.status();
    if (*memory > std::numeric_limits<std::uint64_t>::max() / kMebibyte) {
      return row.error("memory_mib out of range");
    }
    auto gpu = row.uintAt(c.gpu, "gpu");
    if (!gpu.isOk()) return gpu.status();
    auto gpus = narrow<std::uint32_t>(row, *gpu, "gpu");
    if (!gpus.isOk()) return gpus.status();
    node.cpuMillis = *cpu;
    node.memoryBytes = *memory * kMebibyte;
    node.gpus = *gpus;
    if (c.model) node.model = std::string(row.text(*c.model));
    nodes.push_back(std::move(node));
    return Status::ok();
  });
  if (!status.isOk()) return status;
  if (!resolved) {
    if (Status s = resolve(); !s.isOk()) return s;
  }
  return nodes;
}

}  // namespace kubeslurm::sim

// The Standard Workload Format of the Parallel Workloads Archive
// (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): ';' header comments
// ("; MaxNodes: 256"), then one job per line, 18 whitespace-separated numbers, -1 for unknown:
//   1 job id, 2 submit, 3 wait, 4 run time, 5 allocated processors, 6 average CPU time,
//   7 used memory, 8 requested processors, 9 requested time, 10 requested memory, 11 status,
//   12 user, 13 group, 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.
#pragma once

#include <cstddef>
#include <string_view>

#include "kubeslurm/base/status.h"
#include "kubeslurm/sim/trace.h"

namespace kubeslurm::sim {

struct SwfOptions {
  // Read only the first this many job records (0: all), for a quick partial replay.
  std::size_t maxRecords = 0;
};

// Records that cannot be replayed are skipped and counted in Trace::skipped/notes: run time -1
// (never ran), no processor count, submit time -1. The job's size is the requested processors
// when the trace has them, else the allocated ones. Fields 17-18 (preceding job, think time)
// are read but not modelled. Errors name the line: "swf line 12: expected 18 fields, got 7".
StatusOr<Trace> parseSwf(std::string_view text, const SwfOptions& options = {});

}  // namespace kubeslurm::sim

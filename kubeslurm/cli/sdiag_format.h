// `sdiag` as Slurm 22.05 prints it, as pure functions of the operator's statistics
// (kubeslurm/rpc/query_state.h Statistics, from the query API's GetStatistics) and `now`.
//
// Source of truth: Slurm 22.05.8 src/sdiag/sdiag.c (_print_stats: the banner, the labels and
// their spacing, microseconds as %u, means as integer division, "Cycles per minute" only after a
// minute) and src/sdiag/opts.c (options, --help and --usage texts);
// src/common/slurm_time.c slurm_ctime2 for the times ("%a %b %d %T %Y", local time).
//
// Only the lines the operator has figures for are printed (docs/cli.md, "sdiag"): a line Slurm
// prints from a counter kubeslurm does not keep is left out rather than shown as 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kubeslurm/cli/priority_format.h"
#include "kubeslurm/rpc/query_state.h"

namespace kubeslurm::cli {

struct SdiagParse {
  std::optional<CommandOutput> exit;  // --help, --usage, -V, -r, -M, or a bad argument
};
// -a, -i, -t, -T are accepted (the RPC tables they sort are not printed); -r is refused.
SdiagParse parseSdiagArgs(const std::vector<std::string>& args);

struct SdiagContext {
  std::int64_t now = 0;               // "sdiag output at"
  std::int32_t utcOffsetSeconds = 0;  // the local zone's offset, for every time printed
  std::int64_t planTime = 0;          // the cycle the figures come from ("Job states ts")
};

std::string formatSdiag(const rpc::Statistics& statistics, const SdiagContext& context);

}  // namespace kubeslurm::cli

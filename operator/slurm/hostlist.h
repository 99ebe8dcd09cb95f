// Slurm hostlist expressions: expansion and compression as Slurm 22.05 does them
// (src/common/hostlist.c semantics; see ../shared/reference/slurm-22.05.md "Hostlists").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "operator/base/status.h"

namespace kubeslurm::slurm {

// Expands "gpu-node-[001-004],login[1-2]" into hostnames, in order, duplicates kept.
// On bad input the Status message is the diagnostic Slurm prints after "scontrol: error: "
// (e.g. "_parse_single_range: Invalid range: `5-3'"), or empty when Slurm prints only
// "Invalid hostlist: EXPR".
StatusOr<std::vector<std::string>> expandHostlist(std::string_view expr);

// Compresses hostnames the way `scontrol show hostlist` does: order kept, duplicates kept.
std::string compressHostlist(std::span<const std::string> hosts);

// As `scontrol show hostlistsorted`: sorted (Slurm's host order), duplicates kept.
std::string compressHostlistSorted(std::span<const std::string> hosts);

}  // namespace kubeslurm::slurm

// The operator's logs: spdlog on stderr, as text or one JSON object per line.
#pragma once

#include "operator/flags.h"

namespace kubeslurm::op {

// Installs the default logger for --log-format and --log-level.
void setUpLogging(const Flags& flags);

}  // namespace kubeslurm::op

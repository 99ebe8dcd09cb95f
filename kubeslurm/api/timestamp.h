// metav1.Time and MicroTime text. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kubeslurm/base/status.h"

namespace kubeslurm::api {

// RFC 3339 timestamps in UTC with second precision ("2026-11-21T10:00:00Z"), as metav1.Time
// encodes them; MicroTime (Events, Leases) adds six fractional digits. Parsing takes what Go's
// time.Parse(time.RFC3339, ...) takes: "Z" or a "+hh:mm" offset, any number of fractional
// digits (floored to the unit returned); kInvalidArgument otherwise.
StatusOr<std::int64_t> parseTimestamp(std::string_view text);  // Unix seconds
std::string formatTimestamp(std::int64_t unixSeconds);
StatusOr<std::int64_t> parseMicroTime(std::string_view text);  // Unix microseconds
std::string formatMicroTime(std::int64_t unixMicros);

}  // namespace kubeslurm::api

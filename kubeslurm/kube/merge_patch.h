// JSON merge patches (RFC 7386) computed from two versions of an object, so that a controller
// can send what changed instead of the whole object: a status PATCH carries the status alone,
// where a PUT of /status carries the spec too (a SlurmJob's script, up to 1 MiB) for the API
// server to decode and throw away.
#pragma once

#include <nlohmann/json.hpp>

namespace kubeslurm::kube {

// The merge patch that turns `from` into `to`: members of `to` that differ (objects compared
// member by member, recursively; arrays and scalars whole), and null for members of `from` that
// `to` lacks. Applied to `from` it gives `to`, except that a null member of `to` cannot be
// expressed (RFC 7386 reads null as "remove") and is removed. An empty object: no change.
nlohmann::json mergePatchBetween(const nlohmann::json& from, const nlohmann::json& to);

}  // namespace kubeslurm::kube

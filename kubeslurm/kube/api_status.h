// One place that maps Kubernetes API answers onto kubeslurm::Status (STYLE.md "Errors").
//
// The meaning a caller acts on, not the HTTP number, is what travels up:
//   404 kNotFound          the object is gone or never was
//   409 kAborted           conflict (stale resourceVersion, failed precondition, second bind):
//                          re-read and decide again
//   409 kAlreadyExists     reason AlreadyExists (a create of an existing name)
//   410 kOutOfRange        Gone / Expired: the resourceVersion or continue token is older than
//                          what the server keeps; relist
//   422 / 400 kInvalidArgument with the server's message
//   429 kResourceExhausted back off (Retry-After); 5xx kUnavailable retry with backoff
//   401 kUnauthenticated, 403 kPermissionDenied
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "kubeslurm/base/status.h"

namespace kubeslurm::kube {

// The code for an HTTP status and a metav1.Status reason ("AlreadyExists", "Conflict", ...;
// empty when unknown). 2xx maps to kOk.
StatusCode statusCodeForHttp(int httpCode, std::string_view reason);

// The Status for a failed answer. `what` names the request ("GET /api/v1/..."); `body` is the
// response body, a metav1.Status JSON when the API server wrote it, else anything.
Status statusFromResponse(int httpCode, std::string_view body, std::string_view what);

// The Status carried by a watch ERROR event's object (a metav1.Status: code, reason, message).
Status statusFromStatusObject(const nlohmann::json& object, std::string_view what);

}  // namespace kubeslurm::kube

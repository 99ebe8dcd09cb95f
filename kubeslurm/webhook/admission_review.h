// admission.k8s.io/v1 AdmissionReview: what the API server sends a webhook and what it expects
// back. PURE: text in, values out.
//
// The body is outside input (anyone who reaches the port can send one; only the API server's
// are trusted, by TLS and the network policy), so decoding bounds it: the size, and the nesting
// depth before anything copies the tree recursively.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeslurm/access/access_review.h"
#include "kubeslurm/base/status.h"

namespace kubeslurm::webhook {

using Json = nlohmann::json;

struct AdmissionRequest {
  std::string uid;
  std::string group;     // request.kind.group ("kubeslurm.io")
  std::string kind;      // request.kind.kind ("SlurmJob")
  std::string resource;  // request.resource.resource ("slurmjobs")
  std::string subResource;
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  std::string namespaceName;
  std::string name;
  access::Identity user;  // request.userInfo: who the API server authenticated
  Json object;            // request.object (null for DELETE)
  Json oldObject;         // request.oldObject (UPDATE, DELETE)
  bool dryRun = false;
};

struct AdmissionResponse {
  bool allowed = true;
  std::string message;  // status.message of a refusal: what kubectl and sbatch show
  std::int32_t code = 403;
  std::string reason = "Forbidden";  // status.reason of a refusal
  Json patch = Json::array();        // JSONPatch operations (a mutating webhook's)
  std::vector<std::string> warnings;
};

AdmissionResponse allow();
AdmissionResponse refuse(std::string message, std::int32_t code = 403,
                         std::string reason = "Forbidden");

struct ReviewLimits {
  std::size_t maxBytes = std::size_t{8} << 20;  // an object and its old version, each < 1.5 MiB
  std::size_t maxDepth = 100;
};

// kInvalidArgument for anything but an AdmissionReview v1 with a request; kResourceExhausted
// past the limits.
StatusOr<AdmissionRequest> decodeAdmissionReview(std::string_view body,
                                                 const ReviewLimits& limits = {});

// The AdmissionReview answering `request`, as text.
std::string encodeAdmissionReview(const AdmissionRequest& request,
                                  const AdmissionResponse& response);

// JSON Pointer escaping of one path segment (RFC 6901): "~" -> "~0", "/" -> "~1".
std::string pointerSegment(std::string_view segment);

}  // namespace kubeslurm::webhook

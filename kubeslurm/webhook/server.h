// The HTTPS endpoint the API server calls for admission: POST a path, get an AdmissionReview
// back. Every replica of the operator serves it (admission is not the leader's job), over TLS
// with the serving certificate the chart provides.
//
// What reaches the port is bounded before a handler sees it: only POST with a Content-Length of
// at most ReviewLimits::maxBytes (413 otherwise, 411 without one), a body that decodes as an
// AdmissionReview within the depth limit (400), and at most `maxInFlight` reviews at once (429:
// the API server then applies the webhook's failurePolicy, Fail, and the submitter may retry).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kubeslurm/base/status.h"
#include "kubeslurm/webhook/admission_review.h"

namespace kubeslurm::webhook {

using Handler = std::function<AdmissionResponse(const AdmissionRequest&)>;

struct ServerOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 9444;
  std::string certificateFile;  // PEM, the chain
  std::string privateKeyFile;   // PEM
  ReviewLimits limits;
  std::uint32_t maxInFlight = 8;
};

class Server {
 public:
  virtual ~Server() = default;
  virtual void stop() = 0;
  // Reviews answered, and refused before a handler (bad request, too large, too many).
  virtual std::uint64_t answered() const = 0;
  virtual std::uint64_t rejected() const = 0;
};

// `handlers` by path ("/validate/slurmjobs"). A handler may throw: the review is answered with
// a refusal that says so, and the server goes on. Error: the address cannot be bound or the
// certificate or key is unusable.
StatusOr<std::unique_ptr<Server>> startServer(const ServerOptions& options,
                                              std::map<std::string, Handler> handlers);

}  // namespace kubeslurm::webhook

// The operator's HTTP side, split as controller-runtime splits it: metrics on one port (scraped
// by Prometheus), the kubelet's liveness and readiness probes on another.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kubeslurm/base/status.h"
#include "kubeslurm/metrics/operator_metrics.h"

namespace kubeslurm::metrics {

struct EndpointsOptions {
  // "HOST:PORT" or ":PORT" (all interfaces); port 0 picks an ephemeral port; "" turns it off.
  std::string metricsAddress = "0.0.0.0:8080";  // /metrics
  std::string probeAddress = "0.0.0.0:8081";    // /healthz and /readyz
};

class HttpEndpoints {
 public:
  // healthy() is liveness (OK unless the process is wedged), ready() readiness (OK once the
  // informers have synced). A non-OK Status answers 503 with its message as the text/plain body;
  // OK answers 200 "ok". Both run on the servers' threads, concurrently with the rest of the
  // operator and with each other, so they must be safe to call from any thread. The endpoints
  // share ownership of the metrics' registry, so `metrics` may go first.
  static StatusOr<std::unique_ptr<HttpEndpoints>> start(const EndpointsOptions& options,
                                                        const OperatorMetrics& metrics,
                                                        std::function<Status()> healthy,
                                                        std::function<Status()> ready);
  ~HttpEndpoints();  // stops both servers, waiting for requests in flight
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;
  HttpEndpoints(HttpEndpoints&&) = delete;
  HttpEndpoints& operator=(HttpEndpoints&&) = delete;

  int metricsPort() const;  // the bound port (what :0 picked); 0 when off
  int probePort() const;

 private:
  struct Impl;
  explicit HttpEndpoints(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubeslurm::metrics

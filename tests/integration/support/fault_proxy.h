// A fault-injecting HTTPS proxy in front of the sandbox's kube-apiserver, for tests that must
// show a client survives a bad network: cut connections, slow answers, 429s and 500s, and a
// watch that the "server" answers with 410 Expired.
//
// It listens on 127.0.0.1:<ephemeral>, terminates TLS with the apiserver's own serving
// certificate (its SANs include 127.0.0.1, so a client that trusts the sandbox CA verifies the
// proxy as it would the apiserver), and forwards each request over a new TLS connection to the
// apiserver. It does not request client certificates: clients authenticate with a bearer
// token, whose header is forwarded as is.
//
// One request per connection: the proxy rewrites the request's Connection header to "close",
// so the apiserver closes after its answer and the client opens a new connection for the next
// request. That keeps the proxy free of HTTP response parsing (a watch is an endless chunked
// body) while letting it decide the fate of every request. After the request is forwarded,
// bytes are copied both ways with poll() as they arrive, so a watch streams through.
//
// One thread per connection; the faults can be changed from any thread at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "kubeslurm/base/status.h"

namespace kubeslurm::testing_support {

struct FaultProxyOptions {
  int upstreamPort = 0;  // the apiserver on 127.0.0.1
  std::string certFile;  // serving certificate and key presented to clients
  std::string keyFile;
  std::string caFile;  // verifies the apiserver
  bool trace = false;  // one stderr line per request and its fate
};

struct FaultProxyStats {
  std::uint64_t connections = 0;
  std::uint64_t forwarded = 0;
  std::uint64_t injected = 0;  // requests answered by the proxy itself
  std::uint64_t dropped = 0;   // sockets shut down by dropAll() (two per forwarded request)
};

class FaultProxy {
 public:
  // Options for the sandbox started by SandboxEnvironment (pki/apiserver.{crt,key}, ca.crt,
  // the port from KUBESLURM_APISERVER).
  static StatusOr<FaultProxyOptions> sandboxOptions();
  static StatusOr<std::unique_ptr<FaultProxy>> start(const FaultProxyOptions& options);
  ~FaultProxy();  // closes everything and joins every thread
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  int port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

  // Closes every open connection now (both sides): watches in flight end as cut streams.
  void dropAll();
  // Every request accepted from now on waits this long before it is forwarded.
  void setDelay(std::chrono::milliseconds delay);
  // The next `count` requests are answered with `code` (429 comes with Retry-After: 1) and a
  // metav1.Status body instead of being forwarded.
  void failNext(int count, int code);
  // Each request is answered with `code` with probability `probability`.
  void setFailureRate(double probability, int code);
  // The next `count` watch requests get "200 OK" and one ERROR event carrying a 410 Expired
  // Status, as the apiserver answers a watch from a compacted resourceVersion.
  void expireNextWatches(int count);
  // Back to a plain relay.
  void clearFaults();

  FaultProxyStats stats() const;

 private:
  explicit FaultProxy(FaultProxyOptions options);
  Status listen();
  void acceptLoop();
  void serve(int clientFd);
  // What to do with one request, decided once when it has been read.
  struct Verdict {
    int code = 0;  // 0: forward
    bool expireWatch = false;
    std::chrono::milliseconds delay{0};
  };
  Verdict decide(bool isWatch);
  void trackFd(int fd, bool add);

  FaultProxyOptions options_;
  int listenFd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  void* serverCtx_ = nullptr;  // SSL_CTX*, kept opaque so includers need no OpenSSL header
  void* clientCtx_ = nullptr;

  mutable std::mutex mutex_;
  std::set<int> openFds_;
  std::chrono::milliseconds delay_{0};
  int failCount_ = 0;
  int failCode_ = 500;
  double failRate_ = 0;
  int rateCode_ = 500;
  int expireWatches_ = 0;
  std::minstd_rand random_{12345};  // NOLINT(cert-msc32-c,cert-msc51-cpp): reproducible faults
  FaultProxyStats stats_;

  std::thread acceptThread_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers_;  // guarded by mutex_
};

}  // namespace kubeslurm::testing_support

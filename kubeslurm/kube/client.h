// The Kubernetes API client, split by role (STYLE.md; controller-runtime's
// pkg/client/interfaces.go): a reconciler that only reads takes a Reader, the binder takes a
// Binder, and fakes implement only what a test needs.
//
// Objects are nlohmann::json (typed codecs come later) addressed by a generic ResourceType.
// Every failure is a Status mapped once (api_status.h): 404 kNotFound, 409 kAborted /
// kAlreadyExists, 410 kOutOfRange, 422 kInvalidArgument, 429 kResourceExhausted,
// 5xx and connection errors kUnavailable, 401 kUnauthenticated, 403 kPermissionDenied.
//
// The HTTPS implementation (cpprestsdk, OpenSSL) lives in client.cc behind a pimpl so that
// no includer pays for cpprest's headers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeslurm/base/status.h"
#include "kubeslurm/kube/kubeconfig.h"
#include "kubeslurm/kube/resource.h"
#include "kubeslurm/kube/watch_framing.h"

namespace kubeslurm::kube {

using Json = nlohmann::json;

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  std::int64_t limit = 0;     // 0: the server's choice (everything)
  std::string continueToken;  // from the previous page's metadata.continue
  std::string resourceVersion;
};

struct DeleteOptions {
  // Preconditions: the delete fails with kAborted (409) unless the object still has them.
  std::optional<std::string> uid;
  std::optional<std::string> resourceVersion;
  std::optional<std::string> propagationPolicy;  // Orphan, Background, Foreground
  std::optional<std::int64_t> gracePeriodSeconds;
};

struct WatchOptions {
  std::string resourceVersion;  // resume point; "" = from now (after a synthetic list)
  std::string labelSelector;
  std::string fieldSelector;
  bool allowWatchBookmarks = true;
  // The server ends the watch after this long; the caller re-watches from the last
  // resourceVersion. Like client-go, watches are bounded so that a silent dead connection is
  // noticed.
  std::int64_t timeoutSeconds = 300;
};

// Stops a running watch from another thread: the blocked read is cancelled (the connection is
// closed) and watch() returns kCancelled. Reusable only for one watch at a time.
class WatchStop {
 public:
  void stop();
  bool stopped() const;

  // For the implementation: runs `cancel` on stop() (at once if already stopped); returns a
  // guard-less registration that the watch clears with clearCanceller() when it ends.
  void setCanceller(std::function<void()> cancel);
  void clearCanceller();

 private:
  mutable std::mutex mutex_;
  bool stopped_ = false;
  std::function<void()> cancel_;
};

// Called for every event in order; return false to end the watch (watch() returns OK).
using WatchHandler = std::function<bool(const WatchEvent&)>;

struct WatchResult {
  // OK when the server ended the stream (timeoutSeconds) or the handler asked to stop;
  // kOutOfRange for 410 (relist); kCancelled after WatchStop::stop(); else the error.
  Status status;
  // Where to resume: the last resourceVersion seen (or the one the watch started from).
  std::string resourceVersion;
  std::size_t events = 0;
};

class Reader {
 public:
  virtual ~Reader() = default;
  virtual StatusOr<Json> get(const ResourceType& type, std::string_view ns,
                             std::string_view name) = 0;
  // One page: a List object (items, metadata.continue, metadata.resourceVersion).
  virtual StatusOr<Json> list(const ResourceType& type, std::string_view ns,
                              const ListOptions& options) = 0;
};

// All pages of a list, following metadata.continue; the result is one List object whose
// metadata.resourceVersion is the last page's. A continue token that expired (etcd compacted
// the snapshot) gives kOutOfRange: relist from the start.
StatusOr<Json> listAll(Reader& reader, const ResourceType& type, std::string_view ns,
                       ListOptions options);

class Writer {
 public:
  virtual ~Writer() = default;
  // Namespace and name come from the object's metadata (or `ns` when it has none).
  virtual StatusOr<Json> create(const ResourceType& type, std::string_view ns,
                                const Json& object) = 0;
  // PUT. The object's metadata.resourceVersion is the precondition: stale -> kAborted.
  virtual StatusOr<Json> update(const ResourceType& type, std::string_view ns,
                                const Json& object) = 0;
  // JSON merge patch (RFC 7386, application/merge-patch+json).
  virtual StatusOr<Json> patch(const ResourceType& type, std::string_view ns, std::string_view name,
                               const Json& mergePatch) = 0;
  virtual Status remove(const ResourceType& type, std::string_view ns, std::string_view name,
                        const DeleteOptions& options) = 0;
};

class StatusWriter {
 public:
  virtual ~StatusWriter() = default;
  virtual StatusOr<Json> updateStatus(const ResourceType& type, std::string_view ns,
                                      const Json& object) = 0;
  virtual StatusOr<Json> patchStatus(const ResourceType& type, std::string_view ns,
                                     std::string_view name, const Json& mergePatch) = 0;
};

class Binder {
 public:
  virtual ~Binder() = default;
  // POST pods/NAME/binding with a v1 Binding. A pod already bound gives kAborted (409).
  // `podUid` is sent as the Binding's metadata.uid; newer API servers refuse the bind when the
  // pod is another incarnation, v1.20 ignores it (checked against the sandbox).
  virtual Status bind(std::string_view ns, std::string_view pod, std::string_view node,
                      std::string_view podUid = {}) = 0;
};

// Server-side dry run (dryRun=All): every admission step runs (validation, mutating and
// validating webhooks, Pod Security admission, quota) and nothing is stored. The answer is the
// object as it would have been created, or the refusal it would have met.
class DryRunner {
 public:
  virtual ~DryRunner() = default;
  virtual StatusOr<Json> createDryRun(const ResourceType& type, std::string_view ns,
                                      const Json& object) = 0;
};

class Watcher {
 public:
  virtual ~Watcher() = default;
  // Blocks until the stream ends, the handler returns false, an error, or `stop`.
  virtual WatchResult watch(const ResourceType& type, std::string_view ns,
                            const WatchOptions& options, const WatchHandler& handler,
                            WatchStop* stop = nullptr) = 0;
};

struct ClientOptions {
  std::chrono::milliseconds requestTimeout{30000};
  // Client-side rate limit. High by default: the API server's priority and fairness is the
  // real guard; this only stops a runaway loop from flooding it.
  double qps = 200;
  int burst = 400;
  int maxRetries = 4;
  std::chrono::milliseconds backoffBase{100};
  std::chrono::milliseconds backoffCap{5000};
  // A 429's Retry-After is waited up to this; asked for longer, the request fails at once.
  std::chrono::seconds retryAfterCap{30};
  // The leader's fence (DESIGN.md invariant 2) for mutating requests (POST, PUT, PATCH,
  // DELETE): the time until which this replica may write, nullopt when it may not. A write is
  // not sent, nor retried, once the fence has closed, and one in flight is abandoned at the
  // fence. Unset: no fence (the CLI, the Lease's own client).
  std::function<std::optional<std::chrono::steady_clock::time_point>()> writeFence;
  std::string userAgent = "kubeslurm/0.1";
  // Called once for each request that failed for good (after its retries), with the HTTP
  // method in lower case ("get", "post", ...): for the operator's API-error metric. Answers
  // that are control flow for the caller are not failures here: 404, 409 (a conflict to re-read,
  // or a name that exists) and 410 (relist). Called on the calling thread; must not block.
  std::function<void(std::string_view method, const Status& failure)> onFailure;
};

// cpprestsdk makes a TLS context for every new connection and loads OpenSSL's default verify
// paths into it: the system CA bundle as one file (~140 certificates), about 50 ms of CPU each
// time with OpenSSL 3, paid again whenever a burst of parallel requests opens connections. When
// `config` names the cluster's CA, which the client adds to every context itself and which the
// API server's certificate chains to, this points OpenSSL's default file at /dev/null
// (SSL_CERT_FILE, whatever it was). The default directory (SSL_CERT_DIR, or OpenSSL's), whose
// hashed links OpenSSL reads only when a chain needs them, still holds the system CAs. It sets
// the environment of the process, whose other TLS endpoints are servers: call it before any
// thread starts. Returns whether it did.
bool skipSystemCaFile(const ClientConfig& config);

// The HTTPS client. Thread-safe; share one per process.
class Client final : public Reader,
                     public Writer,
                     public StatusWriter,
                     public Binder,
                     public DryRunner,
                     public Watcher {
 public:
  // Fails on an unusable config (bad URL, unreadable CA/cert/key file).
  static StatusOr<std::unique_ptr<Client>> create(const ClientConfig& config,
                                                  const ClientOptions& options = {});
  ~Client() override;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  StatusOr<Json> get(const ResourceType& type, std::string_view ns, std::string_view name) override;
  StatusOr<Json> list(const ResourceType& type, std::string_view ns,
                      const ListOptions& options) override;
  StatusOr<Json> create(const ResourceType& type, std::string_view ns, const Json& object) override;
  StatusOr<Json> createDryRun(const ResourceType& type, std::string_view ns,
                              const Json& object) override;
  StatusOr<Json> update(const ResourceType& type, std::string_view ns, const Json& object) override;
  StatusOr<Json> patch(const ResourceType& type, std::string_view ns, std::string_view name,
                       const Json& mergePatch) override;
  Status remove(const ResourceType& type, std::string_view ns, std::string_view name,
                const DeleteOptions& options) override;
  StatusOr<Json> updateStatus(const ResourceType& type, std::string_view ns,
                              const Json& object) override;
  StatusOr<Json> patchStatus(const ResourceType& type, std::string_view ns, std::string_view name,
                             const Json& mergePatch) override;
  Status bind(std::string_view ns, std::string_view pod, std::string_view node,
              std::string_view podUid = {}) override;
  WatchResult watch(const ResourceType& type, std::string_view ns, const WatchOptions& options,
                    const WatchHandler& handler, WatchStop* stop = nullptr) override;

  // Requests sent, retries included (for tests and metrics).
  std::uint64_t requestsSent() const;

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubeslurm::kube

// The HTTPS client over cpprestsdk. Everything that can throw (cpprest, Boost.Asio SSL,
// nlohmann) is caught in this file and leaves it as a Status.
#include "kubeslurm/kube/client.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ssl.hpp>
#include <cpprest/http_client.h>
#include <openssl/ssl.h>

#include "kubeslurm/base/text.h"
#include "kubeslurm/kube/api_status.h"
#include "kubeslurm/kube/rate_limit.h"

namespace kubeslurm::kube {
namespace {

namespace http = web::http;
using http::client::http_client;
using http::client::http_client_config;

constexpr const char* kJson = "application/json";
constexpr const char* kMergePatch = "application/merge-patch+json";

struct Tls {
  std::string caPem;
  std::string caFile;
  std::string certPem;
  std::string certFile;
  std::string keyPem;
  std::string keyFile;

  // Runs on each new connection's context. cpprest has already called
  // set_default_verify_paths(); the cluster CA is added to the system ones.
  void apply(boost::asio::ssl::context& ctx) const {
    if (!caPem.empty()) ctx.add_certificate_authority(boost::asio::buffer(caPem));
    if (!caFile.empty() && caPem.empty()) ctx.load_verify_file(caFile);
    if (!certPem.empty()) {
      ctx.use_certificate_chain(boost::asio::buffer(certPem));
    } else if (!certFile.empty()) {
      ctx.use_certificate_chain_file(certFile);
    }
    if (!keyPem.empty()) {
      ctx.use_private_key(boost::asio::buffer(keyPem), boost::asio::ssl::context::pem);
    } else if (!keyFile.empty()) {
      ctx.use_private_key_file(keyFile, boost::asio::ssl::context::pem);
    }
  }
};

double jitterUnit() {
  thread_local std::minstd_rand engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

std::string objectNamespace(const Json& object, std::string_view fallback) {
  const Json* metadata =
      object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
  if (metadata != nullptr && metadata->is_object()) {
    auto ns = metadata->find("namespace");
    if (ns != metadata->end() && ns->is_string() && !ns->get_ref<const std::string&>().empty()) {
      return ns->get<std::string>();
    }
  }
  return std::string(fallback);
}

std::string objectName(const Json& object) {
  if (!object.is_object()) return {};
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  auto name = metadata->find("name");
  if (name == metadata->end() || !name->is_string()) return {};
  return name->get<std::string>();
}

struct Response {
  int code = 0;
  std::string body;
  std::optional<std::chrono::seconds> retryAfter;
};

}  // namespace

// ---- WatchStop ----

void WatchStop::stop() {
  std::function<void()> cancel;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    cancel = cancel_;
  }
  if (cancel) cancel();
}

bool WatchStop::stopped() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stopped_;
}

void WatchStop::setCanceller(std::function<void()> cancel) {
  // Stopped before the stream was set up: cancel at once (outside the lock) instead of keeping it.
  std::function<void()> cancelNow;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) {
      cancelNow = std::move(cancel);
    } else {
      cancel_ = std::move(cancel);
    }
  }
  if (cancelNow) cancelNow();
}

void WatchStop::clearCanceller() {
  const std::lock_guard<std::mutex> lock(mutex_);
  cancel_ = nullptr;
}

// ---- listAll ----

StatusOr<Json> listAll(Reader& reader, const ResourceType& type, std::string_view ns,
                       ListOptions options) {
  Json all;
  Json items = Json::array();
  while (true) {
    auto page = reader.list(type, ns, options);
    if (!page.isOk()) return page.status();
    if (page->contains("items") && (*page)["items"].is_array()) {
      for (Json& item : (*page)["items"]) items.push_back(std::move(item));
    }
    std::string next;
    const Json& metadata = (*page)["metadata"];
    if (metadata.is_object() && metadata.contains("continue") && metadata["continue"].is_string()) {
      next = metadata["continue"].get<std::string>();
    }
    (*page)["items"] = Json::array();
    all = std::move(page).value();
    if (next.empty()) break;
    options.continueToken = std::move(next);
    // A continued list is served from the first page's snapshot; resourceVersion must not be
    // repeated alongside continue.
    options.resourceVersion.clear();
  }
  all["items"] = std::move(items);
  if (all.contains("metadata") && all["metadata"].is_object()) all["metadata"].erase("continue");
  return all;
}

// ---- Client::Impl ----

class Client::Impl {
 public:
  Impl(ClientConfig config, ClientOptions options, std::shared_ptr<TokenSource> tokens, Tls tls)
      : config_(std::move(config)),
        options_(std::move(options)),
        tokens_(std::move(tokens)),
        tls_(std::move(tls)),
        bucket_(options_.qps, options_.burst, TokenBucket::Clock::now()),
        client_(config_.server, makeHttpConfig(options_.requestTimeout)) {}

  http_client_config makeHttpConfig(std::chrono::milliseconds timeout) const {
    http_client_config config;
    config.set_timeout(timeout);
    config.set_validate_certificates(!config_.insecureSkipTlsVerify);
    Tls tls = tls_;
    config.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) { tls.apply(ctx); });
    return config;
  }

  void throttle() {
    TokenBucket::Clock::duration wait{};
    {
      const std::lock_guard<std::mutex> lock(bucketMutex_);
      wait = bucket_.reserve(TokenBucket::Clock::now());
    }
    if (wait > TokenBucket::Clock::duration::zero()) std::this_thread::sleep_for(wait);
  }

  StatusOr<http::http_request> makeRequest(const http::method& method, const std::string& target,
                                           const std::string* body, const char* contentType) {
    auto token = tokens_->token();
    if (!token.isOk()) return token.status();
    http::http_request request(method);
    request.set_request_uri(web::uri(target));
    request.headers().add("Accept", kJson);
    request.headers().add("User-Agent", options_.userAgent);
    if (!token->empty()) request.headers().add("Authorization", "Bearer " + *token);
    if (body != nullptr) request.set_body(*body, contentType);
    return request;
  }

  // One exchange. With a deadline, the request is cancelled (its connection closed) when the
  // deadline passes before the answer's headers arrive.
  StatusOr<Response> sendOnce(
      const http::method& method, const std::string& target, const std::string* body,
      const char* contentType,
      std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt) {
    ++requests_;
    try {
      auto request = makeRequest(method, target, body, contentType);
      if (!request.isOk()) return request.status();
      pplx::cancellation_token_source cancel;
      pplx::task<http::http_response> pending = client_.request(*request, cancel.get_token());
      if (deadline) {
        std::mutex mutex;
        std::condition_variable answered;
        bool done = false;
        // Waited for below, so the continuation never outlives mutex, answered and done.
        pplx::task<void> notified = pending.then([&](const pplx::task<http::http_response>& t) {
          // Observed here, so a cancelled request's exception is never left unobserved (pplx
          // traps on that); the caller's get() below sees the same outcome.
          try {
            (void)t.get();
          } catch (...) {  // NOLINT(bugprone-empty-catch): reported by pending.get() or the fence
          }
          const std::lock_guard lock(mutex);
          done = true;
          answered.notify_all();
        });
        {
          std::unique_lock lock(mutex);
          if (!answered.wait_until(lock, *deadline, [&] { return done; })) {
            cancel.cancel();
            answered.wait(lock, [&] { return done; });
          }
        }
        notified.wait();
        if (cancel.get_token().is_canceled()) {
          return Status(StatusCode::kDeadlineExceeded,
                        method + " " + target + ": abandoned at this replica's write fence");
        }
      }
      http::http_response response = pending.get();
      Response out;
      out.code = response.status_code();
      out.body = response.extract_utf8string(/*ignore_content_type=*/true).get();
      auto retryAfter = response.headers().find("Retry-After");
      if (retryAfter != response.headers().end())
        out.retryAfter = parseRetryAfter(retryAfter->second);
      return out;
    } catch (const std::exception& e) {
      // Connection refused or reset, TLS failure, timeout: nothing usable came back.
      return Status(StatusCode::kUnavailable, method + " " + target + ": " + e.what());
    }
  }

  // One API call with rate limiting and retries. Only idempotent verbs (GET, PUT, DELETE) are
  // retried after a 5xx or a connection error: a POST or PATCH may have been applied before
  // the answer was lost. A 429 is retried for every verb: the server sends it before doing
  // anything (max-in-flight, priority and fairness).
  StatusOr<Json> call(const http::method& method, const std::string& target,
                      const std::string* body = nullptr, const char* contentType = kJson) {
    const bool idempotent = method == http::methods::GET || method == http::methods::PUT ||
                            method == http::methods::DEL;
    const bool fenced = options_.writeFence && method != http::methods::GET;
    const std::string what = method + " " + target;
    for (int attempt = 0;; ++attempt) {
      throttle();
      // Checked after the throttle: the rate limiter may have held the write past the fence.
      std::optional<std::chrono::steady_clock::time_point> deadline;
      if (fenced) {
        deadline = options_.writeFence();
        if (!deadline || std::chrono::steady_clock::now() >= *deadline) {
          // Not an API failure (the metric counts those): this replica is not the leader.
          return Status(StatusCode::kFailedPrecondition,
                        what + ": not sent: this replica's write fence is closed");
        }
      }
      auto response = sendOnce(method, target, body, contentType, deadline);
      Status failure;
      bool retriable = false;
      std::optional<std::chrono::seconds> retryAfter;
      if (!response.isOk()) {
        failure = response.status();
        retriable = idempotent && failure.code() == StatusCode::kUnavailable;
      } else if (response->code >= 200 && response->code < 300) {
        if (response->body.empty()) return Json::object();
        Json parsed = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded()) {
          return failed(method, Status(StatusCode::kDataLoss, what + ": response is not JSON"));
        }
        return parsed;
      } else {
        failure = statusFromResponse(response->code, response->body, what);
        retriable = response->code == 429 || (idempotent && response->code >= 500);
        retryAfter = response->retryAfter;
      }
      if (!retriable || attempt >= options_.maxRetries) return failed(method, std::move(failure));
      const std::optional<std::chrono::milliseconds> delay =
          retryDelay(backoffDelay(attempt, options_.backoffBase, options_.backoffCap, jitterUnit()),
                     retryAfter, options_.retryAfterCap);
      if (!delay) return failed(method, std::move(failure));
      // No retry that could only be sent after the fence.
      if (fenced) {
        const auto fence = options_.writeFence();
        if (!fence || std::chrono::steady_clock::now() + *delay >= *fence) {
          return failed(method, std::move(failure));
        }
      }
      std::this_thread::sleep_for(*delay);
    }
  }

  WatchResult watch(const ResourceType& type, std::string_view ns, const WatchOptions& options,
                    const WatchHandler& handler, WatchStop* stop);

  // Reports a request's final failure to options_.onFailure unless it is the caller's control
  // flow (404, 409, 410); returns it.
  Status failed(const http::method& method, Status failure) const {
    const StatusCode code = failure.code();
    if (options_.onFailure && code != StatusCode::kNotFound && code != StatusCode::kAborted &&
        code != StatusCode::kAlreadyExists && code != StatusCode::kOutOfRange) {
      options_.onFailure(lowercaseAscii(method), failure);
    }
    return failure;
  }

  std::uint64_t requests() const { return requests_.load(); }
  const ClientConfig& config() const { return config_; }

 private:
  ClientConfig config_;
  ClientOptions options_;
  std::shared_ptr<TokenSource> tokens_;
  Tls tls_;
  std::mutex bucketMutex_;
  TokenBucket bucket_;
  http_client client_;
  std::atomic<std::uint64_t> requests_{0};
};

WatchResult Client::Impl::watch(const ResourceType& type, std::string_view ns,
                                const WatchOptions& options, const WatchHandler& handler,
                                WatchStop* stop) {
  WatchResult result;
  result.resourceVersion = options.resourceVersion;
  QueryParams query{{"watch", "1"}};
  if (!options.resourceVersion.empty())
    query.emplace_back("resourceVersion", options.resourceVersion);
  if (options.allowWatchBookmarks) query.emplace_back("allowWatchBookmarks", "true");
  if (options.timeoutSeconds > 0) {
    query.emplace_back("timeoutSeconds", std::to_string(options.timeoutSeconds));
  }
  if (!options.labelSelector.empty()) query.emplace_back("labelSelector", options.labelSelector);
  if (!options.fieldSelector.empty()) query.emplace_back("fieldSelector", options.fieldSelector);
  const std::string target = withQuery(resourcePath(type, ns), query);

  // The request timeout of cpprest is an idle timeout on the connection; a watch is idle
  // between events for as long as the server pleases, up to timeoutSeconds.
  const auto idle = std::chrono::seconds(std::max<std::int64_t>(options.timeoutSeconds, 300) + 30);
  pplx::cancellation_token_source cancel;
  struct ClearOnExit {
    WatchStop* stop;
    ~ClearOnExit() {
      if (stop != nullptr) stop->clearCanceller();
    }
  } clear{stop};
  if (stop != nullptr) stop->setCanceller([cancel]() { cancel.cancel(); });

  WatchDecoder decoder;
  decoder.setResourceVersion(options.resourceVersion);
  try {
    http_client client(config_.server, makeHttpConfig(idle));
    throttle();
    ++requests_;
    auto request = makeRequest(http::methods::GET, target, nullptr, nullptr);
    if (!request.isOk()) {
      result.status = request.status();
      return result;
    }
    http::http_response response = client.request(*request, cancel.get_token()).get();
    if (response.status_code() != http::status_codes::OK) {
      result.status = statusFromResponse(
          response.status_code(), response.extract_utf8string(true).get(), "watch " + target);
      return result;
    }
    auto buffer = response.body().streambuf();
    using Traits = decltype(buffer)::traits;
    constexpr std::size_t kChunk = std::size_t{64} * 1024;
    std::vector<std::uint8_t> chunk(kChunk);
    std::vector<WatchEvent> events;
    bool done = false;
    while (!done) {
      // bumpc() waits for one byte; then take whatever else already arrived. (getn() of a
      // whole chunk could wait for the chunk to fill while an event sits in the buffer.)
      const auto first = buffer.bumpc().get();
      if (first == Traits::eof()) {
        result.status = decoder.finish();
        break;
      }
      chunk[0] = static_cast<std::uint8_t>(first);
      std::size_t size = 1;
      const std::size_t available = std::min(buffer.in_avail(), kChunk - 1);
      if (available > 0) size += buffer.getn(chunk.data() + 1, available).get();
      events.clear();
      Status framing =
          decoder.feed(std::string_view(reinterpret_cast<const char*>(chunk.data()), size), events);
      for (const WatchEvent& event : events) {
        ++result.events;
        const bool keepGoing = handler(event);
        if (event.type == WatchEventType::kError) {
          result.status = event.errorStatus();
          done = true;
          break;
        }
        if (!keepGoing) {
          done = true;
          break;
        }
      }
      if (!done && !framing.isOk()) {
        result.status = framing;
        done = true;
      }
    }
    result.resourceVersion = decoder.resourceVersion();
    cancel.cancel();  // close the connection now instead of draining it
  } catch (const std::exception& e) {
    result.resourceVersion = decoder.resourceVersion();
    if (stop != nullptr && stop->stopped()) {
      result.status = Status(StatusCode::kCancelled, "watch " + target + ": stopped");
    } else {
      result.status = Status(StatusCode::kUnavailable, "watch " + target + ": " + e.what());
    }
  }
  if (result.status.isOk() && stop != nullptr && stop->stopped()) {
    result.status = Status(StatusCode::kCancelled, "watch " + target + ": stopped");
  }
  return result;
}

// ---- Client ----

bool skipSystemCaFile(const ClientConfig& config) {
  if (config.caPem.empty() && config.caFile.empty()) return false;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): documented as called before any thread starts
  return ::setenv("SSL_CERT_FILE", "/dev/null", /*overwrite=*/1) == 0;
}

StatusOr<std::unique_ptr<Client>> Client::create(const ClientConfig& config,
                                                 const ClientOptions& options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return invalidArgument("client: server must be an http(s) URL: " + config.server);
  }
  // OpenSSL's own exit handler frees its locks before cpprestsdk's thread pool joins; a
  // connection that pool frees after that waits on a freed lock forever, so a process that
  // spoke TLS hung at exit. The first initialisation decides: leave OpenSSL to the kernel.
  OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, nullptr);
  Tls tls{config.caPem,          config.caFile,       config.clientCertPem,
          config.clientCertFile, config.clientKeyPem, config.clientKeyFile};
  // Load the credentials once now so that a bad CA, certificate or key fails here with a
  // clear message instead of as an obscure handshake error on the first request.
  try {
    boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23);
    tls.apply(probe);
    web::uri check(config.server);
    (void)check;
  } catch (const std::exception& e) {
    return invalidArgument(std::string("client: TLS credentials or server URL: ") + e.what());
  }
  try {
    auto impl =
        std::make_unique<Impl>(config, options, TokenSource::fromConfig(config), std::move(tls));
    return std::unique_ptr<Client>(new Client(std::move(impl)));
  } catch (const std::exception& e) {
    return invalidArgument(std::string("client: ") + e.what());
  }
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

std::uint64_t Client::requestsSent() const { return impl_->requests(); }

StatusOr<Json> Client::get(const ResourceType& type, std::string_view ns, std::string_view name) {
  return impl_->call(http::methods::GET, resourcePath(type, ns, name));
}

StatusOr<Json> Client::list(const ResourceType& type, std::string_view ns,
                            const ListOptions& options) {
  QueryParams query;
  if (!options.labelSelector.empty()) query.emplace_back("labelSelector", options.labelSelector);
  if (!options.fieldSelector.empty()) query.emplace_back("fieldSelector", options.fieldSelector);
  if (options.limit > 0) query.emplace_back("limit", std::to_string(options.limit));
  if (!options.continueToken.empty()) query.emplace_back("continue", options.continueToken);
  if (!options.resourceVersion.empty()) {
    query.emplace_back("resourceVersion", options.resourceVersion);
  }
  return impl_->call(http::methods::GET, withQuery(resourcePath(type, ns), query));
}

StatusOr<Json> Client::create(const ResourceType& type, std::string_view ns, const Json& object) {
  const std::string body = object.dump();
  return impl_->call(http::methods::POST, resourcePath(type, objectNamespace(object, ns)), &body);
}

StatusOr<Json> Client::createDryRun(const ResourceType& type, std::string_view ns,
                                    const Json& object) {
  const std::string body = object.dump();
  return impl_->call(http::methods::POST,
                     resourcePath(type, objectNamespace(object, ns)) + "?dryRun=All", &body);
}

StatusOr<Json> Client::update(const ResourceType& type, std::string_view ns, const Json& object) {
  const std::string name = objectName(object);
  if (name.empty()) return invalidArgument("update: object has no metadata.name");
  const std::string body = object.dump();
  return impl_->call(http::methods::PUT, resourcePath(type, objectNamespace(object, ns), name),
                     &body);
}

StatusOr<Json> Client::patch(const ResourceType& type, std::string_view ns, std::string_view name,
                             const Json& mergePatch) {
  const std::string body = mergePatch.dump();
  return impl_->call(http::methods::PATCH, resourcePath(type, ns, name), &body, kMergePatch);
}

Status Client::remove(const ResourceType& type, std::string_view ns, std::string_view name,
                      const DeleteOptions& options) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.uid) body["preconditions"]["uid"] = *options.uid;
  if (options.resourceVersion) body["preconditions"]["resourceVersion"] = *options.resourceVersion;
  if (options.propagationPolicy) body["propagationPolicy"] = *options.propagationPolicy;
  if (options.gracePeriodSeconds) body["gracePeriodSeconds"] = *options.gracePeriodSeconds;
  const std::string text = body.dump();
  auto result = impl_->call(http::methods::DEL, resourcePath(type, ns, name), &text);
  return result.isOk() ? Status::ok() : result.status();
}

StatusOr<Json> Client::updateStatus(const ResourceType& type, std::string_view ns,
                                    const Json& object) {
  const std::string name = objectName(object);
  if (name.empty()) return invalidArgument("updateStatus: object has no metadata.name");
  const std::string body = object.dump();
  return impl_->call(http::methods::PUT,
                     resourcePath(type, objectNamespace(object, ns), name, "status"), &body);
}

StatusOr<Json> Client::patchStatus(const ResourceType& type, std::string_view ns,
                                   std::string_view name, const Json& mergePatch) {
  const std::string body = mergePatch.dump();
  return impl_->call(http::methods::PATCH, resourcePath(type, ns, name, "status"), &body,
                     kMergePatch);
}

Status Client::bind(std::string_view ns, std::string_view pod, std::string_view node,
                    std::string_view podUid) {
  Json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", pod}, {"namespace", ns}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  if (!podUid.empty()) binding["metadata"]["uid"] = podUid;
  const std::string body = binding.dump();
  auto result =
      impl_->call(http::methods::POST, resourcePath(resources::pods(), ns, pod, "binding"), &body);
  return result.isOk() ? Status::ok() : result.status();
}

WatchResult Client::watch(const ResourceType& type, std::string_view ns,
                          const WatchOptions& options, const WatchHandler& handler,
                          WatchStop* stop) {
  return impl_->watch(type, ns, options, handler, stop);
}

}  // namespace kubeslurm::kube

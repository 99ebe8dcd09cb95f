#include "tests/integration/support/fault_proxy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/support/sandbox_env.h"

namespace kubeslurm::testing_support {
namespace {

constexpr std::size_t kMaxHead = std::size_t{1} << 20U;

SSL_CTX* ctx(void* p) { return static_cast<SSL_CTX*>(p); }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

const char* reasonPhrase(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string statusBody(int code, std::string_view reason, std::string_view message) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         std::string(message) + R"(","reason":")" + std::string(reason) + R"(","code":)" +
         std::to_string(code) + "}";
}

std::string response(int code, const std::string& body, bool retryAfter) {
  std::string out = "HTTP/1.1 " + std::to_string(code) + " " + reasonPhrase(code) + "\r\n";
  out += "Content-Type: application/json\r\n";
  if (retryAfter) out += "Retry-After: 1\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  return out + body;
}

void setNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);  // NOLINT(cppcoreguidelines-pro-type-vararg)
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);   // NOLINT(cppcoreguidelines-pro-type-vararg)
}

// Timeouts for the blocking phase (handshake, request head); TCP_NODELAY because a relay of
// small TLS records otherwise meets Nagle and delayed ACKs (40 ms per request).
void setTimeouts(int fd, int seconds) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{};
  tv.tv_sec = seconds;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// Writes all of `data`; on a non-blocking socket waits for it to drain.
bool writeAll(SSL* ssl, int fd, const char* data, int size, const std::atomic<bool>& stopping) {
  while (size > 0) {
    const int n = SSL_write(ssl, data, size);
    if (n > 0) {
      data += n;  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
      size -= n;
      continue;
    }
    const int error = SSL_get_error(ssl, n);
    if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) return false;
    pollfd p{fd, static_cast<short>(error == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN), 0};
    ::poll(&p, 1, 500);
    if (stopping.load()) return false;
  }
  return true;
}

bool writeAll(SSL* ssl, int fd, const std::string& data, const std::atomic<bool>& stopping) {
  return writeAll(ssl, fd, data.data(), static_cast<int>(data.size()), stopping);
}

// Copies whatever `from` has decrypted or can decrypt now to `to`. False when `from` closed or
// failed (the relay ends), true when it would block.
bool relay(SSL* from, SSL* to, int toFd, const std::atomic<bool>& stopping) {
  std::array<char, 16384> buffer{};
  while (true) {
    const int n = SSL_read(from, buffer.data(), static_cast<int>(buffer.size()));
    if (n > 0) {
      if (!writeAll(to, toFd, buffer.data(), n, stopping)) return false;
      continue;
    }
    const int error = SSL_get_error(from, n);
    return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
  }
}

}  // namespace

StatusOr<FaultProxyOptions> FaultProxy::sandboxOptions() {
  const std::string& dir = SandboxEnvironment::dir();
  const std::string server = SandboxEnvironment::env()["KUBESLURM_APISERVER"];
  const std::size_t colon = server.rfind(':');
  if (dir.empty() || colon == std::string::npos) {
    return failedPrecondition("fault proxy: the sandbox is not running");
  }
  FaultProxyOptions options;
  options.upstreamPort = std::atoi(server.c_str() + colon + 1);  // NOLINT(cert-err34-c)
  options.certFile = dir + "/pki/apiserver.crt";
  options.keyFile = dir + "/pki/apiserver.key";
  options.caFile = dir + "/pki/ca.crt";
  return options;
}

FaultProxy::FaultProxy(FaultProxyOptions options) : options_(std::move(options)) {}

StatusOr<std::unique_ptr<FaultProxy>> FaultProxy::start(const FaultProxyOptions& options) {
  // A peer that closes while we write would raise SIGPIPE and end the test binary; the error
  // return of the write is what we want instead.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;  // NOLINT(cppcoreguidelines-pro-type-union-access)
  ::sigaction(SIGPIPE, &ignore, nullptr);

  std::unique_ptr<FaultProxy> proxy(new FaultProxy(options));
  SSL_CTX* server = SSL_CTX_new(TLS_server_method());
  SSL_CTX* client = SSL_CTX_new(TLS_client_method());
  proxy->serverCtx_ = server;
  proxy->clientCtx_ = client;
  if (server == nullptr || client == nullptr ||
      SSL_CTX_use_certificate_chain_file(server, options.certFile.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(server, options.keyFile.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_load_verify_locations(client, options.caFile.c_str(), nullptr) != 1) {
    return failedPrecondition("fault proxy: cannot load " + options.certFile + ", " +
                              options.keyFile + " or " + options.caFile);
  }
  SSL_CTX_set_verify(client, SSL_VERIFY_PEER, nullptr);
  Status listening = proxy->listen();
  if (!listening.isOk()) return listening;
  FaultProxy* self = proxy.get();
  proxy->acceptThread_ = std::thread([self] { self->acceptLoop(); });
  return proxy;
}

Status FaultProxy::listen() {
  listenFd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listenFd_ < 0) return internalError("fault proxy: socket");
  const int one = 1;
  ::setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  socklen_t length = sizeof address;
  if (::bind(listenFd_, generic, length) != 0 || ::listen(listenFd_, 128) != 0 ||
      ::getsockname(listenFd_, generic, &length) != 0) {
    return internalError("fault proxy: bind/listen: errno " + std::to_string(errno));
  }
  port_ = ntohs(address.sin_port);
  return Status::ok();
}

FaultProxy::~FaultProxy() {
  stopping_.store(true);
  if (acceptThread_.joinable()) acceptThread_.join();
  dropAll();
  std::list<Worker> workers;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    workers.swap(workers_);
  }
  for (Worker& worker : workers) worker.thread.join();
  if (listenFd_ >= 0) ::close(listenFd_);
  SSL_CTX_free(ctx(serverCtx_));
  SSL_CTX_free(ctx(clientCtx_));
}

void FaultProxy::acceptLoop() {
  while (!stopping_.load()) {
    pollfd p{listenFd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    trackFd(fd, true);
    auto done = std::make_shared<std::atomic<bool>>(false);
    const std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.connections;
    // Join the workers that finished, so a long test does not pile up threads.
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    workers_.push_back({std::thread([this, fd, done] {
                          serve(fd);
                          done->store(true);
                        }),
                        done});
  }
}

void FaultProxy::trackFd(int fd, bool add) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (add) {
    openFds_.insert(fd);
  } else {
    openFds_.erase(fd);
  }
}

void FaultProxy::dropAll() {
  const std::lock_guard<std::mutex> lock(mutex_);
  // shutdown() (not close) wakes the worker blocked on the socket; the worker closes it after
  // untracking it, so a descriptor number is never shut down after it was reused.
  for (const int fd : openFds_) ::shutdown(fd, SHUT_RDWR);
  stats_.dropped += openFds_.size();
}

void FaultProxy::setDelay(std::chrono::milliseconds delay) {
  const std::lock_guard<std::mutex> lock(mutex_);
  delay_ = delay;
}

void FaultProxy::failNext(int count, int code) {
  const std::lock_guard<std::mutex> lock(mutex_);
  failCount_ = count;
  failCode_ = code;
}

void FaultProxy::setFailureRate(double probability, int code) {
  const std::lock_guard<std::mutex> lock(mutex_);
  failRate_ = probability;
  rateCode_ = code;
}

void FaultProxy::expireNextWatches(int count) {
  const std::lock_guard<std::mutex> lock(mutex_);
  expireWatches_ = count;
}

void FaultProxy::clearFaults() {
  const std::lock_guard<std::mutex> lock(mutex_);
  delay_ = std::chrono::milliseconds(0);
  failCount_ = 0;
  failRate_ = 0;
  expireWatches_ = 0;
}

FaultProxyStats FaultProxy::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

FaultProxy::Verdict FaultProxy::decide(bool isWatch) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Verdict verdict;
  verdict.delay = delay_;
  if (isWatch && expireWatches_ > 0) {
    --expireWatches_;
    verdict.expireWatch = true;
  } else if (failCount_ > 0) {
    --failCount_;
    verdict.code = failCode_;
  } else if (failRate_ > 0 && std::uniform_real_distribution<double>(0, 1)(random_) < failRate_) {
    verdict.code = rateCode_;
  }
  if (verdict.expireWatch || verdict.code != 0) {
    ++stats_.injected;
  } else {
    ++stats_.forwarded;
  }
  return verdict;
}

void FaultProxy::serve(int clientFd) {
  SSL* client = SSL_new(ctx(serverCtx_));
  SSL* upstream = nullptr;
  int upstreamFd = -1;
  const auto cleanup = [&] {
    if (upstream != nullptr) SSL_free(upstream);
    SSL_free(client);
    if (upstreamFd >= 0) {
      trackFd(upstreamFd, false);
      ::close(upstreamFd);
    }
    trackFd(clientFd, false);
    ::close(clientFd);
    ERR_clear_error();
  };
  setTimeouts(clientFd, 10);
  SSL_set_fd(client, clientFd);
  if (SSL_accept(client) != 1) return cleanup();

  // The request head, then as much body as Content-Length says.
  std::string request;
  std::array<char, 16384> buffer{};
  std::size_t headEnd = std::string::npos;
  while (headEnd == std::string::npos && request.size() < kMaxHead) {
    const int n = SSL_read(client, buffer.data(), static_cast<int>(buffer.size()));
    if (n <= 0) return cleanup();
    request.append(buffer.data(), static_cast<std::size_t>(n));
    headEnd = request.find("\r\n\r\n");
  }
  if (headEnd == std::string::npos) return cleanup();
  const std::string_view head(request.data(), headEnd + 2);  // through the last header's CRLF
  const std::size_t lineEnd = head.find("\r\n");
  const std::string requestLine(head.substr(0, lineEnd));
  std::string rewritten = requestLine + "\r\n";
  std::size_t contentLength = 0;
  std::size_t at = lineEnd + 2;
  while (at < head.size()) {
    const std::size_t end = head.find("\r\n", at);
    const std::string_view line = head.substr(at, end - at);
    at = end + 2;
    const std::size_t colon = line.find(':');
    const std::string name = lower(line.substr(0, colon));
    if (name == "connection" || name == "keep-alive") continue;
    if (name == "content-length") {
      contentLength = std::strtoul(std::string(line.substr(colon + 1)).c_str(), nullptr, 10);
    }
    rewritten.append(line).append("\r\n");
  }
  rewritten += "Connection: close\r\n\r\n";
  std::string body = request.substr(headEnd + 4);
  while (body.size() < contentLength) {
    const int n = SSL_read(client, buffer.data(), static_cast<int>(buffer.size()));
    if (n <= 0) return cleanup();
    body.append(buffer.data(), static_cast<std::size_t>(n));
  }

  const std::size_t query = requestLine.find('?');
  const bool isWatch =
      query != std::string::npos && (requestLine.find("watch=1", query) != std::string::npos ||
                                     requestLine.find("watch=true", query) != std::string::npos);
  const Verdict verdict = decide(isWatch);
  if (options_.trace) {
    (void)std::fprintf(
        stderr, "fault-proxy %lld %s -> %s\n",
        static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count()),
        requestLine.substr(0, 120).c_str(),
        verdict.expireWatch ? "410 event"
        : verdict.code != 0 ? std::to_string(verdict.code).c_str()
                            : "forward");
  }
  const auto wakeAt = std::chrono::steady_clock::now() + verdict.delay;
  while (std::chrono::steady_clock::now() < wakeAt && !stopping_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (verdict.expireWatch) {
    const std::string event = R"({"type":"ERROR","object":)" +
                              statusBody(410, "Expired", "too old resource version (fault proxy)") +
                              "}\n";
    (void)writeAll(client, clientFd, response(200, event, false), stopping_);
    return cleanup();
  }
  if (verdict.code != 0) {
    const std::string reason = verdict.code == 429 ? "TooManyRequests" : "InternalError";
    const std::string text = response(
        verdict.code,
        statusBody(verdict.code, reason, "fault proxy: injected " + std::to_string(verdict.code)),
        verdict.code == 429);
    (void)writeAll(client, clientFd, text, stopping_);
    return cleanup();
  }

  upstreamFd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (upstreamFd < 0) return cleanup();
  trackFd(upstreamFd, true);
  setTimeouts(upstreamFd, 10);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(options_.upstreamPort));
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
  if (::connect(upstreamFd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return cleanup();
  }
  upstream = SSL_new(ctx(clientCtx_));
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(upstream), "127.0.0.1");
  SSL_set_fd(upstream, upstreamFd);
  if (SSL_connect(upstream) != 1) return cleanup();
  if (!writeAll(upstream, upstreamFd, rewritten + body, stopping_)) return cleanup();

  // Relay both ways until either side closes (the apiserver closes after its answer).
  setNonBlocking(clientFd);
  setNonBlocking(upstreamFd);
  while (!stopping_.load()) {
    if (!relay(client, upstream, upstreamFd, stopping_)) break;
    if (!relay(upstream, client, clientFd, stopping_)) break;
    std::array<pollfd, 2> fds{pollfd{clientFd, POLLIN, 0}, pollfd{upstreamFd, POLLIN, 0}};
    ::poll(fds.data(), fds.size(), 500);
  }
  cleanup();
}

}  // namespace kubeslurm::testing_support

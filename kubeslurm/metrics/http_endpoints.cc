#include "kubeslurm/metrics/http_endpoints.h"

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <CivetServer.h>
#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kubeslurm::metrics {
namespace {

// Kubelet probes and a scraper or two: civetweb's default of 50 threads would only idle.
constexpr const char* kServerThreads = "2";

struct ListenAddress {
  std::string listeningPorts;  // civetweb's option value
  std::string loopbackHost;    // an address of this host at which the listener answers
};

// "HOST:PORT" or ":PORT" in civetweb's terms, or why the address is not one.
StatusOr<ListenAddress> parseAddress(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return invalidArgument("address \"" + address + "\" is not HOST:PORT or :PORT");
  }
  const std::string_view host = std::string_view(address).substr(0, colon);
  const std::string_view port = std::string_view(address).substr(colon + 1);
  int portNumber = -1;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), portNumber);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() || portNumber < 0 ||
      portNumber > 65535) {
    return invalidArgument("address \"" + address + "\" has no port number in 0..65535");
  }
  // A comma or space would make civetweb listen on a list of addresses; an unbracketed IPv6 host
  // would be split at the wrong colon.
  const bool bracketed = host.starts_with('[') && host.ends_with(']');
  if (host.find_first_of(", \t") != std::string_view::npos ||
      (host.find(':') != std::string_view::npos && !bracketed)) {
    return invalidArgument("address \"" + address + "\" has a malformed host");
  }
  if (host.empty() || host == "0.0.0.0") return ListenAddress{std::string(port), "127.0.0.1"};
  if (host == "[::]") return ListenAddress{address, "::1"};
  if (bracketed) return ListenAddress{address, std::string(host.substr(1, host.size() - 2))};
  return ListenAddress{address, std::string(host)};
}

// Civetweb's accept loop notices mg_stop only when its poll times out, every 2 s; a connection to
// the listening port wakes it at once. Without this each server adds 2 s to the operator's
// shutdown (and to every test that starts one).
class AcceptLoopWaker {
 public:
  AcceptLoopWaker(const std::string& host, int port)
      : thread_([host, port](const std::stop_token& stop) {
          while (!stop.stop_requested()) {
            connectOnce(host, port);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }) {}

 private:
  static void connectOnce(const std::string& host, int port) {
    sockaddr_storage address{};
    socklen_t length = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(static_cast<std::uint16_t>(port));
      length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(static_cast<std::uint16_t>(port));
      length = sizeof(sockaddr_in6);
    } else {
      return;  // a host name: the server stops at its next poll timeout instead
    }
    const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    // A failed attempt costs nothing: the server then stops at its next poll timeout.
    static_cast<void>(connect(fd, reinterpret_cast<const sockaddr*>(&address), length));
    close(fd);
  }

  std::jthread thread_;
};

// Civetweb reports why it could not start (a bind failure, mostly) through log_message on the
// thread that starts it, in more detail than mg_start2's error text and where the Exposer gives
// no other way to learn it.
thread_local std::string startError;

int captureStartError(const mg_connection*, const char* message) {
  if (startError.empty()) startError = message;
  return 1;  // handled: civetweb need not log it elsewhere
}

void respond(mg_connection* connection, int code, std::string_view reason, std::string_view body,
             std::string_view extraHeaders = "") {
  std::string head = "HTTP/1.1 " + std::to_string(code) + " ";
  head += reason;
  head += "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ";
  head += std::to_string(body.size());
  head += "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  head += extraHeaders;
  head += "\r\n";
  mg_write(connection, head.data(), head.size());
  const char* method = mg_get_request_info(connection)->request_method;
  if (method == nullptr || std::strcmp(method, "HEAD") != 0) {
    mg_write(connection, body.data(), body.size());
  }
}

struct Probe {
  std::string path;
  std::function<Status()> check;
};

int serveProbe(mg_connection* connection, void* data) {
  const auto& probe = *static_cast<const Probe*>(data);
  const mg_request_info* request = mg_get_request_info(connection);
  // Civetweb also routes "/healthz/anything" here.
  if (request->local_uri == nullptr || probe.path != request->local_uri) {
    respond(connection, 404, "Not Found", "not found\n");
    return 404;
  }
  if (request->request_method == nullptr || std::strcmp(request->request_method, "GET") != 0) {
    respond(connection, 405, "Method Not Allowed", "only GET\n", "Allow: GET\r\n");
    return 405;
  }
  Status status;
  try {
    status = probe.check();
  } catch (const std::exception& e) {
    // An exception must not unwind through civetweb's C frames.
    status = internalError(std::string("probe threw: ") + e.what());
  }
  if (status.isOk()) {
    respond(connection, 200, "OK", "ok");
    return 200;
  }
  respond(connection, 503, "Service Unavailable", status.message());
  return 503;
}

Status bindFailure(std::string_view what, const std::string& address, std::string_view why) {
  std::string message = std::string(what) + " address \"" + address + "\": ";
  message += why.empty() ? std::string_view("the server did not start") : why;
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
    message.pop_back();
  }
  return {StatusCode::kUnavailable, std::move(message)};
}

}  // namespace

struct HttpEndpoints::Impl {
  std::shared_ptr<prometheus::Registry> registry;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string metricsHost;
  int metricsPort = 0;

  // The probe server's handlers point into these, so they live until it has stopped.
  Probe healthz;
  Probe readyz;
  mg_context* probeServer = nullptr;
  std::string probeHost;
  int probePort = 0;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;
  ~Impl() {
    if (probeServer != nullptr) {
      const AcceptLoopWaker waker(probeHost, probePort);
      mg_stop(probeServer);
    }
    if (exposer != nullptr) {
      const AcceptLoopWaker waker(metricsHost, metricsPort);
      exposer.reset();
    }
  }

  Status startMetrics(const std::string& address, const ListenAddress& listen) {
    CivetCallbacks callbacks;
    callbacks.log_message = captureStartError;
    startError.clear();
    try {
      exposer = std::make_unique<prometheus::Exposer>(
          std::vector<std::string>{"listening_ports", listen.listeningPorts, "num_threads",
                                   kServerThreads},
          &callbacks);
    } catch (const std::exception& e) {
      const std::string why = startError.empty() ? e.what() : startError;
      startError.clear();
      return bindFailure("metrics", address, why);
    }
    startError.clear();
    exposer->RegisterCollectable(registry);
    const std::vector<int> bound = exposer->GetListeningPorts();
    metricsPort = bound.empty() ? 0 : bound.front();
    metricsHost = listen.loopbackHost;
    return Status::ok();
  }

  Status startProbes(const std::string& address, const ListenAddress& listen) {
    std::array<const char*, 5> options = {"listening_ports", listen.listeningPorts.c_str(),
                                          "num_threads", kServerThreads, nullptr};
    mg_callbacks callbacks{};
    callbacks.log_message = captureStartError;
    mg_init_data init{};
    init.callbacks = &callbacks;
    init.configuration_options = options.data();
    std::array<char, 256> why{};
    mg_error_data error{};
    error.text = why.data();
    error.text_buffer_size = why.size();
    startError.clear();
    probeServer = mg_start2(&init, &error);
    // The logged cause ("cannot bind to ...: Address already in use") beats mg_start2's summary.
    const std::string logged = std::exchange(startError, {});
    if (probeServer == nullptr) {
      return bindFailure("probe", address, logged.empty() ? why.data() : logged);
    }
    mg_set_request_handler(probeServer, healthz.path.c_str(), serveProbe, &healthz);
    mg_set_request_handler(probeServer, readyz.path.c_str(), serveProbe, &readyz);
    std::array<mg_server_port, 4> bound{};
    if (mg_get_server_ports(probeServer, static_cast<int>(bound.size()), bound.data()) > 0) {
      probePort = bound.front().port;
    }
    probeHost = listen.loopbackHost;
    return Status::ok();
  }
};

HttpEndpoints::HttpEndpoints(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpEndpoints::~HttpEndpoints() = default;

StatusOr<std::unique_ptr<HttpEndpoints>> HttpEndpoints::start(const EndpointsOptions& options,
                                                              const OperatorMetrics& metrics,
                                                              std::function<Status()> healthy,
                                                              std::function<Status()> ready) {
  auto impl = std::make_unique<Impl>();
  impl->registry = std::static_pointer_cast<prometheus::Registry>(metrics.registry());
  impl->healthz = {"/healthz", std::move(healthy)};
  impl->readyz = {"/readyz", std::move(ready)};
  if (!impl->healthz.check || !impl->readyz.check) {
    return invalidArgument("HttpEndpoints needs both a liveness and a readiness check");
  }
  if (!options.metricsAddress.empty()) {
    StatusOr<ListenAddress> listen = parseAddress(options.metricsAddress);
    if (!listen) return invalidArgument("metrics " + listen.status().message());
    if (Status status = impl->startMetrics(options.metricsAddress, *listen); !status.isOk()) {
      return status;
    }
  }
  if (!options.probeAddress.empty()) {
    StatusOr<ListenAddress> listen = parseAddress(options.probeAddress);
    if (!listen) return invalidArgument("probe " + listen.status().message());
    if (Status status = impl->startProbes(options.probeAddress, *listen); !status.isOk()) {
      return status;
    }
  }
  return std::unique_ptr<HttpEndpoints>(new HttpEndpoints(std::move(impl)));
}

int HttpEndpoints::metricsPort() const { return impl_->metricsPort; }
int HttpEndpoints::probePort() const { return impl_->probePort; }

}  // namespace kubeslurm::metrics

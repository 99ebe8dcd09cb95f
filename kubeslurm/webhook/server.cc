#include "kubeslurm/webhook/server.h"

#include <atomic>
#include <exception>
#include <fstream>
#include <utility>

#include <cpprest/http_listener.h>
#include <openssl/ssl.h>

namespace kubeslurm::webhook {
namespace {

namespace http = web::http;
using http::experimental::listener::http_listener;
using http::experimental::listener::http_listener_config;

bool readable(const std::string& path) { return std::ifstream(path).good(); }

class CpprestServer final : public Server {
 public:
  CpprestServer(ServerOptions options, std::map<std::string, Handler> handlers)
      : options_(std::move(options)), handlers_(std::move(handlers)) {}

  ~CpprestServer() override { stop(); }

  Status open() {
    http_listener_config config;
    const std::string cert = options_.certificateFile;
    const std::string key = options_.privateKeyFile;
    config.set_ssl_context_callback([cert, key](boost::asio::ssl::context& context) {
      context.set_options(
          boost::asio::ssl::context::default_workarounds | boost::asio::ssl::context::no_sslv2 |
          boost::asio::ssl::context::no_sslv3 | boost::asio::ssl::context::no_tlsv1 |
          boost::asio::ssl::context::no_tlsv1_1);
      context.use_certificate_chain_file(cert);
      context.use_private_key_file(key, boost::asio::ssl::context::pem);
    });
    config.set_timeout(std::chrono::seconds(30));
    const std::string uri = "https://" + options_.host + ":" + std::to_string(options_.port) + "/";
    try {
      listener_ = std::make_unique<http_listener>(uri, config);
      listener_->support([this](const http::http_request& request) { serve(request); });
      listener_->open().wait();
    } catch (const std::exception& e) {
      listener_.reset();
      return {StatusCode::kUnavailable,
              "admission webhook on " + uri + ": " + std::string(e.what())};
    }
    return Status::ok();
  }

  void stop() override {
    if (!listener_) return;
    try {
      listener_->close().wait();
    } catch (const std::exception&) {  // closing a listener that failed: nothing to free
    }
    listener_.reset();
  }

  std::uint64_t answered() const override { return answered_; }
  std::uint64_t rejected() const override { return rejected_; }

 private:
  // Refused before any handler: counted, and answered in plain text.
  void reject(http::http_request& request, http::status_code code, const std::string& why) {
    ++rejected_;
    send(request, code, why, "text/plain; charset=utf-8");
  }

  void serve(http::http_request request) {
    try {
      if (request.method() != http::methods::POST) {
        reject(request, http::status_codes::MethodNotAllowed, "POST an AdmissionReview");
        return;
      }
      const auto handler = handlers_.find(request.relative_uri().path());
      if (handler == handlers_.end()) {
        reject(request, http::status_codes::NotFound, "no webhook at this path");
        return;
      }
      const std::uint64_t length = request.headers().content_length();
      if (length == 0) {
        reject(request, http::status_codes::LengthRequired, "a Content-Length is required");
        return;
      }
      if (length > options_.limits.maxBytes) {
        reject(request, http::status_codes::RequestEntityTooLarge, "the review is too large");
        return;
      }
      if (inFlight_.fetch_add(1) >= options_.maxInFlight) {
        --inFlight_;
        reject(request, http::status_codes::TooManyRequests, "too many reviews at once");
        return;
      }
      request.extract_string(true).then(
          [this, request, run = handler->second](pplx::task<std::string> body) mutable {
            answer(request, run, body);
          });
    } catch (const std::exception& e) {
      reject(request, http::status_codes::BadRequest, e.what());
    }
  }

  // The review's slot is given back before its reply goes out: once the caller has its answer
  // the server may be destroyed (a stopping operator's last review), so nothing after the reply
  // may touch it.
  void answer(http::http_request& request, const Handler& run, pplx::task<std::string>& body) {
    std::string encoded;
    std::string refusal;
    try {
      const std::string text = body.get();
      auto review = decodeAdmissionReview(text, options_.limits);
      if (review.isOk()) {
        AdmissionResponse response;
        try {
          response = run(*review);
        } catch (const std::exception& e) {
          response =
              refuse(std::string("kubeslurm admission webhook: ") + e.what(), 500, "InternalError");
        }
        encoded = encodeAdmissionReview(*review, response);
        ++answered_;
      } else {
        refusal = review.status().toString();
      }
    } catch (const std::exception& e) {
      refusal = e.what();
    }
    --inFlight_;
    if (encoded.empty()) {
      reject(request, http::status_codes::BadRequest, refusal);
      return;
    }
    send(request, http::status_codes::OK, encoded, "application/json");
  }

  static void send(http::http_request& request, http::status_code code, const std::string& body,
                   const std::string& contentType) {
    request.reply(code, body, contentType).then([](const pplx::task<void>& sent) {
      try {
        sent.get();
      } catch (const std::exception&) {  // the caller gave up waiting
      }
    });
  }

  ServerOptions options_;
  std::map<std::string, Handler> handlers_;
  std::unique_ptr<http_listener> listener_;
  std::atomic<std::uint32_t> inFlight_{0};
  std::atomic<std::uint64_t> answered_{0};
  std::atomic<std::uint64_t> rejected_{0};
};

}  // namespace

StatusOr<std::unique_ptr<Server>> startServer(const ServerOptions& options,
                                              std::map<std::string, Handler> handlers) {
  for (const std::string& file : {options.certificateFile, options.privateKeyFile}) {
    if (file.empty() || !readable(file)) {
      return invalidArgument("admission webhook: cannot read " +
                             (file.empty() ? std::string("the certificate or key") : file));
    }
  }
  // OpenSSL's own exit handler frees its locks before cpprestsdk's thread pool joins; a
  // connection that pool frees after that waits on a freed lock forever, so a process that
  // served TLS hung at exit. The first initialisation decides: leave OpenSSL to the kernel.
  OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, nullptr);
  auto server = std::make_unique<CpprestServer>(options, std::move(handlers));
  if (Status opened = server->open(); !opened.isOk()) return opened;
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace kubeslurm::webhook

// The webhook's HTTPS endpoint (kubeslurm/webhook/server.h), on 127.0.0.1 with a certificate
// made for the test: reviews are answered; what is not a review, too large, or too much at once
// is turned away before a handler; a handler that throws is that review's refusal.
#include "kubeslurm/webhook/server.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <cpprest/http_client.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kubeslurm::webhook {
namespace {

namespace fs = std::filesystem;
namespace http = web::http;

std::uint16_t freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);  // NOLINT
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);  // NOLINT
  const std::uint16_t port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

class WebhookServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("kubeslurm-webhook-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string command =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
        (dir_ / "tls.key").string() + " -out " + (dir_ / "tls.crt").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);  // NOLINT(concurrency-mt-unsafe)
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void start(Handler handler, std::uint32_t maxInFlight = 8) {
    ServerOptions options;
    options.host = "127.0.0.1";
    options.port = freePort();
    options.certificateFile = (dir_ / "tls.crt").string();
    options.privateKeyFile = (dir_ / "tls.key").string();
    options.limits.maxBytes = 64 << 10;
    options.maxInFlight = maxInFlight;
    auto started = startServer(options, {{"/validate/slurmjobs", std::move(handler)}});
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    server_ = std::move(started).value();
    url_ = "https://127.0.0.1:" + std::to_string(options.port);
  }

  std::pair<int, std::string> post(const std::string& path, const std::string& body) {
    http::client::http_client_config config;
    config.set_validate_certificates(false);
    http::client::http_client client(url_, config);
    http::http_request request(http::methods::POST);
    request.set_request_uri(path);
    request.set_body(body, "application/json");
    const http::http_response response = client.request(request).get();
    return {response.status_code(), response.extract_string(true).get()};
  }

  static std::string review(const std::string& uid) {
    return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
           uid + R"(","operation":"CREATE","userInfo":{"username":"alice"}}})";
  }

  static fs::path dir_;
  std::unique_ptr<Server> server_;
  std::string url_;
};

fs::path WebhookServer::dir_;

TEST_F(WebhookServer, AnswersAReviewOverTls) {
  start([](const AdmissionRequest& request) {
    return request.user.user == "alice" ? refuse("Invalid qos specification") : allow();
  });
  const auto [code, body] = post("/validate/slurmjobs", review("r-7"));
  EXPECT_EQ(code, 200);
  const Json answer = Json::parse(body);
  EXPECT_EQ(answer["response"]["uid"], "r-7");
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_EQ(answer["response"]["status"]["message"], "Invalid qos specification");
  EXPECT_EQ(server_->answered(), 1U);
}

TEST_F(WebhookServer, TurnsAwayWhatIsNotAReviewBeforeAnyHandler) {
  std::atomic<int> calls{0};
  start([&calls](const AdmissionRequest&) {
    ++calls;
    return allow();
  });
  EXPECT_EQ(post("/validate/slurmjobs", "not json").first, 400);
  EXPECT_EQ(post("/mutate/nothing-here", review("x")).first, 404);
  EXPECT_EQ(post("/validate/slurmjobs", std::string(70 << 10, ' ')).first, 413);
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "[";
  EXPECT_EQ(post("/validate/slurmjobs", deep).first, 400);
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(server_->rejected(), 4U);
}

TEST_F(WebhookServer, AHandlerThatThrowsRefusesThatReviewOnly) {
  start([](const AdmissionRequest& request) -> AdmissionResponse {
    if (request.uid == "bad") throw std::runtime_error("boom");
    return allow();
  });
  const auto [code, body] = post("/validate/slurmjobs", review("bad"));
  EXPECT_EQ(code, 200);
  EXPECT_EQ(Json::parse(body)["response"]["allowed"], false);
  EXPECT_NE(body.find("boom"), std::string::npos);
  EXPECT_EQ(Json::parse(post("/validate/slurmjobs", review("good")).second)["response"]["allowed"],
            true);
}

TEST_F(WebhookServer, AtMostSoManyReviewsAtOnce) {
  std::atomic<bool> release{false};
  std::atomic<int> inside{0};
  start(
      [&](const AdmissionRequest&) {
        ++inside;
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return allow();
      },
      /*maxInFlight=*/1);
  std::thread first([&] { (void)post("/validate/slurmjobs", review("1")); });
  while (inside == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(post("/validate/slurmjobs", review("2")).first, 429);
  release = true;
  first.join();
}

TEST(WebhookServerStart, NeedsItsCertificateAndKey) {
  ServerOptions options;
  options.certificateFile = "/nonexistent/tls.crt";
  options.privateKeyFile = "/nonexistent/tls.key";
  EXPECT_EQ(startServer(options, {}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubeslurm::webhook

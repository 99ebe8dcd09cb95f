// Leader election between two real processes (tools/lease_candidate.cc) on a Lease of the
// sandbox's kube-apiserver v1.20.2. Durations: 3 s lease, 2 s renew deadline, 0.5 s retry.
// Pinned: exactly one writer (DESIGN.md invariant 2); after SIGKILL of the leader the other
// takes over only once the lease has expired by its own observation, within leaseDuration +
// retryPeriod * (1 + jitter) plus slack (client-go's acquire loop); after SIGTERM the leader
// releases (ReleaseOnCancel) and the other takes over within about one retry period; the two
// candidates' write ranges never overlap. Split brain, in one process: the leader cut off from
// the Lease while its writes crawl through a slow network, none landing after the rival's first.
#include "kubeslurm/kube/leader_election.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kubeslurm/api/core_v1.h"
#include "kubeslurm/kube/client.h"
#include "tests/integration/support/fault_proxy.h"
#include "tests/integration/support/sandbox_env.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn wants it

namespace kubeslurm::kube {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing_support::SandboxEnvironment;

struct Line {
  std::string identity;
  long long millis = 0;  // CLOCK_MONOTONIC, as the candidates write it
};

long long monotonicMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<Line> readLines(const fs::path& file) {
  std::vector<Line> lines;
  std::ifstream in(file);
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream fields(text);
    Line line;
    if (fields >> line.identity >> line.millis) lines.push_back(line);
  }
  return lines;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LeaderElectionIT : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(SandboxEnvironment::env().empty()) << "sandbox did not start";
    auto made = Client::create(testing_support::sandboxAdminConfig());
    ASSERT_TRUE(made.isOk()) << made.status().toString();
    client_ = std::move(made).value();
    ns_ = "le-" + std::to_string(counter_++) + "-" + std::to_string(::getpid());
    const Json nsObject = {
        {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    auto created = client_->create(resources::namespaces(), "", nsObject);
    ASSERT_TRUE(created.isOk()) << created.status().toString();
    dir_ = fs::temp_directory_path() / ns_;
    fs::create_directories(dir_);
    file_ = dir_ / "writes.txt";
  }

  void TearDown() override {
    for (const pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (HasFailure()) {
      for (const auto& log : logs_)
        (void)std::fprintf(stderr, "--- %s\n%s", log.c_str(), slurp(log).c_str());
    }
    if (client_) (void)client_->remove(resources::namespaces(), "", ns_, {});
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  pid_t startCandidate(const std::string& identity) {
    const std::string tool = std::string(KUBE_IT_TOOL_DIR) + "/kube_it_lease_candidate";
    const fs::path log = dir_ / (identity + ".log");
    logs_.push_back(log);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<std::string> args = {
        tool, SandboxEnvironment::env()["KUBECONFIG"], ns_, "lock", identity, file_.string()};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, tool.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "spawn " << tool;
    if (rc == 0) pids_.push_back(pid);
    return pid;
  }

  // Waits up to `timeout` for a line by `identity`; the first such line.
  std::optional<Line> waitForWriter(const std::string& identity, std::chrono::milliseconds timeout,
                                    long long after = 0) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      for (const Line& line : readLines(file_)) {
        if (line.identity == identity && line.millis > after) return line;
      }
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }

  void forget(pid_t pid) { std::erase(pids_, pid); }

  // The lines form one run per candidate: nobody wrote again after another started, and each
  // run's time range ends before the next begins.
  static void expectNoOverlap(const std::vector<Line>& lines) {
    std::vector<std::string> runs;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (runs.empty() || runs.back() != lines[i].identity) runs.push_back(lines[i].identity);
      if (i > 0) {
        EXPECT_GE(lines[i].millis, lines[i - 1].millis) << "line " << i;
      }
    }
    EXPECT_LE(runs.size(), 2U) << "writers alternated";
  }

  std::unique_ptr<Client> client_;
  std::string ns_;
  fs::path dir_;
  fs::path file_;
  std::vector<pid_t> pids_;
  std::vector<fs::path> logs_;
  static inline int counter_ = 0;
};

TEST_F(LeaderElectionIT, KilledLeaderIsReplacedAfterTheLeaseExpiresAndWritersNeverOverlap) {
  const pid_t a = startCandidate("alpha");
  ASSERT_TRUE(waitForWriter("alpha", 10s)) << "alpha never led";
  const pid_t b = startCandidate("beta");
  ASSERT_GT(b, 0);
  std::this_thread::sleep_for(2500ms);  // beta campaigns against a live lease
  for (const Line& line : readLines(file_)) ASSERT_EQ(line.identity, "alpha");

  const long long killedAt = monotonicMillis();
  ASSERT_EQ(::kill(a, SIGKILL), 0);
  ::waitpid(a, nullptr, 0);
  forget(a);
  const auto first = waitForWriter("beta", 10s);
  ASSERT_TRUE(first) << "beta never took over";
  const long long takeover = first->millis - killedAt;
  std::printf("beta's first write %lld ms after alpha's SIGKILL\n", takeover);
  // alpha renewed at most 0.5 s before it died and beta saw that renewal, so beta must wait
  // most of the 3 s lease...
  EXPECT_GE(takeover, 2000) << "beta took an unexpired lease";
  // ...and no more than: beta sees alpha's last renewal up to one jittered retry (0.5 s * 2.2)
  // late, waits the 3 s lease, then up to one more retry, plus slack for requests.
  EXPECT_LE(takeover, 3000 + 2 * 1100 + 600);

  const auto lines = readLines(file_);
  expectNoOverlap(lines);
  auto lease = client_->get(resources::leases(), ns_, "lock");
  ASSERT_TRUE(lease.isOk()) << lease.status().toString();
  auto decoded = api::decodeLease(*lease);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->holderIdentity, "beta");
  EXPECT_EQ(decoded->leaseTransitions, 1);
  EXPECT_EQ(decoded->leaseDurationSeconds, 3);
}

TEST_F(LeaderElectionIT, TerminatedLeaderReleasesAndTheOtherTakesOverAtOnce) {
  const pid_t a = startCandidate("alpha");
  ASSERT_TRUE(waitForWriter("alpha", 10s)) << "alpha never led";
  startCandidate("beta");
  std::this_thread::sleep_for(1500ms);
  for (const Line& line : readLines(file_)) ASSERT_EQ(line.identity, "alpha");

  const long long terminatedAt = monotonicMillis();
  ASSERT_EQ(::kill(a, SIGTERM), 0);
  int status = -1;
  ASSERT_EQ(::waitpid(a, &status, 0), a);
  forget(a);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  const auto first = waitForWriter("beta", 10s);
  ASSERT_TRUE(first) << "beta never took over";
  std::printf("beta's first write %lld ms after alpha's SIGTERM\n", first->millis - terminatedAt);
  // Released: no waiting out the 3 s lease, only beta's next retry (<= 1.1 s with jitter).
  EXPECT_LE(first->millis - terminatedAt, 1800);

  const auto lines = readLines(file_);
  expectNoOverlap(lines);
  long long lastAlpha = 0;
  for (const Line& line : lines) {
    if (line.identity == "alpha") lastAlpha = line.millis;
  }
  EXPECT_LT(lastAlpha, first->millis);
  auto lease = client_->get(resources::leases(), ns_, "lock");
  ASSERT_TRUE(lease.isOk());
  auto decoded = api::decodeLease(*lease);
  ASSERT_TRUE(decoded.isOk());
  EXPECT_EQ(decoded->holderIdentity, "beta");
}

// One replica in a thread: an elector on its own Lease client, and a writer on its own client
// whose every write ends at the elector's fence (as operator/main.cc wires them). While the
// fence is open the writer creates ConfigMaps <identity>-<n>, one after another.
class Replica {
 public:
  Replica(const std::string& ns, const std::string& identity, const ClientConfig& leaseConfig,
          const ClientConfig& writeConfig, bool fenced = true)
      : ns_(ns), identity_(identity) {
    auto lease = Client::create(leaseConfig);
    EXPECT_TRUE(lease.isOk()) << lease.status().toString();
    if (!lease.isOk()) return;
    leaseClient_ = std::move(lease).value();
    ClientOptions options;
    options.backoffBase = 50ms;
    if (fenced) {
      options.writeFence = [this]() -> std::optional<std::chrono::steady_clock::time_point> {
        return elector_ ? elector_->fenceEnd() : std::nullopt;
      };
    }
    auto writer = Client::create(writeConfig, options);
    EXPECT_TRUE(writer.isOk()) << writer.status().toString();
    if (!writer.isOk()) return;
    writer_ = std::move(writer).value();
    LeaderElectionConfig config;
    config.leaseNamespace = ns;
    config.leaseName = "split";
    config.identity = identity;
    config.leaseDuration = 3s;
    config.renewDeadline = 2s;
    config.retryPeriod = 400ms;
    config.releaseOnCancel = false;  // a partitioned leader cannot release anyway
    auto elector = LeaderElector::create(*leaseClient_, *leaseClient_, config);
    EXPECT_TRUE(elector.isOk()) << elector.status().toString();
    if (!elector.isOk()) return;
    elector_ = std::move(elector).value();
    electing_ = std::thread([this] { (void)elector_->run(); });
    writing_ = std::thread([this] { writeWhileLeading(); });
  }
  ~Replica() { stop(); }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  void stop() {
    done_ = true;
    if (elector_) elector_->stop();
    if (electing_.joinable()) electing_.join();
    if (writing_.joinable()) writing_.join();
  }
  int started() const { return started_.load(); }  // writes begun so far
  int landed() const { return landed_.load(); }    // writes the server answered with success
  bool ready() const { return elector_ != nullptr; }

 private:
  void writeWhileLeading() {
    while (!done_) {
      if (!elector_->canWrite()) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      const std::string name = identity_ + "-" + std::to_string(started_.load());
      ++started_;
      auto created = writer_->create(resources::configMaps(), ns_,
                                     Json{{"apiVersion", "v1"},
                                          {"kind", "ConfigMap"},
                                          {"metadata", {{"name", name}}},
                                          {"data", {{"writer", identity_}}}});
      if (created.isOk()) ++landed_;
      std::this_thread::sleep_for(20ms);
    }
  }

  std::string ns_;
  std::string identity_;
  std::unique_ptr<Client> leaseClient_;
  std::unique_ptr<Client> writer_;
  std::unique_ptr<LeaderElector> elector_;
  std::atomic<bool> done_{false};
  std::atomic<int> started_{0};
  std::atomic<int> landed_{0};
  std::thread electing_;
  std::thread writing_;
};

// The leader is cut off from its Lease (every renewal answered 503) while the API server, slow
// (300 ms a request), answers each of its writes 429 Retry-After: 1, until the rival has taken
// over and written; then the network heals. A retry that waited out the outage would land now,
// after the rival's writes: split brain. The fence ends each write at the renew deadline, before
// the lease can expire, so in etcd's own order (resourceVersion) every write of the deposed
// leader is before the rival's first. (Without the fence, alpha's retries land after beta's.)
TEST_F(LeaderElectionIT, ADeposedLeadersRetriesNeverLandAfterTheNewLeadersWrites) {
  auto proxyOptions = testing_support::FaultProxy::sandboxOptions();
  ASSERT_TRUE(proxyOptions.isOk()) << proxyOptions.status().toString();
  auto leaseProxy = testing_support::FaultProxy::start(*proxyOptions);
  ASSERT_TRUE(leaseProxy.isOk()) << leaseProxy.status().toString();
  auto writeProxy = testing_support::FaultProxy::start(*proxyOptions);
  ASSERT_TRUE(writeProxy.isOk()) << writeProxy.status().toString();

  auto to = [](const std::string& server) {
    ClientConfig config;
    config.server = server;
    config.caFile = SandboxEnvironment::env()["KUBESLURM_CA_FILE"];
    config.token = SandboxEnvironment::env()["KUBESLURM_TOKEN"];
    return config;
  };
  auto through = [&](const testing_support::FaultProxy& proxy) { return to(proxy.url()); };
  const ClientConfig straight = to(SandboxEnvironment::env()["KUBESLURM_APISERVER"]);

  Replica alpha(ns_, "alpha", through(**leaseProxy), through(**writeProxy));
  ASSERT_TRUE(alpha.ready());
  for (int i = 0; i < 200 && alpha.started() < 5; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_GE(alpha.started(), 5) << "alpha never led";
  Replica beta(ns_, "beta", straight, straight);
  ASSERT_TRUE(beta.ready());
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(beta.started(), 0) << "beta wrote while alpha held the lease";

  // The partition: alpha's renewals fail, its writes in flight are slow but arrive.
  const int landedBeforeCut = alpha.landed();
  (*writeProxy)->setDelay(300ms);
  (*writeProxy)->setFailureRate(1.0, 429);
  (*leaseProxy)->setFailureRate(1.0, 503);
  const int beforeCut = alpha.started();
  for (int i = 0; i < 200 && beta.landed() < 3; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_GE(beta.landed(), 3) << "beta never took over";
  (*writeProxy)->clearFaults();
  std::this_thread::sleep_for(2500ms);  // a retry still waiting would land now
  // A write was under way through the outage (the writer never idles while it may write).
  EXPECT_GT(alpha.started(), landedBeforeCut) << "alpha had no write in the outage: nothing shown";
  alpha.stop();
  beta.stop();

  auto listed = client_->list(resources::configMaps(), ns_, {});
  ASSERT_TRUE(listed.isOk()) << listed.status().toString();
  long long lastAlpha = 0;
  long long firstBeta = 0;
  int alphaLanded = 0;
  for (const Json& item : listed->at("items")) {
    const Json& meta = item.at("metadata");
    const std::string writer = item.value("data", Json::object()).value("writer", "");
    const long long version = std::stoll(meta.value("resourceVersion", "0"));
    if (writer == "alpha") {
      ++alphaLanded;
      lastAlpha = std::max(lastAlpha, version);
    } else if (writer == "beta") {
      firstBeta = firstBeta == 0 ? version : std::min(firstBeta, version);
    }
  }
  std::printf("alpha began %d writes (%d after the cut), %d landed (%d after); beta wrote %d\n",
              alpha.started(), alpha.started() - beforeCut, alphaLanded,
              alpha.landed() - landedBeforeCut, beta.started());
  ASSERT_GT(firstBeta, 0);
  EXPECT_LT(lastAlpha, firstBeta) << "a write of the deposed leader landed after the new leader's";
}

}  // namespace
}  // namespace kubeslurm::kube

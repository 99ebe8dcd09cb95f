// The query API's gRPC server (kubeslurm/rpc/server.h) on 127.0.0.1 over TLS, with the real
// client: who may call, what a caller can cost (per-peer rate before any token review, request
// size, --test-only plans at once), and that --test-only plans for the authenticated caller.
#include "kubeslurm/rpc/server.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <unistd.h>

#include "kubeslurm/accounting/sqlite_store.h"
#include "kubeslurm/rpc/client.h"
#include "tests/unit/rpc/test_certificate.h"

namespace kubeslurm::rpc {
namespace {

namespace fs = std::filesystem;
using access::Identity;
using access::Permission;

// Alice's token is good and she may do anything in team-a; everything else is refused.
class FakeAuthorizer final : public access::Authorizer {
 public:
  std::atomic<int> reviews{0};
  StatusOr<Identity> authenticate(const std::string& token) override {
    ++reviews;
    if (token != "alice-token") return Status(StatusCode::kUnauthenticated, "invalid token");
    return Identity{"oidc:alice", "u-1", {"team-a"}, {}};
  }
  Status authorize(const Identity&, const Permission& permission) override {
    if (permission.namespaceName == "team-a" || permission.namespaceName.empty()) {
      return Status::ok();
    }
    return {StatusCode::kPermissionDenied, "not in " + permission.namespaceName};
  }
};

class QueryServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tls_.make("kubeslurm-rpc-"); }
  static void TearDownTestSuite() { tls_.remove(); }

  void start(ServerOptions options, TestOnlyHandler testOnly = nullptr,
             RecordQuery records = nullptr, std::shared_ptr<QueryState> state = nullptr) {
    options.address = "127.0.0.1:0";
    options.certificatePem = tls_.certificatePem();
    options.privateKeyPem = tls_.privateKeyPem();
    if (!testOnly) {
      testOnly = [](const Identity&, const std::string&, const nlohmann::json&) {
        return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{});
      };
    }
    if (!state) state = std::make_shared<QueryState>();
    state->planTime = 1795000000;
    auto started = startQueryServer(
        options, [state] { return state; }, std::move(testOnly), authorizer, std::move(records));
    ASSERT_TRUE(started.isOk()) << started.status().toString();
    server = std::move(started).value();
  }

  std::unique_ptr<QueryClient> client(const std::string& token = "alice-token") const {
    ClientOptions options;
    options.address = "127.0.0.1:" + std::to_string(server->port());
    options.caPem = tls_.certificatePem();
    options.serverNameOverride = "localhost";
    options.bearerToken = token;
    return connectQueryClient(options);
  }

  static inline testing::TestCertificate tls_;
  FakeAuthorizer authorizer;
  std::unique_ptr<QueryServer> server;
};

TEST_F(QueryServerTest, AnswersTheAuthenticatedAndRefusesTheRest) {
  start({});
  auto answer = client()->listPendingJobs("team-a");
  ASSERT_TRUE(answer.isOk()) << answer.status().toString();
  EXPECT_EQ(answer->planTime, 1795000000);
  EXPECT_EQ(client("forged")->listPendingJobs("team-a").status().code(),
            StatusCode::kUnauthenticated);
  EXPECT_EQ(client("")->listPendingJobs("team-a").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(client()->listPendingJobs("team-b").status().code(), StatusCode::kPermissionDenied);
}

// sprio's rows of a job of several partitions travel with the job, in the job's order.
TEST_F(QueryServerTest, AJobsPriorityInEachPartitionReachesTheClient) {
  auto state = std::make_shared<QueryState>();
  PendingJob job;
  job.jobId = 7;
  job.namespaceName = "team-a";
  job.partition = "spare";
  job.priority.partition = 1000;
  job.priority.priority = 2010;
  job.partitionPriorities.push_back({"spare", job.priority});
  job.partitionPriorities.push_back({"gpu", job.priority});
  job.partitionPriorities.back().priority.partition = 500;
  job.partitionPriorities.back().priority.priority = 1510;
  state->pending.push_back(job);
  start({}, nullptr, nullptr, state);
  auto answer = client()->listPendingJobs("team-a");
  ASSERT_TRUE(answer.isOk()) << answer.status().toString();
  ASSERT_EQ(answer->jobs.size(), 1U);
  const std::vector<PartitionPriority>& rows = answer->jobs[0].partitionPriorities;
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].partition, "spare");
  EXPECT_EQ(rows[1].partition, "gpu");
  EXPECT_EQ(rows[1].priority.partition, 500);
  EXPECT_EQ(rows[1].priority.priority, 1510U);
}

// Security review H3: a flood of calls with made-up tokens cost one TokenReview each. Past its
// burst, a peer is refused before its token is looked at.
TEST_F(QueryServerTest, AFloodFromOnePeerIsRefusedBeforeAnyReview) {
  ServerOptions options;
  options.peerCallsPerSecond = 0.001;  // no refill during the test
  options.peerBurst = 5;
  start(options);
  auto forged = client("forged");
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(forged->listPendingJobs("team-a").status().code(), StatusCode::kUnauthenticated);
  }
  for (int i = 0; i < 50; ++i) {
    const Status refused = forged->listPendingJobs("team-a").status();
    EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
    EXPECT_NE(refused.message().find("too many requests"), std::string::npos);
  }
  EXPECT_EQ(authorizer.reviews.load(), 5);
}

TEST_F(QueryServerTest, ARequestLargerThanTheLimitIsRefusedUnread) {
  ServerOptions options;
  options.maxReceiveBytes = 64 << 10;
  std::atomic<int> plans{0};
  start(options, [&](const Identity&, const std::string&, const nlohmann::json&) {
    ++plans;
    return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{});
  });
  const auto refused = client()->testOnly("team-a", std::string(128 << 10, ' '));
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(plans.load(), 0);
  EXPECT_TRUE(client()->testOnly("team-a", "{}").isOk());
}

// Security review C3: ~200 KB nested 100 000 deep overflowed a gRPC thread's stack in the
// recursive decode. The server parses with a depth limit; the handler never sees such a tree.
TEST_F(QueryServerTest, TestOnlyRefusesDeepOrBrokenJsonBeforeThePlan) {
  std::atomic<int> plans{0};
  start({}, [&](const Identity&, const std::string&, const nlohmann::json&) {
    ++plans;
    return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{});
  });
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const Status refused = client()->testOnly("team-a", deep).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "the SlurmJob: JSON nested deeper than 100 levels");
  EXPECT_EQ(client()->testOnly("team-a", "{\"spec\":").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(plans.load(), 0);
}

// The handler learns who asked from the token, never from the job: the job's spec.user is the
// submitter's to write, and the operator stamps it from this identity.
TEST_F(QueryServerTest, TestOnlyPlansForTheAuthenticatedCaller) {
  Identity seen;
  start({}, [&](const Identity& caller, const std::string& ns, const nlohmann::json& job) {
    seen = caller;
    EXPECT_EQ(ns, "team-a");
    EXPECT_EQ(job["spec"]["user"], "root");  // what the job says, for the operator to overwrite
    return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{77, 1795000000, 8, "gpu-1", "train"});
  });
  auto answer = client()->testOnly("team-a", R"({"spec":{"user":"root"}})");
  ASSERT_TRUE(answer.isOk()) << answer.status().toString();
  EXPECT_EQ(answer->jobId, 77);
  EXPECT_EQ(seen.user, "oidc:alice");
  EXPECT_EQ(client()->testOnly("team-b", "{}").status().code(), StatusCode::kPermissionDenied);
}

// Plans are CPU-heavy: at most maxConcurrentTestOnly run at once; the next caller is told to
// try again rather than queued.
TEST_F(QueryServerTest, OnlySoManyTestOnlyPlansAtOnce) {
  ServerOptions options;
  options.maxConcurrentTestOnly = 2;
  std::mutex mutex;
  std::condition_variable changed;
  int running = 0;
  bool release = false;
  start(options, [&](const Identity&, const std::string&, const nlohmann::json&) {
    std::unique_lock lock(mutex);
    ++running;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
    return StatusOr<TestOnlyAnswer>(TestOnlyAnswer{});
  });
  std::thread first([&] { EXPECT_TRUE(client()->testOnly("team-a", "{}").isOk()); });
  std::thread second([&] { EXPECT_TRUE(client()->testOnly("team-a", "{}").isOk()); });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return running == 2; }));
  }
  const Status busy = client()->testOnly("team-a", "{}").status();
  EXPECT_EQ(busy.code(), StatusCode::kUnavailable);
  EXPECT_NE(busy.message().find("try again"), std::string::npos);
  {
    const std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  first.join();
  second.join();
  EXPECT_TRUE(client()->testOnly("team-a", "{}").isOk());  // the slots came back
}

// Issue 21: sacct's records through the query API. A caller who may list a namespace's
// SlurmJobs sees every user's records there; anyone else only their own (PrivateData=jobs), and
// nothing when asking for someone else's. Pages follow each other by job id and attempt.
TEST_F(QueryServerTest, JobRecordsArePagedAndPrivateToTheirUser) {
  const std::string dir = (tls_.dir() / "records").string();
  fs::create_directories(dir);
  auto opened = accounting::SqliteStore::open(dir + "/accounting.db");
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  std::shared_ptr<accounting::SqliteStore> store = std::move(opened).value();
  std::vector<accounting::JobRecord> records;
  for (std::int64_t id = 1; id <= 12; ++id) {
    accounting::JobRecord r;
    r.cluster = "kubeslurm";
    r.jobId = id;
    r.user = id % 3 == 0 ? "bob" : "alice";
    r.namespaceName = id <= 6 ? "team-a" : "team-b";
    r.state = "COMPLETED";
    r.endTime = 1795000000 + id;
    records.push_back(r);
  }
  ASSERT_EQ(*store->write(records), 12U);
  ServerOptions options;
  options.maxRecordsPerPage = 5;
  std::atomic<int> pages{0};
  start(options, nullptr, [&](const accounting::JobFilter& asked) {
    ++pages;
    accounting::JobFilter filter = asked;
    filter.cluster = "kubeslurm";
    return store->query(filter);
  });
  const auto ids = [](const StatusOr<std::vector<accounting::JobRecord>>& got) {
    std::vector<std::int64_t> out;
    if (got.isOk()) {
      for (const accounting::JobRecord& r : *got) out.push_back(r.jobId);
    }
    return out;
  };
  // Every namespace (alice may list them all here): 12 records in pages of 5.
  EXPECT_EQ(ids(client()->listJobRecords({})),
            (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(pages.load(), 3);
  // team-a: every user's; team-b, which alice may not list: her own only.
  const auto in = [](const std::string& ns, std::vector<std::string> users = {}) {
    JobRecordQuery query;
    query.namespaceName = ns;
    query.users = std::move(users);
    return query;
  };
  EXPECT_EQ(ids(client()->listJobRecords(in("team-a"))),
            (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ids(client()->listJobRecords(in("team-b"))), (std::vector<std::int64_t>{7, 8, 10, 11}));
  EXPECT_TRUE(ids(client()->listJobRecords(in("team-b", {"bob"}))).empty());
  // Refused: no token; too long a list.
  EXPECT_EQ(client("")->listJobRecords({}).status().code(), StatusCode::kUnauthenticated);
  rpc::JobRecordQuery many;
  many.jobIds.assign(1001, 1);
  EXPECT_EQ(client()->listJobRecords(many).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(QueryServerTest, JobRecordsNeedAStore) {
  start({});
  const Status refused = client()->listJobRecords({}).status();
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("--accounting-db"), std::string::npos);
}

}  // namespace
}  // namespace kubeslurm::rpc

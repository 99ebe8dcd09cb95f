// The job-record store on a real PostgreSQL server (Debian's postgresql, started by the test on
// 127.0.0.1 with tests/support/postgres.sh): the same specification as SQLite's
// (tests/unit/accounting/record_store_spec.h), then what only a shared server brings: replicas
// that open it at once, and a connection that drops between calls.
#include "kubeslurm/accounting/postgres_store.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include "tests/unit/accounting/record_store_spec.h"

namespace kubeslurm::accounting {
namespace {

// One server for the whole binary: started on first use, stopped when the tests end.
class PostgresServer {
 public:
  static PostgresServer& get() {
    static PostgresServer server;
    return server;
  }
  ~PostgresServer() { stop(); }
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  bool running() const { return port_ > 0; }
  std::string dsn(const std::string& database) const {
    return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + database +
           " connect_timeout=10";
  }
  void stop() {
    if (!running()) return;
    const std::string command = script() + " stop " + dir_;
    (void)std::system(command.c_str());
    port_ = 0;
    std::filesystem::remove_all(dir_);
  }

 private:
  PostgresServer() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pg-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return;
    dir_ = pattern;
    const std::string command = script() + " start " + dir_;
    std::FILE* out = ::popen(command.c_str(), "r");
    if (out == nullptr) return;
    char line[64] = {};
    if (std::fgets(line, sizeof line, out) != nullptr) port_ = std::atoi(line);
    if (::pclose(out) != 0) port_ = 0;
  }
  static std::string script() {
    return std::string(KUBESLURM_SOURCE_DIR) + "/tests/support/postgres.sh";
  }

  std::string dir_;
  int port_ = 0;
};

// SQL on a database of the server, as its superuser.
void executeOn(const std::string& dsn, const std::string& sql) {
  PGconn* connection = PQconnectdb(dsn.c_str());
  ASSERT_EQ(PQstatus(connection), CONNECTION_OK) << PQerrorMessage(connection);
  PGresult* result = PQexec(connection, sql.c_str());
  const ExecStatusType status = PQresultStatus(result);
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
      << sql << ": " << PQresultErrorMessage(result);
  PQclear(result);
  PQfinish(connection);
}

// A database of the test's own on the shared server.
class PostgresRig final : public StoreRig {
 public:
  PostgresRig() {
    static std::atomic<int> made{0};
    database_ = "spec_" + std::to_string(::getpid()) + "_" + std::to_string(made++);
    executeOn(PostgresServer::get().dsn("postgres"), "CREATE DATABASE " + database_);
  }
  ~PostgresRig() override {
    executeOn(PostgresServer::get().dsn("postgres"),
              "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
  PostgresRig(const PostgresRig&) = delete;
  PostgresRig& operator=(const PostgresRig&) = delete;

  std::string dsn() const { return PostgresServer::get().dsn(database_); }
  const std::string& database() const { return database_; }
  StatusOr<std::unique_ptr<RecordStore>> open() override {
    auto store = PostgresStore::open(dsn());
    if (!store.isOk()) return store.status();
    return std::unique_ptr<RecordStore>(std::move(store).value());
  }
  void execute(const std::string& sql) override { executeOn(dsn(), sql); }
  void refuseJob(std::int64_t jobId) override {
    execute("CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN IF NEW.job_id = " +
            std::to_string(jobId) +
            " THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql");
    execute("CREATE TRIGGER refuse BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION refuse()");
  }

 private:
  std::string database_;
};

class ServerEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_TRUE(PostgresServer::get().running())
        << "PostgreSQL did not start (tests/support/postgres.sh; apt-get install postgresql)";
  }
  void TearDown() override { PostgresServer::get().stop(); }
};
const auto* const kServer = ::testing::AddGlobalTestEnvironment(new ServerEnvironment);

INSTANTIATE_TEST_SUITE_P(Postgres, RecordStoreSpec, ::testing::Values(RigFactory([] {
                           return std::make_unique<PostgresRig>();
                         })));

// Replicas started together (a rollout, a failover) open the database at once: the advisory
// lock has one apply each version, the others find it applied.
TEST(PostgresStore, ReplicasOpeningAtOnceMigrateOnce) {
  const PostgresRig rig;
  std::vector<std::future<Status>> opening;
  for (int i = 0; i < 4; ++i) {
    opening.push_back(std::async(std::launch::async, [&rig] {
      auto store = PostgresStore::open(rig.dsn());
      return store.isOk() ? Status::ok() : store.status();
    }));
  }
  for (auto& opened : opening) {
    const Status status = opened.get();
    EXPECT_TRUE(status.isOk()) << status.toString();
  }
  auto store = PostgresStore::open(rig.dsn());
  ASSERT_TRUE(store.isOk()) << store.status().toString();
  EXPECT_EQ(*(*store)->schemaVersion(), RecordStore::kSchemaVersion);
}

// A connection the server drops between calls (a database restart, a failover of its own) is
// made again by the next call; the batch of a call that failed is the writer's to send again.
TEST(PostgresStore, ADroppedConnectionIsMadeAgain) {
  const PostgresRig rig;
  auto opened = PostgresStore::open(rig.dsn());
  ASSERT_TRUE(opened.isOk()) << opened.status().toString();
  auto& store = *opened;
  const JobRecord first = spec::run(1, "alice", "COMPLETED", 1000, 2000);
  ASSERT_EQ(*store->write({&first, 1}), 1U);
  executeOn(PostgresServer::get().dsn("postgres"),
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                rig.database() + "'");
  const JobRecord second = spec::run(2, "bob", "COMPLETED", 1000, 2000);
  StatusOr<std::size_t> written = store->write({&second, 1});
  if (!written.isOk()) written = store->write({&second, 1});  // the call that found it gone
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  EXPECT_EQ(*written, 1U);
  EXPECT_EQ(store->query(spec::filter())->size(), 2U);
}

TEST(PostgresStore, ADatabaseThatDoesNotAnswerIsAnError) {
  const auto store = PostgresStore::open("host=127.0.0.1 port=1 user=postgres connect_timeout=2");
  ASSERT_FALSE(store.isOk());
  EXPECT_NE(store.status().message().find("connect to the accounting database"), std::string::npos)
      << store.status().toString();
}

}  // namespace
}  // namespace kubeslurm::accounting

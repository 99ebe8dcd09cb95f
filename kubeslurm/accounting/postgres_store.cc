#include "kubeslurm/accounting/postgres_store.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include <libpq-fe.h>

#include "kubeslurm/accounting/record_columns.h"

namespace kubeslurm::accounting {
namespace {

// sqlite_store.cc's migrations, version for version, in PostgreSQL's words ("user" is a reserved
// word there, so it is quoted; no WITHOUT ROWID). Never edited once released.
constexpr std::array<std::string_view, RecordStore::kSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE jobs (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  array_job_id BIGINT,
  array_task_id BIGINT,
  name TEXT NOT NULL,
  "user" TEXT NOT NULL,
  namespace TEXT NOT NULL,
  account TEXT NOT NULL,
  partition TEXT NOT NULL,
  qos TEXT NOT NULL,
  submit_time BIGINT,
  eligible_time BIGINT,
  start_time BIGINT,
  end_time BIGINT,
  state TEXT NOT NULL,
  phase BIGINT NOT NULL,
  exit_code TEXT NOT NULL,
  reason TEXT NOT NULL,
  req_tres TEXT NOT NULL,
  alloc_tres TEXT NOT NULL,
  gpu_type TEXT NOT NULL,
  nodes BIGINT NOT NULL,
  cpus BIGINT NOT NULL,
  gpus BIGINT NOT NULL,
  node_list TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, attempt)
);
CREATE INDEX jobs_by_end ON jobs (cluster, COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_user ON jobs (cluster, "user", COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_account ON jobs (cluster, account, COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_array ON jobs (cluster, array_job_id) WHERE array_job_id IS NOT NULL;
CREATE TABLE steps (
  cluster TEXT NOT NULL,
  job_id BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  step_id TEXT NOT NULL,
  name TEXT NOT NULL,
  start_time BIGINT,
  end_time BIGINT,
  state TEXT NOT NULL,
  exit_code TEXT NOT NULL,
  tasks BIGINT NOT NULL,
  nodes BIGINT NOT NULL,
  node_list TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, attempt, step_id)
);
)sql",
    R"sql(
ALTER TABLE jobs ADD COLUMN array_tasks TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN priority BIGINT;
ALTER TABLE jobs ADD COLUMN time_limit_minutes BIGINT;
ALTER TABLE jobs ADD COLUMN work_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN req_nodes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN cpus BIGINT NOT NULL DEFAULT 0;
)sql",
    R"sql(
ALTER TABLE jobs ADD COLUMN interactive BIGINT NOT NULL DEFAULT 0;
)sql",
};

// Any number the advisory lock of the migrations is known by: "kslm" in ASCII.
constexpr std::string_view kMigrationLock = "SELECT pg_advisory_xact_lock(1802726509)";

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

// Statement parameters, as text (libpq's text format); nullopt is SQL NULL. The names are
// record_columns.h's Binder's.
class Parameters {
 public:
  void bind(std::string_view text) { values_.emplace_back(std::string(text)); }
  void bind(std::int64_t value) { values_.emplace_back(std::to_string(value)); }
  void bind(const std::optional<std::int64_t>& value) {
    if (value) {
      bind(*value);
    } else {
      values_.emplace_back(std::nullopt);
    }
  }
  // The next placeholder: "$n".
  std::string next() const { return "$" + std::to_string(values_.size() + 1); }
  void clear() { values_.clear(); }

  // Queues the statement on a connection in pipeline mode; false when libpq could not.
  bool send(pg_conn* connection, const std::string& sql) const {
    const std::vector<const char*> values = pointers();
    return PQsendQueryParams(connection, sql.c_str(), static_cast<int>(values.size()), nullptr,
                             values.data(), nullptr, nullptr, 0) == 1;
  }

  Result execute(pg_conn* connection, const std::string& sql) const {
    const std::vector<const char*> values = pointers();
    return {PQexecParams(connection, sql.c_str(), static_cast<int>(values.size()), nullptr,
                         values.data(), nullptr, nullptr, 0),
            &PQclear};
  }

 private:
  // libpq's view of the values: text, or null for SQL NULL.
  std::vector<const char*> pointers() const {
    std::vector<const char*> out;
    out.reserve(values_.size());
    for (const auto& value : values_) out.push_back(value ? value->c_str() : nullptr);
    return out;
  }

  std::vector<std::optional<std::string>> values_;
};

Status postgresError(pg_conn* connection, std::string_view what) {
  std::string message = connection != nullptr ? PQerrorMessage(connection) : "out of memory";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return {StatusCode::kUnavailable, std::string(what) + ": " + message};
}

// A result that is what the statement should give (a command's, or rows), or the error.
Status expect(pg_conn* connection, const Result& result, ExecStatusType wanted,
              std::string_view what) {
  if (result && PQresultStatus(result.get()) == wanted) return Status::ok();
  if (result && PQresultErrorMessage(result.get())[0] != '\0') {
    std::string message = PQresultErrorMessage(result.get());
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return {StatusCode::kUnavailable, std::string(what) + ": " + message};
  }
  return postgresError(connection, what);
}

Status run(pg_conn* connection, const std::string& sql, std::string_view what) {
  const Result result(PQexec(connection, sql.c_str()), &PQclear);
  return expect(connection, result, PGRES_COMMAND_OK, what);
}

// A transaction that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(pg_conn* connection) : connection_(connection) {}
  ~Transaction() {
    if (open_) (void)run(connection_, "ROLLBACK", "rollback");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status begin() {
    Status begun = run(connection_, "BEGIN", "begin");
    open_ = begun.isOk();
    return begun;
  }
  Status commit() {
    open_ = false;  // a failed COMMIT has ended the transaction all the same
    return run(connection_, "COMMIT", "commit");
  }

 private:
  pg_conn* connection_;
  bool open_ = false;
};

// Statements sent in libpq's pipeline mode, in chunks: `send(i)` queues statement i, and each
// chunk's results are read after its sync, `take(i, result)` seeing each. One round trip per
// chunk instead of one per statement: a batch of 1,000 records is some 1,100 statements, and a
// query's runs each have their steps to select.
// Chunks stay small enough that the server's answers to one fit in the socket's buffers, so
// neither side waits on the other while it is sent. Stops at the first failure (the rest of the
// chunk is aborted by the server); the transaction around it is the caller's.
constexpr std::size_t kPipelineChunk = 256;

Status pipelined(pg_conn* connection, std::size_t count,
                 const std::function<bool(std::size_t)>& send,
                 const std::function<Status(std::size_t, PGresult*)>& take) {
  if (count == 0) return Status::ok();
  if (PQenterPipelineMode(connection) != 1) return postgresError(connection, "pipeline");
  Status outcome = Status::ok();
  for (std::size_t begin = 0; begin < count && outcome.isOk(); begin += kPipelineChunk) {
    const std::size_t end = std::min(count, begin + kPipelineChunk);
    std::size_t sent = begin;
    while (sent < end && send(sent)) ++sent;
    if (sent < end) outcome = postgresError(connection, "send");
    if (PQpipelineSync(connection) != 1) {
      outcome = postgresError(connection, "pipeline sync");
      break;
    }
    // Each statement's result and then a null, up to the sync's own result. Two nulls in a row:
    // nothing more comes (the connection is gone).
    std::size_t next = begin;
    bool ended = false;
    while (true) {
      const Result result(PQgetResult(connection), &PQclear);
      if (!result) {
        if (ended) {
          if (outcome.isOk()) outcome = postgresError(connection, "write");
          break;
        }
        ended = true;
        continue;
      }
      ended = false;
      const ExecStatusType status = PQresultStatus(result.get());
      if (status == PGRES_PIPELINE_SYNC) break;
      if (status == PGRES_FATAL_ERROR && outcome.isOk()) {
        outcome = expect(connection, result, PGRES_COMMAND_OK, "write");
      } else if (status != PGRES_PIPELINE_ABORTED && outcome.isOk() && next < sent) {
        outcome = take(next, result.get());
      }
      ++next;
      if (PQstatus(connection) != CONNECTION_OK) {
        if (outcome.isOk()) outcome = postgresError(connection, "write");
        break;
      }
    }
  }
  if (PQexitPipelineMode(connection) != 1 && outcome.isOk()) {
    outcome = postgresError(connection, "pipeline");
  }
  return outcome;
}

// A selected row's columns in turn (record_columns.h's Row), from libpq's text format.
class Row {
 public:
  Row(const PGresult* result, int row) : result_(result), row_(row) {}
  std::string text() {
    const int column = column_++;
    return {PQgetvalue(result_, row_, column),
            static_cast<std::size_t>(PQgetlength(result_, row_, column))};
  }
  std::int64_t integer() { return std::strtoll(PQgetvalue(result_, row_, column_++), nullptr, 10); }
  std::optional<std::int64_t> optionalInteger() {
    if (PQgetisnull(result_, row_, column_) != 0) {
      ++column_;
      return std::nullopt;
    }
    return integer();
  }

 private:
  const PGresult* result_;
  int row_;
  int column_ = 0;
};

// PostgreSQL numbers its parameters: "$1", "$2", ...
std::string dollarMark(std::size_t n) { return "$" + std::to_string(n); }

// The statements both stores run (record_columns.h), in PostgreSQL's words, made once. Step
// ids sort as bytes, as SQLite's default compares them, whatever the database's locale.
const std::string& upsertJobText() {
  static const std::string sql = upsertJobSql(dollarMark);
  return sql;
}
const std::string& deleteStepsText() {
  static const std::string sql = deleteStepsSql(dollarMark);
  return sql;
}
const std::string& insertStepText() {
  static const std::string sql = insertStepSql(dollarMark);
  return sql;
}
const std::string& selectStepsText() {
  static const std::string sql = selectStepsSql(dollarMark, " COLLATE \"C\"");
  return sql;
}
constexpr std::string_view kSchemaVersionQuery =
    "SELECT COALESCE(MAX(version), 0) FROM schema_migrations";

}  // namespace

StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::open(const std::string& dsn) {
  pg_conn* connection = PQconnectdb(dsn.c_str());
  if (connection == nullptr || PQstatus(connection) != CONNECTION_OK) {
    Status failure = postgresError(connection, "connect to the accounting database");
    PQfinish(connection);
    return failure;
  }
  // The server's notices ("relation ... already exists, skipping") are not the operator's to
  // print; libpq's default writes them to stderr.
  PQsetNoticeProcessor(
      connection, [](void* /*arg*/, const char* /*message*/) {}, nullptr);
  std::unique_ptr<PostgresStore> store(new PostgresStore(connection));
  if (Status migrated = store->migrate(); !migrated.isOk()) return migrated;
  return store;
}

PostgresStore::~PostgresStore() { PQfinish(connection_); }

Status PostgresStore::connected() {
  if (PQstatus(connection_) == CONNECTION_OK) return Status::ok();
  PQreset(connection_);
  if (PQstatus(connection_) == CONNECTION_OK) return Status::ok();
  return postgresError(connection_, "reconnect to the accounting database");
}

Status PostgresStore::migrate() {
  std::lock_guard lock(mutex_);
  Transaction transaction(connection_);
  if (Status begun = transaction.begin(); !begun.isOk()) return begun;
  // Another replica migrating at the same moment waits here, then finds the versions applied.
  if (Status locked =
          expect(connection_, Result(PQexec(connection_, kMigrationLock.data()), &PQclear),
                 PGRES_TUPLES_OK, "lock the migrations");
      !locked.isOk()) {
    return locked;
  }
  if (Status made = run(connection_,
                        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY "
                        "KEY, applied_at BIGINT NOT NULL)",
                        "schema_migrations");
      !made.isOk()) {
    return made;
  }
  const Result current(PQexec(connection_, kSchemaVersionQuery.data()), &PQclear);
  if (Status read = expect(connection_, current, PGRES_TUPLES_OK, "schema version"); !read.isOk()) {
    return read;
  }
  const std::int64_t version = Row(current.get(), 0).integer();
  if (version > kSchemaVersion) {
    return failedPrecondition("the accounting database has schema version " +
                              std::to_string(version) + ", newer than this operator's " +
                              std::to_string(kSchemaVersion));
  }
  for (std::int64_t next = version + 1; next <= kSchemaVersion; ++next) {
    const std::string sql(kMigrations[static_cast<std::size_t>(next - 1)]);
    if (Status migrated = run(connection_, sql, "migration " + std::to_string(next));
        !migrated.isOk()) {
      return migrated;
    }
    Parameters applied;
    applied.bind(next);
    const Result recorded =
        applied.execute(connection_,
                        "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, "
                        "EXTRACT(EPOCH FROM now())::BIGINT)");
    if (Status stored = expect(connection_, recorded, PGRES_COMMAND_OK, "schema_migrations");
        !stored.isOk()) {
      return stored;
    }
  }
  return transaction.commit();
}

StatusOr<std::int64_t> PostgresStore::schemaVersion() {
  std::lock_guard lock(mutex_);
  if (Status up = connected(); !up.isOk()) return up;
  const Result current(PQexec(connection_, kSchemaVersionQuery.data()), &PQclear);
  if (Status read = expect(connection_, current, PGRES_TUPLES_OK, "schema version"); !read.isOk()) {
    return read;
  }
  return Row(current.get(), 0).integer();
}

StatusOr<std::size_t> PostgresStore::write(std::span<const JobRecord> records) {
  std::lock_guard lock(mutex_);
  if (Status up = connected(); !up.isOk()) return up;
  Transaction transaction(connection_);
  if (Status begun = transaction.begin(); !begun.isOk()) return begun;
  const std::string& upsertSql = upsertJobText();
  const std::string& deleteSql = deleteStepsText();
  const std::string& insertSql = insertStepText();

  // The runs first: which of them were written (a stored run further on is left alone).
  std::vector<bool> written(records.size(), false);
  Parameters p;
  Status upserted = pipelined(
      connection_, records.size(),
      [&](std::size_t i) {
        const JobRecord& r = records[i];
        p.clear();
        bindJobColumns(r, p);
        return p.send(connection_, upsertSql);
      },
      [&](std::size_t i, PGresult* result) {
        written[i] = std::string_view(PQcmdTuples(result)) != "0";
        return Status::ok();
      });
  if (!upserted.isOk()) return upserted;

  // Then the steps of the runs written: each run's replaced whole.
  struct StepWrite {
    const JobRecord* run;
    const StepRecord* step;  // null: the run's old steps deleted
  };
  std::vector<StepWrite> steps;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!written[i]) continue;
    steps.push_back({&records[i], nullptr});
    for (const StepRecord& s : records[i].steps) steps.push_back({&records[i], &s});
  }
  Status stepsWritten = pipelined(
      connection_, steps.size(),
      [&](std::size_t i) {
        const StepWrite& w = steps[i];
        p.clear();
        if (w.step == nullptr) {
          bindRunKey(*w.run, p);
          return p.send(connection_, deleteSql);
        }
        bindStepColumns(*w.run, *w.step, p);
        return p.send(connection_, insertSql);
      },
      [](std::size_t /*i*/, PGresult* /*result*/) { return Status::ok(); });
  if (!stepsWritten.isOk()) return stepsWritten;
  if (Status committed = transaction.commit(); !committed.isOk()) return committed;
  return static_cast<std::size_t>(std::count(written.begin(), written.end(), true));
}

StatusOr<std::vector<JobRecord>> PostgresStore::query(const JobFilter& filter) {
  std::lock_guard lock(mutex_);
  if (Status up = connected(); !up.isOk()) return up;
  Parameters p;
  p.bind(filter.cluster);
  std::string sql = selectJobsSql() + " WHERE cluster = $1";
  const auto list = [&sql, &p](std::string_view column, const auto& values) {
    if (values.empty()) return;
    sql += " AND " + std::string(column) + " IN (";
    for (std::size_t i = 0; i < values.size(); ++i) {
      sql += (i == 0 ? "" : ", ") + p.next();
      p.bind(values[i]);
    }
    sql += ")";
  };
  if (filter.from) {
    sql += " AND COALESCE(end_time, 9223372036854775807) >= " + p.next();
    p.bind(*filter.from);
  }
  if (filter.to) {
    sql += " AND COALESCE(start_time, submit_time, 0) <= " + p.next();
    p.bind(*filter.to);
  }
  list("\"user\"", filter.users);
  list("account", filter.accounts);
  list("state", filter.states);
  list("namespace", filter.namespaces);
  if (filter.after) {
    sql += " AND (job_id, attempt) > (" + p.next();
    p.bind(filter.after->first);
    sql += ", " + p.next() + ")";
    p.bind(filter.after->second);
  }
  if (!filter.jobIds.empty()) {
    std::string marks;
    for (std::size_t i = 0; i < filter.jobIds.size(); ++i) {
      marks += (i == 0 ? "" : ", ") + p.next();
      p.bind(filter.jobIds[i]);
    }
    sql += " AND (job_id IN (" + marks + ") OR array_job_id IN (" + marks + "))";
  }
  sql += " ORDER BY job_id, attempt";
  if (filter.limit > 0) sql += " LIMIT " + std::to_string(filter.limit);

  const Result rows = p.execute(connection_, sql);
  if (Status read = expect(connection_, rows, PGRES_TUPLES_OK, "query"); !read.isOk()) return read;
  std::vector<JobRecord> out;
  const int count = PQntuples(rows.get());
  out.reserve(static_cast<std::size_t>(count));
  for (int row = 0; row < count; ++row) {
    Row columns(rows.get(), row);
    out.push_back(readJobColumns(columns));
  }

  // Each run's steps, the selects pipelined: one round trip for many runs, not one each.
  const std::string& stepsSql = selectStepsText();
  Status stepsRead = pipelined(
      connection_, out.size(),
      [&](std::size_t i) {
        p.clear();
        bindRunKey(out[i], p);
        return p.send(connection_, stepsSql);
      },
      [&](std::size_t i, PGresult* steps) {
        if (PQresultStatus(steps) != PGRES_TUPLES_OK) {
          return Status(StatusCode::kUnavailable, "query steps: unexpected result");
        }
        for (int row = 0; row < PQntuples(steps); ++row) {
          Row columns(steps, row);
          out[i].steps.push_back(readStepColumns(columns));
        }
        return Status::ok();
      });
  if (!stepsRead.isOk()) return stepsRead;
  return out;
}

}  // namespace kubeslurm::accounting

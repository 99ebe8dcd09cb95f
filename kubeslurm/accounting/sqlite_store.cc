#include "kubeslurm/accounting/sqlite_store.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include <sqlite3.h>

#include "kubeslurm/accounting/record_columns.h"

namespace kubeslurm::accounting {
namespace {

// Each migration takes the schema from the version before it to its own; never edited once
// released (a new version is a new entry).
constexpr std::array<std::string_view, 3> kMigrations = {
    // 1: runs and their steps, found by end time per user and per account (sacct -S -u/-A,
    // sreport's windows) and by job id. A run without an end sorts last (it lasts until now).
    R"sql(
CREATE TABLE jobs (
  cluster TEXT NOT NULL,
  job_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  array_job_id INTEGER,
  array_task_id INTEGER,
  name TEXT NOT NULL,
  user TEXT NOT NULL,
  namespace TEXT NOT NULL,
  account TEXT NOT NULL,
  partition TEXT NOT NULL,
  qos TEXT NOT NULL,
  submit_time INTEGER,
  eligible_time INTEGER,
  start_time INTEGER,
  end_time INTEGER,
  state TEXT NOT NULL,
  phase INTEGER NOT NULL,
  exit_code TEXT NOT NULL,
  reason TEXT NOT NULL,
  req_tres TEXT NOT NULL,
  alloc_tres TEXT NOT NULL,
  gpu_type TEXT NOT NULL,
  nodes INTEGER NOT NULL,
  cpus INTEGER NOT NULL,
  gpus INTEGER NOT NULL,
  node_list TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, attempt)
) WITHOUT ROWID;
CREATE INDEX jobs_by_end ON jobs (cluster, COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_user ON jobs (cluster, user, COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_account ON jobs (cluster, account, COALESCE(end_time, 9223372036854775807));
CREATE INDEX jobs_by_array ON jobs (cluster, array_job_id) WHERE array_job_id IS NOT NULL;
CREATE TABLE steps (
  cluster TEXT NOT NULL,
  job_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  step_id TEXT NOT NULL,
  name TEXT NOT NULL,
  start_time INTEGER,
  end_time INTEGER,
  state TEXT NOT NULL,
  exit_code TEXT NOT NULL,
  tasks INTEGER NOT NULL,
  nodes INTEGER NOT NULL,
  node_list TEXT NOT NULL,
  PRIMARY KEY (cluster, job_id, attempt, step_id)
) WITHOUT ROWID;
)sql",
    // 2: what sacct prints besides: an array's own record's task ids, the priority, the time
    // limit (NULL: UNLIMITED), the working directory, the nodes asked for, a step's CPUs.
    R"sql(
ALTER TABLE jobs ADD COLUMN array_tasks TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN priority INTEGER;
ALTER TABLE jobs ADD COLUMN time_limit_minutes INTEGER;
ALTER TABLE jobs ADD COLUMN work_dir TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN req_nodes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN cpus INTEGER NOT NULL DEFAULT 0;
)sql",
    // 3: whether the job was an interactive allocation (srun or salloc from a login host), which
    // has no batch step.
    R"sql(
ALTER TABLE jobs ADD COLUMN interactive INTEGER NOT NULL DEFAULT 0;
)sql",
};

Status sqliteError(sqlite3* db, std::string_view what) {
  return {StatusCode::kUnavailable,
          std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : "out of memory")};
}

// A prepared statement, finalized when it goes out of scope; binds are 1-based, in order.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK) {
      stmt_ = nullptr;
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  Status error(std::string_view what) const { return sqliteError(db_, what); }

  void bind(std::string_view text) {
    sqlite3_bind_text(stmt_, next_++, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(std::int64_t value) { sqlite3_bind_int64(stmt_, next_++, value); }
  void bind(const std::optional<std::int64_t>& value) {
    if (value) {
      bind(*value);
    } else {
      sqlite3_bind_null(stmt_, next_++);
    }
  }

  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    next_ = 1;
  }

  std::string text(int column) const {
    const unsigned char* value = sqlite3_column_text(stmt_, column);
    return value == nullptr
               ? std::string()
               : std::string(reinterpret_cast<const char*>(value),  // NOLINT
                             static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::optional<std::int64_t> optionalInteger(int column) const {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
    return integer(column);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int next_ = 1;
};

// A selected row's columns in turn (record_columns.h's Row).
class Row {
 public:
  explicit Row(const Statement& statement) : statement_(statement) {}
  std::string text() { return statement_.text(column_++); }
  std::int64_t integer() { return statement_.integer(column_++); }
  std::optional<std::int64_t> optionalInteger() { return statement_.optionalInteger(column_++); }

 private:
  const Statement& statement_;
  int column_ = 0;
};

Status execute(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return Status::ok();
  Status failure(StatusCode::kUnavailable,
                 std::string(sql).substr(0, 40) + ": " + (message != nullptr ? message : "failed"));
  sqlite3_free(message);
  return failure;
}

// A transaction that rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) (void)execute(db_, "ROLLBACK");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Status begin() {
    Status begun = execute(db_, "BEGIN IMMEDIATE");
    open_ = begun.isOk();
    return begun;
  }
  Status commit() {
    Status committed = execute(db_, "COMMIT");
    if (committed.isOk()) open_ = false;
    return committed;
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

// SQLite marks every parameter "?": they are bound in the order they appear.
std::string questionMark(std::size_t /*n*/) { return "?"; }

// The statements both stores run (record_columns.h), in SQLite's words, made once.
const std::string& upsertJobText() {
  static const std::string sql = upsertJobSql(questionMark);
  return sql;
}
const std::string& deleteStepsText() {
  static const std::string sql = deleteStepsSql(questionMark);
  return sql;
}
const std::string& insertStepText() {
  static const std::string sql = insertStepSql(questionMark);
  return sql;
}
const std::string& selectStepsText() {
  static const std::string sql = selectStepsSql(questionMark, "");
  return sql;
}

}  // namespace

StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  const int opened =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (opened != SQLITE_OK) {
    Status failure = sqliteError(db, "open " + path);
    sqlite3_close(db);
    return failure;
  }
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  sqlite3_busy_timeout(db, 5000);
  // 64 MiB of page cache: the indexes of a million records' end times take random inserts, and
  // the default 2 MiB sends most of them to the disk.
  for (const char* pragma : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL",
                             "PRAGMA foreign_keys = OFF", "PRAGMA cache_size = -65536"}) {
    if (Status set = execute(db, pragma); !set.isOk()) return set;
  }
  if (Status migrated = store->migrate(); !migrated.isOk()) return migrated;
  return store;
}

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

Status SqliteStore::migrate() {
  std::lock_guard lock(mutex_);
  Transaction transaction(db_);
  if (Status begun = transaction.begin(); !begun.isOk()) return begun;
  if (Status made = execute(db_,
                            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER "
                            "PRIMARY KEY, applied_at INTEGER NOT NULL)");
      !made.isOk()) {
    return made;
  }
  Statement current(db_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!current.ok() || current.step() != SQLITE_ROW) return current.error("schema version");
  const std::int64_t version = current.integer(0);
  if (version > kSchemaVersion) {
    return failedPrecondition("the accounting database has schema version " +
                              std::to_string(version) + ", newer than this operator's " +
                              std::to_string(kSchemaVersion));
  }
  for (std::int64_t next = version + 1; next <= kSchemaVersion; ++next) {
    const std::string sql(kMigrations[static_cast<std::size_t>(next - 1)]);
    if (Status applied = execute(db_, sql.c_str()); !applied.isOk()) return applied;
    Statement record(db_,
                     "INSERT INTO schema_migrations (version, applied_at) VALUES (?, "
                     "CAST(strftime('%s', 'now') AS INTEGER))");
    record.bind(next);
    if (!record.ok() || record.step() != SQLITE_DONE) return record.error("schema_migrations");
  }
  return transaction.commit();
}

StatusOr<std::int64_t> SqliteStore::schemaVersion() {
  std::lock_guard lock(mutex_);
  Statement current(db_, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!current.ok() || current.step() != SQLITE_ROW) return current.error("schema version");
  return current.integer(0);
}

StatusOr<std::size_t> SqliteStore::write(std::span<const JobRecord> records) {
  std::lock_guard lock(mutex_);
  Transaction transaction(db_);
  if (Status begun = transaction.begin(); !begun.isOk()) return begun;
  Statement upsert(db_, upsertJobText());
  Statement deleteSteps(db_, deleteStepsText());
  Statement insertStep(db_, insertStepText());
  if (!upsert.ok() || !deleteSteps.ok() || !insertStep.ok()) return upsert.error("prepare");
  std::size_t written = 0;
  for (const JobRecord& r : records) {
    upsert.reset();
    bindJobColumns(r, upsert);
    if (upsert.step() != SQLITE_DONE) return upsert.error("write job " + std::to_string(r.jobId));
    if (sqlite3_changes(db_) == 0) continue;  // the stored run is further on
    ++written;
    deleteSteps.reset();
    bindRunKey(r, deleteSteps);
    if (deleteSteps.step() != SQLITE_DONE) return deleteSteps.error("write steps");
    for (const StepRecord& s : r.steps) {
      insertStep.reset();
      bindStepColumns(r, s, insertStep);
      if (insertStep.step() != SQLITE_DONE) return insertStep.error("write step " + s.stepId);
    }
  }
  if (Status committed = transaction.commit(); !committed.isOk()) return committed;
  return written;
}

StatusOr<std::vector<JobRecord>> SqliteStore::query(const JobFilter& filter) {
  std::lock_guard lock(mutex_);
  // Without statistics (no ANALYZE) SQLite would walk the primary key from the cluster on; the
  // index that narrows most is named. Each indexes the run's end, a run without one last.
  std::string index;
  if (!filter.users.empty()) {
    index = " INDEXED BY jobs_by_user";
  } else if (!filter.accounts.empty()) {
    index = " INDEXED BY jobs_by_account";
  } else if (filter.from && filter.jobIds.empty()) {
    index = " INDEXED BY jobs_by_end";
  }
  std::string sql = selectJobsSql() + index + " WHERE cluster = ?";
  // Bound in the order the text names them.
  auto list = [&sql](std::string_view column, std::size_t count) {
    if (count == 0) return;
    sql += " AND " + std::string(column) + " IN (?";
    for (std::size_t i = 1; i < count; ++i) sql += ", ?";
    sql += ")";
  };
  if (filter.from) sql += " AND COALESCE(end_time, 9223372036854775807) >= ?";
  if (filter.to) sql += " AND COALESCE(start_time, submit_time, 0) <= ?";
  list("user", filter.users.size());
  list("account", filter.accounts.size());
  list("state", filter.states.size());
  list("namespace", filter.namespaces.size());
  if (filter.after) sql += " AND (job_id, attempt) > (?, ?)";
  if (!filter.jobIds.empty()) {
    std::string marks = "?";
    for (std::size_t i = 1; i < filter.jobIds.size(); ++i) marks += ", ?";
    sql += " AND (job_id IN (" + marks + ") OR array_job_id IN (" + marks + "))";
  }
  // No ORDER BY: the planner would walk the primary key in order rather than sort what an index
  // finds (a scan of every record for one user's month); the answer is sorted below. LIMIT
  // keeps the lowest ids, so it sorts first when there is one.
  if (filter.limit > 0) sql += " ORDER BY job_id, attempt LIMIT " + std::to_string(filter.limit);

  Statement select(db_, sql);
  if (!select.ok()) return select.error("query");
  select.bind(filter.cluster);
  if (filter.from) select.bind(*filter.from);
  if (filter.to) select.bind(*filter.to);
  for (const std::string& user : filter.users) select.bind(user);
  for (const std::string& account : filter.accounts) select.bind(account);
  for (const std::string& state : filter.states) select.bind(state);
  for (const std::string& name : filter.namespaces) select.bind(name);
  if (filter.after) {
    select.bind(filter.after->first);
    select.bind(filter.after->second);
  }
  for (std::int64_t id : filter.jobIds) select.bind(id);
  for (std::int64_t id : filter.jobIds) select.bind(id);

  std::vector<JobRecord> out;
  int stepped = 0;
  while ((stepped = select.step()) == SQLITE_ROW) {
    Row row(select);
    out.push_back(readJobColumns(row));
  }
  if (stepped != SQLITE_DONE) return select.error("query");
  std::sort(out.begin(), out.end(), [](const JobRecord& a, const JobRecord& b) {
    return a.jobId != b.jobId ? a.jobId < b.jobId : a.attempt < b.attempt;
  });

  Statement steps(db_, selectStepsText());
  if (!steps.ok()) return steps.error("query steps");
  for (JobRecord& r : out) {
    steps.reset();
    bindRunKey(r, steps);
    while ((stepped = steps.step()) == SQLITE_ROW) {
      Row row(steps);
      r.steps.push_back(readStepColumns(row));
    }
    if (stepped != SQLITE_DONE) return steps.error("query steps");
  }
  return out;
}

}  // namespace kubeslurm::accounting

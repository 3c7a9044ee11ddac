// RAII wrappers over the SQLite C API.
#include "sqlite.h"

namespace weft::cache::detail {

Database::Database(const std::filesystem::path& path, int flags) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 allocates a handle even on failure; it carries the message.
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw SqliteFailure(rc & 0xff, "cannot open: " + message);
  }
  sqlite3_extended_result_codes(db_, 0);
}

Database::~Database() {
  // close_v2 defers the close until every statement is finalised, so order does not matter.
  sqlite3_close_v2(db_);
}

void Database::exec(const char* sql) {
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(rc, sql);
}

void Database::fail(int rc, std::string_view what) const {
  throw SqliteFailure(rc & 0xff, std::string(what) + ": " + sqlite3_errmsg(db_));
}

Statement::Statement(Database& db, const char* sql) : db_(db) {
  const int rc = sqlite3_prepare_v3(db.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) db.fail(rc, std::string("preparing ") + sql);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::bind(int index, std::string_view text) {
  const int rc =
      sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) db_.fail(rc, "binding text");
}

void Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "binding an integer");
}

void Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK) db_.fail(rc, "binding a real");
}

void Statement::bind_blob(int index, std::span<const std::uint8_t> bytes) {
  // A zero-length blob must still be a blob, not NULL: pass a non-null pointer.
  static const std::uint8_t empty = 0;
  const int rc = sqlite3_bind_blob64(stmt_, index, bytes.empty() ? &empty : bytes.data(),
                                     bytes.size(), SQLITE_STATIC);
  if (rc != SQLITE_OK) db_.fail(rc, "binding a blob");
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Reset so the statement holds no read snapshot after a failure.
  sqlite3_reset(stmt_);
  db_.fail(rc, sqlite3_sql(stmt_));
}

void Statement::run() {
  while (step()) {
  }
}

std::int64_t Statement::column_int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
              : std::string();
}

std::string_view Statement::column_view(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return text
             ? std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
             : std::string_view();
}

bool Statement::column_is_integer(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER;
}

bool Statement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::span<const std::uint8_t> Statement::column_blob(int column) const {
  const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, column));
  const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  return data ? std::span<const std::uint8_t>(data, size) : std::span<const std::uint8_t>();
}

WriteTransaction::WriteTransaction(Database& db) : db_(db) {
  db_.exec("BEGIN IMMEDIATE");
}

WriteTransaction::~WriteTransaction() {
  if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace weft::cache::detail

// Thin RAII wrappers over sqlite3 and sqlite3_stmt. Failures throw SqliteFailure carrying the
// result code, so callers can tell "busy" from "not a database" from I/O errors.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace weft::cache::detail {

class SqliteFailure : public std::runtime_error {
 public:
  SqliteFailure(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }  // primary result code (SQLITE_BUSY, SQLITE_NOTADB, ...)

 private:
  int code_;
};

class Database {
 public:
  Database(const std::filesystem::path& path, int flags);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return db_; }
  // Runs one or more statements that return no rows of interest.
  void exec(const char* sql);
  // Throws SqliteFailure for `rc` with `what` and SQLite's message.
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  sqlite3* db_ = nullptr;
};

// A prepared statement, reset (bindings cleared) by each bind_all/reset so it can be cached.
class Statement {
 public:
  Statement(Database& db, const char* sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void reset();
  void bind(int index, std::string_view text);
  void bind(int index, std::int64_t value);
  void bind(int index, double value);
  void bind_blob(int index, std::span<const std::uint8_t> bytes);
  // True when a row is available; false when done.
  bool step();
  // Steps a statement expected to finish without rows.
  void run();

  std::int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;
  // The same without a copy, valid until the next step or reset.
  std::string_view column_view(int column) const;
  bool column_is_null(int column) const;
  // True when the value is stored as an integer (SQLite keeps text that is not a number, in
  // any column, as text).
  bool column_is_integer(int column) const;
  std::span<const std::uint8_t> column_blob(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so the busy handler applies
// and no deadlock-prone read-to-write upgrade happens); rolls back unless committed.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace weft::cache::detail

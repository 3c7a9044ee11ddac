// Opening the cache database: private permissions, WAL mode and the schema (docs/cache.md).
#include "database_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "weft/error.h"

namespace weft::cache::detail {
namespace {

constexpr int kSchemaVersion = 2;

// Payloads live in their own table so that scans over entry metadata (list, eviction, sums)
// never page through blobs, and a lookup reads the blob only through one rowid probe.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  ir_hash TEXT NOT NULL,
  weft_version TEXT NOT NULL,
  build_options TEXT NOT NULL,
  platform_name TEXT NOT NULL,
  platform_version TEXT NOT NULL,
  device_name TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  opencl_c_version TEXT NOT NULL,
  compression TEXT NOT NULL,
  user_hook TEXT NOT NULL,
  checksum INTEGER NOT NULL,
  metadata_checksum INTEGER NOT NULL,
  uncompressed_size INTEGER NOT NULL,
  compressed_size INTEGER NOT NULL,
  metadata_size INTEGER NOT NULL,
  compile_time REAL NOT NULL,
  created REAL NOT NULL,
  last_used REAL NOT NULL,
  hit_count INTEGER NOT NULL DEFAULT 0,
  function_name TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS entries_ir_hash ON entries(ir_hash);
CREATE INDEX IF NOT EXISTS entries_last_used ON entries(last_used);
CREATE TABLE IF NOT EXISTS payloads (
  id INTEGER PRIMARY KEY,
  binary BLOB NOT NULL,
  metadata BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
  name TEXT PRIMARY KEY,
  value REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS recent_misses (
  key TEXT PRIMARY KEY,
  function_name TEXT NOT NULL,
  ir_hash TEXT NOT NULL,
  weft_version TEXT NOT NULL,
  build_options TEXT NOT NULL,
  platform_name TEXT NOT NULL,
  platform_version TEXT NOT NULL,
  device_name TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  opencl_c_version TEXT NOT NULL,
  compression TEXT NOT NULL,
  user_hook TEXT NOT NULL,
  reason TEXT NOT NULL,
  time REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_function_name ON entries(function_name);
PRAGMA user_version = 2;
)sql";

// Version 1 lacked function names and the miss log; the rest of kSchema is idempotent.
constexpr const char* kUpgradeFrom1 =
    "ALTER TABLE entries ADD COLUMN function_name TEXT NOT NULL DEFAULT ''";

std::string errno_text() {
  return std::strerror(errno);
}

int user_version(Database& db) {
  Statement statement(db, "PRAGMA user_version");
  return statement.step() ? static_cast<int>(statement.column_int(0)) : 0;
}

void configure(Database& db) {
  // auto_vacuum only takes effect before the first table exists. Setting it on an existing
  // database still commits (and syncs) a write, which every process would pay at start-up.
  if (user_version(db) == 0) db.exec("PRAGMA auto_vacuum = INCREMENTAL");
  // Reading the journal mode first avoids taking a lock when it is already WAL.
  {
    Statement mode(db, "PRAGMA journal_mode");
    if (!mode.step() || mode.column_text(0) != "wal") {
      mode.reset();
      db.exec("PRAGMA journal_mode = WAL");
    }
  }
  // NORMAL in WAL mode: no fsync per commit; a power cut can lose the last entries, which
  // for a cache only means recompiling them.
  db.exec("PRAGMA synchronous = NORMAL");
  const int version = user_version(db);
  if (version > kSchemaVersion) {
    throw SqliteFailure(SQLITE_ERROR, "schema version " + std::to_string(version) +
                                          " is newer than this weft understands (" +
                                          std::to_string(kSchemaVersion) + ")");
  }
  if (version == kSchemaVersion) return;
  WriteTransaction transaction(db);
  // Another process may have set the schema up while this one waited for the lock.
  const int current = user_version(db);
  if (current == kSchemaVersion) return;
  if (current == 1) db.exec(kUpgradeFrom1);
  db.exec(kSchema);
  transaction.commit();
}

}  // namespace

std::string describe_failure(const std::filesystem::path& path, std::string_view what,
                             const SqliteFailure& failure) {
  std::string message =
      "weft cache " + path.string() + ": " + std::string(what) + " failed: " + failure.what();
  switch (failure.code()) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      message += " (another process held the database lock longer than the busy timeout)";
      break;
    case SQLITE_NOTADB:
      message += " (the file is not a SQLite database; delete it or use another cache directory)";
      break;
    case SQLITE_CORRUPT:
      message += " (the database is damaged; delete it or run `weft cache clear`)";
      break;
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_IOERR:
      message += " (check that the cache directory exists and is writable)";
      break;
    default:
      break;
  }
  return message;
}

void make_private_directory(const std::filesystem::path& directory) {
  std::filesystem::path prefix;
  for (const auto& part : directory) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) == 0 || errno == EEXIST) {
      struct stat info {};
      if (::stat(prefix.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
      throw CacheError("weft cache: cannot create directory " + directory.string() + ": " +
                       prefix.string() + " exists and is not a directory");
    }
    throw CacheError("weft cache: cannot create directory " + prefix.string() + ": " +
                     errno_text());
  }
}

std::unique_ptr<Database> open_database(const std::filesystem::path& path,
                                        std::chrono::milliseconds busy_timeout) {
  // Create the file ourselves so it is 0600 from the start; SQLite gives its -wal and -shm
  // files the database file's mode.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw CacheError("weft cache: cannot open or create " + path.string() + ": " + errno_text() +
                     " (check that the cache directory is writable)");
  }
  ::close(fd);

  const auto deadline = std::chrono::steady_clock::now() + busy_timeout;
  for (;;) {
    try {
      auto db = std::make_unique<Database>(
          path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
      sqlite3_busy_timeout(db->get(), static_cast<int>(busy_timeout.count()));
      configure(*db);
      return db;
    } catch (const SqliteFailure& failure) {
      // Switching a new file to WAL can report busy without consulting the busy handler while
      // another process creates the same database; retry until the busy timeout is spent.
      if (failure.code() == SQLITE_BUSY && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      throw CacheError(describe_failure(path, "opening", failure));
    }
  }
}

}  // namespace weft::cache::detail

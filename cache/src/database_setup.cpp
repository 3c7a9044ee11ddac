// Opening the cache database: trusted files only, WAL mode and the schema (docs/cache.md).
#include "database_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <string>
#include <thread>

#include "weft/error.h"

namespace weft::cache::detail {
namespace {

constexpr int kSchemaVersion = 3;
// PRAGMA application_id of a weft cache ("weft"), so that another program's database is
// recognised and left alone.
constexpr int kApplicationId = 0x77656674;

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
  function_name TEXT NOT NULL DEFAULT '',
  mac BLOB NOT NULL DEFAULT x''
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
PRAGMA user_version = 3;
PRAGMA application_id = 2003134068;
)sql";
static_assert(kApplicationId == 2003134068);

// Version 1 lacked function names and the miss log, versions 1 and 2 the entry MACs; the rest
// of kSchema is idempotent. Unauthenticated entries cannot be trusted, so they go.
constexpr const char* kUpgradeFrom1 =
    "ALTER TABLE entries ADD COLUMN function_name TEXT NOT NULL DEFAULT ''";
constexpr const char* kUpgradeFrom2 =
    "DELETE FROM entries; DELETE FROM payloads; "
    "ALTER TABLE entries ADD COLUMN mac BLOB NOT NULL DEFAULT x''";

int pragma_int(Database& db, const char* pragma) {
  Statement statement(db, pragma);
  return statement.step() ? static_cast<int>(statement.column_int(0)) : 0;
}

int user_version(Database& db) {
  return pragma_int(db, "PRAGMA user_version");
}

// What the file holds, read before anything is written to it.
enum class Contents { empty, weft, older_weft, foreign };

Contents examine(Database& db) {
  const int objects = pragma_int(db, "SELECT count(*) FROM sqlite_master");
  const int version = user_version(db);
  const int application = pragma_int(db, "PRAGMA application_id");
  if (objects == 0 && version == 0 && application == 0) return Contents::empty;
  if (application == kApplicationId) return Contents::weft;
  // Versions 1 and 2 predate the application id; recognise them by their tables.
  if (application == 0 && (version == 1 || version == 2) &&
      pragma_int(db,
                 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                 "('entries', 'payloads', 'counters')") == 3)
    return Contents::older_weft;
  return Contents::foreign;
}

[[noreturn]] void refuse_foreign(const std::filesystem::path& path) {
  throw CacheError("weft cache: " + path.string() +
                   " is a SQLite database of another program (its application id and tables "
                   "are not weft's); weft leaves it untouched. Use another WEFT_CACHE_DIR, or "
                   "remove the file (`weft cache clear` does).");
}

void check_version(const std::filesystem::path& path, int version) {
  if (version > kSchemaVersion)
    throw CacheError("weft cache: " + path.string() + " has schema version " +
                     std::to_string(version) + ", newer than this weft understands (" +
                     std::to_string(kSchemaVersion) +
                     "). Use the newer weft, another WEFT_CACHE_DIR, or `weft cache clear`.");
}

void configure_writer(Database& db, const std::filesystem::path& path) {
  Contents contents = examine(db);
  if (contents == Contents::foreign) refuse_foreign(path);
  // auto_vacuum only takes effect before the first table exists. Setting it on an existing
  // database still commits (and syncs) a write, which every process would pay at start-up.
  if (contents == Contents::empty) db.exec("PRAGMA auto_vacuum = INCREMENTAL");
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
  check_version(path, user_version(db));
  if (contents == Contents::weft && user_version(db) == kSchemaVersion) return;
  WriteTransaction transaction(db);
  // Another process may have set the schema up while this one waited for the lock.
  contents = examine(db);
  if (contents == Contents::foreign) refuse_foreign(path);
  const int current = user_version(db);
  check_version(path, current);
  if (contents == Contents::weft && current == kSchemaVersion) return;
  if (current == 1) db.exec(kUpgradeFrom1);
  if (current == 1 || current == 2) db.exec(kUpgradeFrom2);
  db.exec(kSchema);
  transaction.commit();
}

void check_reader(Database& db, const std::filesystem::path& path) {
  const Contents contents = examine(db);
  if (contents == Contents::foreign) refuse_foreign(path);
  const int version = user_version(db);
  check_version(path, version);
  if (contents != Contents::weft || version != kSchemaVersion)
    throw CacheError("weft cache: " + path.string() + " has schema version " +
                     std::to_string(version) + " and this process only reads the cache (" +
                     std::to_string(kSchemaVersion) +
                     " needed); a process that writes the cache upgrades it.");
}

std::string errno_text() {
  return std::strerror(errno);
}

// Opens the database file itself, never through a link, and checks it like the directory.
// Creates it for a writer, with the mode the policy gives new files.
void check_database_file(const std::filesystem::path& path, bool writer,
                         const TrustPolicy& policy) {
  const mode_t mode = policy.shared ? 0660 : 0600;
  const int flags = (writer ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  const int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) {
    if (errno == ELOOP)
      throw CacheError("weft cache: refusing to use " + path.string() +
                       ": it is a symbolic link, and weft follows no links for its database. "
                       "Remove it (`weft cache clear` does), or use another WEFT_CACHE_DIR.");
    if (errno == ENOENT && !writer)
      throw CacheError("weft cache: there is no cache database at " + path.string() +
                       " yet, and this process only reads the cache; a process that writes "
                       "it creates it.");
    throw CacheError("weft cache: cannot " + std::string(writer ? "open or create " : "open ") +
                     path.string() + ": " + errno_text() +
                     (writer ? " (check that the cache directory is writable)" : ""));
  }
  try {
    check_cache_file(fd, path, policy);
    // The umask may have taken the group's write bit from a team cache's new file.
    if (writer && policy.shared) {
      struct stat info {};
      if (::fstat(fd, &info) == 0 && info.st_uid == policy.owner && info.st_size == 0)
        ::fchmod(fd, mode);
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
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
      message +=
          " (the file is not a SQLite database; run `weft cache clear` or use another cache "
          "directory)";
      break;
    case SQLITE_CORRUPT:
      message += " (the database is damaged; run `weft cache clear`)";
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

void make_cache_directory(const std::filesystem::path& directory, const TrustPolicy& policy) {
  const mode_t mode = policy.shared ? 02770 : 0700;
  std::filesystem::path prefix;
  for (const auto& part : directory) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), mode) == 0) {
      if (policy.shared) ::chmod(prefix.c_str(), mode);  // past the umask
      continue;
    }
    if (errno == EEXIST) {
      struct stat info {};
      if (::stat(prefix.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
      throw CacheError("weft cache: cannot create directory " + directory.string() + ": " +
                       prefix.string() + " exists and is not a directory");
    }
    throw CacheError("weft cache: cannot create directory " + prefix.string() + ": " +
                     errno_text());
  }
}

namespace {

// "file:/path?immutable=1", percent-encoded as SQLite's URI parser expects.
std::filesystem::path immutable_uri(const std::filesystem::path& path) {
  static const char hex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const unsigned char c : path.string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

std::unique_ptr<Database> open_database(const std::filesystem::path& path, bool writer,
                                        const TrustPolicy& policy,
                                        std::chrono::milliseconds busy_timeout) {
  check_cache_directory(path.parent_path(), policy);
  check_side_files(path, policy);
  check_database_file(path, writer, policy);

  const int flags = (writer ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOFOLLOW |
                    SQLITE_OPEN_NOMUTEX;
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout;
  bool immutable = false;
  for (;;) {
    try {
      auto db = immutable ? std::make_unique<Database>(immutable_uri(path), flags | SQLITE_OPEN_URI)
                          : std::make_unique<Database>(path, flags);
      sqlite3_busy_timeout(db->get(), static_cast<int>(busy_timeout.count()));
      if (writer)
        configure_writer(*db, path);
      else
        check_reader(*db, path);
      return db;
    } catch (const SqliteFailure& failure) {
      // Switching a new file to WAL can report busy without consulting the busy handler while
      // another process creates the same database; retry until the busy timeout is spent.
      if (failure.code() == SQLITE_BUSY && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      // A reader of a database in a directory it cannot write cannot create SQLite's
      // shared-memory file. Such a read-only cache is published, not written while read, so
      // the reader reads it as immutable (entries are still authenticated one by one).
      if (!writer && !immutable &&
          (failure.code() == SQLITE_READONLY || failure.code() == SQLITE_CANTOPEN) &&
          ::access(path.parent_path().c_str(), W_OK) != 0) {
        // Only when no write-ahead log holds changes the database file lacks.
        struct stat wal {};
        if (::stat((path.string() + "-wal").c_str(), &wal) == 0 && wal.st_size > 0)
          throw CacheError("weft cache: cannot read " + path.string() +
                           " read-only: its write-ahead log " + path.string() +
                           "-wal holds changes, and this process can neither use it nor create "
                           "SQLite's shared-memory file in " +
                           path.parent_path().string() +
                           ". Make the -wal and -shm files readable too, or have a process "
                           "that writes the cache close it cleanly.");
        immutable = true;
        continue;
      }
      throw CacheError(describe_failure(path, "opening", failure));
    }
  }
}

}  // namespace weft::cache::detail

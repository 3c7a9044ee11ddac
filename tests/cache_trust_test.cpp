// The cache's trust model (docs/cache.md): entries authenticated by a per-user key, a cache
// directory and database only this user (or an opted-in team) can write, no links followed,
// another program's database left alone, readers that open read-only, and `clear` that works
// on a database in any state. Store-level tests first, then the same cases through `weft`
// processes.
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codec.h"
#include "support/raw_sqlite.h"
#include "support/reseal_entries.h"
#include "support/temp_dir.h"
#include "weft/cache/store.h"
#include "weft/cache/trust.h"
#include "weft/error.h"

extern char** environ;

namespace weft::cache {
namespace {

namespace fs = std::filesystem;
using test::raw_sql;
using ::testing::HasSubstr;
using ::testing::Not;

// Each test file names its directories after itself.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-trust-test") {}
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A short fingerprint of a file's bytes, so a failed comparison prints no binary.
std::string digest(const fs::path& path) {
  const std::string bytes = slurp(path);
  return std::to_string(bytes.size()) + ":" + std::to_string(std::hash<std::string>{}(bytes));
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

unsigned mode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

std::vector<std::uint8_t> key_a() {
  return std::vector<std::uint8_t>(32, 0xa1);
}
std::vector<std::uint8_t> key_b() {
  return std::vector<std::uint8_t>(32, 0xb2);
}

StoreOptions options_in(const fs::path& dir, std::vector<std::uint8_t> key = key_a()) {
  StoreOptions options;
  options.directory = dir;
  options.busy_timeout = std::chrono::milliseconds(200);
  options.key = std::move(key);
  return options;
}

CacheKeyComponents components(const std::string& ir) {
  CacheKeyComponents c;
  c.ir_text = ir;
  c.platform_name = "test platform";
  c.device_name = "test device";
  return c;
}

std::vector<std::uint8_t> binary_for(int seed, std::size_t size = 4096) {
  std::vector<std::uint8_t> bytes(size);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng() % 16);
  return bytes;
}

// The message of the CacheError that `open` throws, or "" when it throws none.
std::string open_error(const std::function<void()>& open) {
  try {
    open();
  } catch (const CacheError& e) {
    return e.what();
  }
  return {};
}

std::string store_error(const StoreOptions& options) {
  return open_error([&] { ProgramStore store(options); });
}

// A SQLite database of some other program.
void make_foreign_database(const fs::path& path) {
  raw_sql(path,
          "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
          "INSERT INTO notes (text) VALUES ('not weft''s');");
}

// ---------------------------------------------------------------------------------------------
// Entry authentication

TEST(EntryAuthentication, PayloadCopiedFromAnotherEntryIsAnUnauthenticatedMiss) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  ASSERT_EQ(store.insert(components("a"), binary_for(1), "plan a", 1.0).status,
            InsertStatus::written);
  ASSERT_EQ(store.insert(components("b"), binary_for(2), "plan b", 1.0).status,
            InsertStatus::written);
  // What a hostile probe did: b's payload, checksums and sizes copied into a's row.
  raw_sql(store.path(),
          "UPDATE payloads SET binary = (SELECT binary FROM payloads p JOIN entries e ON e.id = "
          "p.id WHERE e.key = '" +
              compute_key(components("b")) +
              "'), metadata = (SELECT metadata FROM payloads p JOIN entries e ON e.id = p.id "
              "WHERE e.key = '" +
              compute_key(components("b")) + "') WHERE id = (SELECT id FROM entries WHERE key = '" +
              compute_key(components("a")) +
              "'); UPDATE entries SET (checksum, metadata_checksum, uncompressed_size, "
              "compressed_size, metadata_size) = (SELECT checksum, metadata_checksum, "
              "uncompressed_size, compressed_size, metadata_size FROM entries WHERE key = '" +
              compute_key(components("b")) + "') WHERE key = '" + compute_key(components("a")) +
              "';");
  const LookupResult swapped = store.lookup(components("a"));
  EXPECT_EQ(swapped.status, LookupStatus::corrupt);
  EXPECT_EQ(swapped.reason, MissReason::unauthenticated);
  EXPECT_THAT(swapped.detail, HasSubstr("MAC"));
  EXPECT_TRUE(swapped.binary.empty());
  // b is untouched and the forged row is gone.
  const LookupResult b = store.lookup(components("b"));
  ASSERT_TRUE(b.hit()) << b.detail;
  EXPECT_EQ(b.binary, binary_for(2));
  EXPECT_EQ(store.lookup(components("a")).reason, MissReason::not_found);
}

TEST(EntryAuthentication, EntriesOfAnotherKeyAreMissesThatGetReplaced) {
  TempDir dir;
  {
    ProgramStore other(options_in(dir.path(), key_b()));
    ASSERT_EQ(other.insert(components("x"), binary_for(3), "other's plan", 1.0).status,
              InsertStatus::written);
  }
  ProgramStore mine(options_in(dir.path(), key_a()));
  const LookupResult found = mine.lookup(components("x"));
  EXPECT_EQ(found.reason, MissReason::unauthenticated);
  EXPECT_EQ(mine.stats().process.misses[static_cast<std::size_t>(MissReason::unauthenticated)], 1u);
  ASSERT_EQ(mine.insert(components("x"), binary_for(4), "my plan", 1.0).status,
            InsertStatus::written);
  const LookupResult replaced = mine.lookup(components("x"));
  ASSERT_TRUE(replaced.hit()) << replaced.detail;
  EXPECT_EQ(replaced.metadata, "my plan");
}

TEST(EntryAuthentication, EditedEntryResealedWithTheKeyPassesButKeepsItsChecksum) {
  // The MAC is the gate; the XXH3 checksums still catch damage to an authenticated row.
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  ASSERT_EQ(store.insert(components("y"), binary_for(5), "plan", 1.0).status,
            InsertStatus::written);
  raw_sql(store.path(), "UPDATE payloads SET metadata = CAST('PLAN' AS BLOB)");
  test::reseal_entries(store.path(), key_a());
  EXPECT_EQ(store.lookup(components("y")).reason, MissReason::checksum_mismatch);
}

// ---------------------------------------------------------------------------------------------
// Directory and file ownership

TEST(CacheOwnership, WorldWritableDirectoryIsRefusedEvenForATeam) {
  TempDir dir;
  const fs::path cache = dir.path() / "cache";
  fs::create_directory(cache);
  ::chmod(cache.c_str(), 0777);
  const std::string message = store_error(options_in(cache));
  EXPECT_THAT(message, HasSubstr(cache.string()));
  EXPECT_THAT(message, HasSubstr("0777"));
  EXPECT_THAT(message, HasSubstr("chmod go-w"));
  EXPECT_FALSE(fs::exists(cache / "cache.sqlite3"));
  StoreOptions team = options_in(cache);
  team.shared = true;
  EXPECT_THAT(store_error(team), HasSubstr("chmod o-w"));
  EXPECT_FALSE(fs::exists(cache / "cache.sqlite3"));
}

TEST(CacheOwnership, GroupWritableDirectoryNeedsTheTeamOptIn) {
  TempDir dir;
  const fs::path cache = dir.path() / "team";
  fs::create_directory(cache);
  ::chmod(cache.c_str(), 0770);
  EXPECT_THAT(store_error(options_in(cache)), HasSubstr("WEFT_CACHE_SHARED=1"));
  StoreOptions team = options_in(cache);
  team.shared = true;
  ProgramStore store(team);
  ASSERT_EQ(store.insert(components("t"), binary_for(6), "", 1.0).status, InsertStatus::written);
  EXPECT_TRUE(store.lookup(components("t")).hit());
  // A team cache's files let the group write.
  EXPECT_EQ(mode_of(cache / "cache.sqlite3") & 0060, 0060u);
}

TEST(CacheOwnership, NewDirectoriesArePrivate) {
  TempDir dir;
  const fs::path cache = dir.path() / "a" / "b";
  ProgramStore store(options_in(cache));
  EXPECT_EQ(mode_of(cache), 0700u);
  EXPECT_EQ(mode_of(cache / "cache.sqlite3"), 0600u);
}

TEST(CacheOwnership, DirectoryAndDatabaseOfAnotherUserAreRefused) {
  TempDir dir;
  { ProgramStore store(options_in(dir.path())); }
  // Seen as another user would see them: the policy names the owner the files must have.
  TrustPolicy someone_else;
  someone_else.owner = ::geteuid() + 1;
  EXPECT_THAT(open_error([&] { check_cache_directory(dir.path(), someone_else); }),
              HasSubstr("belongs to user id " + std::to_string(::geteuid())));
  const fs::path db = dir.path() / "cache.sqlite3";
  const int fd = ::open(db.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const std::string message = open_error([&] { check_cache_file(fd, db, someone_else); });
  ::close(fd);
  EXPECT_THAT(message, HasSubstr(db.string()));
  EXPECT_THAT(message, HasSubstr("not to this user"));
  EXPECT_THAT(message, HasSubstr("WEFT_CACHE_SHARED=1"));
  TrustPolicy team = someone_else;
  team.shared = true;
  EXPECT_EQ(open_error([&] { check_cache_directory(dir.path(), team); }), "");

  // Root can make the real thing: files that belong to nobody.
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(db.c_str(), 65534, 65534), 0);
    EXPECT_THAT(store_error(options_in(dir.path())), HasSubstr("user id 65534"));
    ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
    EXPECT_THAT(store_error(options_in(dir.path())), HasSubstr("the cache directory"));
  }
}

TEST(CacheOwnership, DatabaseWritableByOthersIsRefused) {
  TempDir dir;
  { ProgramStore store(options_in(dir.path())); }
  const fs::path db = dir.path() / "cache.sqlite3";
  ::chmod(db.c_str(), 0666);
  const std::string message = store_error(options_in(dir.path()));
  EXPECT_THAT(message, HasSubstr(db.string()));
  EXPECT_THAT(message, HasSubstr("0666"));
  ::chmod(db.c_str(), 0600);
  EXPECT_EQ(store_error(options_in(dir.path())), "");
}

// ---------------------------------------------------------------------------------------------
// Links and other programs' databases

TEST(CacheLinks, DatabaseLinkedToAnEmptyFileIsRefusedAndTheFileStaysEmpty) {
  TempDir dir;
  const fs::path target = dir.path() / "empty";
  write_file(target, "");
  const fs::path cache = dir.path() / "cache";
  fs::create_directory(cache);
  fs::create_symlink(target, cache / "cache.sqlite3");
  EXPECT_THAT(store_error(options_in(cache)), HasSubstr("symbolic link"));
  EXPECT_EQ(fs::file_size(target), 0u);
}

TEST(CacheLinks, DatabaseLinkedToAMissingPathCreatesNothing) {
  TempDir dir;
  const fs::path missing = dir.path() / "missing.sqlite3";
  const fs::path cache = dir.path() / "cache";
  fs::create_directory(cache);
  fs::create_symlink(missing, cache / "cache.sqlite3");
  EXPECT_THAT(store_error(options_in(cache)), HasSubstr("symbolic link"));
  EXPECT_FALSE(fs::exists(missing));
}

TEST(CacheLinks, DatabaseLinkedToAnotherProgramsDatabaseLeavesItUntouched) {
  TempDir dir;
  const fs::path other = dir.path() / "notes.sqlite3";
  make_foreign_database(other);
  const std::string before = slurp(other);
  const fs::path cache = dir.path() / "cache";
  fs::create_directory(cache);
  fs::create_symlink(other, cache / "cache.sqlite3");
  EXPECT_THAT(store_error(options_in(cache)), HasSubstr("symbolic link"));
  EXPECT_EQ(slurp(other), before);
  EXPECT_FALSE(fs::exists(dir.path() / "notes.sqlite3-wal"));
}

TEST(CacheLinks, LinkedSideFilesAreRefused) {
  for (const char* suffix : {"-wal", "-shm"}) {
    TempDir dir;
    { ProgramStore store(options_in(dir.path())); }
    const fs::path side = dir.path() / (std::string("cache.sqlite3") + suffix);
    fs::remove(side);
    const fs::path target = dir.path() / "elsewhere";
    write_file(target, "keep me");
    fs::create_symlink(target, side);
    const std::string message = store_error(options_in(dir.path()));
    EXPECT_THAT(message, HasSubstr(side.string())) << suffix;
    EXPECT_THAT(message, HasSubstr("symbolic link")) << suffix;
    EXPECT_EQ(slurp(target), "keep me") << suffix;
  }
}

TEST(CacheLinks, AnotherProgramsDatabaseInTheCacheDirectoryIsLeftAlone) {
  TempDir dir;
  const fs::path db = dir.path() / "cache.sqlite3";
  make_foreign_database(db);
  const std::string before = slurp(db);
  const std::string message = store_error(options_in(dir.path()));
  EXPECT_THAT(message, HasSubstr("another program"));
  EXPECT_THAT(message, HasSubstr("weft cache clear"));
  EXPECT_EQ(slurp(db), before);
  EXPECT_FALSE(fs::exists(dir.path() / "cache.sqlite3-wal"));
  StoreOptions reader = options_in(dir.path());
  reader.writer = false;
  EXPECT_THAT(store_error(reader), HasSubstr("another program"));
}

TEST(CacheLinks, OlderWeftDatabaseIsUpgradedAndItsUnauthenticatedEntriesDropped) {
  TempDir dir;
  const fs::path db = dir.path() / "cache.sqlite3";
  // Schema version 2 as weft 0.1 wrote it (the columns that matter to the upgrade).
  raw_sql(db,
          "CREATE TABLE entries (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, ir_hash TEXT "
          "NOT NULL, weft_version TEXT NOT NULL, build_options TEXT NOT NULL, platform_name TEXT "
          "NOT NULL, platform_version TEXT NOT NULL, device_name TEXT NOT NULL, driver_version "
          "TEXT NOT NULL, opencl_c_version TEXT NOT NULL, compression TEXT NOT NULL, user_hook "
          "TEXT NOT NULL, checksum INTEGER NOT NULL, metadata_checksum INTEGER NOT NULL, "
          "uncompressed_size INTEGER NOT NULL, compressed_size INTEGER NOT NULL, metadata_size "
          "INTEGER NOT NULL, compile_time REAL NOT NULL, created REAL NOT NULL, last_used REAL "
          "NOT NULL, hit_count INTEGER NOT NULL DEFAULT 0, function_name TEXT NOT NULL DEFAULT "
          "''); CREATE TABLE payloads (id INTEGER PRIMARY KEY, binary BLOB NOT NULL, metadata "
          "BLOB NOT NULL); CREATE TABLE counters (name TEXT PRIMARY KEY, value REAL NOT NULL); "
          "INSERT INTO entries VALUES (1, 'k', 'h', 'v', 'b', 'p', 'pv', 'd', 'dv', 'c', 'zstd', "
          "'', 0, 0, 1, 1, 1, 1.0, 0, 0, 0, 'f'); INSERT INTO payloads VALUES (1, x'00', x'00'); "
          "PRAGMA user_version = 2;");
  ProgramStore store(options_in(dir.path()));
  EXPECT_EQ(store.stats().entries, 0u);
  ASSERT_EQ(store.insert(components("new"), binary_for(7), "", 1.0).status, InsertStatus::written);
  EXPECT_TRUE(store.lookup(components("new")).hit());
}

// ---------------------------------------------------------------------------------------------
// Readers

TEST(CacheReaders, ReaderNeverCreatesADatabase) {
  TempDir dir;
  StoreOptions reader = options_in(dir.path() / "cache");
  reader.writer = false;
  EXPECT_THAT(store_error(reader), HasSubstr("only reads"));
  EXPECT_FALSE(fs::exists(dir.path() / "cache"));
  fs::create_directory(dir.path() / "cache");
  EXPECT_THAT(store_error(reader), HasSubstr("only reads"));
  EXPECT_TRUE(fs::is_empty(dir.path() / "cache"));
}

TEST(CacheReaders, ReaderUsesAReadOnlyDatabaseAndChangesNoByte) {
  TempDir dir;
  const fs::path db = dir.path() / "cache.sqlite3";
  {
    ProgramStore writer(options_in(dir.path()));
    ASSERT_EQ(writer.insert(components("r"), binary_for(8), "plan", 1.0).status,
              InsertStatus::written);
  }
  // What a published, read-only cache looks like to its readers (permission bits bind
  // everyone but root; cache_trust_test's process test covers a real other user).
  ::chmod(db.c_str(), 0400);
  ::chmod(dir.path().c_str(), 0500);
  const std::string before = digest(db);
  {
    StoreOptions options = options_in(dir.path());
    options.writer = false;
    ProgramStore reader(options);
    for (int i = 0; i < 300; ++i) {  // past flush_every: a writer would record its hits
      const LookupResult found = reader.lookup(components("r"));
      ASSERT_TRUE(found.hit()) << found.detail;
    }
    EXPECT_FALSE(reader.lookup(components("absent")).hit());
    EXPECT_EQ(reader.stats().entries, 1u);
  }
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_EQ(digest(db), before);
}

// ---------------------------------------------------------------------------------------------
// The key file

TEST(CacheKeyFile, MissingKeyIsCreatedPrivateAndReused) {
  TempDir dir;
  const fs::path file = dir.path() / "config" / "weft" / "cache.key";
  const std::vector<std::uint8_t> key = load_key(file, {}, /*create=*/true);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_EQ(mode_of(file.parent_path()), 0700u);
  EXPECT_EQ(load_key(file, {}, /*create=*/true), key);
  EXPECT_NE(key, std::vector<std::uint8_t>(32, 0)) << "not random";
  TempDir other;
  EXPECT_NE(load_key(other.path() / "k", {}, true), key) << "two keys are equal";
}

TEST(CacheKeyFile, StoreUsesTheKeyFile) {
  TempDir dir;
  StoreOptions options = options_in(dir.path() / "cache", {});
  options.key_file = dir.path() / "key";
  {
    ProgramStore store(options);
    ASSERT_EQ(store.insert(components("k"), binary_for(9), "", 1.0).status, InsertStatus::written);
  }
  EXPECT_TRUE(fs::exists(options.key_file));
  ProgramStore again(options);
  EXPECT_TRUE(again.lookup(components("k")).hit());
  // With another key the entry does not verify.
  fs::remove(options.key_file);
  ProgramStore rekeyed(options);
  EXPECT_EQ(rekeyed.lookup(components("k")).reason, MissReason::unauthenticated);
}

TEST(CacheKeyFile, UnsafeKeysAreRefused) {
  TempDir dir;
  const fs::path file = dir.path() / "cache.key";
  write_file(file, std::string(32, 'k'));
  ::chmod(file.c_str(), 0644);
  EXPECT_THAT(open_error([&] { load_key(file, {}, false); }), HasSubstr("chmod 600"));
  ::chmod(file.c_str(), 0640);
  EXPECT_THAT(open_error([&] { load_key(file, {}, false); }), HasSubstr("0640"));
  TrustPolicy team;
  team.shared = true;
  EXPECT_EQ(load_key(file, team, false).size(), 32u);  // a team key is group-readable
  ::chmod(file.c_str(), 0660);
  EXPECT_THAT(open_error([&] { load_key(file, team, false); }), HasSubstr("chmod 640"));
  ::chmod(file.c_str(), 0600);
  EXPECT_EQ(load_key(file, {}, false).size(), 32u);

  const fs::path link = dir.path() / "link.key";
  fs::create_symlink(file, link);
  EXPECT_THAT(open_error([&] { load_key(link, {}, false); }), HasSubstr("symbolic link"));

  const fs::path short_key = dir.path() / "short.key";
  write_file(short_key, "12345678");
  ::chmod(short_key.c_str(), 0600);
  EXPECT_THAT(open_error([&] { load_key(short_key, {}, false); }), HasSubstr("8 bytes"));

  TrustPolicy someone_else;
  someone_else.owner = ::geteuid() + 1;
  EXPECT_THAT(open_error([&] { load_key(file, someone_else, false); }),
              HasSubstr("not to this user"));
  EXPECT_THAT(open_error([&] { load_key(dir.path() / "absent.key", {}, false); }),
              HasSubstr("cannot open"));
}

// ---------------------------------------------------------------------------------------------
// Starting over

// Damage kinds that `weft cache clear` used to fail on, each applied to a real cache.
struct Damage {
  const char* name;
  std::function<void(const fs::path& dir)> apply;
};

std::vector<Damage> damages() {
  auto db = [](const fs::path& dir) { return dir / "cache.sqlite3"; };
  return {
      {"garbage", [=](const fs::path& dir) { write_file(db(dir), std::string(10000, 'g')); }},
      {"truncated",
       [=](const fs::path& dir) { fs::resize_file(db(dir), fs::file_size(db(dir)) / 3 + 7); }},
      {"zeroed pages",
       [=](const fs::path& dir) {
         std::string bytes = slurp(db(dir));
         for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = 0;
         bytes[100] = 1;
         write_file(db(dir), bytes);
       }},
      {"header only", [=](const fs::path& dir) { fs::resize_file(db(dir), 100); }},
      {"another program's",
       [=](const fs::path& dir) {
         fs::remove(db(dir));
         make_foreign_database(db(dir));
       }},
      {"link",
       [=](const fs::path& dir) {
         fs::remove(db(dir));
         fs::create_symlink(dir / "target", db(dir));
         write_file(dir / "target", "keep");
       }},
      {"garbage WAL",
       [=](const fs::path& dir) { write_file(dir / "cache.sqlite3-wal", std::string(5000, 'w')); }},
  };
}

void fill(const fs::path& dir) {
  ProgramStore store(options_in(dir));
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(
        store.insert(components("e" + std::to_string(i)), binary_for(i, 20000), "", 1.0).status,
        InsertStatus::written);
}

TEST(CacheReset, WorksOnADatabaseInAnyState) {
  for (const Damage& damage : damages()) {
    TempDir dir;
    fill(dir.path());
    damage.apply(dir.path());
    ASSERT_NO_THROW(reset_database(options_in(dir.path()))) << damage.name;
    ProgramStore store(options_in(dir.path()));
    EXPECT_EQ(store.stats().entries, 0u) << damage.name;
    ASSERT_EQ(store.insert(components("fresh"), binary_for(1), "", 1.0).status,
              InsertStatus::written)
        << damage.name;
    EXPECT_TRUE(store.lookup(components("fresh")).hit()) << damage.name;
    if (fs::exists(dir.path() / "target")) {
      EXPECT_EQ(slurp(dir.path() / "target"), "keep");
    }
  }
}

TEST(CacheReset, CountsWhatAHealthyDatabaseHeldAndWorksWhileLocked) {
  TempDir dir;
  fill(dir.path());
  // Another process holds the write lock (a crashed writer's lock dies with it; a live one
  // keeps its unlinked file).
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / "cache.sqlite3").c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const GcResult removed = reset_database(options_in(dir.path()));
  EXPECT_EQ(removed.removed_entries, 20u);
  EXPECT_GT(removed.removed_bytes, 0u);
  ProgramStore store(options_in(dir.path()));
  EXPECT_EQ(store.stats().entries, 0u);
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
}

TEST(CacheReset, RefusesAnUntrustedDirectory) {
  TempDir dir;
  fill(dir.path());
  ::chmod(dir.path().c_str(), 0777);
  EXPECT_THAT(open_error([&] { reset_database(options_in(dir.path())); }), HasSubstr("chmod go-w"));
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_TRUE(fs::exists(dir.path() / "cache.sqlite3"));
}

// ---------------------------------------------------------------------------------------------
// The same, through `weft` processes.

#ifdef WEFT_CLI_PATH

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct ProcessRun {
  int code = -1;
  std::string out, err;
};

// Runs `weft ARGS` with the cache in `cache_dir` and the key in `key_file`; `env` adds
// variables ("NAME=value ..."), `launcher` comes before the executable (e.g. setpriv).
ProcessRun weft(const std::string& args, const fs::path& cache_dir, const fs::path& key_file,
                const std::string& env = "", const std::string& launcher = "",
                const std::string& cli = WEFT_CLI_PATH) {
  static int counter = 0;
  const fs::path out = fs::temp_directory_path() / ("weft-trust-" + std::to_string(::getpid()) +
                                                    "-" + std::to_string(counter++));
  const std::string command =
      "unset WEFT_CACHE_KEY_HOOK WEFT_CACHE_MAX_SIZE WEFT_LOG WEFT_CACHE_WRITER "
      "WEFT_CACHE_SHARED; export WEFT_CACHE=1 WEFT_CACHE_MIN_COMPILE_TIME=0 WEFT_CACHE_DIR=" +
      quote(cache_dir.string()) + " WEFT_CACHE_KEY_FILE=" + quote(key_file.string()) + " " + env +
      "; " + launcher + " " + quote(cli) + " " + args + " >" + quote(out.string() + ".out") +
      " 2>" + quote(out.string() + ".err") + " </dev/null";
  pid_t pid = -1;
  std::string shell = "/bin/sh", flag = "-c", text = command;
  char* argv[] = {shell.data(), flag.data(), text.data(), nullptr};
  ProcessRun run;
  if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) != 0) return run;
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = slurp(out.string() + ".out");
  run.err = slurp(out.string() + ".err");
  fs::remove(out.string() + ".out");
  fs::remove(out.string() + ".err");
  return run;
}

// Two programs of the same signature whose results differ everywhere.
const char kDouble[] = R"(func @double(%x: f32[1000]) -> (f32[1000]) {
  %c = constant[value=2.0] : f32[]
  %cb = broadcast_in_dim[dims=[]] %c : f32[1000]
  %y = mul %x, %cb : f32[1000]
  %z = tanh %y : f32[1000]
  return %z
}
)";
const char kNegate[] = R"(func @negate(%x: f32[1000]) -> (f32[1000]) {
  %y = neg %x : f32[1000]
  %z = exp %y : f32[1000]
  return %z
}
)";

class CacheTrustProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = dir_.path() / "cache";
    key_ = dir_.path() / "key";
    double_ = dir_.path() / "double.weft";
    negate_ = dir_.path() / "negate.weft";
    write_file(double_, kDouble);
    write_file(negate_, kNegate);
  }
  ProcessRun run(const fs::path& program, const std::string& env = "",
                 const std::string& launcher = "", const std::string& cli = WEFT_CLI_PATH) {
    return weft("run " + quote(program.string()) + " --check --print-limit 0", cache_, key_, env,
                launcher, cli);
  }
  // Runs both programs once so that both are stored (the write happens at exit).
  void fill() {
    for (const fs::path& program : {double_, negate_}) {
      const ProcessRun r = run(program);
      ASSERT_EQ(r.code, 0) << r.out << r.err;
      ASSERT_THAT(r.out, HasSubstr("cache miss")) << r.out;
    }
    ASSERT_THAT(run(double_).out, HasSubstr("cache hit"));
  }
  fs::path db() const { return cache_ / "cache.sqlite3"; }
  std::string key_of(const std::string& function) const {
    std::string key;
    sqlite3* handle = nullptr;
    sqlite3_open_v2(db().c_str(), &handle, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(handle, "SELECT key FROM entries WHERE function_name = ?", -1, &stmt,
                       nullptr);
    sqlite3_bind_text(stmt, 1, function.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(stmt) == SQLITE_ROW)
      key = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    return key;
  }
  // A correct run with the results checked against the interpreter.
  static void expect_correct(const ProcessRun& r) {
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("check against the reference interpreter"));
    EXPECT_THAT(r.out, Not(HasSubstr("MISMATCH")));
  }

  TempDir dir_;
  fs::path cache_, key_, double_, negate_;
};

TEST_F(CacheTrustProcesses, PayloadOfAnotherProgramIsNotRun) {
  fill();
  const std::string victim = key_of("double"), donor = key_of("negate");
  ASSERT_FALSE(victim.empty());
  ASSERT_FALSE(donor.empty());
  raw_sql(db(),
          "UPDATE payloads SET (binary, metadata) = (SELECT p.binary, p.metadata FROM payloads p "
          "JOIN entries e ON e.id = p.id WHERE e.key = '" +
              donor + "') WHERE id = (SELECT id FROM entries WHERE key = '" + victim +
              "'); UPDATE entries SET (checksum, metadata_checksum, uncompressed_size, "
              "compressed_size, metadata_size) = (SELECT checksum, metadata_checksum, "
              "uncompressed_size, compressed_size, metadata_size FROM entries WHERE key = '" +
              donor + "') WHERE key = '" + victim + "';");
  const ProcessRun r = run(double_);
  expect_correct(r);
  EXPECT_THAT(r.out, HasSubstr("cache miss"));
  EXPECT_THAT(r.err, HasSubstr("MAC does not verify"));
  EXPECT_THAT(r.err, HasSubstr(victim));
  // Rewritten at exit: the next run hits without a word.
  const ProcessRun again = run(double_);
  expect_correct(again);
  EXPECT_THAT(again.out, HasSubstr("cache hit"));
  EXPECT_EQ(again.err, "");
}

// The launch plan's output buffer shrunk to 4 bytes with its checksum recomputed: what made
// `weft run` crash. Without the key the MAC stops it; with the key (resealed) the plan check
// does, because a hit runs the plan made from the graph, never the stored one.
TEST_F(CacheTrustProcesses, LaunchPlanWithAShrunkenOutputBufferIsNeverRun) {
  for (const bool resealed : {false, true}) {
    fill();
    std::string metadata;
    {
      sqlite3* handle = nullptr;
      sqlite3_open_v2(db().c_str(), &handle, SQLITE_OPEN_READONLY, nullptr);
      sqlite3_stmt* stmt = nullptr;
      sqlite3_prepare_v2(handle,
                         "SELECT p.metadata FROM payloads p JOIN entries e ON e.id = p.id "
                         "WHERE e.function_name = 'double'",
                         -1, &stmt, nullptr);
      ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
      metadata.assign(static_cast<const char*>(sqlite3_column_blob(stmt, 0)),
                      static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
      sqlite3_finalize(stmt);
      sqlite3_close(handle);
    }
    const std::string full = "\"bytes\":4000,\"index\":0,\"role\":\"output\"";
    const auto at = metadata.find(full);
    ASSERT_NE(at, std::string::npos) << metadata.substr(0, 400);
    metadata.replace(at, full.size(), "\"bytes\":4,\"index\":0,\"role\":\"output\"");
    const auto bytes =
        std::span(reinterpret_cast<const std::uint8_t*>(metadata.data()), metadata.size());
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &handle), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(handle,
                       "UPDATE payloads SET metadata = ?1 WHERE id = (SELECT id FROM entries "
                       "WHERE function_name = 'double'); UPDATE entries SET metadata_checksum = "
                       "?2, metadata_size = ?3 WHERE function_name = 'double'",
                       -1, &stmt, nullptr);
    sqlite3_bind_blob(stmt, 1, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_DONE);
    sqlite3_finalize(stmt);
    sqlite3_prepare_v2(handle,
                       "UPDATE entries SET metadata_checksum = ?1, metadata_size = ?2 WHERE "
                       "function_name = 'double'",
                       -1, &stmt, nullptr);
    sqlite3_bind_int64(stmt, 1, static_cast<std::int64_t>(detail::checksum(bytes)));
    sqlite3_bind_int64(stmt, 2, static_cast<std::int64_t>(bytes.size()));
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_DONE);
    sqlite3_finalize(stmt);
    sqlite3_close(handle);
    if (resealed) {
      const std::string secret = slurp(key_);
      test::reseal_entries(
          db(), std::span(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size()));
    }

    const ProcessRun r = run(double_);
    expect_correct(r);
    EXPECT_THAT(r.out, HasSubstr("cache miss"));
    EXPECT_THAT(r.err, HasSubstr(resealed ? "not the one weft generates" : "MAC does not verify"))
        << r.err;
    fs::remove_all(cache_);
  }
}

TEST_F(CacheTrustProcesses, WorldWritableCacheDirectoryRunsUncachedWithOneWarning) {
  fill();
  ::chmod(cache_.c_str(), 0777);
  const ProcessRun r = run(double_);
  expect_correct(r);
  EXPECT_THAT(r.out, HasSubstr("cache off"));
  EXPECT_THAT(r.err, HasSubstr("chmod go-w " + cache_.string()));
  EXPECT_THAT(r.err, HasSubstr("Running without the persistent cache"));
  // A team cache may be group-writable, never world-writable.
  const ProcessRun team = run(double_, "WEFT_CACHE_SHARED=1");
  expect_correct(team);
  EXPECT_THAT(team.err, HasSubstr("chmod o-w"));
  ::chmod(cache_.c_str(), 0770);
  const ProcessRun shared = run(double_, "WEFT_CACHE_SHARED=1");
  expect_correct(shared);
  EXPECT_EQ(shared.err, "");
  EXPECT_THAT(shared.out, HasSubstr("cache hit"));
}

TEST_F(CacheTrustProcesses, DatabaseOfAnotherUserIsNotUsed) {
  fill();
  // Writable by others: refused for anyone. Owned by nobody: refused (only root can make it).
  ::chmod(db().c_str(), 0666);
  const ProcessRun open_mode = run(double_);
  expect_correct(open_mode);
  EXPECT_THAT(open_mode.out, HasSubstr("cache off"));
  EXPECT_THAT(open_mode.err, HasSubstr("0666"));
  ::chmod(db().c_str(), 0600);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(db().c_str(), 65534, 65534), 0);
    const ProcessRun nobody = run(double_);
    expect_correct(nobody);
    EXPECT_THAT(nobody.out, HasSubstr("cache off"));
    EXPECT_THAT(nobody.err, HasSubstr("user id 65534"));
  }
}

TEST_F(CacheTrustProcesses, LinkToAnotherProgramsDatabaseIsNotFollowed) {
  const fs::path other = dir_.path() / "notes.sqlite3";
  make_foreign_database(other);
  const std::string before = slurp(other);
  fs::create_directory(cache_);
  fs::create_symlink(other, db());
  const ProcessRun r = run(double_);
  expect_correct(r);
  EXPECT_THAT(r.err, HasSubstr("symbolic link"));
  EXPECT_EQ(slurp(other), before);
  // `weft cache clear` removes the link, not what it points to, and the cache works again.
  const ProcessRun cleared = weft("cache clear", cache_, key_);
  EXPECT_EQ(cleared.code, 0) << cleared.out << cleared.err;
  EXPECT_EQ(slurp(other), before);
  EXPECT_FALSE(fs::is_symlink(db()));
  const ProcessRun after = run(double_);
  expect_correct(after);
  EXPECT_EQ(after.err, "");
}

// A team's published cache that this user may read but not write: the reader opens it
// read-only and hits. As root the reader runs as `nobody` (group `nogroup` may read the cache
// and the team key); otherwise permission bits make the cache read-only for this user.
TEST_F(CacheTrustProcesses, ReaderProcessUsesAReadOnlyCache) {
  fill();
  const std::string before = digest(db());
  std::string launcher;
  std::string cli = WEFT_CLI_PATH;
  if (::geteuid() == 0) {
    constexpr uid_t kNobody = 65534;
    const fs::path home = dir_.path() / "nobody-home";
    fs::create_directory(home);
    // The build tree may sit in a directory nobody cannot enter (a clone in a mktemp -d).
    const fs::path copy = dir_.path() / "weft";
    fs::copy_file(WEFT_CLI_PATH, copy);
    ::chmod(copy.c_str(), 0755);
    cli = copy.string();
    ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
    ::chmod(dir_.path().c_str(), 0755);
    // The team's group may read the directory, the database with its side files, and the key.
    std::vector<fs::path> readable{cache_, key_};
    for (const auto& entry : fs::directory_iterator(cache_)) readable.push_back(entry.path());
    for (const fs::path& path : readable) {
      ASSERT_EQ(::chown(path.c_str(), 0, kNobody), 0);
      ::chmod(path.c_str(), path == cache_ ? 0750 : 0640);
    }
    launcher =
        "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=" + quote(home.string()) +
        " XDG_CACHE_HOME=" + quote((home / "cache").string()) +
        " POCL_CACHE_DIR=" + quote((home / "pocl").string()) + " WEFT_CACHE_SHARED=1";
  } else {
    ::chmod(db().c_str(), 0400);
    ::chmod(cache_.c_str(), 0500);
  }
  const ProcessRun r = run(double_, "WEFT_CACHE_WRITER=0", launcher, cli);
  ::chmod(cache_.c_str(), 0700);
  expect_correct(r);
  EXPECT_THAT(r.out, HasSubstr("cache hit"));
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(digest(db()), before);
}

TEST_F(CacheTrustProcesses, ClearWorksOnEveryDamagedDatabase) {
  for (const Damage& damage : damages()) {
    fill();
    damage.apply(cache_);
    const ProcessRun cleared = weft("cache clear", cache_, key_);
    EXPECT_EQ(cleared.code, 0) << damage.name << "\n" << cleared.out << cleared.err;
    EXPECT_THAT(cleared.out, HasSubstr("afresh")) << damage.name;
    const ProcessRun r = run(double_);
    expect_correct(r);
    EXPECT_THAT(r.out, HasSubstr("cache miss")) << damage.name;
    EXPECT_EQ(r.err, "") << damage.name;
    const ProcessRun hit = run(double_);
    EXPECT_THAT(hit.out, HasSubstr("cache hit")) << damage.name;
    fs::remove_all(cache_);
  }
}

#endif  // WEFT_CLI_PATH

}  // namespace
}  // namespace weft::cache

// The persistent program store against real SQLite databases in temporary directories.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/raw_sqlite.h"
#include "support/reseal_entries.h"
#include "support/temp_dir.h"
#include "weft/cache/explain.h"
#include "weft/cache/store.h"
#include "weft/error.h"

namespace weft::cache {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Each test file names its directories after itself.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-cache-test") {}
};

CacheKeyComponents components(const std::string& ir = "graph f(x) { ret x }") {
  CacheKeyComponents c;
  c.ir_text = ir;
  c.weft_version = "0.1.0";
  c.build_options = "-cl-std=CL1.2";
  c.platform_name = "Portable Computing Language";
  c.platform_version = "OpenCL 3.0 PoCL 3.1";
  c.device_name = "cpu-haswell";
  c.driver_version = "3.1";
  c.opencl_c_version = "OpenCL C 1.2 PoCL";
  return c;
}

// Deterministic, partly compressible bytes so that zstd has something to do.
std::vector<std::uint8_t> binary_for(int seed, std::size_t size = 4096) {
  std::vector<std::uint8_t> bytes(size);
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (std::size_t i = 0; i < size; ++i) {
    bytes[i] = i % 4 == 0 ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(i);
  }
  return bytes;
}

// The entry key of these tests (cache_trust_test.cpp covers key files).
std::vector<std::uint8_t> test_key() {
  return std::vector<std::uint8_t>(32, 0x5a);
}

StoreOptions options_in(const fs::path& dir) {
  StoreOptions options;
  options.directory = dir;
  options.busy_timeout = std::chrono::milliseconds(200);
  options.key = test_key();
  return options;
}

using test::raw_sql;

std::int64_t count_rows(const fs::path& db_path, const std::string& table) {
  sqlite3* db = nullptr;
  sqlite3_open(db_path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &stmt, nullptr);
  sqlite3_step(stmt);
  const std::int64_t n = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

TEST(CacheKey, StableAndHex) {
  const std::string key = compute_key(components());
  EXPECT_EQ(key, compute_key(components()));
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(compute_key(summarize(components())), key);
}

TEST(CacheKey, EveryComponentChangesTheKey) {
  const CacheKeyComponents base = components();
  const std::string base_key = compute_key(base);
  std::set<std::string> keys{base_key};
  const std::vector<std::pair<std::string, std::string CacheKeyComponents::*>> fields = {
      {"ir_text", &CacheKeyComponents::ir_text},
      {"weft_version", &CacheKeyComponents::weft_version},
      {"build_options", &CacheKeyComponents::build_options},
      {"platform_name", &CacheKeyComponents::platform_name},
      {"platform_version", &CacheKeyComponents::platform_version},
      {"device_name", &CacheKeyComponents::device_name},
      {"driver_version", &CacheKeyComponents::driver_version},
      {"opencl_c_version", &CacheKeyComponents::opencl_c_version},
      {"compression", &CacheKeyComponents::compression},
      {"user_hook", &CacheKeyComponents::user_hook}};
  for (const auto& [name, member] : fields) {
    CacheKeyComponents changed = base;
    changed.*member += "x";
    keys.insert(compute_key(changed));
    EXPECT_THAT(differing_components(summarize(base), summarize(changed)), ElementsAre(name));
  }
  EXPECT_EQ(keys.size(), fields.size() + 1);
  // Moving a byte from one component to the next must not collide.
  CacheKeyComponents a = base, b = base;
  a.platform_name = "ab";
  a.platform_version = "c";
  b.platform_name = "a";
  b.platform_version = "bc";
  EXPECT_NE(compute_key(a), compute_key(b));
}

TEST(ProgramStore, RoundTripWithMetadata) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  const auto binary = binary_for(1, 100000);
  const InsertResult inserted = store.insert(components(), binary, R"({"plan":1})", 0.25);
  ASSERT_EQ(inserted.status, InsertStatus::written) << inserted.detail;

  const LookupResult found = store.lookup(components());
  ASSERT_TRUE(found.hit()) << found.detail;
  EXPECT_EQ(found.reason, MissReason::none);
  EXPECT_EQ(found.binary, binary);
  EXPECT_EQ(found.metadata, R"({"plan":1})");
  EXPECT_DOUBLE_EQ(found.compile_time_s, 0.25);

  const LookupResult missing = store.lookup(components("other graph"));
  EXPECT_EQ(missing.status, LookupStatus::miss);
  EXPECT_EQ(missing.reason, MissReason::not_found);

  EXPECT_EQ(store.insert(components(), binary, "", 0.25).status, InsertStatus::already_present);

  const auto entry = store.show(compute_key(components()));
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->uncompressed_size, binary.size());
  EXPECT_LT(entry->compressed_size, binary.size());
  EXPECT_EQ(entry->components, summarize(components()));
  EXPECT_FALSE(store.show("0123").has_value());

  // Reopening sees the same entry, with the hit written back.
  store.flush();
  ProgramStore reopened(options_in(dir.path()));
  ASSERT_TRUE(reopened.lookup(components()).hit());
  EXPECT_EQ(reopened.show(compute_key(components()))->hit_count, 1u);
}

TEST(ProgramStore, DefaultDirectoryFollowsXdg) {
  TempDir dir;
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", dir.path().c_str(), 1);
  EXPECT_EQ(default_cache_directory(), dir.path() / "weft");
  if (old) {
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_CACHE_HOME");
  }
}

TEST(ProgramStore, CreatesPrivateDirectoryAndFile) {
  TempDir dir;
  const fs::path nested = dir.path() / "a" / "b";
  ProgramStore store(options_in(nested));
  struct stat info {};
  ASSERT_EQ(::stat(nested.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(store.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(store.path(), nested / "cache.sqlite3");
}

TEST(ProgramStore, Thresholds) {
  TempDir dir;
  StoreOptions options = options_in(dir.path());
  options.min_compile_time_s = 0.05;
  options.min_entry_bytes = 1000;
  ProgramStore store(options);
  EXPECT_EQ(store.insert(components("a"), binary_for(1), "", 0.01).status,
            InsertStatus::below_min_compile_time);
  EXPECT_EQ(store.insert(components("b"), binary_for(1, 999), "", 1.0).status,
            InsertStatus::below_min_size);
  EXPECT_EQ(store.insert(components("c"), binary_for(1, 1000), "", 0.05).status,
            InsertStatus::written);
  EXPECT_EQ(store.stats().entries, 1u);

  const StoreOptions defaults;
  EXPECT_DOUBLE_EQ(defaults.min_compile_time_s, 0.01);
  EXPECT_EQ(defaults.min_entry_bytes, 0u);
  EXPECT_EQ(defaults.max_bytes, std::uint64_t{1} << 30);
}

// Damages the stored entry with `sql` (then, with `reseal`, gives it a valid MAC again, as the
// key's owner could), and expects a corrupt miss that deletes the row.
void expect_repaired(const std::string& sql, MissReason reason, bool reseal = false) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  ASSERT_EQ(store.insert(components(), binary_for(7, 20000), "meta", 1.0).status,
            InsertStatus::written);
  raw_sql(store.path(), sql);
  if (reseal) test::reseal_entries(store.path(), test_key());
  const LookupResult damaged = store.lookup(components());
  EXPECT_EQ(damaged.status, LookupStatus::corrupt);
  EXPECT_EQ(damaged.reason, reason);
  EXPECT_THAT(damaged.detail, HasSubstr("entry deleted"));
  EXPECT_THAT(damaged.detail, HasSubstr(compute_key(components())));
  EXPECT_EQ(count_rows(store.path(), "entries"), 0);
  EXPECT_EQ(count_rows(store.path(), "payloads"), 0);
  // The next lookup is an ordinary miss, and the next insert heals the cache.
  EXPECT_EQ(store.lookup(components()).reason, MissReason::not_found);
  EXPECT_EQ(store.insert(components(), binary_for(7, 20000), "meta", 1.0).status,
            InsertStatus::written);
  EXPECT_TRUE(store.lookup(components()).hit());
  EXPECT_EQ(store.stats().process.misses[static_cast<std::size_t>(reason)], 1u);
}

TEST(ProgramStore, ChecksumMismatchIsAMissThatDeletesTheRow) {
  expect_repaired("UPDATE entries SET checksum = checksum + 1", MissReason::checksum_mismatch);
}

TEST(ProgramStore, GarbledBlobFailsAuthenticationAndIsDeleted) {
  expect_repaired("UPDATE payloads SET binary = zeroblob(length(binary))",
                  MissReason::unauthenticated);
}

TEST(ProgramStore, GarbledBlobWithAValidMacIsADecompressionFailure) {
  expect_repaired("UPDATE payloads SET binary = zeroblob(length(binary))",
                  MissReason::decompression_failed, /*reseal=*/true);
}

TEST(ProgramStore, EditedMetadataFailsAuthentication) {
  expect_repaired("UPDATE payloads SET metadata = CAST('mete' AS BLOB)",
                  MissReason::unauthenticated);
}

TEST(ProgramStore, TruncatedBlobIsAMissThatDeletesTheRow) {
  expect_repaired("UPDATE payloads SET binary = substr(binary, 1, length(binary) / 2)",
                  MissReason::truncated);
}

TEST(ProgramStore, MissingPayloadIsAMissThatDeletesTheRow) {
  expect_repaired("DELETE FROM payloads", MissReason::truncated);
}

TEST(ProgramStore, NotADatabaseIsAClearError) {
  TempDir dir;
  {
    std::ofstream junk(dir.path() / "cache.sqlite3");
    junk << std::string(8192, 'j');
  }
  try {
    ProgramStore store(options_in(dir.path()));
    FAIL() << "opened a file that is not a database";
  } catch (const CacheError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a SQLite database"));
    EXPECT_THAT(e.what(), HasSubstr((dir.path() / "cache.sqlite3").string()));
  }
}

TEST(ProgramStore, UnwritableDirectoryIsAClearError) {
  TempDir dir;
  // A directory below a regular file can never be created, even by root.
  { std::ofstream(dir.path() / "plain-file") << "x"; }
  try {
    ProgramStore store(options_in(dir.path() / "plain-file" / "weft"));
    FAIL() << "opened a store below a regular file";
  } catch (const CacheError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot create directory"));
  }
  // Permission bits only restrict non-root users; root is covered by the case above.
  if (::geteuid() != 0) {
    const fs::path locked = dir.path() / "locked";
    fs::create_directory(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_THROW(ProgramStore(options_in(locked)), CacheError);
  }
}

TEST(ProgramStore, LockedDatabaseReportsBusyWithinTheTimeout) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  ASSERT_EQ(store.insert(components("kept"), binary_for(1), "", 1.0).status, InsertStatus::written);

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(store.path().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE; INSERT INTO counters VALUES ('x', 1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);

  const auto start = std::chrono::steady_clock::now();
  const InsertResult blocked = store.insert(components("new"), binary_for(2), "", 1.0);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(blocked.status, InsertStatus::error);
  EXPECT_THAT(blocked.detail, HasSubstr("busy timeout"));
  EXPECT_LT(waited, std::chrono::seconds(2));
  // WAL readers are not blocked by the writer.
  EXPECT_TRUE(store.lookup(components("kept")).hit());

  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(store.insert(components("new"), binary_for(2), "", 1.0).status, InsertStatus::written);
}

TEST(ProgramStore, LockedRollbackJournalDatabaseFailsToOpenWithinTheTimeout) {
  TempDir dir;
  const fs::path path = dir.path() / "cache.sqlite3";
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const auto start = std::chrono::steady_clock::now();
  try {
    ProgramStore store(options_in(dir.path()));
    FAIL() << "opened a database another connection holds exclusively";
  } catch (const CacheError& e) {
    EXPECT_THAT(e.what(), HasSubstr("busy timeout"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

TEST(ProgramStore, FourProcessesWritingOverlappingKeys) {
  TempDir dir;
  StoreOptions options = options_in(dir.path());
  options.busy_timeout = std::chrono::milliseconds(20000);
  { ProgramStore create(options); }  // no connection may be open across fork()

  constexpr int kProcesses = 4;
  constexpr int kPerProcess = 40;
  constexpr int kStride = 20;  // each process overlaps half of its neighbour's keys
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      {
        ProgramStore store(options);
        for (int k = p * kStride; k < p * kStride + kPerProcess; ++k) {
          const InsertStatus status =
              store.insert(components("g" + std::to_string(k)), binary_for(k), "m", 1.0).status;
          if (status != InsertStatus::written && status != InsertStatus::already_present) {
            ++failures;
          }
          if (!store.lookup(components("g" + std::to_string(k))).hit()) ++failures;
        }
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  const int distinct = (kProcesses - 1) * kStride + kPerProcess;
  ProgramStore store(options);
  std::set<std::string> expected;
  for (int k = 0; k < distinct; ++k)
    expected.insert(compute_key(components("g" + std::to_string(k))));
  std::set<std::string> actual;
  for (const EntryInfo& entry : store.list()) actual.insert(entry.key);
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(count_rows(store.path(), "entries"), distinct);
  EXPECT_EQ(count_rows(store.path(), "payloads"), distinct);
  for (int k = 0; k < distinct; ++k) {
    const LookupResult found = store.lookup(components("g" + std::to_string(k)));
    ASSERT_TRUE(found.hit()) << k << ": " << found.detail;
    EXPECT_EQ(found.binary, binary_for(k));
  }
  const StoreStats stats = store.stats();
  EXPECT_EQ(stats.total.writes, static_cast<std::uint64_t>(distinct));  // no duplicate write
  EXPECT_EQ(stats.total.hits, static_cast<std::uint64_t>(kProcesses * kPerProcess + distinct));
}

TEST(ProgramStore, LeastRecentlyUsedEvictionOrder) {
  TempDir dir;
  StoreOptions options = options_in(dir.path());
  ProgramStore probe(options);
  ASSERT_EQ(probe.insert(components("size"), binary_for(0), "", 1.0).status, InsertStatus::written);
  const std::uint64_t entry_bytes = probe.list().front().compressed_size;
  probe.clear();

  options.max_bytes = 3 * entry_bytes + entry_bytes / 2;  // room for three entries
  ProgramStore store(options);
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_EQ(store.insert(components(name), binary_for(0), "", 1.0).status, InsertStatus::written);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(store.lookup(components("a")).hit());  // a is now the most recently used
  const InsertResult d = store.insert(components("d"), binary_for(0), "", 1.0);
  ASSERT_EQ(d.status, InsertStatus::written);
  EXPECT_EQ(d.evicted, 1u);
  EXPECT_FALSE(store.lookup(components("b")).hit());  // the least recently used went first
  for (const char* name : {"a", "c", "d"}) EXPECT_TRUE(store.lookup(components(name)).hit());
  EXPECT_EQ(store.stats().total.evictions, 1u);

  options.max_bytes = entry_bytes / 2;
  ProgramStore tiny(options);
  EXPECT_EQ(tiny.insert(components("huge"), binary_for(0), "", 1.0).status,
            InsertStatus::too_large);
}

TEST(ProgramStore, GcByAgeAndSize) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  for (const char* name : {"old", "mid", "new"}) {
    ASSERT_EQ(store.insert(components(name), binary_for(3), "", 1.0).status, InsertStatus::written);
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  raw_sql(store.path(), "UPDATE entries SET last_used = " + std::to_string(now - 30 * 86400) +
                            " WHERE key = '" + compute_key(components("old")) + "'");
  raw_sql(store.path(), "UPDATE entries SET last_used = " + std::to_string(now - 3600) +
                            " WHERE key = '" + compute_key(components("mid")) + "'");
  const GcResult aged = store.gc(std::nullopt, std::chrono::hours(24 * 7));
  EXPECT_EQ(aged.removed_entries, 1u);
  EXPECT_FALSE(store.show(compute_key(components("old"))).has_value());

  const std::uint64_t one = store.list().front().compressed_size;
  const GcResult sized = store.gc(one, std::nullopt);
  EXPECT_EQ(sized.removed_entries, 1u);
  EXPECT_FALSE(store.show(compute_key(components("mid"))).has_value());
  EXPECT_TRUE(store.show(compute_key(components("new"))).has_value());

  EXPECT_EQ(store.clear().removed_entries, 1u);
  EXPECT_EQ(store.stats().entries, 0u);
}

TEST(ProgramStore, ReadOnlyProcessNeverWrites) {
  TempDir dir;
  {
    ProgramStore writer(options_in(dir.path()));
    ASSERT_EQ(writer.insert(components("shared"), binary_for(5), "", 1.0).status,
              InsertStatus::written);
  }
  StoreOptions options = options_in(dir.path());
  options.writer = false;
  ProgramStore reader(options);
  EXPECT_EQ(reader.insert(components("mine"), binary_for(6), "", 1.0).status,
            InsertStatus::read_only);
  EXPECT_TRUE(reader.lookup(components("shared")).hit());
  EXPECT_FALSE(reader.lookup(components("mine")).hit());
  EXPECT_THROW(reader.clear(), CacheError);
  EXPECT_THROW(reader.gc(0), CacheError);
  const StoreStats stats = reader.stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.process.hits, 1u);
  EXPECT_EQ(stats.total.hits, 0u);  // a reader keeps its counts in memory only
  EXPECT_EQ(reader.show(compute_key(components("shared")))->hit_count, 0u);
}

TEST(ProgramStore, StatsAccumulateAcrossStoreInstances) {
  TempDir dir;
  ProgramStore first(options_in(dir.path()));
  ProgramStore second(options_in(dir.path()));
  ASSERT_EQ(first.insert(components("x"), binary_for(1), "", 0.5).status, InsertStatus::written);
  EXPECT_TRUE(first.lookup(components("x")).hit());
  EXPECT_TRUE(second.lookup(components("x")).hit());
  EXPECT_TRUE(second.lookup(components("x")).hit());
  EXPECT_FALSE(second.lookup(components("y")).hit());
  first.flush();
  second.flush();

  const StoreStats one = first.stats();
  EXPECT_EQ(one.process.hits, 1u);
  EXPECT_EQ(one.process.writes, 1u);
  EXPECT_EQ(one.total.hits, 3u);
  EXPECT_EQ(one.total.misses[static_cast<std::size_t>(MissReason::not_found)], 1u);
  EXPECT_EQ(one.total.total_misses(), 1u);
  EXPECT_EQ(one.total.writes, 1u);
  EXPECT_DOUBLE_EQ(one.total.compile_time_saved_s, 1.5);
  EXPECT_EQ(one.entries, 1u);
  EXPECT_GT(one.bytes, 0u);
  EXPECT_EQ(one.uncompressed_bytes, binary_for(1).size());
  EXPECT_EQ(second.stats().process.hits, 2u);
  EXPECT_EQ(first.show(compute_key(components("x")))->hit_count, 3u);
}

TEST(ProgramStore, ExplainNamesTheDifferingComponents) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  CacheKeyComponents stored = components("graph");
  ASSERT_EQ(store.insert(stored, binary_for(1), "", 1.0).status, InsertStatus::written);
  CacheKeyComponents other_driver = stored;
  other_driver.driver_version = "4.0";
  other_driver.build_options = "-cl-fast-relaxed-math";
  other_driver.user_hook = "x";
  ASSERT_EQ(store.insert(other_driver, binary_for(2), "", 1.0).status, InsertStatus::written);

  CacheKeyComponents wanted = stored;
  wanted.driver_version = "4.0";
  ASSERT_FALSE(store.lookup(wanted).hit());
  const auto candidates = store.explain(wanted);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_THAT(candidates[0].differing, ElementsAre("driver_version"));
  EXPECT_EQ(candidates[0].entry.key, compute_key(stored));
  EXPECT_THAT(candidates[1].differing, ElementsAre("build_options", "user_hook"));
  EXPECT_TRUE(store.explain(components("unseen graph")).empty());
}

// Only entries that existed when the lookup missed can be why it missed: an entry stored
// afterwards, however near, is not named, and with none before the miss it was a first compile.
TEST(ProgramStore, ExplainNamesOnlyEntriesThatExistedAtTheMiss) {
  TempDir dir;
  ProgramStore store(options_in(dir.path()));
  CacheKeyComponents before = components("graph");
  before.driver_version = "3.0";
  ASSERT_EQ(store.insert(before, binary_for(1), "", 1.0).status, InsertStatus::written);
  const CacheKeyComponents wanted = components("graph");
  ASSERT_FALSE(store.lookup(wanted).hit());
  // Stored after the miss: one differing only in the hook, nearer than `before`, and the
  // missed key itself.
  CacheKeyComponents later = wanted;
  later.user_hook = "later";
  ASSERT_EQ(store.insert(later, binary_for(2), "", 1.0).status, InsertStatus::written);
  ASSERT_EQ(store.insert(wanted, binary_for(3), "", 1.0).status, InsertStatus::written);

  const auto explained = explain_miss(store, compute_key(wanted));
  ASSERT_TRUE(explained.has_value());
  EXPECT_TRUE(explained->now_cached);
  ASSERT_EQ(explained->nearest.size(), 1u);
  EXPECT_EQ(explained->nearest[0].entry.key, compute_key(before));
  EXPECT_THAT(explained->nearest[0].differing, ElementsAre("driver_version"));

  // A first compile of another graph, with a neighbour of the same IR stored only afterwards.
  const CacheKeyComponents first = components("first graph");
  ASSERT_FALSE(store.lookup(first).hit());
  CacheKeyComponents first_other_options = first;
  first_other_options.build_options = "-cl-fast-relaxed-math";
  ASSERT_EQ(store.insert(first_other_options, binary_for(4), "", 1.0).status,
            InsertStatus::written);
  const auto first_explained = explain_miss(store, compute_key(first));
  ASSERT_TRUE(first_explained.has_value());
  EXPECT_TRUE(first_explained->nearest.empty());
  EXPECT_THAT(format_explanation(*first_explained), HasSubstr("a first compile"));
  // `weft cache explain` lists both misses, newest first, the same way.
  const auto recent = explain_recent_misses(store, 2);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_TRUE(recent[0].nearest.empty());
  ASSERT_EQ(recent[1].nearest.size(), 1u);
  EXPECT_EQ(recent[1].nearest[0].entry.key, compute_key(before));
}

}  // namespace
}  // namespace weft::cache

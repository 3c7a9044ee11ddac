// ProgramStore: the persistent, multi-process program cache in one SQLite database.
// Opening throws weft::CacheError; lookups and inserts report failures as statuses so a caller
// can log once and run uncached. Thread-safe within a process; one store per process per file.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weft/cache/key.h"

namespace weft::cache {

// $XDG_CACHE_HOME/weft, else $HOME/.cache/weft. Throws CacheError when neither is set.
std::filesystem::path default_cache_directory();

// The largest program binary an entry may hold (uncompressed). Real ones are at most tens of
// MiB; the bound keeps a damaged size field from asking for gigabytes.
inline constexpr std::uint64_t kMaxBinaryBytes = std::uint64_t{256} << 20;

struct StoreOptions {
  // Directory holding the database; empty means default_cache_directory(). Created 0700.
  std::filesystem::path directory;
  std::string file_name = "cache.sqlite3";
  // False: this process never writes (no inserts, no hit bookkeeping, no repair, no gc) and
  // opens the database read-only; it never creates one.
  bool writer = true;
  // A team cache: the directory and database may belong to another user and be writable by
  // the group (see TrustPolicy). Private to this user otherwise.
  bool shared = false;
  // The secret that authenticates entries: `key` when not empty, else the contents of
  // `key_file`, else of default_key_file(). Read at the first lookup or insert, and created
  // there when missing (see load_key).
  std::filesystem::path key_file;
  std::vector<std::uint8_t> key;
  // A hit costs 1-7 ms on PoCL (read, decompress, clCreateProgramWithBinary); a program that
  // compiled in less than 10 ms would gain nothing from a row.
  double min_compile_time_s = 0.01;
  // Uncompressed binary bytes below which nothing is written. 0: a local SQLite file has no
  // per-file block overhead to avoid (unlike JAX's one-file-per-entry layout).
  std::uint64_t min_entry_bytes = 0;
  // Size cap over stored (compressed) bytes; least-recently-used entries go past it.
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  // How long any operation waits for another process's lock before reporting busy.
  std::chrono::milliseconds busy_timeout{1000};
  int zstd_level = 3;
  // Hits are remembered in memory and written (last_used, hit_count, counters) in one
  // transaction once this many lookups are pending, on insert, stats() and flush().
  std::size_t flush_every = 256;
};

enum class LookupStatus { hit, miss, corrupt, error };

enum class MissReason {
  none,                  // a hit
  not_found,             // no entry under the key
  checksum_mismatch,     // decompressed bytes do not match the stored XXH3-64
  decompression_failed,  // zstd rejected the blob
  truncated,             // blob shorter than recorded, or payload row missing
  database_error,        // SQLite failed (busy past the timeout, I/O, corruption)
  rejected,              // the caller could not use the entry (the driver refused the binary)
  unauthenticated,       // its MAC does not verify under this user's cache key
};
inline constexpr std::size_t kMissReasonCount = 8;
std::string_view to_string(MissReason reason);
std::string_view to_string(LookupStatus status);

struct LookupResult {
  LookupStatus status = LookupStatus::miss;
  MissReason reason = MissReason::not_found;
  std::string detail;  // for corrupt/error: what happened, in one line to log once
  std::vector<std::uint8_t> binary;
  std::string metadata;
  double compile_time_s = 0;

  bool hit() const { return status == LookupStatus::hit; }
};

enum class InsertStatus {
  written,
  already_present,  // another process (or an earlier call) stored this key first
  below_min_compile_time,
  below_min_size,
  too_large,  // bigger than the size cap on its own
  read_only,  // StoreOptions::writer is false
  error,      // SQLite failed; detail says why
};
std::string_view to_string(InsertStatus status);

struct InsertResult {
  InsertStatus status = InsertStatus::error;
  std::string detail;
  std::uint64_t evicted = 0;  // entries evicted to stay under the cap
};

// Counters; index `misses` with static_cast<std::size_t>(MissReason).
struct CacheCounters {
  std::uint64_t hits = 0;
  std::array<std::uint64_t, kMissReasonCount> misses{};
  std::uint64_t writes = 0;
  std::uint64_t evictions = 0;
  double compile_time_saved_s = 0;  // sum over hits of the entry's compile time

  std::uint64_t total_misses() const;
};

struct StoreStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;               // stored bytes (compressed binary + metadata)
  std::uint64_t uncompressed_bytes = 0;  // binary bytes before compression
  CacheCounters process;                 // this store object only
  CacheCounters total;                   // persisted across processes (as of the last flush)
};

struct EntryInfo {
  std::string key;
  StoredComponents components;  // with the function name it was stored under
  std::uint64_t uncompressed_size = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t metadata_size = 0;
  std::uint64_t checksum = 0;
  double compile_time_s = 0;
  double created = 0;    // seconds since the Unix epoch
  double last_used = 0;  // seconds since the Unix epoch
  std::uint64_t hit_count = 0;
};

struct ExplainCandidate {
  EntryInfo entry;
  std::vector<std::string> differing;  // component names, see differing_components()
};

// A lookup that found no usable entry (not found, corrupt or rejected), as remembered in the
// database for `explain`; the most recent ones are kept.
struct RecentMiss {
  std::string key;
  StoredComponents components;
  MissReason reason = MissReason::not_found;
  double time = 0;  // seconds since the Unix epoch
};
inline constexpr std::size_t kRecentMissesKept = 64;

struct GcResult {
  std::uint64_t removed_entries = 0;
  std::uint64_t removed_bytes = 0;
};

class ProgramStore {
 public:
  // Opens the database (a writer creates it if needed) after checking that this user owns the
  // directory and the files and that none is a link (see TrustPolicy). Throws CacheError
  // naming the path, the cause and the fix.
  explicit ProgramStore(StoreOptions options = {});
  ~ProgramStore();  // flushes pending hit bookkeeping, best effort
  ProgramStore(ProgramStore&&) noexcept;
  ProgramStore& operator=(ProgramStore&&) noexcept;
  ProgramStore(const ProgramStore&) = delete;
  ProgramStore& operator=(const ProgramStore&) = delete;

  const std::filesystem::path& path() const;
  const StoreOptions& options() const;

  // Never throws for database trouble: status error with reason database_error instead.
  LookupResult lookup(const CacheKeyComponents& components);
  LookupResult lookup_key(const std::string& key);

  // The caller found the entry it just looked up unusable (the driver rejected the binary, the
  // metadata did not parse): deletes it, so the next insert rewrites it, and counts the lookup
  // as a miss with reason `rejected` instead of a hit. False when the entry was already gone.
  bool reject(const CacheKeyComponents& components);

  // Stores `binary` (compressed) and `metadata` (verbatim) under the key of `components`,
  // then evicts least-recently-used entries past the cap in the same transaction.
  InsertResult insert(const CacheKeyComponents& components, std::span<const std::uint8_t> binary,
                      std::string_view metadata, double compile_time_s);

  // Writes pending hit bookkeeping and counters now. Throws CacheError on failure.
  void flush();

  // Administration; these throw CacheError on database failure, gc/clear also when read-only.
  StoreStats stats();
  std::vector<EntryInfo> list();  // most recently used first
  std::optional<EntryInfo> show(const std::string& key);
  // The latest misses remembered in the database (newest first), from every process.
  std::vector<RecentMiss> recent_misses(std::size_t limit = 10);
  // Entries with the same IR text hash as `wanted`, or the same non-empty function name,
  // fewest differing key components first (a different IR text counts as one).
  std::vector<ExplainCandidate> explain(const StoredComponents& wanted, std::size_t limit = 5);
  std::vector<ExplainCandidate> explain(const CacheKeyComponents& wanted, std::size_t limit = 5);
  // Removes entries last used before now - older_than, then LRU entries until the stored
  // bytes are at most max_bytes.
  GcResult gc(std::optional<std::uint64_t> max_bytes,
              std::optional<std::chrono::seconds> older_than = std::nullopt);
  GcResult clear();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Whether the database or any of its side files exists (a dangling link counts).
bool database_files_exist(const StoreOptions& options);

// Starts the cache over whatever state it is in (damaged, not a database, another program's,
// locked by a crashed process, a full disk): removes the database and its side files (links
// are removed, never followed), then creates an empty cache. The directory must pass the
// trust checks. Returns what the old database held as far as it could still be read. Throws
// CacheError naming the file and the cause.
GcResult reset_database(StoreOptions options);

}  // namespace weft::cache

// ProgramStore: opening, lookup and insert, hit bookkeeping and LRU eviction.
#include <chrono>
#include <cstdlib>

#include "codec.h"
#include "database_setup.h"
#include "entry_mac.h"
#include "store_impl.h"
#include "weft/error.h"

namespace weft::cache {

using detail::SqliteFailure;
using detail::Statement;
using detail::WriteTransaction;

namespace {

std::size_t index_of(MissReason reason) {
  return static_cast<std::size_t>(reason);
}

constexpr std::string_view kHitsCounter = "hits";
constexpr std::string_view kWritesCounter = "writes";
constexpr std::string_view kEvictionsCounter = "evictions";
constexpr std::string_view kSavedCounter = "compile_time_saved_s";

std::string miss_counter(std::size_t reason) {
  return "misses." + std::string(to_string(static_cast<MissReason>(reason)));
}

}  // namespace

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::filesystem::path default_cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "weft";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / ".cache" / "weft";
  }
  throw CacheError("weft cache: neither XDG_CACHE_HOME nor HOME is set; give a cache directory");
}

std::string_view to_string(MissReason reason) {
  switch (reason) {
    case MissReason::none:
      return "none";
    case MissReason::not_found:
      return "not_found";
    case MissReason::checksum_mismatch:
      return "checksum_mismatch";
    case MissReason::decompression_failed:
      return "decompression_failed";
    case MissReason::truncated:
      return "truncated";
    case MissReason::database_error:
      return "database_error";
    case MissReason::rejected:
      return "rejected";
    case MissReason::unauthenticated:
      return "unauthenticated";
  }
  return "unknown";
}

std::string_view to_string(LookupStatus status) {
  switch (status) {
    case LookupStatus::hit:
      return "hit";
    case LookupStatus::miss:
      return "miss";
    case LookupStatus::corrupt:
      return "corrupt";
    case LookupStatus::error:
      return "error";
  }
  return "unknown";
}

std::string_view to_string(InsertStatus status) {
  switch (status) {
    case InsertStatus::written:
      return "written";
    case InsertStatus::already_present:
      return "already_present";
    case InsertStatus::below_min_compile_time:
      return "below_min_compile_time";
    case InsertStatus::below_min_size:
      return "below_min_size";
    case InsertStatus::too_large:
      return "too_large";
    case InsertStatus::read_only:
      return "read_only";
    case InsertStatus::error:
      return "error";
  }
  return "unknown";
}

std::uint64_t CacheCounters::total_misses() const {
  std::uint64_t total = 0;
  for (std::size_t i = 1; i < misses.size(); ++i) total += misses[i];
  return total;
}

ProgramStore::Impl::Impl(StoreOptions opts) : options(std::move(opts)) {
  if (options.directory.empty()) options.directory = default_cache_directory();
  if (options.file_name.empty() || options.file_name.find('/') != std::string::npos)
    throw CacheError("weft cache: \"" + options.file_name +
                     "\" is not a database file name (a plain name, no directories)");
  policy.shared = options.shared;
  if (options.writer) detail::make_cache_directory(options.directory, policy);
  // Checked and used through one resolved path, so a link swapped in later is not followed.
  std::error_code error;
  std::filesystem::path directory = std::filesystem::canonical(options.directory, error);
  if (error)
    throw CacheError("weft cache: cannot use the cache directory " + options.directory.string() +
                     ": " + error.message() +
                     (options.writer ? "" : " (this process only reads the cache)"));
  path = directory / options.file_name;
  db = detail::open_database(path, options.writer, policy, options.busy_timeout);
  try {
    // One statement for metadata and blob: a single read snapshot, so an eviction between
    // two reads can never look like a missing payload.
    select_for_lookup = std::make_unique<Statement>(
        *db,
        "SELECT e.id, e.checksum, e.metadata_checksum, e.uncompressed_size, e.compressed_size, "
        "e.metadata_size, e.compile_time, p.binary, p.metadata, p.id IS NULL, e.mac "
        "FROM entries e LEFT JOIN payloads p ON p.id = e.id WHERE e.key = ?");
    insert_entry = std::make_unique<Statement>(
        *db,
        "INSERT INTO entries (key, ir_hash, weft_version, build_options, platform_name, "
        "platform_version, device_name, driver_version, opencl_c_version, compression, "
        "user_hook, checksum, metadata_checksum, uncompressed_size, compressed_size, "
        "metadata_size, compile_time, created, last_used, hit_count, function_name, mac) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?18, 0, ?19, ?20) ON CONFLICT(key) DO NOTHING");
    insert_payload = std::make_unique<Statement>(
        *db, "INSERT OR REPLACE INTO payloads (id, binary, metadata) VALUES (?, ?, ?)");
    delete_entry = std::make_unique<Statement>(*db, "DELETE FROM entries WHERE id = ?");
    delete_payload = std::make_unique<Statement>(*db, "DELETE FROM payloads WHERE id = ?");
    touch_entry = std::make_unique<Statement>(
        *db,
        "UPDATE entries SET hit_count = hit_count + ?1, last_used = max(last_used, ?2) "
        "WHERE key = ?3");
    add_counter = std::make_unique<Statement>(
        *db,
        "INSERT INTO counters (name, value) VALUES (?1, ?2) "
        "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value");
    insert_recent_miss = std::make_unique<Statement>(
        *db,
        "INSERT OR REPLACE INTO recent_misses (key, function_name, ir_hash, weft_version, "
        "build_options, platform_name, platform_version, device_name, driver_version, "
        "opencl_c_version, compression, user_hook, reason, time) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
    trim_misses =
        std::make_unique<Statement>(*db,
                                    "DELETE FROM recent_misses WHERE key NOT IN "
                                    "(SELECT key FROM recent_misses ORDER BY time DESC LIMIT ?1)");
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(path, "preparing statements", failure));
  }
}

void ProgramStore::Impl::require_writer(std::string_view operation) const {
  if (!options.writer) {
    throw CacheError("weft cache " + path.string() + ": cannot " + std::string(operation) +
                     ": this process opened the cache read-only");
  }
}

const std::vector<std::uint8_t>& ProgramStore::Impl::secret() {
  if (secret_bytes.empty()) {
    if (!options.key.empty())
      secret_bytes = options.key;
    else
      secret_bytes = load_key(options.key_file.empty() ? default_key_file() : options.key_file,
                              policy, /*create=*/true);
  }
  return secret_bytes;
}

void ProgramStore::Impl::write_pending() {
  for (const auto& [key, hit] : pending_hits) {
    touch_entry->reset();
    touch_entry->bind(1, hit.count);
    touch_entry->bind(2, hit.last_used);
    touch_entry->bind(3, key);
    touch_entry->run();  // an entry evicted meanwhile simply matches no row
  }
  // Hits are counted at lookup and may be taken back by reject(), so totals can go down.
  add_to_counter(kHitsCounter,
                 static_cast<double>(unflushed.hits) - static_cast<double>(hits_taken_back));
  for (std::size_t i = 1; i < kMissReasonCount; ++i) {
    add_to_counter(miss_counter(i), static_cast<double>(unflushed.misses[i]));
  }
  add_to_counter(kSavedCounter, unflushed.compile_time_saved_s);
  if (!pending_misses.empty()) {
    for (const RecentMiss& miss : pending_misses) {
      insert_recent_miss->reset();
      int i = 1;
      insert_recent_miss->bind(i++, std::string_view(miss.key));
      for (const std::string* text :
           {&miss.components.function_name, &miss.components.ir_hash, &miss.components.weft_version,
            &miss.components.build_options, &miss.components.platform_name,
            &miss.components.platform_version, &miss.components.device_name,
            &miss.components.driver_version, &miss.components.opencl_c_version,
            &miss.components.compression, &miss.components.user_hook}) {
        insert_recent_miss->bind(i++, std::string_view(*text));
      }
      insert_recent_miss->bind(i++, to_string(miss.reason));
      insert_recent_miss->bind(i++, miss.time);
      insert_recent_miss->run();
    }
    trim_misses->reset();
    trim_misses->bind(1, static_cast<std::int64_t>(kRecentMissesKept));
    trim_misses->run();
  }
}

void ProgramStore::Impl::add_to_counter(std::string_view name, double value) {
  if (value == 0) return;
  add_counter->reset();
  add_counter->bind(1, name);
  add_counter->bind(2, value);
  add_counter->run();
}

void ProgramStore::Impl::forget_pending() {
  hits_taken_back = 0;
  pending_hits.clear();
  pending_misses.clear();
  unflushed = {};
  lookups_since_flush = 0;
}

void ProgramStore::Impl::flush_locked() {
  if (!options.writer) return;
  lookups_since_flush = 0;
  if (pending_hits.empty() && pending_misses.empty() && unflushed.hits == 0 &&
      hits_taken_back == 0 && unflushed.total_misses() == 0)
    return;
  try {
    WriteTransaction transaction(*db);
    write_pending();
    transaction.commit();
    forget_pending();
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(path, "writing hit counts", failure));
  }
}

void ProgramStore::Impl::delete_row(std::int64_t id) {
  delete_entry->reset();
  delete_entry->bind(1, id);
  delete_entry->run();
  delete_payload->reset();
  delete_payload->bind(1, id);
  delete_payload->run();
}

GcResult ProgramStore::Impl::evict_to(std::uint64_t max_bytes, std::int64_t keep_id) {
  GcResult result;
  Statement total(*db, "SELECT coalesce(sum(compressed_size + metadata_size), 0) FROM entries");
  total.step();
  auto stored = static_cast<std::uint64_t>(total.column_int(0));
  if (stored <= max_bytes) return result;
  std::vector<std::int64_t> victims;
  {
    // The last_used index makes this an ordered walk that stops as soon as enough is freed.
    Statement oldest(*db,
                     "SELECT id, compressed_size + metadata_size FROM entries WHERE id != ? "
                     "ORDER BY last_used, id");
    oldest.bind(1, keep_id);
    while (stored > max_bytes && oldest.step()) {
      const auto size = static_cast<std::uint64_t>(oldest.column_int(1));
      victims.push_back(oldest.column_int(0));
      stored -= size;
      result.removed_bytes += size;
    }
  }
  for (const std::int64_t id : victims) delete_row(id);
  result.removed_entries = victims.size();
  return result;
}

ProgramStore::ProgramStore(StoreOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ProgramStore::~ProgramStore() {
  if (!impl_) return;
  try {
    std::lock_guard lock(impl_->mutex);
    impl_->flush_locked();
  } catch (const std::exception&) {
    // Losing a few hit counts is harmless; a destructor must not throw.
  }
}

ProgramStore::ProgramStore(ProgramStore&&) noexcept = default;
ProgramStore& ProgramStore::operator=(ProgramStore&&) noexcept = default;

const std::filesystem::path& ProgramStore::path() const {
  return impl_->path;
}
const StoreOptions& ProgramStore::options() const {
  return impl_->options;
}

LookupResult ProgramStore::lookup(const CacheKeyComponents& components) {
  StoredComponents stored = summarize(components);
  std::string key = compute_key(stored);
  LookupResult result = lookup_key(key);
  if (result.status == LookupStatus::miss || result.status == LookupStatus::corrupt)
    impl_->remember_miss(std::move(key), std::move(stored), result.reason);
  return result;
}

void ProgramStore::Impl::remember_miss(std::string key, StoredComponents components,
                                       MissReason reason) {
  if (!options.writer) return;
  std::lock_guard lock(mutex);
  if (pending_misses.size() >= kRecentMissesKept) pending_misses.erase(pending_misses.begin());
  pending_misses.push_back({std::move(key), std::move(components), reason, now_seconds()});
}

bool ProgramStore::reject(const CacheKeyComponents& components) {
  Impl& s = *impl_;
  StoredComponents stored = summarize(components);
  const std::string key = compute_key(stored);
  bool deleted = false;
  {
    std::lock_guard lock(s.mutex);
    // Take back the hit the lookup counted.
    if (s.process.hits > 0) {
      --s.process.hits;
      ++s.process.misses[index_of(MissReason::rejected)];
    }
    // A hit already flushed is taken back from the persisted total at the next flush.
    if (s.unflushed.hits > 0)
      --s.unflushed.hits;
    else
      ++s.hits_taken_back;
    ++s.unflushed.misses[index_of(MissReason::rejected)];
    if (auto pending = s.pending_hits.find(key); pending != s.pending_hits.end())
      s.pending_hits.erase(pending);
    if (s.options.writer) {
      try {
        WriteTransaction transaction(*s.db);
        Statement find(*s.db, "SELECT id FROM entries WHERE key = ?");
        find.bind(1, std::string_view(key));
        if (find.step()) {
          const std::int64_t id = find.column_int(0);
          find.reset();
          s.delete_row(id);
          deleted = true;
        }
        transaction.commit();
      } catch (const SqliteFailure&) {
        deleted = false;  // the next lookup finds it again and rejects it again
      }
    }
  }
  s.remember_miss(key, std::move(stored), MissReason::rejected);
  return deleted;
}

LookupResult ProgramStore::lookup_key(const std::string& key) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  LookupResult result;
  auto miss = [&](LookupStatus status, MissReason reason, std::string detail) {
    result.status = status;
    result.reason = reason;
    result.detail = std::move(detail);
    ++s.process.misses[index_of(reason)];
    ++s.unflushed.misses[index_of(reason)];
    return result;
  };
  std::int64_t id = 0;
  try {
    Statement& q = *s.select_for_lookup;
    q.reset();
    q.bind(1, key);
    if (!q.step()) {
      q.reset();
      miss(LookupStatus::miss, MissReason::not_found, {});
    } else {
      id = q.column_int(0);
      const auto checksum = static_cast<std::uint64_t>(q.column_int(1));
      const auto metadata_checksum = static_cast<std::uint64_t>(q.column_int(2));
      const auto uncompressed_size = static_cast<std::uint64_t>(q.column_int(3));
      const auto compressed_size = static_cast<std::uint64_t>(q.column_int(4));
      const auto metadata_size = static_cast<std::uint64_t>(q.column_int(5));
      const double compile_time = q.column_double(6);
      const bool payload_missing = q.column_int(9) != 0;
      const auto frame = q.column_blob(7);
      const auto metadata = q.column_blob(8);
      const auto mac = q.column_blob(10);
      const std::string where = "cache entry " + key + " in " + s.path.string() + ": ";
      if (payload_missing || frame.size() != compressed_size || metadata.size() != metadata_size) {
        miss(LookupStatus::corrupt, MissReason::truncated,
             where + "stored blob is " + std::to_string(frame.size()) + " bytes, expected " +
                 std::to_string(compressed_size));
      } else if (!detail::same_mac(
                     mac, detail::entry_mac(s.secret(), key, uncompressed_size, frame, metadata))) {
        // Nothing of an entry that fails here is decompressed, parsed or run.
        miss(LookupStatus::corrupt, MissReason::unauthenticated,
             where +
                 "its MAC does not verify under this user's cache key, so it was not "
                 "written by this user (or the key changed; a team cache needs one "
                 "WEFT_CACHE_KEY_FILE for all members)");
      } else if (uncompressed_size > kMaxBinaryBytes) {
        miss(LookupStatus::corrupt, MissReason::decompression_failed,
             where + "it records a binary of " + std::to_string(uncompressed_size) +
                 " bytes, more than an entry may hold");
      } else if (auto binary = detail::decompress(frame, uncompressed_size); !binary) {
        miss(LookupStatus::corrupt, MissReason::decompression_failed,
             where + "zstd could not decompress the stored blob");
      } else if (detail::checksum(*binary) != checksum ||
                 detail::checksum(metadata) != metadata_checksum) {
        miss(LookupStatus::corrupt, MissReason::checksum_mismatch,
             where + "XXH3-64 checksum does not match the stored bytes");
      } else {
        result.status = LookupStatus::hit;
        result.reason = MissReason::none;
        result.binary = std::move(*binary);
        result.metadata.assign(metadata.begin(), metadata.end());
        result.compile_time_s = compile_time;
      }
      q.reset();  // ends the read snapshot before any write below
    }
  } catch (const SqliteFailure& failure) {
    s.select_for_lookup->reset();
    return miss(LookupStatus::error, MissReason::database_error,
                detail::describe_failure(s.path, "lookup", failure));
  } catch (const CacheError& failure) {  // the key could not be read or made
    s.select_for_lookup->reset();
    return miss(LookupStatus::error, MissReason::database_error, failure.what());
  }

  if (result.status == LookupStatus::corrupt) {
    // The entry repairs itself: delete it so the next compile writes a good one.
    if (s.options.writer) {
      try {
        WriteTransaction transaction(*s.db);
        s.delete_row(id);
        transaction.commit();
        result.detail += "; entry deleted";
      } catch (const SqliteFailure& failure) {
        result.detail += "; could not delete it: " + std::string(failure.what());
      }
    }
    return result;
  }
  if (result.hit()) {
    ++s.process.hits;
    ++s.unflushed.hits;
    s.process.compile_time_saved_s += result.compile_time_s;
    s.unflushed.compile_time_saved_s += result.compile_time_s;
    if (s.options.writer) {
      auto& pending = s.pending_hits[key];
      ++pending.count;
      pending.last_used = now_seconds();
    }
  }
  // Hits are written in batches: a write transaction per hit would put a lock acquisition on
  // the hit path and make readers contend with each other.
  if (s.options.writer && ++s.lookups_since_flush >= s.options.flush_every) {
    try {
      s.flush_locked();
    } catch (const CacheError&) {
      // Kept for the next attempt; the lookup itself succeeded. Bounded so a cache locked for
      // hours cannot grow this map without limit.
      if (s.pending_hits.size() > 16 * s.options.flush_every) s.pending_hits.clear();
    }
  }
  return result;
}

InsertResult ProgramStore::insert(const CacheKeyComponents& components,
                                  std::span<const std::uint8_t> binary, std::string_view metadata,
                                  double compile_time_s) {
  Impl& s = *impl_;
  InsertResult result;
  if (!s.options.writer) {
    result.status = InsertStatus::read_only;
    return result;
  }
  if (compile_time_s < s.options.min_compile_time_s) {
    result.status = InsertStatus::below_min_compile_time;
    return result;
  }
  if (binary.size() > kMaxBinaryBytes) {
    result.status = InsertStatus::too_large;
    result.detail = std::to_string(binary.size()) + " bytes exceed the largest binary an entry " +
                    "may hold (" + std::to_string(kMaxBinaryBytes) + ")";
    return result;
  }
  if (binary.size() < s.options.min_entry_bytes) {
    result.status = InsertStatus::below_min_size;
    return result;
  }
  const StoredComponents stored = summarize(components);
  const std::string key = compute_key(stored);
  // Compress outside the lock and outside the transaction: it is the slow part.
  const std::vector<std::uint8_t> frame = detail::compress(binary, s.options.zstd_level);
  const std::span<const std::uint8_t> metadata_bytes(
      reinterpret_cast<const std::uint8_t*>(metadata.data()), metadata.size());
  if (frame.size() + metadata.size() > s.options.max_bytes) {
    result.status = InsertStatus::too_large;
    result.detail = std::to_string(frame.size() + metadata.size()) +
                    " bytes exceed the cache size cap of " + std::to_string(s.options.max_bytes);
    return result;
  }

  std::lock_guard lock(s.mutex);
  detail::EntryMac mac;
  try {
    mac = detail::entry_mac(s.secret(), key, binary.size(), frame, metadata_bytes);
  } catch (const CacheError& failure) {
    result.status = InsertStatus::error;
    result.detail = failure.what();
    return result;
  }
  try {
    WriteTransaction transaction(*s.db);
    s.write_pending();  // so LRU eviction below sees this process's recent hits
    Statement& e = *s.insert_entry;
    e.reset();
    int i = 1;
    for (const std::string* text :
         {&key, &stored.ir_hash, &stored.weft_version, &stored.build_options, &stored.platform_name,
          &stored.platform_version, &stored.device_name, &stored.driver_version,
          &stored.opencl_c_version, &stored.compression, &stored.user_hook}) {
      e.bind(i++, std::string_view(*text));
    }
    // XXH3-64 values are stored as their two's-complement int64 bit pattern.
    e.bind(12, static_cast<std::int64_t>(detail::checksum(binary)));
    e.bind(13, static_cast<std::int64_t>(detail::checksum(metadata_bytes)));
    e.bind(14, static_cast<std::int64_t>(binary.size()));
    e.bind(15, static_cast<std::int64_t>(frame.size()));
    e.bind(16, static_cast<std::int64_t>(metadata.size()));
    e.bind(17, compile_time_s);
    e.bind(18, now_seconds());
    e.bind(19, std::string_view(stored.function_name));
    e.bind_blob(20, mac);
    e.run();
    if (sqlite3_changes(s.db->get()) == 0) {
      result.status = InsertStatus::already_present;
    } else {
      const std::int64_t id = sqlite3_last_insert_rowid(s.db->get());
      Statement& p = *s.insert_payload;
      p.reset();
      p.bind(1, id);
      p.bind_blob(2, frame);
      p.bind_blob(3, metadata_bytes);
      p.run();
      const GcResult evicted = s.evict_to(s.options.max_bytes, id);
      s.add_to_counter(kWritesCounter, 1);
      s.add_to_counter(kEvictionsCounter, static_cast<double>(evicted.removed_entries));
      result.status = InsertStatus::written;
      result.evicted = evicted.removed_entries;
    }
    transaction.commit();
    s.forget_pending();
    if (result.status == InsertStatus::written) {
      ++s.process.writes;
      s.process.evictions += result.evicted;
    }
  } catch (const SqliteFailure& failure) {
    result.status = InsertStatus::error;
    result.evicted = 0;
    result.detail = detail::describe_failure(s.path, "insert", failure);
  }
  return result;
}

void ProgramStore::flush() {
  std::lock_guard lock(impl_->mutex);
  impl_->flush_locked();
}

}  // namespace weft::cache

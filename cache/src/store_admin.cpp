// ProgramStore administration: statistics, listing, explaining misses, gc and clear.
#include <algorithm>

#include "database_setup.h"
#include "store_impl.h"
#include "weft/error.h"

namespace weft::cache {

using detail::SqliteFailure;
using detail::Statement;
using detail::WriteTransaction;

namespace {

constexpr const char* kEntryColumns =
    "key, ir_hash, weft_version, build_options, platform_name, platform_version, device_name, "
    "driver_version, opencl_c_version, compression, user_hook, uncompressed_size, "
    "compressed_size, metadata_size, checksum, compile_time, created, last_used, hit_count, "
    "function_name";

// The ten key components, ir_hash to user_hook, from consecutive columns starting at `first`.
StoredComponents read_components(const Statement& row, int first) {
  StoredComponents c;
  for (std::string* field :
       {&c.ir_hash, &c.weft_version, &c.build_options, &c.platform_name, &c.platform_version,
        &c.device_name, &c.driver_version, &c.opencl_c_version, &c.compression, &c.user_hook})
    *field = row.column_text(first++);
  return c;
}

EntryInfo read_entry(const Statement& row) {
  EntryInfo info;
  info.key = row.column_text(0);
  StoredComponents& c = info.components;
  c = read_components(row, 1);
  info.uncompressed_size = static_cast<std::uint64_t>(row.column_int(11));
  info.compressed_size = static_cast<std::uint64_t>(row.column_int(12));
  info.metadata_size = static_cast<std::uint64_t>(row.column_int(13));
  info.checksum = static_cast<std::uint64_t>(row.column_int(14));
  info.compile_time_s = row.column_double(15);
  info.created = row.column_double(16);
  info.last_used = row.column_double(17);
  info.hit_count = static_cast<std::uint64_t>(row.column_int(18));
  c.function_name = row.column_text(19);
  return info;
}

std::vector<EntryInfo> query_entries(detail::Database& db, const std::string& tail,
                                     const std::string* text_argument,
                                     const std::string* second_argument = nullptr) {
  const std::string sql = std::string("SELECT ") + kEntryColumns + " FROM entries " + tail;
  Statement statement(db, sql.c_str());
  if (text_argument) statement.bind(1, std::string_view(*text_argument));
  if (second_argument) statement.bind(2, std::string_view(*second_argument));
  std::vector<EntryInfo> entries;
  while (statement.step()) entries.push_back(read_entry(statement));
  return entries;
}

}  // namespace

StoreStats ProgramStore::stats() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  try {
    s.flush_locked();
  } catch (const CacheError&) {
    // Stats are still worth showing while another process holds the lock.
  }
  StoreStats stats;
  stats.process = s.process;
  try {
    Statement sizes(*s.db,
                    "SELECT count(*), coalesce(sum(compressed_size + metadata_size), 0), "
                    "coalesce(sum(uncompressed_size), 0) FROM entries");
    sizes.step();
    stats.entries = static_cast<std::uint64_t>(sizes.column_int(0));
    stats.bytes = static_cast<std::uint64_t>(sizes.column_int(1));
    stats.uncompressed_bytes = static_cast<std::uint64_t>(sizes.column_int(2));
    Statement counters(*s.db, "SELECT name, value FROM counters");
    while (counters.step()) {
      const std::string name = counters.column_text(0);
      const double value = counters.column_double(1);
      const auto count = static_cast<std::uint64_t>(value);
      if (name == "hits") {
        stats.total.hits = count;
      } else if (name == "writes") {
        stats.total.writes = count;
      } else if (name == "evictions") {
        stats.total.evictions = count;
      } else if (name == "compile_time_saved_s") {
        stats.total.compile_time_saved_s = value;
      } else {
        for (std::size_t i = 1; i < kMissReasonCount; ++i) {
          if (name == "misses." + std::string(to_string(static_cast<MissReason>(i)))) {
            stats.total.misses[i] = count;
          }
        }
      }
    }
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "reading statistics", failure));
  }
  return stats;
}

std::vector<EntryInfo> ProgramStore::list() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  try {
    return query_entries(*s.db, "ORDER BY last_used DESC, id DESC", nullptr);
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "listing entries", failure));
  }
}

std::optional<EntryInfo> ProgramStore::show(const std::string& key) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  try {
    auto entries = query_entries(*s.db, "WHERE key = ?1", &key);
    if (entries.empty()) return std::nullopt;
    return std::move(entries.front());
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "showing an entry", failure));
  }
}

std::vector<ExplainCandidate> ProgramStore::explain(const StoredComponents& wanted,
                                                    std::size_t limit) {
  Impl& s = *impl_;
  std::vector<EntryInfo> entries;
  {
    std::lock_guard lock(s.mutex);
    try {
      entries = query_entries(*s.db, "WHERE ir_hash = ?1 OR (?2 != '' AND function_name = ?2)",
                              &wanted.ir_hash, &wanted.function_name);
    } catch (const SqliteFailure& failure) {
      throw CacheError(detail::describe_failure(s.path, "explaining a miss", failure));
    }
  }
  std::vector<ExplainCandidate> candidates;
  for (auto& entry : entries) {
    // The entry is the missed key itself only when it was written after the miss.
    std::vector<std::string> differing = differing_components(wanted, entry.components);
    candidates.push_back({std::move(entry), std::move(differing)});
  }
  // Nearest first: fewest differing components, then the most recently used.
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    if (a.differing.size() != b.differing.size()) return a.differing.size() < b.differing.size();
    return a.entry.last_used > b.entry.last_used;
  });
  if (candidates.size() > limit) candidates.resize(limit);
  return candidates;
}

std::vector<RecentMiss> ProgramStore::recent_misses(std::size_t limit) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  try {
    s.flush_locked();  // this process's own misses first
  } catch (const CacheError&) {
    // What is already in the database is still worth showing.
  }
  std::vector<RecentMiss> misses;
  try {
    Statement rows(*s.db,
                   "SELECT key, ir_hash, weft_version, build_options, platform_name, "
                   "platform_version, device_name, driver_version, opencl_c_version, "
                   "compression, user_hook, function_name, reason, time FROM recent_misses "
                   "ORDER BY time DESC LIMIT ?");
    rows.bind(1, static_cast<std::int64_t>(limit));
    while (rows.step()) {
      RecentMiss miss;
      miss.key = rows.column_text(0);
      miss.components = read_components(rows, 1);
      miss.components.function_name = rows.column_text(11);
      const std::string reason = rows.column_text(12);
      for (std::size_t i = 0; i < kMissReasonCount; ++i)
        if (reason == to_string(static_cast<MissReason>(i)))
          miss.reason = static_cast<MissReason>(i);
      miss.time = rows.column_double(13);
      misses.push_back(std::move(miss));
    }
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "reading recent misses", failure));
  }
  return misses;
}

std::vector<ExplainCandidate> ProgramStore::explain(const CacheKeyComponents& wanted,
                                                    std::size_t limit) {
  return explain(summarize(wanted), limit);
}

GcResult ProgramStore::gc(std::optional<std::uint64_t> max_bytes,
                          std::optional<std::chrono::seconds> older_than) {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  s.require_writer("collect garbage");
  GcResult result;
  try {
    WriteTransaction transaction(*s.db);
    s.write_pending();
    if (older_than) {
      const double cutoff = now_seconds() - static_cast<double>(older_than->count());
      Statement old(*s.db,
                    "SELECT id, compressed_size + metadata_size FROM entries "
                    "WHERE last_used < ?");
      old.bind(1, cutoff);
      std::vector<std::int64_t> victims;
      while (old.step()) {
        victims.push_back(old.column_int(0));
        result.removed_bytes += static_cast<std::uint64_t>(old.column_int(1));
      }
      old.reset();
      for (const std::int64_t id : victims) s.delete_row(id);
      result.removed_entries += victims.size();
    }
    if (max_bytes) {
      const GcResult lru = s.evict_to(*max_bytes, -1);
      result.removed_entries += lru.removed_entries;
      result.removed_bytes += lru.removed_bytes;
    }
    if (result.removed_entries > 0) {
      s.add_counter->reset();
      s.add_counter->bind(1, std::string_view("evictions"));
      s.add_counter->bind(2, static_cast<double>(result.removed_entries));
      s.add_counter->run();
    }
    transaction.commit();
    s.forget_pending();
    s.process.evictions += result.removed_entries;
    // Hand freed pages back to the file system (auto_vacuum = INCREMENTAL); harmless if busy.
    sqlite3_exec(s.db->get(), "PRAGMA incremental_vacuum", nullptr, nullptr, nullptr);
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "gc", failure));
  }
  return result;
}

GcResult ProgramStore::clear() {
  Impl& s = *impl_;
  std::lock_guard lock(s.mutex);
  s.require_writer("clear the cache");
  GcResult result;
  try {
    WriteTransaction transaction(*s.db);
    Statement sizes(*s.db,
                    "SELECT count(*), coalesce(sum(compressed_size + metadata_size), 0) "
                    "FROM entries");
    sizes.step();
    result.removed_entries = static_cast<std::uint64_t>(sizes.column_int(0));
    result.removed_bytes = static_cast<std::uint64_t>(sizes.column_int(1));
    sizes.reset();
    // Counters describe the cache's history, so clearing entries also restarts them.
    s.db->exec(
        "DELETE FROM entries; DELETE FROM payloads; DELETE FROM counters; "
        "DELETE FROM recent_misses;");
    transaction.commit();
    s.forget_pending();
    sqlite3_exec(s.db->get(), "PRAGMA incremental_vacuum", nullptr, nullptr, nullptr);
  } catch (const SqliteFailure& failure) {
    throw CacheError(detail::describe_failure(s.path, "clear", failure));
  }
  return result;
}

}  // namespace weft::cache

// ProgramStore's state, shared by the lookup/insert path (store.cpp) and administration
// (store_admin.cpp).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "sqlite.h"
#include "weft/cache/store.h"
#include "weft/cache/trust.h"

namespace weft::cache {

struct ProgramStore::Impl {
  struct PendingHit {
    std::int64_t count = 0;
    double last_used = 0;
  };

  StoreOptions options;
  TrustPolicy policy;
  std::filesystem::path path;              // resolved: no links in it
  std::vector<std::uint8_t> secret_bytes;  // the entry key, once read
  std::mutex mutex;
  std::unique_ptr<detail::Database> db;
  // Prepared once: lookups must not pay for SQL parsing.
  std::unique_ptr<detail::Statement> select_for_lookup;
  std::unique_ptr<detail::Statement> insert_entry;
  std::unique_ptr<detail::Statement> insert_payload;
  std::unique_ptr<detail::Statement> delete_entry;
  std::unique_ptr<detail::Statement> delete_payload;
  std::unique_ptr<detail::Statement> touch_entry;
  std::unique_ptr<detail::Statement> add_counter;
  std::unique_ptr<detail::Statement> insert_recent_miss;
  std::unique_ptr<detail::Statement> trim_misses;

  CacheCounters process;    // everything this store object saw
  CacheCounters unflushed;  // hits and misses not yet added to the counters table
  std::unordered_map<std::string, PendingHit> pending_hits;
  std::vector<RecentMiss> pending_misses;  // written with the hits
  std::uint64_t hits_taken_back = 0;       // flushed hits that reject() turned into misses
  std::size_t lookups_since_flush = 0;

  explicit Impl(StoreOptions opts);

  // Adds pending hits and counters inside the caller's write transaction; the caller clears
  // them with forget_pending() once the transaction commits.
  void write_pending();
  void forget_pending();
  void add_to_counter(std::string_view name, double value);
  // Queues a miss for the recent_misses table (takes the mutex).
  void remember_miss(std::string key, StoredComponents components, MissReason reason);
  // flush() without taking the mutex.
  void flush_locked();
  // Deletes entry `id` and its payload (inside the caller's transaction).
  void delete_row(std::int64_t id);
  // Removes least-recently-used entries other than `keep_id` until at most `max_bytes` are
  // stored (inside the caller's transaction). Returns {entries, bytes} removed.
  GcResult evict_to(std::uint64_t max_bytes, std::int64_t keep_id);
  void require_writer(std::string_view operation) const;
  // The entry key (read or created on first use, under the mutex). Throws CacheError.
  const std::vector<std::uint8_t>& secret();
};

double now_seconds();

}  // namespace weft::cache

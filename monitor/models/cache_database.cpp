#include "cache_database.h"

#include <system_error>

#include "weft/cache/explain.h"
#include "weft/cache/settings.h"
#include "weft/error.h"

namespace weft::monitor {

std::filesystem::path resolve_cache_directory(const std::map<std::string, std::string>& meta,
                                              std::string* origin) {
  auto say = [&](const char* where) {
    if (origin) *origin = where;
  };
  if (auto found = meta.find("cache_dir"); found != meta.end() && !found->second.empty()) {
    say("the trace's cache_dir");
    return found->second;
  }
  const cache::CacheSettings settings = cache::settings_from_environment();
  if (!settings.directory.empty()) {
    say("WEFT_CACHE_DIR");
    return settings.directory;
  }
  try {
    say("the default cache directory");
    return cache::default_cache_directory();
  } catch (const std::exception&) {
    say("nowhere (neither XDG_CACHE_HOME nor HOME is set)");
    return {};
  }
}

CacheDatabase::CacheDatabase() = default;
CacheDatabase::~CacheDatabase() = default;
CacheDatabase::CacheDatabase(CacheDatabase&&) noexcept = default;
CacheDatabase& CacheDatabase::operator=(CacheDatabase&&) noexcept = default;

std::filesystem::path CacheDatabase::databasePath() const {
  return directory_ / cache::StoreOptions{}.file_name;
}

CacheDatabase CacheDatabase::open(const std::filesystem::path& directory) {
  CacheDatabase database;
  database.directory_ = directory;
  if (directory.empty()) {
    database.error_ =
        "No cache directory is known: set WEFT_CACHE_DIR or HOME, or choose a directory.";
    return database;
  }
  std::error_code error;
  if (!std::filesystem::exists(database.databasePath(), error)) {
    database.error_ = "No cache database at " + database.databasePath().string() +
                      ": nothing has been compiled with the persistent cache there.";
    return database;
  }
  const cache::CacheSettings settings = cache::settings_from_environment();
  cache::StoreOptions options;
  options.directory = directory;
  options.writer = false;  // looking never changes the cache (no hit bookkeeping, no repair)
  options.shared = settings.shared;
  options.key_file = settings.key_file;
  try {
    database.store_ = std::make_unique<cache::ProgramStore>(options);
  } catch (const std::exception& e) {
    database.error_ = e.what();
  }
  return database;
}

std::vector<cache::EntryInfo> CacheDatabase::entries() {
  if (!store_) return {};
  try {
    return store_->list();
  } catch (const std::exception& e) {
    error_ = std::string("Listing the cache entries failed: ") + e.what();
    return {};
  }
}

std::string CacheDatabase::explainMiss(const std::string& key) {
  if (key.empty())
    return "This lookup has no cache key in the trace, so there is nothing to explain.";
  if (!store_)
    return "The cache database cannot be opened, so the miss cannot be explained: " + error_;
  try {
    const std::optional<cache::MissExplanation> explanation = cache::explain_miss(*store_, key);
    if (!explanation)
      return "The cache database at " + store_->path().string() +
             " no longer remembers a miss of " + key + " (it keeps only the latest " +
             std::to_string(cache::kRecentMissesKept) +
             " misses), or the trace was recorded with another cache.";
    return cache::format_explanation(*explanation);
  } catch (const std::exception& e) {
    return std::string("Explaining the miss failed: ") + e.what();
  }
}

}  // namespace weft::monitor

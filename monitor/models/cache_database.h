// The persistent cache database a trace's programs went to, opened read-only: its entries, and
// the explanation of one miss exactly as `weft cache explain` prints it. Never throws: what
// goes wrong (no database there, not the user's, damaged) becomes a message to show.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/cache/store.h"

namespace weft::monitor {

// The trace's meta "cache_dir" when set, else WEFT_CACHE_DIR, else the default directory.
// `origin` (optional) says which one it was, for the view's title. Empty when none resolves.
std::filesystem::path resolve_cache_directory(const std::map<std::string, std::string>& meta,
                                              std::string* origin = nullptr);

class CacheDatabase {
 public:
  CacheDatabase();
  ~CacheDatabase();
  CacheDatabase(CacheDatabase&&) noexcept;
  CacheDatabase& operator=(CacheDatabase&&) noexcept;

  // Opens `directory`'s database read-only; check isOpen() and error().
  static CacheDatabase open(const std::filesystem::path& directory);

  bool isOpen() const { return store_ != nullptr; }
  const std::string& error() const { return error_; }
  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path databasePath() const;

  // Every entry, most recently used first; empty with error() set when listing failed.
  std::vector<cache::EntryInfo> entries();
  // The explanation of the latest miss of `key`, or a sentence saying why there is none.
  std::string explainMiss(const std::string& key);

 private:
  std::filesystem::path directory_;
  std::string error_;
  std::unique_ptr<cache::ProgramStore> store_;
};

}  // namespace weft::monitor

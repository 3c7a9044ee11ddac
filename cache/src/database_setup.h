// Creating the cache directory and file with private permissions, and opening the database
// with the cache's pragmas and schema.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string_view>

#include "sqlite.h"
#include "weft/cache/trust.h"

namespace weft::cache::detail {

// Creates every missing directory of `directory`: mode 0700, or 2770 for a team cache.
// Throws CacheError.
void make_cache_directory(const std::filesystem::path& directory, const TrustPolicy& policy);

// Opens the database at `path` once the directory, the file and its side files pass the
// policy's checks: a writer read-write (creating it 0600, 0660 for a team, if missing) in WAL
// mode with the schema in place, a reader read-only. Another program's database is refused
// untouched. Throws CacheError naming the path, the cause and the fix.
std::unique_ptr<Database> open_database(const std::filesystem::path& path, bool writer,
                                        const TrustPolicy& policy,
                                        std::chrono::milliseconds busy_timeout);

// A CacheError message for a SQLite failure while doing `what` on the database at `path`.
std::string describe_failure(const std::filesystem::path& path, std::string_view what,
                             const SqliteFailure& failure);

}  // namespace weft::cache::detail

// Creating the cache directory and file with private permissions, and opening the database
// with the cache's pragmas and schema.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string_view>

#include "sqlite.h"

namespace weft::cache::detail {

// Creates every missing directory of `directory` with mode 0700. Throws CacheError.
void make_private_directory(const std::filesystem::path& directory);

// Opens `path` (creating it 0600 if missing) in WAL mode with the schema in place.
// Throws CacheError naming the path and the cause.
std::unique_ptr<Database> open_database(const std::filesystem::path& path,
                                        std::chrono::milliseconds busy_timeout);

// A CacheError message for a SQLite failure while doing `what` on the database at `path`.
std::string describe_failure(const std::filesystem::path& path, std::string_view what,
                             const SqliteFailure& failure);

}  // namespace weft::cache::detail

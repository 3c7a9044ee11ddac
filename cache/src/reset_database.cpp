// Starting a cache over: works on a database in any state, because it removes files rather
// than asking SQLite to edit them.
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "database_setup.h"
#include "weft/cache/store.h"
#include "weft/cache/trust.h"
#include "weft/error.h"

namespace weft::cache {

namespace {

// What the old database held, where it can still be read; nothing when it cannot.
GcResult measure(const StoreOptions& options) {
  try {
    StoreOptions reader = options;
    reader.writer = false;
    reader.busy_timeout = std::chrono::milliseconds(200);
    ProgramStore store(reader);
    const StoreStats stats = store.stats();
    return {stats.entries, stats.bytes};
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

bool database_files_exist(const StoreOptions& options) {
  const std::filesystem::path directory =
      options.directory.empty() ? default_cache_directory() : options.directory;
  const std::string base = (directory / options.file_name).string();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    struct stat info {};
    if (::lstat((base + suffix).c_str(), &info) == 0) return true;
  }
  return false;
}

GcResult reset_database(StoreOptions options) {
  if (options.directory.empty()) options.directory = default_cache_directory();
  TrustPolicy policy;
  policy.shared = options.shared;
  detail::make_cache_directory(options.directory, policy);
  // Removing files is only safe in a directory nobody else may write.
  check_cache_directory(options.directory, policy);
  const GcResult removed = measure(options);
  const std::string base = (options.directory / options.file_name).string();
  // The side files first: a database without its WAL is merely older, a WAL without its
  // database would be applied to the next one.
  for (const char* suffix : {"-wal", "-shm", "-journal", ""}) {
    const std::string file = base + suffix;
    if (::unlink(file.c_str()) != 0 && errno != ENOENT)  // unlink never follows a link
      throw CacheError("weft cache: cannot remove " + file + ": " + std::strerror(errno) +
                       " (check the permissions of " + options.directory.string() + ")");
  }
  options.writer = true;
  try {
    ProgramStore fresh(options);
  } catch (const CacheError& e) {
    throw CacheError(std::string("weft cache: removed the old cache database, but could not "
                                 "create a new one: ") +
                     e.what() + " The next process that writes the cache creates it.");
  }
  return removed;
}

}  // namespace weft::cache

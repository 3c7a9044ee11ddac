// How this process uses the persistent cache: on or off, where, whether it writes, and the
// thresholds. Read from the environment (WEFT_CACHE, WEFT_CACHE_DIR, WEFT_CACHE_WRITER, MPI
// rank variables, ...) unless the application sets them through ProcessCache::configure.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::cache {

struct CacheSettings {
  bool enabled = true;
  std::filesystem::path directory;  // empty: default_cache_directory()
  bool writer = true;
  // Why `writer` has its value, for logs: "default", "WEFT_CACHE_WRITER=0",
  // "OMPI_COMM_WORLD_RANK=3 (only rank 0 writes)", "set by the application".
  std::string writer_reason = "default";
  std::string user_hook;             // mixed into every key (e.g. a container image digest)
  double min_compile_time_s = 0.01;  // see StoreOptions
  std::uint64_t max_bytes = std::uint64_t{1} << 30;
  // A team cache (WEFT_CACHE_SHARED=1): see TrustPolicy::shared.
  bool shared = false;
  // The secret that authenticates entries (WEFT_CACHE_KEY_FILE); empty: default_key_file().
  std::filesystem::path key_file;
};

// The settings the environment asks for. A malformed variable is ignored with a warning in
// `warnings` (one line each, naming the variable, its value and what was used instead).
CacheSettings settings_from_environment(std::vector<std::string>* warnings = nullptr);

// "1073741824", "512M", "512MiB", "1.5G", "2GB", "64k": bytes (K/M/G/T are powers of 1024).
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
// "3600", "90s", "45m", "12h", "30d", "2w": a duration.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace weft::cache

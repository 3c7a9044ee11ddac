#include "weft/cache/settings.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace weft::cache {

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_switch(std::string_view text) {
  const std::string value = lowercase(text);
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  return std::nullopt;
}

// A non-negative decimal number followed by the rest of the text.
std::optional<std::pair<double, std::string>> split_number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || !(value >= 0) || !std::isfinite(value))
    return std::nullopt;
  std::string_view rest = text.substr(static_cast<std::size_t>(end - text.data()));
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return std::pair{value, lowercase(rest)};
}

// Rank variables of the common MPI launchers and schedulers, first match wins.
constexpr const char* kRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",     "PMIX_RANK",
                                          "MV2_COMM_WORLD_RANK",  "SLURM_PROCID", "PALS_RANKID",
                                          "FLUX_TASK_RANK"};

const char* nonempty_env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

}  // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  auto parsed = split_number(text);
  if (!parsed) return std::nullopt;
  auto [value, unit] = *parsed;
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();  // "MB", "MiB", "B"
  if (unit.size() == 2 && unit.back() == 'i') unit.pop_back();
  double scale = 1;
  if (unit == "k")
    scale = 1024.0;
  else if (unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    return std::nullopt;
  const double bytes = value * scale;
  if (bytes >= 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  auto parsed = split_number(text);
  if (!parsed) return std::nullopt;
  const auto& [value, unit] = *parsed;
  double scale = 1;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  else
    return std::nullopt;
  const double seconds = value * scale;
  if (seconds >= 9.2e18) return std::nullopt;
  return std::chrono::seconds(static_cast<std::int64_t>(std::llround(seconds)));
}

CacheSettings settings_from_environment(std::vector<std::string>* warnings) {
  CacheSettings settings;
  auto warn = [&](const char* name, const char* value, const std::string& instead) {
    if (warnings)
      warnings->push_back(std::string(name) + "=\"" + value + "\" is not understood; " + instead);
  };
  if (const char* value = nonempty_env("WEFT_CACHE")) {
    if (auto on = parse_switch(value))
      settings.enabled = *on;
    else
      warn("WEFT_CACHE", value, "use 0 or 1. The cache stays on.");
  }
  if (const char* value = nonempty_env("WEFT_CACHE_DIR")) settings.directory = value;
  if (const char* value = nonempty_env("WEFT_CACHE_KEY_FILE")) settings.key_file = value;
  if (const char* value = nonempty_env("WEFT_CACHE_SHARED")) {
    if (auto shared = parse_switch(value))
      settings.shared = *shared;
    else
      warn("WEFT_CACHE_SHARED", value, "use 0 or 1. The cache stays private to this user.");
  }
  if (const char* value = nonempty_env("WEFT_CACHE_KEY_HOOK")) settings.user_hook = value;
  if (const char* value = nonempty_env("WEFT_CACHE_MAX_SIZE")) {
    if (auto bytes = parse_byte_size(value))
      settings.max_bytes = *bytes;
    else
      warn("WEFT_CACHE_MAX_SIZE", value, "use bytes or a size such as 512M or 2G. Using 1G.");
  }
  if (const char* value = nonempty_env("WEFT_CACHE_MIN_COMPILE_TIME")) {
    auto parsed = split_number(value);
    if (parsed && (parsed->second.empty() || parsed->second == "s"))
      settings.min_compile_time_s = parsed->first;
    else if (parsed && parsed->second == "ms")
      settings.min_compile_time_s = parsed->first / 1000;
    else
      warn("WEFT_CACHE_MIN_COMPILE_TIME", value,
           "use seconds (0.01) or milliseconds (10ms). Using 0.01.");
  }

  // Multi-process jobs: an explicit WEFT_CACHE_WRITER wins; otherwise only rank 0 writes, so
  // N ranks compiling the same programs do not write the same entries N times.
  if (const char* value = nonempty_env("WEFT_CACHE_WRITER")) {
    if (auto writer = parse_switch(value)) {
      settings.writer = *writer;
      settings.writer_reason = std::string("WEFT_CACHE_WRITER=") + value;
      return settings;
    }
    warn("WEFT_CACHE_WRITER", value, "use 0 or 1. Falling back to the MPI rank, if any.");
  }
  for (const char* name : kRankVariables) {
    const char* value = nonempty_env(name);
    if (!value) continue;
    settings.writer = std::string_view(value) == "0";
    settings.writer_reason = std::string(name) + "=" + value + " (only rank 0 writes)";
    break;
  }
  return settings;
}

}  // namespace weft::cache

#include "numeric_flags.h"

#include <charconv>
#include <limits>

namespace weft::cli {

std::string shown_value(const std::string& text) {
  return "'" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
}

std::optional<std::int64_t> parse_whole_number(std::string_view text, std::int64_t min,
                                               std::int64_t max) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < min || value > max)
    return std::nullopt;
  return value;
}

std::optional<std::uint64_t> parse_unsigned_64(std::string_view text) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  // from_chars takes no sign for unsigned types, so "-1" fails instead of wrapping.
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

CLI::Option* add_count_option(CLI::App* app, const std::string& name, int& value, int min,
                              const std::string& description) {
  constexpr int kMax = std::numeric_limits<int>::max();
  const CLI::Validator whole_number(
      [min](std::string& text) -> std::string {
        if (parse_whole_number(text, min, kMax)) return "";
        return "expected a whole number from " + std::to_string(min) + " to " +
               std::to_string(kMax) + ", got " + shown_value(text);
      },
      "", "");
  return app->add_option(name, value, description)->type_name("N")->check(whole_number);
}

CLI::Option* add_seed_option(CLI::App* app, const std::string& name, std::uint64_t& value,
                             const std::string& description) {
  const CLI::Validator seed(
      [](std::string& text) -> std::string {
        if (parse_unsigned_64(text)) return "";
        return "expected a whole number from 0 to 18446744073709551615 (2^64-1), got " +
               shown_value(text);
      },
      "", "");
  return app->add_option(name, value, description)->type_name("N")->check(seed);
}

}  // namespace weft::cli

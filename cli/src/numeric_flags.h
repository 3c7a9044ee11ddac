// Numeric command-line options with messages that say what is allowed. CLI11's own range
// checks print their bounds as doubles (a 300-digit maximum) and its unsigned conversion
// saturates silently, so counts and seeds are checked here as text before conversion.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::cli {

// The value as the user typed it, quoted and shortened so a pasted blob cannot flood the
// message: "'12q'".
std::string shown_value(const std::string& text);

// A whole number in [min, max] written in decimal digits (a leading '-' for negatives), or
// nothing: no '+', no spaces, no fractions, nothing out of range.
std::optional<std::int64_t> parse_whole_number(std::string_view text, std::int64_t min,
                                               std::int64_t max);
std::optional<std::uint64_t> parse_unsigned_64(std::string_view text);

// Adds `name` as an int option of at least `min` (and at most INT_MAX). A bad value is a usage
// error: "--repeat: expected a whole number from 1 to 2147483647, got '0'".
CLI::Option* add_count_option(CLI::App* app, const std::string& name, int& value, int min,
                              const std::string& description);
// Adds `name` as a 64-bit seed: 0 to 2^64-1; a sign or a value beyond 64 bits is a usage error.
CLI::Option* add_seed_option(CLI::App* app, const std::string& name, std::uint64_t& value,
                             const std::string& description);

}  // namespace weft::cli

#include "time_format.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace weft::monitor {

namespace {

struct Unit {
  double ns;
  const char* name;
};
constexpr std::array<Unit, 4> kUnits = {{{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}}};

// The largest unit not above |ns| (ns for anything under a microsecond).
const Unit& unit_for(double ns) {
  const double magnitude = std::fabs(ns);
  for (const Unit& unit : kUnits)
    if (magnitude >= unit.ns) return unit;
  return kUnits.back();
}

std::string print(double value, int decimals, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string result = text;
  if (result.find('.') != std::string::npos) {
    while (result.back() == '0') result.pop_back();
    if (result.back() == '.') result.pop_back();
  }
  if (result == "-0") result = "0";
  return result + " " + unit;
}

}  // namespace

std::string format_duration(std::int64_t ns) {
  const Unit& unit = unit_for(static_cast<double>(ns));
  const double value = static_cast<double>(ns) / unit.ns;
  const double magnitude = std::fabs(value);
  const int decimals = unit.ns == 1 ? 0 : magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2;
  return print(value, decimals, unit.name);
}

std::string format_time_point(std::int64_t ns) {
  // In integers: a double would lose microseconds after a few months of trace.
  const bool negative = ns < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  const std::uint64_t us = (magnitude + 500) / 1000;  // to the nearest microsecond
  char text[48];
  std::snprintf(text, sizeof text, "%s%llu.%06llu s", negative && us > 0 ? "-" : "",
                static_cast<unsigned long long>(us / 1000000),
                static_cast<unsigned long long>(us % 1000000));
  return text;
}

std::string format_tick(std::int64_t ns, std::int64_t step_ns) {
  if (ns == 0) return "0";
  const Unit& unit = unit_for(static_cast<double>(ns));
  const double step = static_cast<double>(step_ns > 0 ? step_ns : 1);
  int decimals = static_cast<int>(std::ceil(std::log10(unit.ns / step) - 1e-9));
  if (decimals < 0) decimals = 0;
  if (decimals > 9) decimals = 9;
  return print(static_cast<double>(ns) / unit.ns, decimals, unit.name);
}

std::int64_t nice_tick_step(double min_step_ns) {
  if (!(min_step_ns > 1)) return 1;
  if (min_step_ns > 1e18) return 1'000'000'000'000'000'000;  // stays within int64
  double power = std::pow(10.0, std::floor(std::log10(min_step_ns)));
  for (;;) {
    for (double factor : {1.0, 2.0, 5.0}) {
      const double step = factor * power;
      if (step >= min_step_ns) return static_cast<std::int64_t>(std::llround(step));
    }
    power *= 10;
  }
}

TimeInput parse_time_input(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  const std::string quoted = "\"" + std::string(text.substr(0, 40)) + "\"";
  std::size_t number_end = 0;
  while (number_end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[number_end])) || text[number_end] == '.'))
    ++number_end;
  const std::string number(text.substr(0, number_end));
  char* parsed_end = nullptr;
  const double value = number.empty() ? 0 : std::strtod(number.c_str(), &parsed_end);
  if (number.empty() || parsed_end != number.c_str() + number.size() || !std::isfinite(value))
    return {std::nullopt, quoted + " is not a time: write a number and a unit, like 1.5ms"};
  const std::string_view unit = trim(text.substr(number_end));
  double scale = 0;
  if (unit == "ns")
    scale = 1;
  else if (unit == "us" || unit == "µs")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit.empty())
    return {std::nullopt, quoted + " has no unit: write " + number + "s, " + number + "ms, " +
                              number + "us or " + number + "ns"};
  else
    return {std::nullopt, quoted + ": the unit must be s, ms, us (or µs) or ns, not \"" +
                              std::string(unit) + "\""};
  const double ns = value * scale;
  if (ns > 9.2e18) return {std::nullopt, quoted + " is too far: times go up to about 292 years"};
  return {static_cast<std::int64_t>(std::llround(ns)), {}};
}

}  // namespace weft::monitor

#include "weft/log.h"

#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "weft/error.h"

namespace weft::log {

namespace {

struct Levels {
  Level fallback = Level::warning;
  std::map<std::string, Level, std::less<>> by_component;
};

Level parse_level(std::string_view text, std::string_view spec) {
  if (text == "off" || text == "none") return Level::off;
  if (text == "error") return Level::error;
  if (text == "warning" || text == "warn") return Level::warning;
  if (text == "info") return Level::info;
  if (text == "debug" || text == "trace") return Level::debug;
  throw InvalidArgumentError("weft: WEFT_LOG=\"" + std::string(spec) + "\": unknown level \"" +
                             std::string(text) +
                             "\". Use off, error, warning, info or debug, optionally per "
                             "component as COMPONENT=LEVEL (e.g. cache=debug).");
}

Levels parse(std::string_view spec) {
  Levels levels;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view item = spec.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      if (auto eq = item.find('='); eq == std::string_view::npos)
        levels.fallback = parse_level(item, spec);
      else
        levels.by_component[std::string(item.substr(0, eq))] =
            parse_level(item.substr(eq + 1), spec);
    }
    start = end + 1;
  }
  return levels;
}

struct State {
  std::shared_mutex mutex;
  Levels levels;
  std::function<void(const std::string&)> sink;
  std::mutex write_mutex;  // keeps lines from different threads whole

  State() { levels = from_environment(); }

  static Levels from_environment() {
    const char* spec = std::getenv("WEFT_LOG");
    if (!spec) return {};
    try {
      return parse(spec);
    } catch (const Error& e) {
      // A bad WEFT_LOG must not stop the program it was meant to help debug.
      std::cerr << e.what() << " Logging stays at warning.\n";
      return {};
    }
  }
};

State& state() {
  // Never destroyed: threads and exit handlers may log during static destruction.
  static State* s = new State();
  return *s;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::error:
      return "error";
    case Level::warning:
      return "warning";
    case Level::info:
      return "info";
    case Level::debug:
      return "debug";
    case Level::off:
      break;
  }
  return "off";
}

}  // namespace

void set_levels(std::string_view spec) {
  Levels parsed = parse(spec);
  State& s = state();
  std::unique_lock lock(s.mutex);
  s.levels = std::move(parsed);
}

void reset_levels_from_environment() {
  Levels parsed = State::from_environment();
  State& s = state();
  std::unique_lock lock(s.mutex);
  s.levels = std::move(parsed);
}

bool enabled(std::string_view component, Level level) {
  State& s = state();
  std::shared_lock lock(s.mutex);
  auto found = s.levels.by_component.find(component);
  const Level limit = found != s.levels.by_component.end() ? found->second : s.levels.fallback;
  return level != Level::off && static_cast<int>(level) <= static_cast<int>(limit);
}

void set_sink(std::function<void(const std::string& line)> sink) {
  State& s = state();
  std::lock_guard lock(s.write_mutex);
  s.sink = std::move(sink);
}

void write(std::string_view component, Level level, std::string_view message) {
  if (!enabled(component, level)) return;
  std::string line = "weft[" + std::string(component) + "] " + level_name(level) + ": ";
  line += message;
  State& s = state();
  std::lock_guard lock(s.write_mutex);
  if (s.sink) {
    s.sink(line);
  } else {
    std::cerr << line << '\n';
    std::cerr.flush();
  }
}

}  // namespace weft::log

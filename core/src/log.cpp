#include "weft/log.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <vector>

#include "weft/error.h"

namespace weft::log {

namespace {

// Every component that logs, in one place: WEFT_LOG=NAME=LEVEL for any other name is a typo and
// is reported. Add a name here when a new part of weft starts logging under it.
constexpr std::string_view kKnownComponents[] = {
    "build",      // OpenCL program builds: build logs and options
    "cache",      // the persistent compilation cache: lookups, stores, misses, damage
    "callback",   // host steps: callbacks, prints, their queue and failures
    "cli",        // the weft command-line tool
    "codegen",    // the lowering pipeline (WEFT_DUMP_IR) and OpenCL C generation
    "runtime",    // dispatch, transfers, queues and events
    "telemetry",  // trace files and the live monitor stream
    "tiering",    // where a program's calls run: the interpreter or its kernels, and why
};

struct Levels {
  Level fallback = Level::warning;
  std::map<std::string, Level, std::less<>> by_component;
  std::vector<std::string> unknown;  // components named in the spec that nothing logs under
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

// One line naming the unknown components and the known ones; empty when there are none or
// this spec was reported already (each spec is reported once per process).
std::string unknown_components_warning(std::string_view spec, const Levels& levels) {
  if (levels.unknown.empty()) return "";
  static std::mutex mutex;
  static std::set<std::string, std::less<>> reported;
  {
    std::lock_guard lock(mutex);
    if (!reported.emplace(spec).second) return "";
  }
  std::string names;
  for (std::size_t i = 0; i < levels.unknown.size(); ++i)
    names += (i ? ", \"" : "\"") + levels.unknown[i] + "\"";
  std::string known;
  for (std::string_view c : kKnownComponents) known += (known.empty() ? "" : ", ") + std::string(c);
  const bool several = levels.unknown.size() > 1;
  return "WEFT_LOG=\"" + std::string(spec) + "\": unknown component" + (several ? "s " : " ") +
         names + " (nothing logs under " +
         (several ? "these names, so their settings have" : "that name, so its setting has") +
         " no effect). Known components: " + known +
         "; a LEVEL without COMPONENT= applies to all of them.";
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
      if (auto eq = item.find('='); eq == std::string_view::npos) {
        levels.fallback = parse_level(item, spec);
      } else {
        // "cache = debug" reads as "cache=debug".
        std::string component(item.substr(0, eq));
        while (!component.empty() && component.back() == ' ') component.pop_back();
        std::string_view level = item.substr(eq + 1);
        while (!level.empty() && level.front() == ' ') level.remove_prefix(1);
        levels.by_component[component] = parse_level(level, spec);
        if (!is_known_component(component) &&
            std::find(levels.unknown.begin(), levels.unknown.end(), component) ==
                levels.unknown.end())
          levels.unknown.push_back(std::move(component));
      }
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
      Levels levels = parse(spec);
      // Straight to stderr: the state (and any sink) does not exist yet while this runs.
      if (const std::string warning = unknown_components_warning(spec, levels); !warning.empty())
        std::cerr << "weft[log] warning: " << warning << "\n";
      return levels;
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
  const std::string warning = unknown_components_warning(spec, parsed);
  {
    State& s = state();
    std::unique_lock lock(s.mutex);
    s.levels = std::move(parsed);
  }
  if (!warning.empty()) write("log", Level::warning, warning);
}

std::span<const std::string_view> known_components() {
  return kKnownComponents;
}

bool is_known_component(std::string_view component) {
  return std::find(std::begin(kKnownComponents), std::end(kKnownComponents), component) !=
         std::end(kKnownComponents);
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

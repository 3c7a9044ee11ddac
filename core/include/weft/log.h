// Diagnostics for people running weft: one line per event on stderr (or a sink the embedding
// application installs), filtered per component by WEFT_LOG.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace weft::log {

enum class Level { off, error, warning, info, debug };

// WEFT_LOG grammar: a comma-separated list of `LEVEL` (every component) or `COMPONENT=LEVEL`,
// e.g. "cache=debug" or "info,cache=debug". Levels: off, error, warning (or warn), info, debug.
// Unset: warning for every component. Throws InvalidArgumentError on an unknown level. A
// COMPONENT that is not in known_components() is kept but warned about, once per spec: from
// WEFT_LOG on stderr ("weft[log] warning: ..."), from set_levels through the sink.
void set_levels(std::string_view spec);
// The components weft logs under ("build", "cache", "cli", "codegen", "runtime"), defined in
// one place (core/src/log.cpp); a new component must be added there.
std::span<const std::string_view> known_components();
bool is_known_component(std::string_view component);
// Back to what WEFT_LOG says (re-reads the environment).
void reset_levels_from_environment();

bool enabled(std::string_view component, Level level);

// Where lines go: stderr unless replaced; an empty function restores stderr. The sink gets
// the full line ("weft[cache] warning: ..."), without a trailing newline. Thread-safe.
void set_sink(std::function<void(const std::string& line)> sink);

// Emits "weft[COMPONENT] LEVEL: MESSAGE" when the component's level admits it.
void write(std::string_view component, Level level, std::string_view message);

inline void debug(std::string_view component, std::string_view message) {
  if (enabled(component, Level::debug)) write(component, Level::debug, message);
}
inline void info(std::string_view component, std::string_view message) {
  if (enabled(component, Level::info)) write(component, Level::info, message);
}
inline void warning(std::string_view component, std::string_view message) {
  write(component, Level::warning, message);
}

}  // namespace weft::log

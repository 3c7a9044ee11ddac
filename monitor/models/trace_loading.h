// Opening a trace file for the monitor: every failure (corrupt, truncated, foreign, missing,
// too large for memory) becomes a message, never an exception escaping into Qt's event loop.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "weft/telemetry/trace_file.h"

namespace weft::monitor {

struct LoadedTrace {
  std::optional<telemetry::Trace> trace;
  std::string error;  // set when trace is empty
};

LoadedTrace load_trace_file(const std::filesystem::path& path);

}  // namespace weft::monitor

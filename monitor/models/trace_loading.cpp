#include "trace_loading.h"

#include <new>

#include "weft/error.h"

namespace weft::monitor {

LoadedTrace load_trace_file(const std::filesystem::path& path) {
  LoadedTrace loaded;
  try {
    loaded.trace = telemetry::read_trace(path);
  } catch (const TraceError& e) {
    loaded.error = e.what();
  } catch (const std::bad_alloc&) {
    loaded.error =
        "weft-monitor: the trace file " + path.string() + " is too large to hold in memory";
  } catch (const std::exception& e) {
    loaded.error = "weft-monitor: cannot read the trace file " + path.string() + ": " + e.what();
  }
  return loaded;
}

}  // namespace weft::monitor

// Totals over a time range of the trace, as Perfetto's area selection and `weft trace
// summary` give them: per kernel, effect, dispatch, transfer kind and compiled function, the
// count of spans overlapping the range and the time they spent inside it (spans are clipped
// to the range, so a range inside one long compile counts only its part).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/telemetry/trace_file.h"

namespace weft::monitor {

struct RangeTotal {
  enum class Category { kernel, effect, dispatch, transfer, compile };
  Category category = Category::kernel;
  std::string name;  // "function/kernel", the effect, the function, the transfer kind
  std::string device;
  std::size_t count = 0;
  std::int64_t total_ns = 0;     // inside the range
  std::int64_t max_ns = 0;       // the longest one, inside the range
  std::int64_t wait_ns = 0;      // kernels: queued to start; callbacks: runnable to start
  std::size_t failed = 0;        // effects: callbacks that did not return ok
  std::size_t out_of_order = 0;  // effects: callbacks not in program order
};

const char* to_string(RangeTotal::Category category);

// The totals of the spans of `trace` overlapping [from_ns, to_ns].
std::vector<RangeTotal> range_totals(const telemetry::Trace& trace, std::int64_t from_ns,
                                     std::int64_t to_ns);

}  // namespace weft::monitor

// Times as people read them: "830 ns", "12.5 µs", "1.25 ms", "2.4 s", and back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::monitor {

// A duration with the unit that keeps one to three integer digits and three significant ones.
std::string format_duration(std::int64_t ns);

// A point in time (ns since the trace started) to the microsecond, in seconds: "4.700012 s".
// Spans a few microseconds apart always read differently, however late in the trace.
std::string format_time_point(std::int64_t ns);

// A ruler label for `ns`: the unit follows the value, the decimals follow `step_ns` so that
// neighbouring ticks never print the same text.
std::string format_tick(std::int64_t ns, std::int64_t step_ns);

// The smallest 1, 2 or 5 times a power of ten that is at least `min_step_ns` (and at least 1).
std::int64_t nice_tick_step(double min_step_ns);

// A time typed by the user: "1.5ms", "250 us", "250 µs", "2 s", "4.700012s". The unit is
// required: a bare number could mean ns, µs or s (the views show seconds), and a wrong guess
// silently filters everything out, so it is refused with a hint instead.
struct TimeInput {
  std::optional<std::int64_t> ns;  // set when the text is a time
  std::string problem;             // otherwise, what is wrong and how to write it
};
TimeInput parse_time_input(std::string_view text);

}  // namespace weft::monitor

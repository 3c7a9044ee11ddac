// Times as people read them: "830 ns", "12.5 µs", "1.25 ms", "2.4 s", and back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::monitor {

// A duration with the unit that keeps one to three integer digits and three significant ones.
std::string format_duration(std::int64_t ns);

// A ruler label for `ns`: the unit follows the value, the decimals follow `step_ns` so that
// neighbouring ticks never print the same text.
std::string format_tick(std::int64_t ns, std::int64_t step_ns);

// The smallest 1, 2 or 5 times a power of ten that is at least `min_step_ns` (and at least 1).
std::int64_t nice_tick_step(double min_step_ns);

// "1.5ms", "250 us", "250 µs", "2 s", "300" (ns when no unit); nullopt for anything else.
std::optional<std::int64_t> parse_duration(std::string_view text);

}  // namespace weft::monitor

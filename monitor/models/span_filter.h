// What the user searches for: a name substring, a device, an effect, a time range. Shared by
// the span list (hides what does not match) and the timeline (dims or hides it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "weft/telemetry/record.h"

namespace weft::monitor {

// The device a span ran on or for: its "device" argument, else its row's device.
std::string_view span_device(const telemetry::Span& span);

struct SpanFilter {
  std::string name;                     // case-insensitive substring of the span's name; empty: any
  std::string device;                   // exact device name ("cpu:0"); empty: any
  std::string effect;                   // exact effect name; empty: any
  std::optional<std::int64_t> from_ns;  // overlaps [from_ns, to_ns] (ns since the start)
  std::optional<std::int64_t> to_ns;

  bool active() const;
  bool matches(const telemetry::Span& span) const;
  bool operator==(const SpanFilter&) const = default;
};

// Case-insensitive (ASCII) substring test.
bool contains_ignoring_case(std::string_view text, std::string_view needle);

}  // namespace weft::monitor

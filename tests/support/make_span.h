// A telemetry span in one line, for tests that build traces by hand.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "weft/telemetry/record.h"

namespace weft::testing {

inline telemetry::Span make_span(telemetry::Id id, telemetry::SpanKind kind,
                                 const telemetry::Track& track, std::string name,
                                 std::int64_t start, std::int64_t end, telemetry::Args args = {}) {
  telemetry::Span span;
  span.id = id;
  span.kind = kind;
  span.track = track;
  span.name = std::move(name);
  span.start_ns = start;
  span.end_ns = end;
  span.args = std::move(args);
  return span;
}

}  // namespace weft::testing

// libFuzzer target for the trace reader: any bytes must either read as a trace or throw a
// weft::TraceError, never crash, hang or run what the file holds. What reads must keep the
// reader's promises (spans by start time, none ending before it starts, ids indexed, edges only
// between spans it has), and the trace tools must take it: the Chrome export is valid JSON with
// one slice per span, effect streams pair their two orders, the summary counts every span.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>

#include "weft/error.h"
#include "weft/telemetry/trace_file.h"
#include "weft/telemetry/trace_tools.h"

namespace {

using weft::telemetry::Trace;

void check(bool condition) {
  if (!condition) __builtin_trap();
}

void check_invariants(const Trace& trace) {
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    const auto& span = trace.spans[i];
    check(span.id != 0);
    check(span.end_ns >= span.start_ns);
    if (i > 0) check(trace.spans[i - 1].start_ns <= span.start_ns);
    // Ids may repeat in a hand-made file; the index finds one span with the id.
    const std::ptrdiff_t at = trace.index_of(span.id);
    check(at >= 0 && static_cast<std::size_t>(at) < trace.spans.size());
    check(trace.spans[static_cast<std::size_t>(at)].id == span.id);
  }
  for (const auto& edge : trace.edges) {
    check(trace.index_of(edge.from) >= 0);
    check(trace.index_of(edge.to) >= 0);
  }
}

void check_tools(const Trace& trace) {
  std::ostringstream out;
  weft::telemetry::write_chrome_trace(trace, out);
  const nlohmann::json document = nlohmann::json::parse(out.str(), nullptr, false);
  check(document.is_object() && document.contains("traceEvents"));
  std::size_t slices = 0;
  for (const nlohmann::json& event : document["traceEvents"])
    slices += event.is_object() && event.contains("ph") && event["ph"] == "X";
  check(slices == trace.spans.size());

  for (const auto& stream : weft::telemetry::effect_streams(trace)) {
    check(stream.program_order.size() == stream.execution_order.size());
    check(stream.out_of_order <= stream.execution_order.size());
    for (std::size_t i : stream.execution_order) check(i < trace.spans.size());
  }

  const weft::telemetry::TraceSummary summary = weft::telemetry::summarize(trace);
  check(summary.spans == trace.spans.size());
  check(summary.edges == trace.edges.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<Trace> trace;
  try {
    trace = weft::telemetry::read_trace(std::span<const std::uint8_t>(data, size));
  } catch (const weft::TraceError&) {
    // Refusing the bytes is the expected outcome for most inputs.
    return 0;
  }
  check_invariants(*trace);
  check_tools(*trace);
  return 0;
}

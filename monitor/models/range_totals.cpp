#include "range_totals.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "weft/telemetry/trace_tools.h"

namespace weft::monitor {

const char* to_string(RangeTotal::Category category) {
  switch (category) {
    case RangeTotal::Category::kernel:
      return "kernel";
    case RangeTotal::Category::effect:
      return "effect";
    case RangeTotal::Category::dispatch:
      return "dispatch";
    case RangeTotal::Category::transfer:
      return "transfer";
    case RangeTotal::Category::compile:
      return "compile";
  }
  return "?";
}

std::vector<RangeTotal> range_totals(const telemetry::Trace& trace, std::int64_t from_ns,
                                     std::int64_t to_ns) {
  if (to_ns < from_ns) std::swap(from_ns, to_ns);
  // The range as a trace of its own (spans clipped to it), summarised as `weft trace
  // summary` summarises a whole one.
  telemetry::Trace inside;
  inside.meta = trace.meta;
  inside.programs = trace.programs;
  for (const telemetry::Span& span : trace.spans) {
    if (span.end_ns < from_ns || span.start_ns > to_ns) continue;
    telemetry::Span clipped = span;
    clipped.start_ns = std::max(span.start_ns, from_ns);
    clipped.end_ns = std::min(span.end_ns, to_ns);
    inside.spans.push_back(std::move(clipped));
  }
  inside.reindex();
  const telemetry::TraceSummary summary = telemetry::summarize(inside);

  std::vector<RangeTotal> totals;
  auto add_rows = [&](const std::vector<telemetry::TraceSummary::Row>& rows,
                      RangeTotal::Category category) {
    for (const telemetry::TraceSummary::Row& row : rows)
      totals.push_back({category, row.name, row.device, row.count, row.total_ns, row.max_ns,
                        row.wait_ns, row.failed, row.out_of_order});
  };
  add_rows(summary.kernels, RangeTotal::Category::kernel);
  add_rows(summary.effects, RangeTotal::Category::effect);
  add_rows(summary.dispatches, RangeTotal::Category::dispatch);
  add_rows(summary.transfers, RangeTotal::Category::transfer);
  // The summary has one total for compiles; the range view splits them by function.
  std::map<std::pair<std::string, std::string>, RangeTotal> compiles;
  for (const telemetry::Span& span : inside.spans) {
    if (span.kind != telemetry::SpanKind::compile) continue;
    const std::string* device = span.arg("device");
    RangeTotal& total = compiles[{span.name, device ? *device : span.track.device}];
    total.category = RangeTotal::Category::compile;
    total.name = span.name;
    total.device = device ? *device : span.track.device;
    ++total.count;
    total.total_ns += span.end_ns - span.start_ns;
    total.max_ns = std::max(total.max_ns, span.end_ns - span.start_ns);
  }
  for (auto& [key, total] : compiles) totals.push_back(std::move(total));
  return totals;
}

}  // namespace weft::monitor

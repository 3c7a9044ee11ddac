// Totals for `weft trace summary`, and the program-order check of effects.
#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "weft/telemetry/trace_tools.h"

namespace weft::telemetry {

namespace {

// Totals from untrusted files: added with saturation, never overflowing.
std::int64_t plus(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return sum;
}

std::int64_t minus(std::int64_t a, std::int64_t b) {
  std::int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference))
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return difference;
}

std::int64_t arg_ns(const Span& span, std::string_view key) {
  const std::string* value = span.arg(key);
  if (!value) return 0;
  try {
    // A wait is never negative; a value that is not a number is shown as it is, never summed.
    return std::max<std::int64_t>(0, std::stoll(*value));
  } catch (const std::exception&) {
    return 0;
  }
}

bool failed(const Span& span) {
  const std::string* status = span.arg("status");
  return status && status->rfind("failed", 0) == 0;
}

// Time intervals that may overlap (many kernels queued at once, waits on several threads): what
// they cover on the wall clock, each moment counted once.
class Coverage {
 public:
  void add(std::int64_t from, std::int64_t to) {
    if (to > from) intervals_.emplace_back(from, to);
  }
  std::int64_t covered_ns() {
    std::sort(intervals_.begin(), intervals_.end());
    std::int64_t total = 0;
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    for (const auto& [from, to] : intervals_) {
      if (to <= end) continue;
      total = plus(total, minus(to, std::max(from, end)));
      end = to;
    }
    return total;
  }

 private:
  std::vector<std::pair<std::int64_t, std::int64_t>> intervals_;
};

// `wait_ns` before the span's start (queued, or runnable) goes into `waits`.
void add(TraceSummary::Row& row, const Span& span, std::int64_t wait_ns, Coverage& waits) {
  const std::int64_t duration = plus(span.end_ns, -span.start_ns);
  ++row.count;
  row.total_ns = plus(row.total_ns, duration);
  row.max_ns = std::max(row.max_ns, duration);
  waits.add(minus(span.start_ns, wait_ns), span.start_ns);
  row.failed += failed(span);
}

using RowKey = std::pair<std::string, std::string>;

std::vector<TraceSummary::Row> by_total(std::map<RowKey, TraceSummary::Row>& rows,
                                        std::map<RowKey, Coverage>& waits) {
  std::vector<TraceSummary::Row> out;
  for (auto& [key, row] : rows) {
    row.wait_ns = waits[key].covered_ns();
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  return out;
}

}  // namespace

std::vector<EffectStream> effect_streams(const Trace& trace) {
  // Ordered and unordered callbacks of one effect are separate streams: only the first keep
  // an order.
  std::map<std::tuple<std::string, std::string, bool>, EffectStream> streams;
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    const Span& span = trace.spans[i];
    if (span.kind != SpanKind::callback) continue;
    const std::string* thread = span.arg("thread");
    const std::string* ordered = span.arg("ordered");
    const bool is_ordered = ordered && *ordered == "true";
    EffectStream& stream = streams[{thread ? *thread : std::string(), span.effect, !is_ordered}];
    stream.thread = thread ? *thread : std::string();
    stream.effect = span.effect;
    stream.ordered = is_ordered;
    stream.execution_order.push_back(i);  // spans are sorted by start time already
  }
  std::vector<EffectStream> out;
  for (auto& [key, stream] : streams) {
    stream.program_order = stream.execution_order;
    std::stable_sort(
        stream.program_order.begin(), stream.program_order.end(),
        [&](std::size_t a, std::size_t b) { return trace.spans[a].seq < trace.spans[b].seq; });
    for (std::size_t k = 0; k < stream.program_order.size(); ++k)
      stream.out_of_order += stream.program_order[k] != stream.execution_order[k];
    out.push_back(std::move(stream));
  }
  return out;
}

TraceSummary summarize(const Trace& trace) {
  TraceSummary summary;
  summary.spans = trace.spans.size();
  summary.edges = trace.edges.size();
  if (!trace.spans.empty()) {
    std::int64_t first = trace.spans.front().start_ns, last = first;
    for (const Span& s : trace.spans) last = std::max(last, s.end_ns);
    summary.duration_ns = plus(last, -first);
  }
  std::map<Id, std::string> program_function;
  for (const Program& p : trace.programs) program_function[p.id] = p.function;
  std::map<RowKey, TraceSummary::Row> kernels, dispatches, transfers;
  std::map<RowKey, Coverage> kernel_waits, no_waits;
  Coverage barrier_waits, array_waits;
  std::map<std::string, std::size_t> reasons;
  for (const Span& span : trace.spans) {
    const std::string* device = span.arg("device");
    const std::string dev = device ? *device : span.track.device;
    switch (span.kind) {
      case SpanKind::kernel: {
        std::string name = span.name;
        if (const std::string* program = span.arg("program")) {
          try {
            if (auto f = program_function.find(std::stoull(*program)); f != program_function.end())
              name = f->second + "/" + span.name;
          } catch (const std::exception&) {
          }
        }
        TraceSummary::Row& row = kernels[{name, dev}];
        row.name = name;
        row.device = dev;
        add(row, span, arg_ns(span, "queue_wait_ns"), kernel_waits[{name, dev}]);
        break;
      }
      case SpanKind::dispatch: {
        if (span.arg("ran_on")) ++summary.interpreted_dispatches;
        TraceSummary::Row& row = dispatches[{span.name, dev}];
        row.name = span.name;
        row.device = dev;
        add(row, span, 0, no_waits[{span.name, dev}]);
        break;
      }
      case SpanKind::transfer: {
        TraceSummary::Row& row = transfers[{span.name, dev}];
        row.name = span.name;
        row.device = dev;
        add(row, span, 0, no_waits[{span.name, dev}]);
        break;
      }
      case SpanKind::compile:
        ++summary.compiles;
        summary.compile_ns = plus(summary.compile_ns, plus(span.end_ns, -span.start_ns));
        break;
      case SpanKind::cache_lookup: {
        const std::string* status = span.arg("status");
        if (status && *status == "hit") {
          ++summary.cache_hits;
        } else {
          ++summary.cache_misses;
          const std::string* reason = span.arg("reason");
          ++reasons[reason && !reason->empty() ? *reason : (status ? *status : "unknown")];
        }
        break;
      }
      case SpanKind::cache_store:
        ++summary.cache_stores;
        break;
      case SpanKind::barrier_wait:
        barrier_waits.add(span.start_ns, span.end_ns);
        break;
      case SpanKind::array_wait:
        array_waits.add(span.start_ns, span.end_ns);
        break;
      default:
        break;
    }
  }
  summary.kernels = by_total(kernels, kernel_waits);
  summary.dispatches = by_total(dispatches, no_waits);
  summary.transfers = by_total(transfers, no_waits);
  summary.barrier_wait_ns = barrier_waits.covered_ns();
  summary.array_wait_ns = array_waits.covered_ns();
  for (const auto& [reason, count] : reasons)
    summary.miss_reasons.push_back(reason + " x" + std::to_string(count));

  // Effects: one row per effect name, over every thread's stream.
  std::map<std::pair<std::string, bool>, TraceSummary::Row> effects;
  std::map<std::pair<std::string, bool>, Coverage> effect_waits;
  for (const EffectStream& stream : effect_streams(trace)) {
    const std::string name = stream.effect.empty() ? "(unnamed)" : stream.effect;
    TraceSummary::Row& row = effects[{name, !stream.ordered}];  // ordered rows first
    row.name = name;
    row.ordered = stream.ordered;
    row.out_of_order += stream.ordered ? stream.out_of_order : 0;
    for (std::size_t i : stream.execution_order)
      add(row, trace.spans[i], arg_ns(trace.spans[i], "receive_wait_ns"),
          effect_waits[{name, !stream.ordered}]);
  }
  for (auto& [key, row] : effects) {
    row.wait_ns = effect_waits[key].covered_ns();
    summary.effects.push_back(std::move(row));
  }
  return summary;
}

}  // namespace weft::telemetry

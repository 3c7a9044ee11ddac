#include "trace_document.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "span_filter.h"

namespace weft::monitor {

TraceDocument::TraceDocument(QObject* parent) : QObject(parent) {}

void TraceDocument::resetDerived() {
  timeline_.clear();
  edges_.clear();
  pending_edges_.clear();
  edges_by_from_.clear();
  edges_by_to_.clear();
  live_index_.clear();
  program_index_.clear();
  effects_.clear();
  devices_.clear();
  span_process_.clear();
  process_names_.clear();
  counters_.clear();
}

void TraceDocument::setTrace(telemetry::Trace trace, const QString& source) {
  resetDerived();
  trace_ = std::move(trace);
  source_ = source;
  live_ = false;
  file_indexed_ = trace_.spans.size();
  // read_trace indexes ids; a trace built by hand may not have been.
  if (!trace_.spans.empty() && (trace_.index_of(trace_.spans.front().id) != 0 ||
                                trace_.index_of(trace_.spans.back().id) !=
                                    static_cast<std::ptrdiff_t>(trace_.spans.size() - 1)))
    trace_.reindex();
  timeline_.build(trace_.spans);
  indexSpans(0);
  indexPrograms(0);
  resolveEdges(trace_.edges);
  counters_ = build_counter_series(trace_.counters);
  Q_EMIT traceReset();
}

void TraceDocument::startLive(const QString& source) {
  resetDerived();
  trace_ = telemetry::Trace{};
  source_ = source;
  live_ = true;
  file_indexed_ = 0;
  Q_EMIT traceReset();
}

void TraceDocument::setProcessName(std::uint32_t process, std::string name) {
  if (process_names_.size() <= process) process_names_.resize(process + std::size_t{1});
  process_names_[process] = std::move(name);
}

void TraceDocument::appendCounters(std::vector<telemetry::Counter> counters) {
  if (counters.empty()) return;
  append_counter_samples(counters_, counters);
  std::move(counters.begin(), counters.end(), std::back_inserter(trace_.counters));
  Q_EMIT countersAppended();
}

void TraceDocument::append(std::vector<telemetry::Span> spans, std::vector<telemetry::Edge> edges,
                           std::vector<telemetry::Program> programs,
                           const std::vector<std::uint32_t>& processes) {
  const std::size_t first = trace_.spans.size();
  const std::size_t first_program = trace_.programs.size();
  for (telemetry::Program& program : programs) trace_.programs.push_back(std::move(program));
  indexPrograms(first_program);
  for (telemetry::Span& span : spans) {
    live_index_[span.id] = trace_.spans.size();
    trace_.spans.push_back(std::move(span));
  }
  if (!processes.empty() || !span_process_.empty()) {
    span_process_.resize(first, 0);
    for (std::size_t i = 0; i < trace_.spans.size() - first; ++i)
      span_process_.push_back(i < processes.size() ? processes[i] : 0);
  }
  timeline_.append(trace_.spans, first, span_process_.empty() ? nullptr : &span_process_);
  indexSpans(first);
  trace_.edges.insert(trace_.edges.end(), edges.begin(), edges.end());
  resolveEdges(std::move(edges));
  if (trace_.spans.size() > first)
    Q_EMIT spansAppended(static_cast<qsizetype>(first),
                         static_cast<qsizetype>(trace_.spans.size() - 1));
}

void TraceDocument::noteName(std::vector<std::string>& names, std::string_view name) {
  if (name.empty()) return;
  auto at = std::lower_bound(names.begin(), names.end(), name);
  if (at == names.end() || *at != name) names.insert(at, std::string(name));
}

void TraceDocument::indexSpans(std::size_t first) {
  // Few distinct values repeat a million times: skip the sorted insert for a repeat.
  std::string_view last_effect, last_device;
  for (std::size_t i = first; i < trace_.spans.size(); ++i) {
    const telemetry::Span& span = trace_.spans[i];
    if (!span.effect.empty() && span.effect != last_effect) {
      noteName(effects_, span.effect);
      last_effect = span.effect;
    }
    const std::string_view device = span_device(span);
    if (!device.empty() && device != last_device) {
      noteName(devices_, device);
      last_device = device;
    }
  }
}

void TraceDocument::indexPrograms(std::size_t first) {
  for (std::size_t i = first; i < trace_.programs.size(); ++i)
    program_index_[trace_.programs[i].id] = i;
}

void TraceDocument::resolveEdges(std::vector<telemetry::Edge> edges) {
  std::vector<telemetry::Edge> waiting = std::move(pending_edges_);
  pending_edges_.clear();
  for (telemetry::Edge& edge : edges) waiting.push_back(std::move(edge));
  if (waiting.empty()) return;
  for (telemetry::Edge& edge : waiting) {
    const std::ptrdiff_t from = indexOf(edge.from), to = indexOf(edge.to);
    if (from < 0 || to < 0) {
      // Live: the span may still come. A file's reader already dropped dangling edges.
      if (live_) pending_edges_.push_back(std::move(edge));
      continue;
    }
    noteName(effects_, edge.effect);
    const auto index = static_cast<std::uint32_t>(edges_.size());
    edges_.push_back(
        {static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to), edge.effect});
    edges_by_from_.emplace_back(static_cast<std::uint32_t>(from), index);
    edges_by_to_.emplace_back(static_cast<std::uint32_t>(to), index);
  }
  std::sort(edges_by_from_.begin(), edges_by_from_.end());
  std::sort(edges_by_to_.begin(), edges_by_to_.end());
}

std::ptrdiff_t TraceDocument::indexOf(telemetry::Id id) const {
  if (file_indexed_ > 0) {
    const std::ptrdiff_t index = trace_.index_of(id);
    if (index >= 0) return index;
  }
  auto found = live_index_.find(id);
  return found == live_index_.end() ? -1 : static_cast<std::ptrdiff_t>(found->second);
}

const telemetry::Program* TraceDocument::program(telemetry::Id id) const {
  auto found = program_index_.find(id);
  return found == program_index_.end() ? nullptr : &trace_.programs[found->second];
}

const telemetry::Program* TraceDocument::programOf(const telemetry::Span& span) const {
  const std::string* text = span.arg("program");
  if (!text) return nullptr;
  telemetry::Id id = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), id);
  if (error != std::errc() || end != text->data() + text->size()) return nullptr;
  return program(id);
}

namespace {

std::vector<std::size_t> edges_at(
    const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sorted, std::size_t span) {
  std::vector<std::size_t> result;
  auto at = std::lower_bound(sorted.begin(), sorted.end(),
                             std::make_pair(static_cast<std::uint32_t>(span), std::uint32_t{0}));
  for (; at != sorted.end() && at->first == span; ++at) result.push_back(at->second);
  return result;
}

}  // namespace

std::vector<std::size_t> TraceDocument::edgesInto(std::size_t span) const {
  return edges_at(edges_by_to_, span);
}

std::vector<std::size_t> TraceDocument::edgesOutOf(std::size_t span) const {
  return edges_at(edges_by_from_, span);
}

}  // namespace weft::monitor

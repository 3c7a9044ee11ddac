// The trace being looked at, from a file or growing live, with what every view derives from
// it: the timeline's rows, resolved token edges, the effects and devices it mentions. Views
// listen to traceReset (a different trace) and spansAppended (live growth).
#pragma once

#include <QObject>
#include <QString>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "counter_series.h"
#include "timeline_index.h"
#include "weft/telemetry/trace_file.h"

namespace weft::monitor {

// A token hand-off between two spans of the document, by span index.
struct ResolvedEdge {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  std::string effect;
};

class TraceDocument : public QObject {
  Q_OBJECT

 public:
  explicit TraceDocument(QObject* parent = nullptr);

  // Shows `trace`, read from `source` (a path, for the title and messages).
  void setTrace(telemetry::Trace trace, const QString& source);
  // Starts an empty trace that append() grows.
  void startLive(const QString& source);
  // Adds records whose times are already in this document's time base. Edges whose spans
  // have not arrived yet wait for them. `processes` (optional, parallel to `spans`): the live
  // program each span came from, an index into processNames(); the timeline groups rows by it.
  void append(std::vector<telemetry::Span> spans, std::vector<telemetry::Edge> edges,
              std::vector<telemetry::Program> programs,
              const std::vector<std::uint32_t>& processes = {});
  // Names live program `process` ("pid 1234 · ./train"), for its row group's header.
  void setProcessName(std::uint32_t process, std::string name);
  const std::vector<std::string>& processNames() const { return process_names_; }
  // Adds counter samples (times in this document's time base).
  void appendCounters(std::vector<telemetry::Counter> counters);

  bool isLive() const { return live_; }
  bool isEmpty() const { return trace_.spans.empty(); }
  const QString& source() const { return source_; }
  const telemetry::Trace& trace() const { return trace_; }
  const std::vector<telemetry::Span>& spans() const { return trace_.spans; }
  const TimelineIndex& timeline() const { return timeline_; }
  const std::vector<ResolvedEdge>& edges() const { return edges_; }
  // The counter tracks.
  const std::vector<CounterSeries>& counterSeries() const { return counters_; }

  std::ptrdiff_t indexOf(telemetry::Id id) const;
  const telemetry::Program* program(telemetry::Id id) const;
  // The program a kernel or dispatch names in its "program" argument.
  const telemetry::Program* programOf(const telemetry::Span& span) const;
  // Indices into edges() of the edges ending at / starting from spans[span].
  std::vector<std::size_t> edgesInto(std::size_t span) const;
  std::vector<std::size_t> edgesOutOf(std::size_t span) const;

  // Sorted, distinct names seen in the trace.
  const std::vector<std::string>& effects() const { return effects_; }
  const std::vector<std::string>& devices() const { return devices_; }

 signals:
  void traceReset();
  // spans()[first..last] are new (live); indices of earlier spans are unchanged.
  void spansAppended(qsizetype first, qsizetype last);
  void countersAppended();

 private:
  void resetDerived();
  void indexSpans(std::size_t first);
  void indexPrograms(std::size_t first);
  void resolveEdges(std::vector<telemetry::Edge> edges);
  void noteName(std::vector<std::string>& names, std::string_view name);

  telemetry::Trace trace_;
  QString source_;
  bool live_ = false;
  TimelineIndex timeline_;
  std::vector<ResolvedEdge> edges_;
  std::vector<telemetry::Edge> pending_edges_;
  // (span index, edge index), sorted: the edges at each end of a span.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_by_from_, edges_by_to_;
  // Spans appended live (read_trace's own index covers the file's spans).
  std::size_t file_indexed_ = 0;
  std::unordered_map<telemetry::Id, std::size_t> live_index_;
  std::unordered_map<telemetry::Id, std::size_t> program_index_;
  std::vector<std::string> effects_;
  std::vector<std::string> devices_;
  std::vector<std::uint32_t> span_process_;  // live: [span] = its program's process index
  std::vector<std::string> process_names_;
  std::vector<CounterSeries> counters_;
};

}  // namespace weft::monitor

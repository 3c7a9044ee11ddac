// The timeline's rows and their spans: which rows a trace makes and in what order, spans
// sorted and nested per row, token edges between the right spans, live growth arriving out of
// order, and several live programs merged without their ids or rows colliding.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <random>
#include <set>

#include "live_stream_merger.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "track_model.h"
#include "track_order.h"
#include "weft/telemetry/telemetry.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;
using weft::telemetry::SpanKind;

namespace {

std::vector<weft::telemetry::Id> lane_ids(const TraceDocument& document, const TimelineLane& lane) {
  std::vector<weft::telemetry::Id> ids;
  for (std::uint32_t index : lane.span) ids.push_back(document.spans()[index].id);
  return ids;
}

}  // namespace

class TimelineModelTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path trace_path_;
  DemoIds ids_;
  TraceBuilder builder_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    trace_path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    builder_ = demo_trace(&ids_);
    builder_.write(trace_path_);
  }

  void rowsFollowTheGroupOrder() {
    auto document = load_document(trace_path_);
    TrackModel tracks(document.get());
    const QStringList expected = {"main (thread 1)",
                                  "worker (thread 2)",
                                  "cpu:0 queue",
                                  "cpu:1 queue",
                                  "runtime cpu:0 (thread 4)",
                                  "callbacks cpu:0 level 0 (thread 5)",
                                  "callbacks cpu:1 level 0 (thread 6)",
                                  "cache writer (thread 9)"};
    QStringList rows;
    for (int row = 0; row < tracks.rowCount(); ++row) rows << tracks.index(row).data().toString();
    QCOMPARE(rows, expected);
    QCOMPARE(tracks.index(2).data(TrackModel::KindRole).toString(), QStringLiteral("queue"));
    QCOMPARE(tracks.index(3).data(TrackModel::DeviceRole).toString(), QStringLiteral("cpu:1"));
    QCOMPARE(tracks.index(5).data(TrackModel::KindRole).toString(), QStringLiteral("callback"));
    // Two queues with 8 dispatches: transfer + 2 kernels on cpu:0, 1 kernel on cpu:1.
    QCOMPARE(tracks.index(2).data(TrackModel::SpanCountRole).toULongLong(), 24ull);
    QCOMPARE(tracks.index(3).data(TrackModel::SpanCountRole).toULongLong(), 8ull);
  }

  void naturalOrderComparesNumbers() {
    QVERIFY(natural_compare("thread 2", "thread 10") < 0);
    QVERIFY(natural_compare("gpu:10", "gpu:9") > 0);
    QVERIFY(natural_compare("a007", "a7") != 0);
    QCOMPARE(natural_compare("same", "same"), 0);
  }

  void everySpanIsInItsRowOnceAndSorted() {
    auto document = load_document(trace_path_);
    const TimelineIndex& index = document->timeline();
    std::vector<int> seen(document->spans().size(), 0);
    for (std::size_t row = 0; row < index.rows().size(); ++row) {
      const TimelineRow& timeline_row = index.rows()[row];
      std::size_t count = 0;
      for (std::size_t lane = 0; lane < timeline_row.lanes.size(); ++lane) {
        const TimelineLane& spans = timeline_row.lanes[lane];
        QVERIFY(std::is_sorted(spans.start.begin(), spans.start.end()));
        std::int64_t max_end = INT64_MIN;
        for (std::size_t p = 0; p < spans.size(); ++p) {
          const auto& span = document->spans()[spans.span[p]];
          QCOMPARE(span.track, timeline_row.track);
          QCOMPARE(spans.start[p], span.start_ns);
          QCOMPARE(spans.end[p], span.end_ns);
          max_end = std::max(max_end, span.end_ns);
          QCOMPARE(spans.max_end[p], max_end);
          QCOMPARE(index.row_of(spans.span[p]), static_cast<int>(row));
          QCOMPARE(index.lane_of(spans.span[p]), static_cast<int>(lane));
          ++seen[spans.span[p]];
          ++count;
        }
        // Spans of one lane never overlap (they nest in deeper lanes instead).
        for (std::size_t p = 1; p < spans.size(); ++p) QVERIFY(spans.start[p] >= spans.end[p - 1]);
      }
      QCOMPARE(count, timeline_row.span_count);
    }
    QVERIFY(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));

    // A compile's phases nest one lane below it.
    const std::ptrdiff_t compile = document->indexOf(ids_.compile_mlp);
    QCOMPARE(index.lane_of(static_cast<std::size_t>(compile)), 0);
    for (std::size_t i = 0; i < document->spans().size(); ++i) {
      const auto& span = document->spans()[i];
      if (span.kind == SpanKind::compile_phase && span.parent == ids_.compile_mlp) {
        QCOMPARE(index.lane_of(i), 1);
        QCOMPARE(index.row_of(i), index.row_of(static_cast<std::size_t>(compile)));
      }
    }
    // The worker's callbacks, by start, on their own row: the swapped pair is visible there.
    const int callback_row = index.row_of_track(callback_track("cpu:1", 6));
    QVERIFY(callback_row >= 0);
    const auto ids =
        lane_ids(*document, index.rows()[static_cast<std::size_t>(callback_row)].lanes[0]);
    std::vector<weft::telemetry::Id> expected = ids_.worker_prints;
    std::swap(expected[3], expected[4]);
    QCOMPARE(ids, expected);
  }

  void edgesJoinTheRightCallbacks() {
    auto document = load_document(trace_path_);
    QCOMPARE(document->edges().size(), 2 * (ids_.main_prints.size() - 1));
    const int main_callbacks = document->timeline().row_of_track(callback_track("cpu:0", 5));
    for (std::size_t i = 1; i < ids_.main_prints.size(); ++i) {
      const auto to = static_cast<std::size_t>(document->indexOf(ids_.main_prints[i]));
      const std::vector<std::size_t> into = document->edgesInto(to);
      QCOMPARE(into.size(), std::size_t{1});
      const ResolvedEdge& edge = document->edges()[into.front()];
      QCOMPARE(document->spans()[edge.from].id, ids_.main_prints[i - 1]);
      QCOMPARE(edge.effect, std::string("print"));
      QCOMPARE(document->timeline().row_of(edge.from), main_callbacks);
      QCOMPARE(document->timeline().row_of(edge.to), main_callbacks);
    }
    const auto first = static_cast<std::size_t>(document->indexOf(ids_.main_prints.front()));
    QVERIFY(document->edgesInto(first).empty());
    QCOMPARE(document->edgesOutOf(first).size(), std::size_t{1});
    QCOMPARE(document->effects(), (std::vector<std::string>{"log", "print"}));
    QCOMPARE(document->devices(), (std::vector<std::string>{"cpu:0", "cpu:1"}));
  }

  void liveGrowthOutOfOrderMatchesTheFile() {
    auto from_file = load_document(trace_path_);
    TraceDocument live;
    live.startLive(QStringLiteral("test"));
    QSignalSpy appended(&live, &TraceDocument::spansAppended);
    std::vector<weft::telemetry::Span> spans = from_file->spans();
    std::mt19937 random(7);
    std::shuffle(spans.begin(), spans.end(), random);
    std::vector<weft::telemetry::Edge> edges = builder_.edges();
    // Edges first, spans in shuffled batches of 7: edges wait for their spans.
    live.append({}, edges, {});
    for (std::size_t at = 0; at < spans.size(); at += 7) {
      std::vector<weft::telemetry::Span> batch(
          spans.begin() + static_cast<std::ptrdiff_t>(at),
          spans.begin() + static_cast<std::ptrdiff_t>(std::min(at + 7, spans.size())));
      live.append(std::move(batch), {}, {});
    }
    QCOMPARE(appended.count(), static_cast<int>((spans.size() + 6) / 7));
    QCOMPARE(live.edges().size(), from_file->edges().size());
    const auto& a = from_file->timeline().rows();
    const auto& b = live.timeline().rows();
    QCOMPARE(b.size(), a.size());
    for (std::size_t row = 0; row < a.size(); ++row) {
      QCOMPARE(b[row].track, a[row].track);
      QCOMPARE(b[row].lanes.size(), a[row].lanes.size());
      for (std::size_t lane = 0; lane < a[row].lanes.size(); ++lane)
        QCOMPARE(lane_ids(live, b[row].lanes[lane]), lane_ids(*from_file, a[row].lanes[lane]));
    }
    QCOMPARE(live.timeline().start_ns(), from_file->timeline().start_ns());
    QCOMPARE(live.timeline().end_ns(), from_file->timeline().end_ns());
  }

  void liveProgramsAreMergedApart() {
    LiveStreamMerger merger(1'000'000);
    auto batch = [](int connection, const std::string& pid, std::int64_t origin) {
      weft::telemetry::LiveBatch b;
      b.connection = connection;
      b.meta = {{"pid", pid}, {"command", "prog"}, {"origin_ns", std::to_string(origin)}};
      weft::telemetry::Span dispatch;
      dispatch.id = 1;
      dispatch.kind = SpanKind::dispatch;
      dispatch.track = host_track("main (thread 1)");
      dispatch.name = "f";
      dispatch.start_ns = 100;
      dispatch.end_ns = 200;
      dispatch.args = {{"program", "5"}};
      weft::telemetry::Span callback = dispatch;
      callback.id = 2;
      callback.parent = 1;
      callback.kind = SpanKind::callback;
      callback.track = callback_track("cpu:0", 3);
      callback.args = {{"thread", "main (thread 1)"}};
      b.spans = {dispatch, callback};
      b.edges = {{1, 2, "print"}};
      weft::telemetry::Program program;
      program.id = 5;
      b.programs = {program};
      return b;
    };
    const auto first = merger.merge(batch(1, "41", 1'000'000), 5'000'000);
    const auto second = merger.merge(batch(2, "42", 3'000'000), 5'000'000);
    QCOMPARE(first.spans[0].track.name, std::string("main (thread 1)"));
    QCOMPARE(second.spans[0].track.name, std::string("pid 42: main (thread 1)"));
    QCOMPARE(*second.spans[1].arg("thread"), std::string("pid 42: main (thread 1)"));
    std::set<weft::telemetry::Id> span_ids;
    for (const auto& merged : {first, second})
      for (const auto& span : merged.spans) span_ids.insert(span.id);
    QCOMPARE(span_ids.size(), std::size_t{4});
    QCOMPARE(second.spans[1].parent, second.spans[0].id);
    QCOMPARE(second.edges[0].from, second.spans[0].id);
    QCOMPARE(second.edges[0].to, second.spans[1].id);
    QCOMPARE(*second.spans[0].arg("program"), std::to_string(second.programs[0].id));
    QVERIFY(second.programs[0].id != first.programs[0].id);
    // Times move onto the session clock: origin 3 ms, session start 1 ms.
    QCOMPARE(first.spans[0].start_ns, 100);
    QCOMPARE(second.spans[0].start_ns, 2'000'100);
    QVERIFY(!first.messages.empty());
  }
};

QTEST_MAIN(TimelineModelTest)
#include "monitor_timeline_model_test.moc"

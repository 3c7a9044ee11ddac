// Counter tracks: a trace's counter samples become one step series per counter and device, in
// a fixed order; the series answer the value at a time and reduce to one column per pixel;
// values read in their units; live samples move onto the session clock and join their series;
// and the timeline draws the tracks below its rows.
#include <QSignalSpy>
#include <QtTest>

#include "counter_series.h"
#include "live_stream_merger.h"
#include "timeline_view.h"
#include "trace_document.h"
#include "weft/telemetry/trace_file.h"

using namespace weft::monitor;
using weft::telemetry::Counter;

class CounterSeriesTest : public QObject {
  Q_OBJECT

 private slots:
  void seriesAreGroupedByDeviceInTheDocumentedOrder() {
    const std::vector<Counter> counters = {
        {"cache_hit_rate", "", 10, 0.5},
        {"buffer_pool_bytes", "cpu:1", 10, 64},
        {"zeta_custom", "cpu:0", 10, 1},
        {"buffer_pool_bytes", "cpu:0", 10, 32},
        {"device_memory_bytes", "cpu:0", 20, 4096},
        {"device_memory_bytes", "cpu:0", 5, 1024},  // out of order: sorted in
        {"callback_queue_depth", "", 10, 2},
    };
    const std::vector<CounterSeries> series = build_counter_series(counters);
    std::vector<std::string> labels;
    for (const CounterSeries& s : series) labels.push_back(s.label());
    const std::vector<std::string> expected = {
        "cpu:0 device_memory_bytes", "cpu:0 buffer_pool_bytes", "cpu:0 zeta_custom",
        "cpu:1 buffer_pool_bytes",   "callback_queue_depth",    "cache_hit_rate"};
    QCOMPARE(labels, expected);
    QCOMPARE(series[0].size(), std::size_t{2});
    QCOMPARE(series[0].peak(), 4096.0);
  }

  void theValueHoldsUntilTheNextSample() {
    CounterSeries s("callback_queue_depth", "");
    s.add(100, 3);
    s.add(200, 0);
    QVERIFY(!s.value_at(99).has_value());
    QCOMPARE(*s.value_at(100), 3.0);
    QCOMPARE(*s.value_at(199), 3.0);
    QCOMPARE(*s.value_at(200), 0.0);
    QCOMPARE(*s.value_at(1'000'000), 0.0);
  }

  void columnsCarryTheHeldValueAndSpanEverySampleInside() {
    CounterSeries s("device_memory_bytes", "cpu:0");
    s.add(15, 8);  // column 1
    s.add(32, 2);  // column 3, then 9 and 4 in the same column
    s.add(35, 9);
    s.add(38, 4);
    // Four columns of 10 ns from 0.
    const std::vector<CounterColumn> columns = s.columns(0, 10.0, 5);
    QCOMPARE(columns.size(), std::size_t{5});
    QVERIFY(!columns[0].known);  // before the first sample
    QVERIFY(columns[1].known);
    QCOMPARE(columns[1].min, 8.0);
    QCOMPARE(columns[1].max, 8.0);
    QCOMPARE(columns[2].last, 8.0);  // held
    QCOMPARE(columns[3].min, 2.0);
    QCOMPARE(columns[3].max, 9.0);  // the held 8 and the 9 inside
    QCOMPARE(columns[3].last, 4.0);
    QCOMPARE(columns[4].min, 4.0);
    QCOMPARE(columns[4].max, 4.0);
    // A view starting after every sample still shows the last value.
    const std::vector<CounterColumn> late = s.columns(1000, 10.0, 2);
    QVERIFY(late[0].known);
    QCOMPARE(late[1].last, 4.0);
    // Degenerate views draw nothing, without failing.
    QVERIFY(s.columns(0, 0.0, 3)[0].known == false);
    QVERIFY(s.columns(0, 10.0, -4).empty());
  }

  void valuesReadInTheirUnits() {
    QCOMPARE(format_counter_value("device_memory_bytes", 512), std::string("512 B"));
    QCOMPARE(format_counter_value("buffer_pool_bytes", 1.5 * 1024 * 1024), std::string("1.5 MiB"));
    QCOMPARE(format_counter_value("cache_hit_rate", 0.75), std::string("75%"));
    QCOMPARE(format_counter_value("callback_queue_depth", 3), std::string("3"));
  }

  void liveCountersMoveOntoTheSessionClockAndStayApartPerProgram() {
    LiveStreamMerger merger(1'000'000);
    weft::telemetry::LiveBatch first;
    first.connection = 1;
    first.meta = {{"pid", "11"}, {"origin_ns", "3000000"}};
    first.counters = {{"device_memory_bytes", "cpu:0", 100, 64}};
    const LiveStreamMerger::Merged a = merger.merge(std::move(first), 5'000'000);
    QCOMPARE(a.counters.size(), std::size_t{1});
    QCOMPARE(a.counters[0].time_ns, std::int64_t{2'000'100});  // origin 3 ms, session 1 ms
    QCOMPARE(a.counters[0].device, std::string("cpu:0"));
    weft::telemetry::LiveBatch second;
    second.connection = 2;
    second.meta = {{"pid", "22"}, {"origin_ns", "1000000"}};
    second.counters = {{"cache_hit_rate", "", 50, 0.5}, {"device_memory_bytes", "cpu:0", 60, 1}};
    const LiveStreamMerger::Merged b = merger.merge(std::move(second), 5'000'000);
    QCOMPARE(b.counters[0].device, std::string("pid 22"));
    QCOMPARE(b.counters[1].device, std::string("pid 22: cpu:0"));
    QCOMPARE(b.counters[1].time_ns, std::int64_t{60});

    TraceDocument document;
    document.startLive(QStringLiteral("live"));
    QSignalSpy appended(&document, &TraceDocument::countersAppended);
    document.appendCounters(a.counters);
    document.appendCounters(b.counters);
    document.appendCounters({{"device_memory_bytes", "cpu:0", 2'000'200, 128}});
    QCOMPARE(appended.count(), 3);
    std::vector<std::string> labels;
    for (const CounterSeries& s : document.counterSeries()) labels.push_back(s.label());
    const std::vector<std::string> expected = {"cpu:0 device_memory_bytes", "pid 22 cache_hit_rate",
                                               "pid 22: cpu:0 device_memory_bytes"};
    QCOMPARE(labels, expected);
    QCOMPARE(document.counterSeries()[0].size(), std::size_t{2});
    QCOMPARE(*document.counterSeries()[0].value_at(3'000'000), 128.0);
    QCOMPARE(document.trace().counters.size(), std::size_t{4});
  }

  void theTimelineDrawsCounterTracksBelowItsRows() {
    weft::telemetry::Trace trace;
    weft::telemetry::Span span;
    span.id = 1;
    span.track = {weft::telemetry::TrackKind::host_thread, "main (thread 1)", ""};
    span.name = "f";
    span.start_ns = 0;
    span.end_ns = 1000;
    trace.spans.push_back(span);
    trace.counters = {{"device_memory_bytes", "cpu:0", 0, 0},
                      {"device_memory_bytes", "cpu:0", 300, 4096},
                      {"device_memory_bytes", "cpu:0", 700, 1024}};
    trace.reindex();
    TraceDocument document;
    document.setTrace(std::move(trace), QStringLiteral("counters"));
    QCOMPARE(document.counterSeries().size(), std::size_t{1});

    TimelineView view(&document);
    view.resize(800, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fitAll();
    const QImage image = view.viewport()->grab().toImage();
    // The first counter's line colour appears below the span row, in the data area.
    const QColor line(0x1f, 0x77, 0xb4);
    int line_pixels = 0, lowest_row = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = TimelineView::kLabelWidth; x < image.width(); ++x)
        if (image.pixelColor(x, y) == line) {
          ++line_pixels;
          lowest_row = std::max(lowest_row, y);
        }
    QVERIFY2(line_pixels > 20, qPrintable(QString::number(line_pixels)));
    QVERIFY(lowest_row > TimelineView::kRulerHeight + TimelineView::kLaneHeight);
  }
};

QTEST_MAIN(CounterSeriesTest)
#include "monitor_counter_series_test.moc"

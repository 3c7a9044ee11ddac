// The timeline's row groups: a header per thread kind (and per device where a kind has several
// rows on several devices, per program in a live session with several), each collapsing its
// rows; live programs' rows stay together under their program instead of interleaving by
// kind; selecting a span in a collapsed group opens it.
#include <QMouseEvent>
#include <QTemporaryDir>
#include <QtTest>

#include "live_stream_merger.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "timeline_layout.h"
#include "timeline_view.h"
#include "trace_document.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

// The layout as text: "- Title (rows)" for an open group ("+" collapsed), a row's name for a
// row, indented by depth.
QStringList outline(const TimelineLayout& layout, const std::vector<TimelineRow>& rows) {
  QStringList lines;
  for (const TimelineLine& line : layout.lines()) {
    const QString indent(2 * line.depth, QLatin1Char(' '));
    if (line.type == TimelineLine::Type::group)
      lines << indent + QStringLiteral("%1 %2 (%3)")
                            .arg(line.collapsed ? QStringLiteral("+") : QStringLiteral("-"))
                            .arg(QString::fromStdString(line.title))
                            .arg(line.row_count);
    else
      lines << indent + QString::fromStdString(rows[line.row].track.name);
  }
  return lines;
}

const TimelineLine* group(const TimelineLayout& layout, const std::string& title) {
  for (const TimelineLine& line : layout.lines())
    if (line.type == TimelineLine::Type::group && line.title == title) return &line;
  return nullptr;
}

weft::telemetry::LiveBatch program_batch(int connection, const std::string& pid) {
  weft::telemetry::LiveBatch batch;
  batch.connection = connection;
  batch.meta = {{"pid", pid}, {"command", "./prog"}, {"origin_ns", "1000000"}};
  weft::telemetry::Id id = 1;
  for (const Track& track :
       {host_track("main (thread 1)"), queue_track("cpu:0"), callback_track("cpu:0", 3)}) {
    Span span;
    span.id = id++;
    span.kind = SpanKind::dispatch;
    span.track = track;
    span.name = "f";
    span.start_ns = 100;
    span.end_ns = 200;
    batch.spans.push_back(span);
  }
  return batch;
}

}  // namespace

class RowGroupsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path trace_path_;

  static int rowHeight(std::size_t) { return 24; }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    trace_path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace().write(trace_path_);
  }

  void aHeaderPerThreadKind() {
    auto document = load_document(trace_path_);
    TimelineLayout layout;
    layout.build(document->timeline().rows(), {}, {}, &RowGroupsTest::rowHeight);
    const QStringList expected = {"- Host threads (2)",
                                  "  main (thread 1)",
                                  "  worker (thread 2)",
                                  "- Device queues (2)",
                                  "  cpu:0 queue",
                                  "  cpu:1 queue",
                                  "- Runtime threads (1)",
                                  "  runtime cpu:0 (thread 4)",
                                  "- Callback threads (2)",
                                  "  callbacks cpu:0 level 0 (thread 5)",
                                  "  callbacks cpu:1 level 0 (thread 6)",
                                  "- Cache writer (1)",
                                  "  cache writer (thread 9)"};
    QCOMPARE(outline(layout, document->timeline().rows()), expected);
    // Lines are stacked without overlap; every shown row has a top.
    int y = 0;
    for (const TimelineLine& line : layout.lines()) {
      QVERIFY(line.top >= y);
      y = line.top + line.height;
    }
    QCOMPARE(layout.lineAt(layout.lines()[4].top + 3).value(), std::size_t{4});
  }

  void devicesSplitAKindWithSeveralRowsPerDevice() {
    TraceBuilder builder;
    for (const char* device : {"cpu:0", "cpu:1"})
      for (int thread : {1, 2})
        builder.add(SpanKind::callback, callback_track(device, thread), "cb", 0, 10);
    TraceDocument document;
    weft::telemetry::Trace trace;
    trace.spans = builder.spans();
    document.setTrace(std::move(trace), QStringLiteral("devices"));
    TimelineLayout layout;
    layout.build(document.timeline().rows(), {}, {}, &RowGroupsTest::rowHeight);
    const QStringList expected = {"- Callback threads (4)",
                                  "  - cpu:0 (2)",
                                  "    callbacks cpu:0 level 0 (thread 1)",
                                  "    callbacks cpu:0 level 0 (thread 2)",
                                  "  - cpu:1 (2)",
                                  "    callbacks cpu:1 level 0 (thread 1)",
                                  "    callbacks cpu:1 level 0 (thread 2)"};
    QCOMPARE(outline(layout, document.timeline().rows()), expected);
    // Collapsing the outer group hides the device groups too.
    layout.build(document.timeline().rows(), {}, {"k3"}, &RowGroupsTest::rowHeight);
    QCOMPARE(outline(layout, document.timeline().rows()), QStringList{"+ Callback threads (4)"});
    QCOMPARE(layout.rowTop(0), -1);
    QCOMPARE(layout.groupsOf(3), (std::vector<std::string>{"k3", "k3/dcpu:1"}));
  }

  void liveProgramsAreGroupedByProcess() {
    LiveStreamMerger merger(0);
    TraceDocument document;
    document.startLive(QStringLiteral("live"));
    // Two programs' batches arrive interleaved; each keeps its rows under its own header.
    for (auto [connection, pid] : {std::pair{1, "41"}, std::pair{2, "42"}}) {
      LiveStreamMerger::Merged merged = merger.merge(program_batch(connection, pid), 1'000'000);
      document.setProcessName(merged.process, merged.process_name);
      const std::vector<std::uint32_t> processes(merged.spans.size(), merged.process);
      document.append(std::move(merged.spans), {}, {}, processes);
    }
    TimelineLayout layout;
    layout.build(document.timeline().rows(), document.processNames(), {},
                 &RowGroupsTest::rowHeight);
    const QStringList expected = {"- pid 41 · ./prog (3)",
                                  "  - Host threads (1)",
                                  "    main (thread 1)",
                                  "  - Device queues (1)",
                                  "    cpu:0 queue",
                                  "  - Callback threads (1)",
                                  "    callbacks cpu:0 level 0 (thread 3)",
                                  "- pid 42 · ./prog (3)",
                                  "  - Host threads (1)",
                                  "    pid 42: main (thread 1)",
                                  "  - Device queues (1)",
                                  "    pid 42: cpu:0 queue",
                                  "  - Callback threads (1)",
                                  "    pid 42: callbacks cpu:0 level 0 (thread 3)"};
    QCOMPARE(outline(layout, document.timeline().rows()), expected);
  }

  void clickingAHeaderCollapsesAndSelectingOpens() {
    auto document = load_document(trace_path_);
    TimelineView view(document.get());
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(group(view.layout(), "Device queues"));
    // Copies: the layout's lines are rebuilt by every toggle.
    const TimelineLine queues = *group(view.layout(), "Device queues");
    const int rows_before = static_cast<int>(view.layout().lines().size());
    const QPoint header(40, TimelineView::kRulerHeight + queues.top + queues.height / 2);
    QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, header);
    QVERIFY(group(view.layout(), "Device queues")->collapsed);
    QCOMPARE(static_cast<int>(view.layout().lines().size()), rows_before - 2);
    // A kernel on a hidden queue: nowhere to draw, until selecting it opens its group.
    std::size_t kernel = 0;
    while (document->spans()[kernel].kind != SpanKind::kernel) ++kernel;
    QVERIFY(view.spanRect(kernel).isEmpty());
    view.selectSpan(static_cast<qsizetype>(kernel), true);
    QVERIFY(!group(view.layout(), "Device queues")->collapsed);
    QVERIFY(!view.spanRect(kernel).isEmpty());
    QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, header);
    QVERIFY(group(view.layout(), "Device queues")->collapsed);
    view.setGroupCollapsed(queues.key, false);
    QVERIFY(!group(view.layout(), "Device queues")->collapsed);
  }
};

QTEST_MAIN(RowGroupsTest)
#include "monitor_row_groups_test.moc"

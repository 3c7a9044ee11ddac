// Traces that are wide rather than long: a span, row or effect named with megabytes of text is
// shown truncated everywhere (the span list, rows, details, effect order, cache lookups, the
// filter's choices), so no view lays out text that grows with a name's length; and thousands
// of rows, from a file or arriving live, are indexed in order, found by hashing, and only the
// rows in view are painted.
#include <QComboBox>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QtTest>
#include <string>

#include "cache_lookup_model.h"
#include "effect_order_model.h"
#include "filter_bar.h"
#include "main_window.h"
#include "qt_text.h"
#include "span_details.h"
#include "span_table_model.h"
#include "support/synthetic_trace.h"
#include "timeline_view.h"
#include "trace_document.h"
#include "track_model.h"
#include "track_order.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

constexpr std::size_t kHugeName = 4'000'000;
// The longest text a view may make of one name: the shown bytes (as UTF-16, at most as many
// units) and the ellipsis.
constexpr qsizetype kShownLimit = static_cast<qsizetype>(kMaxShownNameBytes) + 1;

Span span_on(const Track& track, weft::telemetry::Id id, std::string name, std::int64_t start) {
  Span span;
  span.id = id;
  span.kind = SpanKind::dispatch;
  span.track = track;
  span.name = std::move(name);
  span.start_ns = start;
  span.end_ns = start + 800;
  return span;
}

}  // namespace

class WideTraceTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void displayNameCutsAtACharacterBoundary() {
    QCOMPARE(display_name("short"), QStringLiteral("short"));
    // "é" is two bytes: a cut that would split one backs off to the character before.
    std::string accents;
    while (accents.size() < 2 * kMaxShownNameBytes) accents += "é";
    const QString shown = display_name("x" + accents);
    QVERIFY(shown.endsWith(QChar(0x2026)));
    QVERIFY(!shown.contains(QChar::ReplacementCharacter));
    QVERIFY(shown.size() <= kShownLimit);
    QCOMPARE(shown.left(3), QStringLiteral("xéé"));
  }

  void hugeNamesAreShownTruncatedEverywhere() {
    const std::string huge(kHugeName, 'n');
    const Track track{weft::telemetry::TrackKind::host_thread, huge, ""};
    TraceBuilder builder;
    builder.add(SpanKind::dispatch, track, huge, 0, 1000);
    builder.add(SpanKind::cache_lookup, track, huge, 100, 200, {{"status", "miss"}});
    builder.add_callback(callback_track("cpu:0", 5), huge, huge, true, 1, huge, 300, 400, 1);
    std::vector<Span> spans = builder.spans();
    TraceDocument document;
    weft::telemetry::Trace trace;
    trace.spans = spans;
    document.setTrace(std::move(trace), QStringLiteral("wide"));

    SpanTableModel table(&document);
    for (int column = 0; column < SpanTableModel::ColumnCount; ++column)
      for (int role : {int(Qt::DisplayRole), int(Qt::ToolTipRole)})
        QVERIFY(table.index(0, column).data(role).toString().size() <= kShownLimit);
    QCOMPARE(table.index(0, SpanTableModel::NameColumn).data().toString().left(5),
             QStringLiteral("nnnnn"));
    TrackModel tracks(&document);
    for (int row = 0; row < tracks.rowCount(); ++row)
      QVERIFY(tracks.index(row).data().toString().size() <= kShownLimit);
    CacheLookupModel lookups(&document);
    QCOMPARE(lookups.rowCount(), 1);
    QVERIFY(lookups.index(0, CacheLookupModel::FunctionColumn).data().toString().size() <=
            kShownLimit);
    EffectOrderModel effects(&document);
    effects.analyze();
    QVERIFY(effects.rowCount() > 0);
    QVERIFY(effects.index(0, EffectOrderModel::ProgramOrderColumn).data().toString().size() <
            3 * kShownLimit);
    // Names shown truncated, argument values at most kMaxShownValueBytes each.
    for (std::size_t i = 0; i < document.spans().size(); ++i)
      QVERIFY(describe_span_html(document, i).size() < 64 * 1024);

    FilterBar bar(&document);
    QCOMPARE(bar.effectCombo()->count(), 2);
    QVERIFY(bar.effectCombo()->itemText(1).size() <= kShownLimit);
    // Filtering by the effect still matches the whole name.
    bar.effectCombo()->setCurrentIndex(1);
    QCOMPARE(bar.filter().effect, huge);
  }

  void thousandsOfRowsKeepTheirOrderAndOnlyVisibleOnesArePainted() {
    constexpr int kTracks = 20000;
    TraceDocument document;
    document.startLive(QStringLiteral("live"));
    weft::telemetry::Id id = 1;
    // Live batches bring new rows in descending order: each batch must merge into place.
    for (int batch = 0; batch < 20; ++batch) {
      std::vector<Span> spans;
      for (int t = kTracks - 1 - batch; t >= 0; t -= 20)
        spans.push_back(span_on(host_track("thread " + std::to_string(t)), id++, "f", t * 1000));
      document.append(std::move(spans), {}, {});
    }
    const auto& rows = document.timeline().rows();
    QCOMPARE(rows.size(), std::size_t{kTracks});
    for (std::size_t row = 0; row < rows.size(); ++row)
      QCOMPARE(rows[row].track.name, "thread " + std::to_string(row));
    for (std::size_t i = 0; i < document.spans().size(); ++i) {
      const int row = document.timeline().row_of(i);
      QVERIFY(row >= 0);
      QCOMPARE(rows[static_cast<std::size_t>(row)].track, document.spans()[i].track);
    }
    QCOMPARE(document.timeline().row_of_track(host_track("thread 12345")), 12345);

    TimelineView view(&document);
    view.resize(1200, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // One group header (host threads) and the rows in view: a few dozen lines of 20000.
    auto [first, end] = view.visibleLines();
    QCOMPARE(first, std::size_t{0});
    QVERIFY(end > 5 && end < 60);
    view.verticalScrollBar()->setValue(view.layout().rowTop(10000));
    std::tie(first, end) = view.visibleLines();
    QVERIFY(end - first < 60);
    bool shows_row = false;
    for (std::size_t line = first; line < end; ++line)
      shows_row |= view.layout().lines()[line].row == 10000;
    QVERIFY(shows_row);
  }
};

QTEST_MAIN(WideTraceTest)
#include "monitor_wide_trace_test.moc"

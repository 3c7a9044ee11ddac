// Times as the views print them and as the filter reads them: neighbours a few microseconds
// apart late in a trace read differently in the span list, the details pane, the effect order
// and the cache lookups; a time typed without a unit is refused with a hint, never silently
// read as nanoseconds.
#include <QLineEdit>
#include <QtTest>

#include "cache_lookup_model.h"
#include "effect_order_model.h"
#include "filter_bar.h"
#include "span_details.h"
#include "span_table_model.h"
#include "support/synthetic_trace.h"
#include "time_format.h"
#include "trace_document.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

}  // namespace

class TimeTextTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void timePointsKeepMicroseconds() {
    QCOMPARE(format_time_point(4'700'000'000), std::string("4.700000 s"));
    QCOMPARE(format_time_point(4'700'004'000), std::string("4.700004 s"));
    QCOMPARE(format_time_point(0), std::string("0.000000 s"));
    QCOMPARE(format_time_point(1'499), std::string("0.000001 s"));
    QCOMPARE(format_time_point(-2'500'000), std::string("-0.002500 s"));
    // Months into a trace the microseconds are still there (integer arithmetic).
    QCOMPARE(format_time_point(10'000'000 * kSecond + 7'000), std::string("10000000.000007 s"));
    // What the views print, the filter reads back.
    QCOMPARE(parse_time_input("4.700004 s").ns.value(), std::int64_t{4'700'004'000});
  }

  void neighboursReadApartInEveryView() {
    // Two print callbacks and two cache lookups 4 µs apart, 4.7 s into the trace.
    TraceBuilder builder;
    const Track host = host_track("main");
    const Track callbacks = callback_track("cpu:0", 5);
    const std::int64_t at = 4'700'000'000;
    const auto dispatch = builder.add(SpanKind::dispatch, host, "f", at - 1000, at + 10'000);
    builder.add_callback(callbacks, "print", "print", true, 1, "main", at, at + 1000, dispatch);
    builder.add_callback(callbacks, "print", "print", true, 2, "main", at + 4000, at + 5000,
                         dispatch);
    builder.add(SpanKind::cache_lookup, host, "f", at, at + 100, {{"status", "miss"}});
    builder.add(SpanKind::cache_lookup, host, "f", at + 4000, at + 4100, {{"status", "miss"}});
    TraceDocument document;
    weft::telemetry::Trace trace;
    trace.spans = builder.spans();
    document.setTrace(std::move(trace), QStringLiteral("neighbours"));

    auto index_of = [&](weft::telemetry::Id id) {
      return static_cast<std::size_t>(document.indexOf(id));
    };
    SpanTableModel table(&document);
    const QString first =
        table.index(static_cast<int>(index_of(2)), SpanTableModel::StartColumn).data().toString();
    const QString second =
        table.index(static_cast<int>(index_of(3)), SpanTableModel::StartColumn).data().toString();
    QCOMPARE(first, QStringLiteral("4.700000 s"));
    QCOMPARE(second, QStringLiteral("4.700004 s"));

    QVERIFY(describe_span_html(document, index_of(2)).contains(QStringLiteral("4.700000 s")));
    QVERIFY(describe_span_html(document, index_of(3)).contains(QStringLiteral("4.700004 s")));

    EffectOrderModel effects(&document);
    effects.analyze();
    QCOMPARE(effects.rowCount(), 2);
    const QString program_first =
        effects.index(0, EffectOrderModel::ProgramOrderColumn).data().toString();
    const QString program_second =
        effects.index(1, EffectOrderModel::ProgramOrderColumn).data().toString();
    QVERIFY2(program_first.endsWith(QStringLiteral("at 4.700000 s")), qPrintable(program_first));
    QVERIFY2(program_second.endsWith(QStringLiteral("at 4.700004 s")), qPrintable(program_second));

    CacheLookupModel lookups(&document);
    QCOMPARE(lookups.rowCount(), 2);
    QCOMPARE(lookups.index(0, CacheLookupModel::TimeColumn).data().toString(),
             QStringLiteral("4.700000 s"));
    QCOMPARE(lookups.index(1, CacheLookupModel::TimeColumn).data().toString(),
             QStringLiteral("4.700004 s"));
  }

  void aBareNumberIsRefusedWithAHint() {
    const TimeInput bare = parse_time_input("300");
    QVERIFY(!bare.ns);
    QVERIFY2(bare.problem.find("no unit") != std::string::npos, bare.problem.c_str());
    QVERIFY2(bare.problem.find("300ms") != std::string::npos, bare.problem.c_str());

    TraceDocument document;
    weft::telemetry::Trace trace;
    trace.spans = demo_trace().spans();
    document.setTrace(std::move(trace), QStringLiteral("demo"));
    FilterBar bar(&document);
    bar.show();
    bar.fromEdit()->setText(QStringLiteral("300"));
    QVERIFY(!bar.filter().from_ns);
    QVERIFY(!bar.filter().active());
    QVERIFY2(bar.hint().contains(QStringLiteral("no unit")), qPrintable(bar.hint()));
    QVERIFY(!bar.fromEdit()->styleSheet().isEmpty());
    bar.fromEdit()->setText(QStringLiteral("300us"));
    QCOMPARE(bar.filter().from_ns.value(), std::int64_t{300'000});
    QVERIFY(bar.hint().isEmpty());
  }
};

QTEST_MAIN(TimeTextTest)
#include "monitor_time_text_test.moc"

// Search and filter: by name, device, effect and time range, alone and together; the span
// list shows exactly the matches, the timeline's per-lane match counts agree with a brute
// force, hidden spans cannot be clicked, and the filter bar builds the filter it shows.
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>

#include "filter_bar.h"
#include "span_filter_proxy_model.h"
#include "span_table_model.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "timeline_view.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;
using weft::telemetry::Span;

class FilterTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
  DemoIds ids_;

  std::size_t brute_force(const TraceDocument& document,
                          const std::function<bool(const Span&)>& wanted) {
    std::size_t count = 0;
    for (const Span& span : document.spans()) count += wanted(span) ? 1 : 0;
    return count;
  }

 private Q_SLOTS:
  void initTestCase() {
    path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace(&ids_).write(path_);
  }

  void filtersSelectTheRightSpans() {
    auto document = load_document(path_);
    SpanTableModel table(document.get());
    SpanFilterProxyModel proxy;
    proxy.setSpanModel(&table);
    QCOMPARE(proxy.rowCount(), static_cast<int>(document->spans().size()));

    SpanFilter by_name;
    by_name.name = "MLP_K";  // case-insensitive substring
    proxy.setFilter(by_name);
    QCOMPARE(proxy.rowCount(), 2 * kDemoDispatches);
    for (int row = 0; row < proxy.rowCount(); ++row)
      QVERIFY(document->spans()[proxy.spanIndexAt(row)].name.rfind("mlp_k", 0) == 0);

    SpanFilter by_device;
    by_device.device = "cpu:1";
    proxy.setFilter(by_device);
    const std::size_t on_cpu1 = brute_force(*document, [](const Span& s) {
      const std::string* device = s.arg("device");
      return (device ? *device : s.track.device) == "cpu:1";
    });
    QVERIFY(on_cpu1 > 0);
    QCOMPARE(static_cast<std::size_t>(proxy.rowCount()), on_cpu1);

    SpanFilter by_effect;
    by_effect.effect = "log";
    proxy.setFilter(by_effect);
    QCOMPARE(proxy.rowCount(), kDemoDispatches);

    // Time: spans overlapping [first worker print, +1 ms].
    const Span& first_print =
        document->spans()[static_cast<std::size_t>(document->indexOf(ids_.worker_prints[0]))];
    SpanFilter by_time;
    by_time.from_ns = first_print.start_ns;
    by_time.to_ns = first_print.start_ns + 1'000'000;
    proxy.setFilter(by_time);
    const std::size_t in_range = brute_force(*document, [&](const Span& s) {
      return s.end_ns >= *by_time.from_ns && s.start_ns <= *by_time.to_ns;
    });
    QVERIFY(in_range > 0 && in_range < document->spans().size());
    QCOMPARE(static_cast<std::size_t>(proxy.rowCount()), in_range);

    SpanFilter combined = by_time;
    combined.effect = "print";
    combined.device = "cpu:1";
    combined.name = "debug";
    proxy.setFilter(combined);
    const std::size_t both = brute_force(*document, [&](const Span& s) {
      return s.end_ns >= *by_time.from_ns && s.start_ns <= *by_time.to_ns && s.effect == "print" &&
             s.track.device == "cpu:1";
    });
    QVERIFY(both >= 1);
    QCOMPARE(static_cast<std::size_t>(proxy.rowCount()), both);

    proxy.setFilter({});
    QCOMPARE(proxy.rowCount(), static_cast<int>(document->spans().size()));
  }

  void sortingUsesRawValues() {
    auto document = load_document(path_);
    SpanTableModel table(document.get());
    SpanFilterProxyModel proxy;
    proxy.setSpanModel(&table);
    proxy.sort(SpanTableModel::DurationColumn, Qt::DescendingOrder);
    std::int64_t previous = INT64_MAX;
    for (int row = 0; row < proxy.rowCount(); ++row) {
      const Span& span = document->spans()[proxy.spanIndexAt(row)];
      QVERIFY(span.end_ns - span.start_ns <= previous);
      previous = span.end_ns - span.start_ns;
    }
  }

  void timelineMaskCountsMatches() {
    auto document = load_document(path_);
    SpanFilter filter;
    filter.name = "print";
    TimelineFilterMask mask;
    mask.build(document->timeline(), document->spans(), filter);
    QVERIFY(mask.active());
    std::size_t total = 0;
    for (std::size_t row = 0; row < document->timeline().rows().size(); ++row) {
      const auto& lanes = document->timeline().rows()[row].lanes;
      for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        for (std::size_t first = 0; first < lanes[lane].size(); ++first) {
          for (std::size_t count = 0; first + count <= lanes[lane].size(); count += 3) {
            std::size_t expected = 0;
            for (std::size_t p = first; p < first + count; ++p)
              expected += filter.matches(document->spans()[lanes[lane].span[p]]) ? 1 : 0;
            QCOMPARE(mask.matching(row, lane, first, count), expected);
          }
        }
        total += mask.matching(row, lane, 0, lanes[lane].size());
      }
    }
    QCOMPARE(total, mask.total_matching());
    QCOMPARE(total, 2 * static_cast<std::size_t>(kDemoDispatches));  // main's and worker's prints
  }

  void hiddenSpansCannotBeClicked() {
    auto document = load_document(path_);
    TimelineView view(document.get());
    view.resize(1200, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fitAll();
    const auto kernel = static_cast<std::size_t>(document->indexOf(ids_.first_mlp_kernel));
    const auto& span = document->spans()[kernel];
    view.setViewRange(span.start_ns - 1000, span.end_ns + 1000);
    const QPoint center = view.spanRect(kernel).center().toPoint();
    QCOMPARE(view.spanAt(center), static_cast<qsizetype>(kernel));
    SpanFilter filter;
    filter.name = "softmax";
    view.setFilter(filter);
    QCOMPARE(view.spanAt(center), static_cast<qsizetype>(kernel));  // dimmed: still there
    view.setFilterMode(TimelineView::FilterMode::hide);
    QCOMPARE(view.spanAt(center), qsizetype{-1});
    view.grab();  // paints dimmed and hidden spans without trouble
  }

  void filterBarBuildsTheFilter() {
    auto document = load_document(path_);
    FilterBar bar(document.get());
    QSignalSpy changed(&bar, &FilterBar::filterChanged);
    QCOMPARE(bar.deviceCombo()->count(), 3);  // all, cpu:0, cpu:1
    QCOMPARE(bar.effectCombo()->count(), 3);  // all, log, print
    bar.nameEdit()->setText(QStringLiteral("mlp"));
    bar.deviceCombo()->setCurrentText(QStringLiteral("cpu:0"));
    bar.effectCombo()->setCurrentText(QStringLiteral("print"));
    bar.fromEdit()->setText(QStringLiteral("1.5ms"));
    bar.toEdit()->setText(QStringLiteral("2 s"));
    QVERIFY(changed.count() >= 5);
    const SpanFilter filter = bar.filter();
    QCOMPARE(filter.name, std::string("mlp"));
    QCOMPARE(filter.device, std::string("cpu:0"));
    QCOMPARE(filter.effect, std::string("print"));
    QCOMPARE(filter.from_ns.value(), std::int64_t{1500000});
    QCOMPARE(filter.to_ns.value(), std::int64_t{2000000000});
    bar.toEdit()->setText(QStringLiteral("later"));  // not a time: ignored and marked
    QVERIFY(!bar.filter().to_ns);
    QVERIFY(!bar.toEdit()->styleSheet().isEmpty());
  }
};

QTEST_MAIN(FilterTest)
#include "monitor_filter_test.moc"

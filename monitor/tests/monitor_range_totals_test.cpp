// Totals of a picked time range (Perfetto's area selection, `weft trace summary` of a part):
// per kernel, effect, dispatch and compiled function, counting spans that overlap the range
// and the time they spent inside it; picking a range on the timeline fills the Range totals
// tab, which sorts by any column.
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "main_window.h"
#include "qt_text.h"
#include "range_totals.h"
#include "range_totals_model.h"
#include "range_totals_view.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "time_format.h"
#include "timeline_view.h"
#include "trace_document.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000 * kUs;

const RangeTotal* find(const std::vector<RangeTotal>& totals, RangeTotal::Category category,
                       const std::string& name) {
  for (const RangeTotal& total : totals)
    if (total.category == category && total.name == name) return &total;
  return nullptr;
}

}  // namespace

class RangeTotalsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path trace_path_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    trace_path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace().write(trace_path_);
  }

  void totalsCountWhatOverlapsAndClipIt() {
    auto document = load_document(trace_path_);
    // The file's times count from the recording's start; the demo's first span (the mlp
    // compile, at 0 in the builder) starts at `base`.
    const std::int64_t base = document->timeline().start_ns();
    // Dispatch i of the demo starts at 6 ms + i * 400 µs; [6.4 ms, 7.2 ms) holds dispatches
    // 1 and 2 of main ("mlp", 60 µs each) and of worker ("softmax").
    const std::vector<RangeTotal> totals =
        range_totals(document->trace(), base + 6 * kMs + 400 * kUs, base + 7 * kMs + 200 * kUs - 1);
    const RangeTotal* mlp = find(totals, RangeTotal::Category::dispatch, "mlp");
    QVERIFY(mlp);
    QCOMPARE(mlp->count, std::size_t{2});
    QCOMPARE(mlp->total_ns, 2 * 60 * kUs);
    QVERIFY(find(totals, RangeTotal::Category::dispatch, "softmax"));
    QVERIFY(find(totals, RangeTotal::Category::effect, "print"));
    bool kernels = false;
    for (const RangeTotal& total : totals)
      kernels |= total.category == RangeTotal::Category::kernel;
    QVERIFY(kernels);
    // Nothing from the compiles (they end by 5 ms).
    for (const RangeTotal& total : totals) QVERIFY(total.category != RangeTotal::Category::compile);

    // A range inside the mlp compile (0 to 5 ms) counts only its part: 1 ms of it.
    const std::vector<RangeTotal> inside =
        range_totals(document->trace(), base + 2 * kMs, base + 3 * kMs);
    const RangeTotal* compile = find(inside, RangeTotal::Category::compile, "mlp");
    QVERIFY(compile);
    QCOMPARE(compile->count, std::size_t{1});
    QCOMPARE(compile->total_ns, 1 * kMs);
    QCOMPARE(compile->device, std::string("cpu:0"));
  }

  void pickingARangeFillsTheSortableTab() {
    MainWindow window;
    QCOMPARE(window.openFile(QString::fromStdString(trace_path_.string())), QString());
    RangeTotalsView* view = window.rangeTotals();
    QCOMPARE(view->model()->rowCount(), 0);
    QVERIFY(view->rangeText().contains(QStringLiteral("drag on the timeline")));
    const std::int64_t base = window.document()->timeline().start_ns();
    Q_EMIT window.timeline()->timeRangeSelected(base, base + 20 * kMs);
    QVERIFY(view->model()->rowCount() > 4);
    QVERIFY2(view->rangeText().contains(to_qstring(format_time_point(base))),
             qPrintable(view->rangeText()));

    // Sorted by count, largest first, through the table's proxy.
    QTableView* table = view->table();
    table->sortByColumn(RangeTotalsModel::CountColumn, Qt::DescendingOrder);
    qulonglong previous = ~0ULL;
    for (int row = 0; row < table->model()->rowCount(); ++row) {
      const qulonglong count = table->model()
                                   ->index(row, RangeTotalsModel::CountColumn)
                                   .data(RangeTotalsModel::SortRole)
                                   .toULongLong();
      QVERIFY(count <= previous);
      previous = count;
    }
    // A new trace forgets the range.
    QCOMPARE(window.openFile(QString::fromStdString(trace_path_.string())), QString());
    QCOMPARE(view->model()->rowCount(), 0);
  }
};

QTEST_MAIN(RangeTotalsTest)
#include "monitor_range_totals_test.moc"

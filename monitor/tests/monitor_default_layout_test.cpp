// The window at its default size (1400x900, what --screenshot renders too): the cache view
// shows ten lookups and a several-line explanation, its chart's bucket labels are short and
// distinct; the effect order's headers and times are not clipped; a kernel's long OpenCL C
// lines wrap in the details pane instead of running off its edge.
#include <QFontMetrics>
#include <QHeaderView>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "cache_lookup_model.h"
#include "cache_lookups.h"
#include "cache_view.h"
#include "details_pane.h"
#include "effect_order_view.h"
#include "main_window.h"
#include "screenshot.h"
#include "support/synthetic_trace.h"
#include "trace_document.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

namespace {

constexpr std::int64_t kMs = 1'000'000;

// The demo trace, ten more cache lookups, and a program whose source has a 400-character line.
TraceBuilder layout_trace(weft::telemetry::Id* long_kernel) {
  TraceBuilder builder = demo_trace();
  const Track main = host_track("main (thread 1)");
  for (int i = 0; i < 10; ++i)
    builder.add(SpanKind::cache_lookup, main, "function_" + std::to_string(i), (20 + i) * kMs,
                (20 + i) * kMs + 100'000,
                {{"key", std::string(64, static_cast<char>('a' + i))},
                 {"status", "miss"},
                 {"reason", "not_found"},
                 {"device", "cpu:0"}});
  std::string source = "__kernel void wide(__global float* out) {\n  out[0] = ";
  for (int term = 0; term < 40; ++term) source += "out[" + std::to_string(term) + "] * 0.5f + ";
  source += "1.0f;\n}\n";
  builder.program({9,
                   "wide",
                   "cpu:0",
                   "key",
                   "miss",
                   "%0 = add(%a, %b)\n",
                   source,
                   {{"wide_k0", "elementwise", {"add"}}}});
  *long_kernel = builder.add(SpanKind::kernel, queue_track("cpu:0"), "wide_k0", 40 * kMs, 41 * kMs,
                             {{"device", "cpu:0"}, {"program", "9"}});
  return builder;
}

}  // namespace

class DefaultLayoutTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  MainWindow* window_ = nullptr;
  weft::telemetry::Id long_kernel_ = 0;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    const QString path = dir_.filePath(QStringLiteral("layout.wefttrace"));
    layout_trace(&long_kernel_).write(path.toStdString());
    window_ = new MainWindow;
    QCOMPARE(window_->openFile(path), QString());
    QCOMPARE(window_->size(), kScreenshotSize);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_));
  }

  void cleanupTestCase() { delete window_; }

  void cacheViewShowsTenLookupsAndTheExplanation() {
    window_->tabs()->setCurrentWidget(window_->cacheView());
    QApplication::processEvents();
    QTableView* table = window_->cacheView()->lookupTable();
    QVERIFY(table->model()->rowCount() >= 10);
    const int last_shown = 9;
    QVERIFY2(table->rowViewportPosition(last_shown) + table->rowHeight(last_shown) <=
                 table->viewport()->height(),
             qPrintable(QStringLiteral("the lookups table is %1 pixels high")
                            .arg(table->viewport()->height())));
    QPlainTextEdit* explanation = window_->cacheView()->explanation();
    const int lines =
        explanation->viewport()->height() / QFontMetrics(explanation->font()).lineSpacing();
    QVERIFY2(lines >= 6, qPrintable(QStringLiteral("%1 lines").arg(lines)));
  }

  void bucketLabelsAreShortAndDistinct() {
    for (const auto& [start, bucket] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {89'702'000, 28'600'000}, {4'700'000'000, 4'000}, {0, 1}, {12, 3'000'000'000}}) {
      CacheLookupHistogram histogram;
      histogram.start_ns = start;
      histogram.bucket_ns = bucket;
      histogram.counts.assign(CacheView::kBuckets, {});
      const BucketLabels labels = bucket_labels(histogram);
      QCOMPARE(labels.labels.size(), std::size_t{CacheView::kBuckets});
      for (std::size_t b = 0; b < labels.labels.size(); ++b) {
        QVERIFY2(labels.labels[b].size() <= 8, labels.labels[b].c_str());
        if (b > 0) QVERIFY2(labels.labels[b] != labels.labels[b - 1], labels.labels[b].c_str());
      }
    }
  }

  void effectOrderHeadersAndTimesAreWhole() {
    window_->tabs()->setCurrentWidget(window_->effectOrder());
    QApplication::processEvents();
    auto* table = window_->effectOrder()->findChild<QTableView*>();
    QVERIFY(table);
    QVERIFY(table->model()->rowCount() > 0);
    const QFontMetrics header_font(table->horizontalHeader()->font());
    const QFontMetrics cell_font(table->font());
    for (int column = 0; column + 1 < table->model()->columnCount(); ++column) {
      const QString header = table->model()->headerData(column, Qt::Horizontal).toString();
      const int width = table->horizontalHeader()->sectionSize(column);
      QVERIFY2(width >= header_font.horizontalAdvance(header),
               qPrintable(QStringLiteral("%1: %2 px").arg(header).arg(width)));
      const QString cell = table->model()->index(0, column).data().toString();
      QVERIFY2(width >= cell_font.horizontalAdvance(cell), qPrintable(cell));
    }
  }

  void longSourceLinesWrapInTheDetails() {
    const std::ptrdiff_t index = window_->document()->indexOf(long_kernel_);
    QVERIFY(index >= 0);
    window_->details()->showSpan(index);
    QApplication::processEvents();
    QVERIFY(window_->details()->toPlainText().contains(QStringLiteral("out[39] * 0.5f")));
    QCOMPARE(window_->details()->horizontalScrollBar()->maximum(), 0);
  }
};

QTEST_MAIN(DefaultLayoutTest)
#include "monitor_default_layout_test.moc"

// The timeline widget and the window around it: fitting, zooming at the cursor, panning,
// range selection on the ruler, clicking a span (selection shared with the details pane and
// the span list), drag and drop of a file, and painting a large trace at every zoom.
#include <QElapsedTimer>
#include <QMimeData>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "details_pane.h"
#include "main_window.h"
#include "span_filter_proxy_model.h"
#include "span_list_view.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"
#include "timeline_view.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class TimelineViewTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
  DemoIds ids_;

 private Q_SLOTS:
  void initTestCase() {
    path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace(&ids_).write(path_);
  }

  void fitZoomAndPan() {
    auto document = load_document(path_);
    TimelineView view(document.get());
    view.resize(1200, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fitAll();
    ViewWindow window = view.window();
    QVERIFY(window.start_ns <= document->timeline().start_ns());
    QVERIFY(window.end_ns() >= document->timeline().end_ns());

    // Zooming keeps the time under the cursor in place.
    const double anchor = 300;
    const std::int64_t before = window.time_at(anchor);
    view.zoomBy(4, anchor);
    window = view.window();
    QVERIFY(std::llabs(window.time_at(anchor) - before) <=
            static_cast<std::int64_t>(window.ns_per_px) + 1);
    QVERIFY(window.end_ns() - window.start_ns <
            (document->timeline().end_ns() - document->timeline().start_ns()) / 3);

    // The wheel zooms too (in, at the cursor).
    const double ns_per_px = window.ns_per_px;
    QWheelEvent wheel(QPointF(TimelineView::kLabelWidth + 300, 200),
                      view.viewport()->mapToGlobal(QPointF(500, 200)), QPoint(), QPoint(0, 240),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(view.viewport(), &wheel);
    QVERIFY(view.window().ns_per_px < ns_per_px);

    // Dragging pans: moving the mouse right shows earlier times.
    const std::int64_t start = view.window().start_ns;
    QTest::mousePress(view.viewport(), Qt::LeftButton, {}, QPoint(700, 300));
    QTest::mouseMove(view.viewport(), QPoint(800, 300));
    QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, QPoint(800, 300));
    QVERIFY(view.window().start_ns < start);

    // F fits again.
    QTest::keyClick(view.viewport(), Qt::Key_F);
    QVERIFY(view.window().start_ns <= document->timeline().start_ns());
  }

  void rulerDragSelectsARange() {
    auto document = load_document(path_);
    TimelineView view(document.get());
    view.resize(1200, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fitAll();
    QSignalSpy ranges(&view, &TimelineView::timeRangeSelected);
    const ViewWindow before = view.window();
    const int left = TimelineView::kLabelWidth + 200, right = TimelineView::kLabelWidth + 400;
    QTest::mousePress(view.viewport(), Qt::LeftButton, {}, QPoint(left, 10));
    QTest::mouseMove(view.viewport(), QPoint(right, 10));
    QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, QPoint(right, 10));
    QCOMPARE(ranges.count(), 1);
    const auto from = ranges.front()[0].toLongLong(), to = ranges.front()[1].toLongLong();
    QVERIFY(std::llabs(from - before.time_at(200)) <=
            static_cast<std::int64_t>(before.ns_per_px) + 1);
    QVERIFY(std::llabs(to - before.time_at(400)) <=
            static_cast<std::int64_t>(before.ns_per_px) + 1);
    QVERIFY(std::llabs(view.window().start_ns - from) <= 1);
    QVERIFY(std::llabs(view.window().end_ns() - to) <=
            static_cast<std::int64_t>(view.window().ns_per_px) + 2);
  }

  void clickingSelectsAndSharesTheSelection() {
    MainWindow window;
    QCOMPARE(window.openFile(QString::fromStdString(path_.string())), QString());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    TimelineView* timeline = window.timeline();
    const auto kernel = static_cast<std::size_t>(window.document()->indexOf(ids_.first_mlp_kernel));
    const auto& span = window.document()->spans()[kernel];
    timeline->setViewRange(span.start_ns - 100'000, span.end_ns + 100'000);
    QSignalSpy selected(timeline, &TimelineView::spanSelected);
    const QPoint center = timeline->spanRect(kernel).center().toPoint();
    QTest::mouseClick(timeline->viewport(), Qt::LeftButton, {}, center);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.front().front().value<qsizetype>(), static_cast<qsizetype>(kernel));
    QCOMPARE(timeline->selectedSpan(), static_cast<qsizetype>(kernel));
    QVERIFY(window.details()->toPlainText().contains(QStringLiteral("mlp_k0")));
    QVERIFY(window.details()->toPlainText().contains(QStringLiteral("relu")));
    const QModelIndex current = window.spanList()->table()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(window.spanList()->proxy()->spanIndexAt(current.row()), kernel);

    // Selecting in the list selects in the timeline and reveals it.
    const auto print = static_cast<qsizetype>(window.document()->indexOf(ids_.worker_prints[4]));
    window.spanList()->table()->selectRow(static_cast<int>(print));
    QCOMPARE(timeline->selectedSpan(), print);
    QVERIFY(!timeline->spanRect(static_cast<std::size_t>(print)).isEmpty());
    QVERIFY(
        window.details()->toPlainText().contains(QStringLiteral("Waited for the token of (1)")));

    // Clicking empty space clears it; Escape does as well.
    QTest::mouseClick(timeline->viewport(), Qt::LeftButton, {},
                      QPoint(TimelineView::kLabelWidth + 5, 5 + TimelineView::kRulerHeight + 2000));
    QTest::keyClick(timeline->viewport(), Qt::Key_Escape);
    QCOMPARE(timeline->selectedSpan(), qsizetype{-1});
  }

  void dropOpensTheFile() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(path_.string()))});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(!window.document()->isEmpty());
    QVERIFY(window.windowTitle().contains(QStringLiteral("demo.wefttrace")));
  }

  void largeTracePaintsAtEveryZoom() {
    const std::filesystem::path path =
        dir_.filePath(QStringLiteral("large.wefttrace")).toStdString();
    write_large_trace(path, 200000);
    auto document = load_document(path);
    TimelineView view(document.get());
    view.resize(1600, 800);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    view.fitAll();
    QElapsedTimer timer;
    timer.start();
    for (double zoom : {1.0, 10.0, 100.0, 1000.0, 10000.0}) {
      view.fitAll();
      view.zoomBy(zoom, 700);
      const QImage image = view.grab().toImage();
      QVERIFY(!image.isNull());
    }
    // Generous: the point is that painting does not scale with the span count.
    QVERIFY2(timer.elapsed() < 20000, qPrintable(QString::number(timer.elapsed())));
  }
};

QTEST_MAIN(TimelineViewTest)
#include "monitor_timeline_view_test.moc"

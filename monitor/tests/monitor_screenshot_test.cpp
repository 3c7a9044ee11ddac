// `weft-monitor --screenshot`: the PNG of a synthetic trace is the window's size, is not
// blank or one colour, and shows the timeline's rows as bands of span colours; the command
// exits 0, and its usage errors exit non-zero with a message.
#include <unistd.h>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "screenshot.h"
#include "support/image_analysis.h"
#include "support/synthetic_trace.h"
#include "timeline_view.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class ScreenshotTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString trace_;

  void checkImage(const QString& png) {
    QImage image;
    QVERIFY2(image.load(png), qPrintable(png));
    QCOMPARE(image.size(), kScreenshotSize);
    // The timeline occupies the upper left; its rows are bands of span colours there.
    const QRect timeline(TimelineView::kLabelWidth + 2, 0, 800, 560);
    const ImageSummary summary = summarize_image(image, timeline);
    QVERIFY2(summary.distinct_colors > 64, qPrintable(QString::number(summary.distinct_colors)));
    // 8 rows (two of them with nested lanes) make at least 8 bands.
    QVERIFY2(summary.span_bands >= 8, qPrintable(QString::number(summary.span_bands)));
    QVERIFY(summary.span_pixels > 2000);
  }

 private Q_SLOTS:
  void initTestCase() {
    trace_ = dir_.filePath(QStringLiteral("demo.wefttrace"));
    demo_trace().write(trace_.toStdString());
  }

  void renderedInProcess() {
    const QString png = dir_.filePath(QStringLiteral("in-process.png"));
    QCOMPARE(render_screenshot(trace_, png), QString());
    checkImage(png);
  }

  void commandLine() {
    const QString png = dir_.filePath(QStringLiteral("command.png"));
    QProcess monitor;
    monitor.start(QStringLiteral(WEFT_MONITOR_PATH), {QStringLiteral("--screenshot"), png, trace_});
    QVERIFY(monitor.waitForFinished(120000));
    QCOMPARE(monitor.exitCode(), 0);
    checkImage(png);
  }

  void everyTabRendersADifferentPane() {
    QList<QImage> images;
    for (const QString& tab :
         {QStringLiteral("spans"), QStringLiteral("effects"), QStringLiteral("cache")}) {
      const QString png = dir_.filePath(tab + QStringLiteral(".png"));
      QProcess monitor;
      monitor.start(QStringLiteral(WEFT_MONITOR_PATH),
                    {QStringLiteral("--screenshot"), png, QStringLiteral("--tab"), tab, trace_});
      QVERIFY(monitor.waitForFinished(120000));
      QCOMPARE(monitor.exitCode(), 0);
      checkImage(png);
      images.push_back(QImage(png));
    }
    // The timeline is the same; the lower pane is not.
    QVERIFY(images[0] != images[1]);
    QVERIFY(images[1] != images[2]);
    QVERIFY(images[0] != images[2]);
  }

  void unwritableOutputIsAnError() {
    const QString png = dir_.filePath(QStringLiteral("no/such/dir/out.png"));
    const QString error = render_screenshot(trace_, png);
    QVERIFY2(error.contains(QStringLiteral("cannot write the screenshot")), qPrintable(error));
  }

  void theTraceIsNeverOverwritten() {
    const QString copy = dir_.filePath(QStringLiteral("kept.wefttrace"));
    QFile::remove(copy);
    QVERIFY(QFile::copy(trace_, copy));
    const QString hard_link = dir_.filePath(QStringLiteral("hard-link.png"));
    const QString symlink = dir_.filePath(QStringLiteral("symlink.png"));
    QFile::remove(hard_link);
    QFile::remove(symlink);
    QCOMPARE(::link(QFile::encodeName(copy).constData(), QFile::encodeName(hard_link).constData()),
             0);
    QVERIFY(QFile::link(copy, symlink));
    const QByteArray before = [&] {
      QFile file(copy);
      return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }();
    QVERIFY(!before.isEmpty());
    // The same path twice, a path spelled differently, a hard link, a symbolic link.
    const QString respelled = dir_.path() + QStringLiteral("/./kept.wefttrace");
    for (const QString& png : {copy, respelled, hard_link, symlink}) {
      QProcess monitor;
      monitor.start(QStringLiteral(WEFT_MONITOR_PATH), {QStringLiteral("--screenshot"), png, copy});
      QVERIFY(monitor.waitForFinished(60000));
      QVERIFY2(monitor.exitCode() != 0, qPrintable(png));
      const QString error = QString::fromLocal8Bit(monitor.readAllStandardError());
      QVERIFY2(error.contains(QStringLiteral("is the trace file")), qPrintable(error));
      QFile file(copy);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QCOMPARE(file.readAll(), before);
    }
  }

  void usageErrors() {
    for (const QStringList& arguments :
         {QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png")},
          QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                      QStringLiteral("--live"), trace_},
          QStringList{QStringLiteral("--no-such-option")}, QStringList{trace_, trace_},
          QStringList{QStringLiteral("--screenshot"), QStringLiteral("x.png"),
                      QStringLiteral("--tab"), QStringLiteral("flames"), trace_},
          QStringList{QStringLiteral("--tab"), QStringLiteral("cache"), trace_}}) {
      QProcess monitor;
      monitor.start(QStringLiteral(WEFT_MONITOR_PATH), arguments);
      QVERIFY(monitor.waitForFinished(60000));
      QCOMPARE(monitor.exitCode(), 2);
      QVERIFY(QString::fromLocal8Bit(monitor.readAllStandardError())
                  .contains(QStringLiteral("weft-monitor: error:")));
    }
    QProcess version;
    version.start(QStringLiteral(WEFT_MONITOR_PATH), {QStringLiteral("--version")});
    QVERIFY(version.waitForFinished(60000));
    QCOMPARE(version.exitCode(), 0);
    QVERIFY(QString::fromLocal8Bit(version.readAllStandardOutput())
                .startsWith(QStringLiteral("weft-monitor ")));
  }
};

QTEST_MAIN(ScreenshotTest)
#include "monitor_screenshot_test.moc"

// Files that are not good traces: random bytes, a truncated real trace, an empty file, an
// SQLite database that is not a trace, a directory, a missing path. Each gives the reader's
// clear message (in the window, from --screenshot with a non-zero exit), never a crash.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <random>

#include "main_window.h"
#include "screenshot.h"
#include "support/synthetic_trace.h"
#include "trace_document.h"
#include "trace_loading.h"
#include "weft/cache/store.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class CorruptFilesTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

  QString write_file(const QString& name, const QByteArray& bytes) {
    const QString path = dir_.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    file.write(bytes);
    return path;
  }

 private Q_SLOTS:
  void badFiles_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");  // a phrase of the message

    std::mt19937 random(99);
    QByteArray noise(64 * 1024, '\0');
    for (char& byte : noise) byte = static_cast<char>(random());
    QTest::newRow("random bytes") << write_file(QStringLiteral("random.wefttrace"), noise)
                                  << QStringLiteral("not a weft trace");
    // Random bytes behind a valid SQLite header: a damaged database.
    QByteArray damaged = QByteArray("SQLite format 3", 16) + noise;
    QTest::newRow("damaged sqlite")
        << write_file(QStringLiteral("damaged.wefttrace"), damaged) << QStringLiteral("weft");
    QTest::newRow("empty file") << write_file(QStringLiteral("empty.wefttrace"), {})
                                << QStringLiteral("is empty");

    // A real trace cut short: large enough that its tables reach past the cut.
    const std::filesystem::path whole =
        dir_.filePath(QStringLiteral("whole.wefttrace")).toStdString();
    write_large_trace(whole, 20000);
    QFile whole_file(QString::fromStdString(whole.string()));
    QVERIFY(whole_file.open(QIODevice::ReadOnly));
    const QByteArray bytes = whole_file.readAll();
    QTest::newRow("truncated trace")
        << write_file(QStringLiteral("truncated.wefttrace"), bytes.left(bytes.size() / 2))
        << QStringLiteral("truncated or corrupt");

    // An SQLite database of another kind: weft's own program cache.
    const std::filesystem::path cache_dir = dir_.filePath(QStringLiteral("cache")).toStdString();
    {
      weft::cache::StoreOptions options;
      options.directory = cache_dir;
      options.key = std::vector<std::uint8_t>(32, 1);
      weft::cache::ProgramStore store(options);
    }
    QTest::newRow("foreign sqlite database")
        << QString::fromStdString((cache_dir / "cache.sqlite3").string())
        << QStringLiteral("not a weft trace");
    QTest::newRow("directory") << dir_.path() << QStringLiteral("weft");
    QTest::newRow("missing") << dir_.filePath(QStringLiteral("no-such.wefttrace"))
                             << QStringLiteral("cannot be opened");
  }

  void badFiles() {
    QFETCH(QString, path);
    QFETCH(QString, expected);

    const LoadedTrace loaded = load_trace_file(path.toStdString());
    QVERIFY(!loaded.trace);
    const QString message = QString::fromStdString(loaded.error);
    QVERIFY2(message.contains(expected), qPrintable(message));

    MainWindow window;
    const QString error = window.openFile(path);
    QCOMPARE(error, message);
    QVERIFY(window.document()->isEmpty());
    window.grab();  // the empty window still paints

    const QString png = dir_.filePath(QStringLiteral("never.png"));
    QCOMPARE(render_screenshot(path, png), message);
    QVERIFY(!QFile::exists(png));

    QProcess monitor;
    monitor.start(QStringLiteral(WEFT_MONITOR_PATH), {QStringLiteral("--screenshot"), png, path});
    QVERIFY(monitor.waitForFinished(60000));
    QCOMPARE(monitor.exitStatus(), QProcess::NormalExit);
    QCOMPARE(monitor.exitCode(), 1);
    const QString stderr_text = QString::fromLocal8Bit(monitor.readAllStandardError());
    QVERIFY2(stderr_text.contains(message), qPrintable(stderr_text));
  }

  void extremeTimesStillRender() {
    // Valid but hostile: spans near both ends of the range the reader accepts (36 years from
    // the start either way), zero-length ones, one row nested deeper than the lanes go.
    TraceBuilder b;
    const auto row = host_track("main (thread 1)");
    b.add(weft::telemetry::SpanKind::dispatch, row, "far past", -1'150'000'000'000'000'000,
          -1'149'999'999'999'999'990);
    b.add(weft::telemetry::SpanKind::dispatch, row, "far future", 1'150'000'000'000'000'000 - 10,
          1'150'000'000'000'000'000);
    b.add(weft::telemetry::SpanKind::kernel, queue_track("cpu:0"), "instant", 5, 5);
    for (int depth = 0; depth < 20; ++depth)
      b.add(weft::telemetry::SpanKind::compile, host_track("deep"), "nested", depth, 1000 - depth);
    const QString path = dir_.filePath(QStringLiteral("extreme.wefttrace"));
    b.write(path.toStdString());
    const QString png = dir_.filePath(QStringLiteral("extreme.png"));
    QCOMPARE(render_screenshot(path, png), QString());
    QVERIFY(QImage(png).width() > 0);
    // Beyond that range a file is refused with the reader's message, not drawn.
    TraceBuilder beyond;
    beyond.add(weft::telemetry::SpanKind::dispatch, row, "too far", -9'000'000'000'000'000'000,
               -8'999'999'999'999'999'990);
    const QString far_path = dir_.filePath(QStringLiteral("beyond.wefttrace"));
    beyond.write(far_path.toStdString());
    QVERIFY(render_screenshot(far_path, png).contains(QStringLiteral("36 years")));
  }

  void goodFileAfterABadOneOpens() {
    MainWindow window;
    QVERIFY(!window.openFile(dir_.filePath(QStringLiteral("random.wefttrace"))).isEmpty());
    const QString good = dir_.filePath(QStringLiteral("good.wefttrace"));
    demo_trace().write(good.toStdString());
    QCOMPARE(window.openFile(good), QString());
    QVERIFY(!window.document()->isEmpty());
  }
};

QTEST_MAIN(CorruptFilesTest)
#include "monitor_corrupt_files_test.moc"

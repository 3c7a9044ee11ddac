// File > Export Perfetto JSON: the window writes the trace it shows (a file's or live) as
// Chrome trace-event JSON that parses, with one complete ("X") event per span and a flow pair
// per token edge; it refuses to write over the trace file and says why a path is unwritable.
#include <QAction>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "main_window.h"
#include "support/synthetic_trace.h"
#include "trace_document.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class ExportTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString trace_;
  TraceBuilder builder_;

  static QJsonArray read_events(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    QJsonParseError error{};
    const QJsonDocument json = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError) {
      qWarning("%s: %s", qPrintable(path), qPrintable(error.errorString()));
      return {};
    }
    return json.object().value(QStringLiteral("traceEvents")).toArray();
  }

  static int count_phase(const QJsonArray& events, const QString& phase) {
    int count = 0;
    for (const QJsonValue& event : events)
      if (event.toObject().value(QStringLiteral("ph")).toString() == phase) ++count;
    return count;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    trace_ = dir_.filePath(QStringLiteral("demo.wefttrace"));
    builder_ = demo_trace();
    builder_.write(trace_.toStdString());
  }

  void theMenuActionExists() {
    MainWindow window;
    auto* action = window.findChild<QAction*>(QStringLiteral("export perfetto json"));
    QVERIFY(action);
    QVERIFY(action->text().contains(QStringLiteral("Perfetto")));
  }

  void exportsAFileTraceThatParses() {
    MainWindow window;
    QCOMPARE(window.openFile(trace_), QString());
    const QString json = dir_.filePath(QStringLiteral("demo.json"));
    QCOMPARE(window.exportPerfettoJson(json), QString());
    const QJsonArray events = read_events(json);
    QCOMPARE(count_phase(events, QStringLiteral("X")), static_cast<int>(builder_.spans().size()));
    QCOMPARE(count_phase(events, QStringLiteral("s")), static_cast<int>(builder_.edges().size()));
    QCOMPARE(count_phase(events, QStringLiteral("f")), static_cast<int>(builder_.edges().size()));
  }

  void exportsALiveTrace() {
    MainWindow window;
    window.document()->startLive(QStringLiteral("live"));
    std::vector<Span> spans(builder_.spans().begin(), builder_.spans().begin() + 5);
    window.document()->append(spans, {}, {});
    const QString json = dir_.filePath(QStringLiteral("live.json"));
    QCOMPARE(window.exportPerfettoJson(json), QString());
    QCOMPARE(count_phase(read_events(json), QStringLiteral("X")), 5);
  }

  void refusesTheTraceItselfAndUnwritablePaths() {
    MainWindow window;
    QCOMPARE(window.openFile(trace_), QString());
    const QByteArray before = [&] {
      QFile file(trace_);
      return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }();
    const QString error = window.exportPerfettoJson(trace_);
    QVERIFY2(error.contains(QStringLiteral("trace file itself")), qPrintable(error));
    QFile file(trace_);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), before);
    const QString unwritable =
        window.exportPerfettoJson(dir_.filePath(QStringLiteral("no/dir.json")));
    QVERIFY2(unwritable.contains(QStringLiteral("Cannot write")), qPrintable(unwritable));
  }
};

QTEST_MAIN(ExportTest)
#include "monitor_export_test.moc"

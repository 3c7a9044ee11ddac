// Attaching live: a program's LiveSink sends spans over the socket; polling moves them into
// the document (times on the session clock, edges resolved); a second monitor on the same
// socket is refused with a clear message.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "live_connection.h"
#include "support/synthetic_trace.h"
#include "trace_document.h"
#include "weft/telemetry/live.h"
#include "weft/telemetry/telemetry.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class LiveTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void spansArriveInTheDocument() {
    QTemporaryDir dir;
    const std::filesystem::path socket = dir.filePath(QStringLiteral("monitor.sock")).toStdString();
    TraceDocument document;
    LiveConnection live(&document);
    QSignalSpy messages(&live, &LiveConnection::message);
    QCOMPARE(live.start(socket), QString());
    QVERIFY(live.isActive());
    QVERIFY(document.isLive());
    QVERIFY(document.isEmpty());

    // A second monitor on the same socket is refused, with a message.
    TraceDocument other_document;
    LiveConnection other(&other_document);
    const QString refused = other.start(socket);
    QVERIFY(!refused.isEmpty());

    DemoIds ids;
    const TraceBuilder demo = demo_trace(&ids);
    {
      weft::telemetry::LiveSink sink(socket, "live test");
      const std::int64_t origin = weft::telemetry::now_ns();
      std::vector<weft::telemetry::Span> spans = demo.spans();
      for (auto& span : spans) {
        span.start_ns += origin;
        span.end_ns += origin;
      }
      sink.write(spans, demo.edges(), {});
      sink.flush();
    }
    QSignalSpy appended(&document, &TraceDocument::spansAppended);
    QTRY_COMPARE_WITH_TIMEOUT(document.spans().size(), demo.spans().size(), 10000);
    QVERIFY(appended.count() >= 1);
    QCOMPARE(document.edges().size(), demo.edges().size());
    QCOMPARE(document.timeline().rows().size(), std::size_t{8});
    // Times are on the session clock: after the session started, and spread like the demo's.
    QVERIFY(document.timeline().start_ns() >= 0);
    const auto& span = document.spans().front();
    QCOMPARE(span.end_ns - span.start_ns,
             demo.spans().front().end_ns - demo.spans().front().start_ns);
    QVERIFY(messages.count() >= 2);  // listening, connected
    live.stop();
    QVERIFY(!live.isActive());
  }
};

QTEST_MAIN(LiveTest)
#include "monitor_live_test.moc"

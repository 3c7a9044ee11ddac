// The details pane: a kernel shows its fused ops, OpenCL C source and waits; a callback its
// shapes, status and token neighbours (as links); a compile its key, cache status and phases;
// a dispatch where it was defined.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "details_pane.h"
#include "span_details.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class DetailsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::unique_ptr<TraceDocument> document_;
  DemoIds ids_;

  QString html(weft::telemetry::Id id) {
    return describe_span_html(*document_, static_cast<std::size_t>(document_->indexOf(id)));
  }
  QString text(weft::telemetry::Id id) {
    QTextDocument rendered;
    rendered.setHtml(html(id));
    return rendered.toPlainText();
  }

 private Q_SLOTS:
  void initTestCase() {
    const std::filesystem::path path =
        dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace(&ids_).write(path);
    document_ = load_document(path);
  }

  void kernel() {
    const QString shown = text(ids_.first_mlp_kernel);
    for (const char* expected :
         {"mlp_k0", "Fused IR ops (3)", "dot", "add", "relu", "OpenCL C source",
          "__kernel void mlp_k0", "Queue wait", "12 µs", "Submit wait", "3 µs", "Global size",
          "1024", "Duration", "60 µs", "elementwise"})
      QVERIFY2(shown.contains(QString::fromUtf8(expected)), expected);
  }

  void callback() {
    const QString shown = text(ids_.main_prints[1]);
    for (const char* expected :
         {"f32[3], f32[]", "print", "Status", "ok", "Waited for the token of (1)",
          "Handed its token to (1)", "Receive wait", "1.5 µs", "main (thread 1)"})
      QVERIFY2(shown.contains(QString::fromUtf8(expected)), expected);
    // The neighbours are links to their spans.
    const auto previous = document_->indexOf(ids_.main_prints[0]);
    QVERIFY(html(ids_.main_prints[1]).contains(QStringLiteral("href='span:%1'").arg(previous)));
    QVERIFY(text(ids_.failed_callback).contains(QStringLiteral("failed: callback raised boom")));
    QVERIFY(text(ids_.main_prints[0]).contains(QStringLiteral("first in its stream")));
  }

  void compile() {
    const QString shown = text(ids_.compile_mlp);
    for (const char* expected : {"miss", ids_.missed_key.c_str(), "Phases", "trace", "plan",
                                 "codegen", "cache lookup", "build", "2.4 ms", "48.0%"})
      QVERIFY2(shown.contains(QString::fromUtf8(expected)), expected);
  }

  void dispatch() {
    const QString shown = text(ids_.first_mlp_dispatch);
    QVERIFY(shown.contains(QStringLiteral("demo.cpp:42")));
    QVERIFY(shown.contains(QStringLiteral("mlp (2 kernels, cache miss)")));
  }

  // Tiered execution: a call run on the reference interpreter says so.
  void interpretedDispatch() {
    TraceBuilder b;
    const auto id = b.add(weft::telemetry::SpanKind::dispatch, host_track("main (thread 1)"),
                          "step", 0, 40'000, {{"ran_on", "interpreter (build pending)"}});
    const std::filesystem::path path =
        dir_.filePath(QStringLiteral("tiered.wefttrace")).toStdString();
    b.write(path);
    const std::unique_ptr<TraceDocument> document = load_document(path);
    QTextDocument rendered;
    rendered.setHtml(
        describe_span_html(*document, static_cast<std::size_t>(document->indexOf(id))));
    QVERIFY(rendered.toPlainText().contains(QStringLiteral("Ran on")));
    QVERIFY(rendered.toPlainText().contains(QStringLiteral("interpreter (build pending)")));
  }

  void links() {
    QCOMPARE(span_index_from_link(QStringLiteral("span:42")), 42ll);
    QCOMPARE(span_index_from_link(QStringLiteral("span:x")), -1ll);
    QCOMPARE(span_index_from_link(QStringLiteral("https://example.org")), -1ll);
    DetailsPane pane(document_.get());
    QSignalSpy activated(&pane, &DetailsPane::spanLinkActivated);
    Q_EMIT pane.anchorClicked(QUrl(QStringLiteral("span:3")));
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.front().front().value<qsizetype>(), qsizetype{3});
    pane.showSpan(static_cast<qsizetype>(document_->indexOf(ids_.first_mlp_kernel)));
    QVERIFY(pane.toPlainText().contains(QStringLiteral("mlp_k0")));
  }
};

QTEST_MAIN(DetailsTest)
#include "monitor_details_test.moc"

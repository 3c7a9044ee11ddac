// Effect order: two threads print; main's prints ran in program order, the worker's 4th and
// 5th swapped (flagged), and main's unordered "log" callbacks swapped a pair (shown as
// allowed). Checked in the pure analysis, the model's highlighting and the view's summary.
#include <QBrush>
#include <QListWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "effect_order.h"
#include "effect_order_model.h"
#include "effect_order_view.h"
#include "support/document_loading.h"
#include "support/synthetic_trace.h"

using namespace weft::monitor;
using namespace weft::monitor::testing;

class EffectOrderTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::filesystem::path path_;
  DemoIds ids_;

  const EffectStream* find(const std::vector<EffectStream>& streams, const std::string& thread,
                           const std::string& effect) {
    for (const EffectStream& stream : streams)
      if (stream.thread == thread && stream.effect == effect) return &stream;
    return nullptr;
  }

  std::vector<weft::telemetry::Id> ids_of(const TraceDocument& document,
                                          const std::vector<std::uint32_t>& indices) {
    std::vector<weft::telemetry::Id> ids;
    for (std::uint32_t index : indices) ids.push_back(document.spans()[index].id);
    return ids;
  }

 private Q_SLOTS:
  void initTestCase() {
    path_ = dir_.filePath(QStringLiteral("demo.wefttrace")).toStdString();
    demo_trace(&ids_).write(path_);
  }

  void streamsAndVerdicts() {
    auto document = load_document(path_);
    const std::vector<EffectStream> streams = analyze_effect_order(document->spans());
    QCOMPARE(streams.size(), std::size_t{3});

    const EffectStream* main_print = find(streams, "main (thread 1)", "print");
    QVERIFY(main_print);
    QVERIFY(main_print->ordered);
    QCOMPARE(main_print->size(), static_cast<std::size_t>(kDemoDispatches));
    QCOMPARE(main_print->out_of_order, std::size_t{0});
    QCOMPARE(main_print->summary(), std::string("print: 8 effects, in program order"));
    QCOMPARE(ids_of(*document, main_print->program_order), ids_.main_prints);
    QCOMPARE(ids_of(*document, main_print->execution_order), ids_.main_prints);

    const EffectStream* worker_print = find(streams, "worker (thread 2)", "print");
    QVERIFY(worker_print);
    QCOMPARE(worker_print->out_of_order, std::size_t{1});
    QCOMPARE(worker_print->positions_differing, std::size_t{2});
    QCOMPARE(worker_print->summary(), std::string("print: 8 effects, 1 out of order"));
    QCOMPARE(ids_of(*document, worker_print->program_order), ids_.worker_prints);
    std::vector<weft::telemetry::Id> executed = ids_.worker_prints;
    std::swap(executed[3], executed[4]);
    QCOMPARE(ids_of(*document, worker_print->execution_order), executed);
    for (std::size_t p = 0; p < worker_print->size(); ++p)
      QCOMPARE(static_cast<bool>(worker_print->differs[p]), p == 3 || p == 4);

    const EffectStream* logs = find(streams, "main (thread 1)", "log");
    QVERIFY(logs);
    QVERIFY(!logs->ordered);
    QCOMPARE(logs->positions_differing, std::size_t{2});
    QVERIFY(QString::fromStdString(logs->summary()).contains(QStringLiteral("unordered")));
    QVERIFY(QString::fromStdString(logs->summary()).contains(QStringLiteral("allowed")));
  }

  void scopes() {
    auto document = load_document(path_);
    EffectOrderScope one_dispatch;
    one_dispatch.dispatch =
        document->spans()[static_cast<std::size_t>(document->indexOf(ids_.first_mlp_dispatch))].id;
    const auto streams = analyze_effect_order(document->spans(), one_dispatch);
    QCOMPARE(streams.size(), std::size_t{2});  // main's print and log of that dispatch
    for (const EffectStream& stream : streams) QCOMPARE(stream.size(), std::size_t{1});

    const auto& fourth =
        document->spans()[static_cast<std::size_t>(document->indexOf(ids_.worker_prints[4]))];
    EffectOrderScope window;
    window.from_ns = fourth.start_ns;
    window.to_ns = fourth.start_ns;
    const auto in_window = analyze_effect_order(document->spans(), window);
    QCOMPARE(in_window.size(), std::size_t{1});
    QCOMPARE(in_window[0].size(), std::size_t{1});
  }

  void modelHighlightsDifferences() {
    auto document = load_document(path_);
    EffectOrderModel model(document.get());
    model.analyze();
    // The out-of-order stream is shown first.
    QVERIFY(model.currentStream() >= 0);
    const EffectStream& current = model.streams()[static_cast<std::size_t>(model.currentStream())];
    QCOMPARE(current.thread, std::string("worker (thread 2)"));
    QCOMPARE(model.rowCount(), kDemoDispatches);
    for (int row = 0; row < model.rowCount(); ++row) {
      const bool differs = row == 3 || row == 4;
      QCOMPARE(model.index(row, 0).data(EffectOrderModel::DiffersRole).toBool(), differs);
      QCOMPARE(model.index(row, EffectOrderModel::NoteColumn).data().toString().isEmpty(),
               !differs);
      QCOMPARE(model.index(row, 1).data(Qt::BackgroundRole).isValid(), differs);
    }
    const auto program_span = model.index(3, EffectOrderModel::ProgramOrderColumn)
                                  .data(EffectOrderModel::SpanIndexRole)
                                  .toULongLong();
    const auto executed_span = model.index(3, EffectOrderModel::ExecutionOrderColumn)
                                   .data(EffectOrderModel::SpanIndexRole)
                                   .toULongLong();
    QCOMPARE(document->spans()[program_span].id, ids_.worker_prints[3]);
    QCOMPARE(document->spans()[executed_span].id, ids_.worker_prints[4]);
    // seq 4 of the synthetic trace: dispatch 0, step 4.
    QVERIFY(model.index(3, 1).data().toString().contains(QStringLiteral("#0.4")));

    // The unordered stream: differences greyed with a note, not red.
    for (int s = 0; s < static_cast<int>(model.streams().size()); ++s) {
      if (model.streams()[static_cast<std::size_t>(s)].effect != "log") continue;
      model.setCurrentStream(s);
      const QColor background = model.index(2, 1).data(Qt::BackgroundRole).value<QBrush>().color();
      QCOMPARE(background.red(), background.green());  // grey
      QVERIFY(model.index(2, EffectOrderModel::NoteColumn)
                  .data()
                  .toString()
                  .contains(QStringLiteral("unordered")));
    }
  }

  void viewListsEveryStreamWithItsSummary() {
    auto document = load_document(path_);
    EffectOrderView view(document.get());
    QListWidget* list = view.streamList();
    QCOMPARE(list->count(), 3);
    QStringList lines;
    for (int row = 0; row < list->count(); ++row) lines << list->item(row)->text();
    QVERIFY(lines.contains(QStringLiteral("main (thread 1) · print: 8 effects, in program order")));
    QVERIFY(lines.contains(QStringLiteral("worker (thread 2) · print: 8 effects, 1 out of order")));
    QCOMPARE(list->currentItem()->text(),
             QStringLiteral("worker (thread 2) · print: 8 effects, 1 out of order"));

    // Scope: the selected dispatch (a kernel of it selects it too).
    view.setScope(EffectOrderView::SelectedDispatch);
    view.setSelectedSpan(document->indexOf(ids_.first_mlp_kernel));
    QCOMPARE(list->count(), 2);
  }
};

QTEST_MAIN(EffectOrderTest)
#include "monitor_effect_order_test.moc"

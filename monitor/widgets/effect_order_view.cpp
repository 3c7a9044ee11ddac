#include "effect_order_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "effect_order_model.h"
#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

EffectOrderView::EffectOrderView(const TraceDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      model_(new EffectOrderModel(document, this)),
      scope_(new QComboBox(this)),
      scope_note_(new QLabel(this)),
      streams_(new QListWidget(this)),
      table_(new QTableView(this)),
      refresh_timer_(new QTimer(this)) {
  scope_->addItem(tr("Whole trace"));
  scope_->addItem(tr("Timeline window"));
  scope_->addItem(tr("Selected dispatch"));
  scope_note_->setStyleSheet(QStringLiteral("color: #666"));
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Callbacks of"), this));
  top->addWidget(scope_);
  top->addWidget(scope_note_, 1);

  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->setSelectionBehavior(QAbstractItemView::SelectItems);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setStretchLastSection(true);
  streams_->setMinimumWidth(240);
  // A stream's line ("main (thread 1) · debug_print: 5 effects, in program order") wraps
  // rather than running off a narrow list.
  streams_->setWordWrap(true);
  streams_->setTextElideMode(Qt::ElideNone);

  auto* splitter = new QSplitter(this);
  splitter->addWidget(streams_);
  splitter->addWidget(table_);
  splitter->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(splitter, 1);

  refresh_timer_->setSingleShot(true);
  refresh_timer_->setInterval(250);
  connect(refresh_timer_, &QTimer::timeout, this, &EffectOrderView::refresh);
  connect(scope_, &QComboBox::currentIndexChanged, this, &EffectOrderView::refresh);
  connect(streams_, &QListWidget::currentRowChanged, this, [this](int row) {
    model_->setCurrentStream(row);
    fitColumns();
  });
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    const QVariant span = index.data(EffectOrderModel::SpanIndexRole);
    if (span.isValid()) Q_EMIT spanActivated(static_cast<qsizetype>(span.toULongLong()));
  });
  connect(document_, &TraceDocument::traceReset, this, [this] {
    selected_dispatch_.reset();
    refresh();
  });
  connect(document_, &TraceDocument::spansAppended, this, &EffectOrderView::scheduleRefresh);
  refresh();
}

void EffectOrderView::setScope(Scope scope) {
  scope_->setCurrentIndex(scope);
}

void EffectOrderView::setSelectedSpan(qsizetype index) {
  std::optional<telemetry::Id> dispatch;
  if (index >= 0 && static_cast<std::size_t>(index) < document_->spans().size()) {
    const telemetry::Span& span = document_->spans()[static_cast<std::size_t>(index)];
    if (span.kind == telemetry::SpanKind::dispatch) {
      dispatch = span.id;
    } else if (span.parent != 0) {
      const std::ptrdiff_t parent = document_->indexOf(span.parent);
      if (parent >= 0 && document_->spans()[static_cast<std::size_t>(parent)].kind ==
                             telemetry::SpanKind::dispatch)
        dispatch = span.parent;
    }
  }
  // Clicking a span that belongs to no dispatch keeps the previous one in scope.
  if (!dispatch || dispatch == selected_dispatch_) return;
  selected_dispatch_ = dispatch;
  if (scope_->currentIndex() == SelectedDispatch) refresh();
}

void EffectOrderView::setViewRange(std::int64_t start_ns, std::int64_t end_ns) {
  view_start_ns_ = start_ns;
  view_end_ns_ = end_ns;
  if (scope_->currentIndex() == VisibleRange) scheduleRefresh();
}

void EffectOrderView::scheduleRefresh() {
  if (!refresh_timer_->isActive()) refresh_timer_->start();
}

EffectOrderScope EffectOrderView::currentScope() const {
  EffectOrderScope scope;
  switch (scope_->currentIndex()) {
    case VisibleRange:
      scope.from_ns = view_start_ns_;
      scope.to_ns = view_end_ns_;
      break;
    case SelectedDispatch:
      // No dispatch selected yet: an id no span has, so the list says what to do.
      scope.dispatch = selected_dispatch_.value_or(0);
      break;
    default:
      break;
  }
  return scope;
}

void EffectOrderView::refresh() {
  refresh_timer_->stop();
  switch (scope_->currentIndex()) {
    case VisibleRange:
      scope_note_->setText(tr("starting between %1 and %2")
                               .arg(to_qstring(format_time_point(view_start_ns_)),
                                    to_qstring(format_time_point(view_end_ns_))));
      break;
    case SelectedDispatch:
      if (!selected_dispatch_) {
        scope_note_->setText(tr("select a dispatch (or one of its kernels or callbacks) first"));
      } else {
        const std::ptrdiff_t index = document_->indexOf(*selected_dispatch_);
        scope_note_->setText(
            index >= 0
                ? tr("dispatched by the call of %1 at %2")
                      .arg(display_name(document_->spans()[static_cast<std::size_t>(index)].name),
                           to_qstring(format_time_point(
                               document_->spans()[static_cast<std::size_t>(index)].start_ns)))
                : QString());
      }
      break;
    default:
      scope_note_->setText(tr("every run in the trace"));
  }
  model_->analyze(currentScope());
  showStreams();
  fitColumns();
}

void EffectOrderView::fitColumns() {
  // Headers and the rows in view set the widths (Qt measures at most 1000 rows), so no
  // header or time is clipped; the note column takes the rest.
  table_->resizeColumnsToContents();
  table_->horizontalHeader()->setStretchLastSection(true);
}

void EffectOrderView::showStreams() {
  const QSignalBlocker blocker(streams_);
  streams_->clear();
  const auto& streams = model_->streams();
  if (streams.empty()) {
    auto* item = new QListWidgetItem(tr("No callbacks in scope."), streams_);
    item->setFlags(Qt::NoItemFlags);
    return;
  }
  for (const EffectStream& stream : streams) {
    auto* item = new QListWidgetItem(
        QStringLiteral("%1 · %2").arg(display_name(stream.thread), display_name(stream.summary())),
        streams_);
    if (stream.ordered && stream.out_of_order > 0) {
      item->setForeground(QColor(0xb0, 0x20, 0x20));
      item->setToolTip(
          tr("An ordered effect ran out of program order: a bug (in weft, or a "
             "callback that bypassed its token)."));
    } else if (!stream.ordered) {
      item->setForeground(QColor(0x70, 0x70, 0x70));
      item->setToolTip(tr("An unordered effect: weft may run its callbacks in any order."));
    } else {
      item->setForeground(QColor(0x20, 0x70, 0x20));
    }
  }
  streams_->setCurrentRow(model_->currentStream());
}

}  // namespace weft::monitor

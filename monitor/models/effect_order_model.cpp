#include "effect_order_model.h"

#include <QBrush>
#include <QColor>

#include "effect_order.h"
#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

EffectOrderModel::EffectOrderModel(const TraceDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  // The streams hold span indices of the previous trace: drop them until analyzed again.
  connect(document_, &TraceDocument::traceReset, this, [this] {
    beginResetModel();
    streams_.clear();
    current_ = -1;
    endResetModel();
    Q_EMIT streamsChanged();
  });
}

void EffectOrderModel::analyze(const EffectOrderScope& scope) {
  beginResetModel();
  streams_ = analyze_effect_order(document_->spans(), scope);
  // The first stream with a problem is the one worth seeing first.
  current_ = streams_.empty() ? -1 : 0;
  for (std::size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i].ordered && streams_[i].out_of_order > 0) {
      current_ = static_cast<int>(i);
      break;
    }
  }
  endResetModel();
  Q_EMIT streamsChanged();
}

void EffectOrderModel::setCurrentStream(int stream) {
  if (stream < -1 || stream >= static_cast<int>(streams_.size()) || stream == current_) return;
  beginResetModel();
  current_ = stream;
  endResetModel();
}

int EffectOrderModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || current_ < 0) return 0;
  return static_cast<int>(streams_[static_cast<std::size_t>(current_)].size());
}

int EffectOrderModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString EffectOrderModel::describe(std::uint32_t index) const {
  const telemetry::Span& span = document_->spans()[index];
  return QStringLiteral("#%1  %2  at %3")
      .arg(to_qstring(format_program_position(span.seq)))
      .arg(display_name(span.name))
      .arg(to_qstring(format_time_point(span.start_ns)));
}

QVariant EffectOrderModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const EffectStream& stream = streams_[static_cast<std::size_t>(current_)];
  const auto row = static_cast<std::size_t>(index.row());
  const bool differs = stream.differs[row];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case PositionColumn:
          return index.row() + 1;
        case ProgramOrderColumn:
          return describe(stream.program_order[row]);
        case ExecutionOrderColumn:
          return describe(stream.execution_order[row]);
        case NoteColumn:
          if (!differs) return QString();
          return stream.ordered ? tr("ran out of program order")
                                : tr("unordered effect: any order is allowed");
      }
      return {};
    case SpanIndexRole:
      if (index.column() == ExecutionOrderColumn)
        return static_cast<qulonglong>(stream.execution_order[row]);
      return static_cast<qulonglong>(stream.program_order[row]);
    case DiffersRole:
      return differs;
    case Qt::BackgroundRole:
      if (!differs) return {};
      return QBrush(stream.ordered ? QColor(0xf4, 0xc7, 0xc3) : QColor(0xe8, 0xe8, 0xe8));
    case Qt::ForegroundRole:
      if (!stream.ordered) return QBrush(QColor(0x70, 0x70, 0x70));
      return {};
    case Qt::ToolTipRole:
      if (!differs) return {};
      return stream.ordered
                 ? tr("The effect is ordered, so its callbacks must run in program order: this "
                      "position ran a different callback than program order says.")
                 : tr("The effect is unordered: weft may run its callbacks in any order.");
    default:
      return {};
  }
}

QVariant EffectOrderModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case PositionColumn:
      return tr("#");
    case ProgramOrderColumn:
      return tr("Program order (seq)");
    case ExecutionOrderColumn:
      return tr("Execution order (start)");
    case NoteColumn:
      return tr("Note");
    default:
      return {};
  }
}

}  // namespace weft::monitor

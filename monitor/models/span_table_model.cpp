#include "span_table_model.h"

#include "qt_text.h"
#include "span_filter.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

SpanTableModel::SpanTableModel(const TraceDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  rows_ = static_cast<int>(document_->spans().size());
  connect(document_, &TraceDocument::traceReset, this, [this] {
    beginResetModel();
    rows_ = static_cast<int>(document_->spans().size());
    endResetModel();
  });
  connect(document_, &TraceDocument::spansAppended, this, [this](qsizetype first, qsizetype last) {
    beginInsertRows({}, static_cast<int>(first), static_cast<int>(last));
    rows_ = static_cast<int>(last) + 1;
    endInsertRows();
  });
}

int SpanTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_;
}

int SpanTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant SpanTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rows_) return {};
  const auto row = static_cast<std::size_t>(index.row());
  const telemetry::Span& span = document_->spans()[row];
  if (role == SpanIndexRole) return static_cast<qulonglong>(row);
  if (role == Qt::ToolTipRole && index.column() == NameColumn) return display_name(span.name);
  if (role != Qt::DisplayRole && role != SortRole) return {};
  const bool raw = role == SortRole;
  switch (index.column()) {
    case StartColumn:
      return raw ? QVariant(static_cast<qlonglong>(span.start_ns))
                 : QVariant(to_qstring(format_time_point(span.start_ns)));
    case DurationColumn:
      return raw ? QVariant(static_cast<qlonglong>(span.end_ns - span.start_ns))
                 : QVariant(to_qstring(format_duration(span.end_ns - span.start_ns)));
    case KindColumn:
      return to_qstring(telemetry::to_string(span.kind));
    case NameColumn:
      return display_name(span.name);
    case TrackColumn:
      return display_name(span.track.name);
    case DeviceColumn:
      return display_name(span_device(span));
    case EffectColumn:
      return display_name(span.effect);
    default:
      return {};
  }
}

QVariant SpanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case StartColumn:
      return tr("Start");
    case DurationColumn:
      return tr("Duration");
    case KindColumn:
      return tr("Kind");
    case NameColumn:
      return tr("Name");
    case TrackColumn:
      return tr("Row");
    case DeviceColumn:
      return tr("Device");
    case EffectColumn:
      return tr("Effect");
    default:
      return {};
  }
}

}  // namespace weft::monitor

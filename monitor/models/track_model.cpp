#include "track_model.h"

#include "qt_text.h"
#include "trace_document.h"

namespace weft::monitor {

TrackModel::TrackModel(const TraceDocument* document, QObject* parent)
    : QAbstractListModel(parent), document_(document) {
  // Rows are few; a live append may add or reorder them, so the list is simply reset.
  auto reset = [this] {
    beginResetModel();
    endResetModel();
  };
  connect(document_, &TraceDocument::traceReset, this, reset);
  connect(document_, &TraceDocument::spansAppended, this, reset);
}

int TrackModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(document_->timeline().rows().size());
}

QVariant TrackModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const TimelineRow& row = document_->timeline().rows()[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      return display_name(row.track.name);
    case Qt::ToolTipRole:
      return QStringLiteral("%1 (%2, %3 spans)")
          .arg(display_name(row.track.name))
          .arg(to_qstring(telemetry::to_string(row.track.kind)))
          .arg(row.span_count);
    case KindRole:
      return to_qstring(telemetry::to_string(row.track.kind));
    case DeviceRole:
      return QString::fromStdString(row.track.device);
    case SpanCountRole:
      return static_cast<qulonglong>(row.span_count);
    case LaneCountRole:
      return static_cast<int>(row.lanes.size());
    default:
      return {};
  }
}

QHash<int, QByteArray> TrackModel::roleNames() const {
  QHash<int, QByteArray> names = QAbstractListModel::roleNames();
  names[KindRole] = "kind";
  names[DeviceRole] = "device";
  names[SpanCountRole] = "spanCount";
  names[LaneCountRole] = "laneCount";
  return names;
}

}  // namespace weft::monitor

#include "cache_lookup_model.h"

#include <QBrush>
#include <QColor>

#include "qt_text.h"
#include "span_filter.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

CacheLookupModel::CacheLookupModel(const TraceDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  connect(document_, &TraceDocument::traceReset, this, &CacheLookupModel::reload);
  connect(document_, &TraceDocument::spansAppended, this, [this](qsizetype first, qsizetype) {
    // Lookups are rare; only a new one costs a reload.
    const auto& spans = document_->spans();
    for (auto i = static_cast<std::size_t>(first); i < spans.size(); ++i) {
      if (spans[i].kind == telemetry::SpanKind::cache_lookup) {
        reload();
        return;
      }
    }
  });
  reload();
}

void CacheLookupModel::reload() {
  beginResetModel();
  lookups_ = cache_lookup_spans(document_->spans());
  endResetModel();
  Q_EMIT lookupsChanged();
}

CacheLookupHistogram CacheLookupModel::histogram(int bucket_count) const {
  return histogram_cache_lookups(document_->spans(), lookups_, bucket_count);
}

int CacheLookupModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(lookups_.size());
}

int CacheLookupModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CacheLookupModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const std::uint32_t span_index = lookups_[static_cast<std::size_t>(index.row())];
  const telemetry::Span& span = document_->spans()[span_index];
  auto arg = [&](const char* key) {
    const std::string* value = span.arg(key);
    return value ? to_qstring(*value) : QString();
  };
  switch (role) {
    case SpanIndexRole:
      return static_cast<qulonglong>(span_index);
    case KeyRole:
      return arg("key");
    case StatusRole:
      return arg("status");
    case Qt::ForegroundRole:
      if (index.column() == StatusColumn && arg("status") != QLatin1String("hit"))
        return QBrush(QColor(0xb0, 0x30, 0x30));
      return {};
    case Qt::DisplayRole:
      switch (index.column()) {
        case TimeColumn:
          return to_qstring(format_time_point(span.start_ns));
        case FunctionColumn:
          return display_name(span.name);
        case StatusColumn:
          return arg("status");
        case ReasonColumn:
          return arg("reason");
        case DeviceColumn:
          return to_qstring(span_device(span));
        case KeyColumn:
          return arg("key");
      }
      return {};
    default:
      return {};
  }
}

QVariant CacheLookupModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case TimeColumn:
      return tr("Time");
    case FunctionColumn:
      return tr("Function");
    case StatusColumn:
      return tr("Status");
    case ReasonColumn:
      return tr("Reason");
    case DeviceColumn:
      return tr("Device");
    case KeyColumn:
      return tr("Key");
    default:
      return {};
  }
}

}  // namespace weft::monitor

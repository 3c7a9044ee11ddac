#include "range_totals_model.h"

#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

RangeTotalsModel::RangeTotalsModel(const TraceDocument* document, QObject* parent)
    : QAbstractTableModel(parent), document_(document) {
  connect(document_, &TraceDocument::traceReset, this, [this] {
    beginResetModel();
    has_range_ = false;
    totals_.clear();
    error_.clear();
    endResetModel();
  });
}

void RangeTotalsModel::setRange(std::int64_t from_ns, std::int64_t to_ns) {
  beginResetModel();
  has_range_ = true;
  from_ns_ = std::min(from_ns, to_ns);
  to_ns_ = std::max(from_ns, to_ns);
  error_.clear();
  try {
    totals_ = range_totals(document_->trace(), from_ns_, to_ns_);
  } catch (const std::exception& e) {
    // A hostile trace's arguments (a "program" that is no number) must not end the monitor.
    totals_.clear();
    error_ = tr("The totals of this range cannot be computed: %1").arg(to_qstring(e.what()));
  }
  endResetModel();
}

int RangeTotalsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(totals_.size());
}

int RangeTotalsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RangeTotalsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const RangeTotal& total = totals_[static_cast<std::size_t>(index.row())];
  const bool raw = role == SortRole;
  if (role != Qt::DisplayRole && !raw) {
    if (role == Qt::TextAlignmentRole && index.column() >= CountColumn)
      return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
  }
  auto time = [raw](std::int64_t ns) -> QVariant {
    return raw ? QVariant(static_cast<qlonglong>(ns)) : QVariant(to_qstring(format_duration(ns)));
  };
  switch (index.column()) {
    case CategoryColumn:
      return QString::fromLatin1(to_string(total.category));
    case NameColumn:
      return display_name(total.name);
    case DeviceColumn:
      return display_name(total.device);
    case CountColumn:
      return static_cast<qulonglong>(total.count);
    case TotalColumn:
      return time(total.total_ns);
    case MaxColumn:
      return time(total.max_ns);
    case WaitColumn:
      return time(total.wait_ns);
    case FailedColumn:
      return static_cast<qulonglong>(total.failed);
    case OutOfOrderColumn:
      return static_cast<qulonglong>(total.out_of_order);
    default:
      return {};
  }
}

QVariant RangeTotalsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case CategoryColumn:
      return tr("What");
    case NameColumn:
      return tr("Name");
    case DeviceColumn:
      return tr("Device");
    case CountColumn:
      return tr("Count");
    case TotalColumn:
      return tr("Time in range");
    case MaxColumn:
      return tr("Longest");
    case WaitColumn:
      return tr("Wait");
    case FailedColumn:
      return tr("Failed");
    case OutOfOrderColumn:
      return tr("Out of order");
    default:
      return {};
  }
}

}  // namespace weft::monitor

// The totals of a time range (range_totals.h) as a sortable table: category, name, device,
// count, time inside the range, longest, wait, failed and out-of-order callbacks. SortRole
// gives raw numbers.
#pragma once

#include <QAbstractTableModel>
#include <cstdint>
#include <vector>

#include "range_totals.h"

namespace weft::monitor {

class TraceDocument;

class RangeTotalsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    CategoryColumn,
    NameColumn,
    DeviceColumn,
    CountColumn,
    TotalColumn,
    MaxColumn,
    WaitColumn,
    FailedColumn,
    OutOfOrderColumn,
    ColumnCount
  };
  enum Role { SortRole = Qt::UserRole };

  explicit RangeTotalsModel(const TraceDocument* document, QObject* parent = nullptr);

  // Totals the spans overlapping [from_ns, to_ns].
  void setRange(std::int64_t from_ns, std::int64_t to_ns);
  bool hasRange() const { return has_range_; }
  std::int64_t from() const { return from_ns_; }
  std::int64_t to() const { return to_ns_; }
  const std::vector<RangeTotal>& totals() const { return totals_; }
  // Why the last range has no totals (a malformed trace); empty normally.
  const QString& error() const { return error_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const TraceDocument* document_;
  bool has_range_ = false;
  std::int64_t from_ns_ = 0;
  std::int64_t to_ns_ = 0;
  std::vector<RangeTotal> totals_;
  QString error_;
};

}  // namespace weft::monitor

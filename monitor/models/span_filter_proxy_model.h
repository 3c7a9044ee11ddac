// The span list filtered by a SpanFilter and sorted by raw values (times as numbers).
#pragma once

#include <QSortFilterProxyModel>

#include "span_filter.h"

namespace weft::monitor {

class SpanTableModel;

class SpanFilterProxyModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit SpanFilterProxyModel(QObject* parent = nullptr);

  void setSpanModel(SpanTableModel* model);
  void setFilter(const SpanFilter& filter);
  const SpanFilter& filter() const { return filter_; }
  // The document span index of proxy row `row`.
  std::size_t spanIndexAt(int row) const;

 protected:
  bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;

 private:
  SpanTableModel* spans_ = nullptr;
  SpanFilter filter_;
};

}  // namespace weft::monitor

#include "span_filter_proxy_model.h"

#include "span_table_model.h"
#include "trace_document.h"

namespace weft::monitor {

SpanFilterProxyModel::SpanFilterProxyModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(SpanTableModel::SortRole);
}

void SpanFilterProxyModel::setSpanModel(SpanTableModel* model) {
  spans_ = model;
  setSourceModel(model);
}

void SpanFilterProxyModel::setFilter(const SpanFilter& filter) {
  if (filter == filter_) return;
  filter_ = filter;
  invalidateFilter();
}

std::size_t SpanFilterProxyModel::spanIndexAt(int row) const {
  return static_cast<std::size_t>(mapToSource(index(row, 0)).row());
}

bool SpanFilterProxyModel::filterAcceptsRow(int source_row,
                                            const QModelIndex& source_parent) const {
  if (source_parent.isValid() || !spans_) return false;
  if (!filter_.active()) return true;
  const auto& spans = spans_->document()->spans();
  const auto row = static_cast<std::size_t>(source_row);
  return row < spans.size() && filter_.matches(spans[row]);
}

}  // namespace weft::monitor

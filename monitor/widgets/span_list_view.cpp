#include "span_list_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "span_filter_proxy_model.h"
#include "span_table_model.h"

namespace weft::monitor {

SpanListView::SpanListView(SpanTableModel* spans, QWidget* parent)
    : QWidget(parent),
      spans_(spans),
      proxy_(new SpanFilterProxyModel(this)),
      table_(new QTableView(this)),
      count_(new QLabel(this)) {
  proxy_->setSpanModel(spans_);
  table_->setModel(proxy_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  // A million rows: fixed row heights keep the view from measuring each one.
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->resizeSection(SpanTableModel::NameColumn, 220);
  table_->horizontalHeader()->resizeSection(SpanTableModel::TrackColumn, 200);
  // The spans come sorted by start: no sort until a header is clicked (sorting a million rows
  // up front would cost seconds).
  table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  table_->setSortingEnabled(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_);
  layout->addWidget(count_);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            Q_EMIT spanActivated(static_cast<qsizetype>(proxy_->spanIndexAt(current.row())));
          });
  connect(proxy_, &QAbstractItemModel::modelReset, this, &SpanListView::updateCount);
  connect(proxy_, &QAbstractItemModel::rowsInserted, this, &SpanListView::updateCount);
  connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &SpanListView::updateCount);
  connect(proxy_, &QAbstractItemModel::layoutChanged, this, &SpanListView::updateCount);
  updateCount();
}

void SpanListView::setFilter(const SpanFilter& filter) {
  proxy_->setFilter(filter);
  updateCount();
}

void SpanListView::selectSpan(qsizetype index) {
  if (index < 0 || index >= spans_->rowCount()) {
    table_->clearSelection();
    return;
  }
  const QModelIndex row = proxy_->mapFromSource(spans_->index(static_cast<int>(index), 0));
  if (!row.isValid()) return;
  const QSignalBlocker blocker(table_->selectionModel());
  table_->selectionModel()->setCurrentIndex(
      row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(row);
  table_->viewport()->update();
}

void SpanListView::updateCount() {
  count_->setText(tr("%1 of %2 spans").arg(proxy_->rowCount()).arg(spans_->rowCount()));
}

}  // namespace weft::monitor

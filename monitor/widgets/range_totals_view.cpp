#include "range_totals_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "qt_text.h"
#include "range_totals_model.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

RangeTotalsView::RangeTotalsView(const TraceDocument* document, QWidget* parent)
    : QWidget(parent),
      model_(new RangeTotalsModel(document, this)),
      range_(new QLabel(this)),
      table_(new QTableView(this)) {
  auto* use_view = new QPushButton(tr("Use the timeline window"), this);
  use_view->setToolTip(tr("Total what the timeline shows now"));
  auto* top = new QHBoxLayout;
  top->addWidget(range_, 1);
  top->addWidget(use_view);

  auto* sorted = new QSortFilterProxyModel(this);
  sorted->setSourceModel(model_);
  sorted->setSortRole(RangeTotalsModel::SortRole);
  table_->setModel(sorted);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RangeTotalsModel::TotalColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(table_, 1);

  connect(use_view, &QPushButton::clicked, this,
          [this] { setRange(view_start_ns_, view_end_ns_); });
  connect(document, &TraceDocument::traceReset, this, &RangeTotalsView::updateLabel);
  updateLabel();
}

void RangeTotalsView::setRange(std::int64_t from_ns, std::int64_t to_ns) {
  model_->setRange(from_ns, to_ns);
  table_->resizeColumnsToContents();
  updateLabel();
}

void RangeTotalsView::setViewRange(std::int64_t start_ns, std::int64_t end_ns) {
  view_start_ns_ = start_ns;
  view_end_ns_ = end_ns;
}

QString RangeTotalsView::rangeText() const {
  return range_->text();
}

void RangeTotalsView::updateLabel() {
  if (!model_->hasRange()) {
    range_->setText(
        tr("Pick a time range: drag on the timeline's ruler (or Shift+drag), or use "
           "the timeline window."));
    return;
  }
  QString text = tr("<b>%1 – %2</b> (%3): %4 rows; click a header to sort")
                     .arg(to_qstring(format_time_point(model_->from())),
                          to_qstring(format_time_point(model_->to())),
                          to_qstring(format_duration(model_->to() - model_->from())))
                     .arg(model_->rowCount());
  if (!model_->error().isEmpty())
    text += QStringLiteral("<br><span style='color:#b02020'>%1</span>")
                .arg(model_->error().toHtmlEscaped());
  range_->setText(text);
}

}  // namespace weft::monitor

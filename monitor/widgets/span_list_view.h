// The flat list of spans, filtered like the timeline and sortable by any column.
#pragma once

#include <QWidget>

class QLabel;
class QTableView;

namespace weft::monitor {

class SpanFilterProxyModel;
class SpanTableModel;
struct SpanFilter;

class SpanListView : public QWidget {
  Q_OBJECT

 public:
  SpanListView(SpanTableModel* spans, QWidget* parent = nullptr);

  void setFilter(const SpanFilter& filter);
  // Makes spans()[index] the current row (when the filter lets it through).
  void selectSpan(qsizetype index);
  SpanFilterProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }

 Q_SIGNALS:
  void spanActivated(qsizetype index);

 private:
  void updateCount();

  SpanTableModel* spans_;
  SpanFilterProxyModel* proxy_;
  QTableView* table_;
  QLabel* count_;
};

}  // namespace weft::monitor

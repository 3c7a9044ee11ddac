// The "Range totals" tab: what the spans of a picked time range add up to, per kernel, effect,
// dispatch, transfer and compiled function, sortable by any column. The range comes from the
// timeline (drag on the ruler or Shift+drag) or from its current window.
#pragma once

#include <QWidget>
#include <cstdint>

class QLabel;
class QTableView;

namespace weft::monitor {

class RangeTotalsModel;
class TraceDocument;

class RangeTotalsView : public QWidget {
  Q_OBJECT

 public:
  explicit RangeTotalsView(const TraceDocument* document, QWidget* parent = nullptr);

  void setRange(std::int64_t from_ns, std::int64_t to_ns);
  // The timeline's window, for "Use the timeline window".
  void setViewRange(std::int64_t start_ns, std::int64_t end_ns);

  RangeTotalsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QString rangeText() const;

 private:
  void updateLabel();

  RangeTotalsModel* model_;
  QLabel* range_;
  QTableView* table_;
  std::int64_t view_start_ns_ = 0;
  std::int64_t view_end_ns_ = 0;
};

}  // namespace weft::monitor

// Search and filter controls: name substring, device, effect, time range, and whether the
// timeline dims or hides what does not match.
#pragma once

#include <QWidget>
#include <cstdint>

#include "span_filter.h"
#include "timeline_view.h"

class QComboBox;
class QLabel;
class QLineEdit;

namespace weft::monitor {

class TraceDocument;

class FilterBar : public QWidget {
  Q_OBJECT

 public:
  explicit FilterBar(const TraceDocument* document, QWidget* parent = nullptr);

  SpanFilter filter() const { return filter_; }
  TimelineView::FilterMode mode() const;
  // The timeline's current window, for "Use view".
  void setViewRange(std::int64_t start_ns, std::int64_t end_ns);

  QLineEdit* nameEdit() const { return name_; }
  QComboBox* deviceCombo() const { return device_; }
  QComboBox* effectCombo() const { return effect_; }
  QLineEdit* fromEdit() const { return from_; }
  QLineEdit* toEdit() const { return to_; }
  // Why a typed time was not taken (a bare number, an unknown unit); empty when none.
  QString hint() const;

 Q_SIGNALS:
  void filterChanged(const weft::monitor::SpanFilter& filter);
  void modeChanged(weft::monitor::TimelineView::FilterMode mode);

 private:
  void refreshChoices();
  void update();
  static void fill(QComboBox* combo, const QString& any, const std::vector<std::string>& names);

  const TraceDocument* document_;
  QLineEdit* name_;
  QComboBox* device_;
  QComboBox* effect_;
  QLineEdit* from_;
  QLineEdit* to_;
  QComboBox* mode_;
  QLabel* hint_;
  SpanFilter filter_;
  std::int64_t view_start_ns_ = 0;
  std::int64_t view_end_ns_ = 0;
};

}  // namespace weft::monitor

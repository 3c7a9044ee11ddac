// The timeline: one row per host thread, device queue, runtime thread, callback thread and
// cache writer; spans painted by hand (no item per span) through the level-of-detail index, so
// a million spans draw in milliseconds at any zoom. Token edges are arrows coloured by effect.
//
// Mouse: wheel zooms at the cursor (over the row names it scrolls rows; Shift+wheel pans,
// Alt+wheel scrolls rows); drag pans; drag on the ruler or Shift+drag selects a time range and
// zooms to it; click selects a span, double-click zooms to it. Keys: F fit, W/S or +/- zoom,
// A/D or arrows pan, Home/End jump (End follows a live trace), Esc clears the selection.
#pragma once

#include <QAbstractScrollArea>
#include <QPoint>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "span_filter.h"
#include "timeline_filter_mask.h"
#include "timeline_layout.h"
#include "timeline_lod.h"

namespace weft::monitor {

class TraceDocument;

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT

 public:
  enum class FilterMode { dim, hide };

  static constexpr int kRulerHeight = 28;
  static constexpr int kLabelWidth = 220;
  static constexpr int kLaneHeight = 18;
  static constexpr int kRowPadding = 3;
  // Above this many arrows in view, only the selected span's are drawn (with a note).
  static constexpr std::size_t kMaxEdgesDrawn = 4000;

  explicit TimelineView(TraceDocument* document, QWidget* parent = nullptr);

  // The visible time window (ns since the trace start) and its scale.
  ViewWindow window() const;
  void setViewRange(std::int64_t start_ns, std::int64_t end_ns);
  void fitAll();
  void zoomBy(double factor, double anchor_x);  // factor > 1 zooms in; anchor in data pixels
  void panByPixels(double dx);

  void setFilter(const SpanFilter& filter);
  void setFilterMode(FilterMode mode);
  const TimelineFilterMask& filterMask() const { return mask_; }

  // Selects spans()[index] (-1 clears); `reveal` scrolls and zooms it into view.
  void selectSpan(qsizetype index, bool reveal = false);
  qsizetype selectedSpan() const { return selected_; }

  // Live: keep the newest time in view as spans arrive.
  void setFollowLatest(bool follow);
  bool followLatest() const { return follow_; }

  // The span under a viewport position, or -1.
  qsizetype spanAt(const QPoint& viewport_pos) const;
  // Where a span is drawn (viewport coordinates); empty when its row is scrolled away.
  QRectF spanRect(std::size_t index) const;
  // The rows and their group headers, in content coordinates (before vertical scrolling).
  const TimelineLayout& layout() const { return layout_; }
  int rowHeight(std::size_t row) const;
  // The layout's lines [first, end) that the viewport shows (at least partly): painting
  // covers these only, however many rows the trace has.
  std::pair<std::size_t, std::size_t> visibleLines() const;
  // Collapses or expands a row group (TimelineLine::key); clicking its header toggles it.
  void setGroupCollapsed(const std::string& key, bool collapsed);

 Q_SIGNALS:
  void spanSelected(qsizetype index);
  void viewRangeChanged(qint64 start_ns, qint64 end_ns);
  // A range picked with the rubber band (drag on the ruler or Shift+drag).
  void timeRangeSelected(qint64 start_ns, qint64 end_ns);
  void followLatestChanged(bool follow);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool viewportEvent(QEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  void onTraceReset();
  void onSpansAppended();
  void layoutRows();
  void updateScrollBars();
  void onHorizontalScroll(int value);
  void viewChanged();
  void clampView();
  int dataWidth() const;
  int contentTop() const;  // viewport y of content y = 0
  double xForTime(std::int64_t t) const;
  int laneCenterY(std::size_t row, int lane) const;  // viewport y; the row must be shown
  // The group header at a viewport position, if any.
  std::optional<std::size_t> groupLineAt(const QPoint& viewport_pos) const;
  void stopFollowing();

  std::vector<std::int64_t> tickTimes() const;  // the ruler's major ticks in view
  void paintRows(QPainter& painter, const QRect& area);
  void paintEdges(QPainter& painter, const QRect& area);
  void paintRuler(QPainter& painter);
  void paintLabels(QPainter& painter);

  TraceDocument* document_;
  std::int64_t view_start_ns_ = 0;
  double ns_per_px_ = 1;
  bool fitted_once_ = false;
  bool follow_ = false;
  TimelineLayout layout_;
  std::set<std::string> collapsed_;  // keys of the collapsed groups, kept across reloads
  int content_height_ = 0;           // the rows' layout and the counter tracks below it
  int counters_top_ = 0;             // content y of the counter tracks, below the rows

  SpanFilter filter_;
  FilterMode filter_mode_ = FilterMode::dim;
  TimelineFilterMask mask_;
  qsizetype selected_ = -1;

  enum class Drag { none, pending, pan, band };
  Drag drag_ = Drag::none;
  QPoint press_pos_;
  std::int64_t press_view_start_ = 0;
  int press_scroll_y_ = 0;
  int band_to_x_ = 0;

  std::vector<LodItem> items_;  // reused between paints
  bool updating_scrollbars_ = false;
};

}  // namespace weft::monitor

#include "timeline_view.h"

#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "counter_track_painter.h"
#include "qt_text.h"
#include "span_palette.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

namespace {

constexpr int kScrollSteps = 1000000;
constexpr double kMinNsPerPx = 0.01;
constexpr int kTickSpacingPx = 110;

QColor dimmed(const QColor& color) {
  // Filtered-out spans keep a trace of their hue so the rows still read as rows.
  return QColor::fromHsvF(std::max(0.0f, color.hsvHueF()), color.hsvSaturationF() * 0.2f, 0.93f);
}

// Density blocks merge into runs of equal colour; four alpha levels keep the runs long.
QColor block_color(const QColor& base, std::size_t count) {
  QColor color = base;
  const int level = count >= 64 ? 3 : count >= 8 ? 2 : count >= 2 ? 1 : 0;
  static constexpr int kAlpha[] = {150, 190, 225, 255};
  color.setAlpha(kAlpha[level]);
  return color;
}

}  // namespace

TimelineView::TimelineView(TraceDocument* document, QWidget* parent)
    : QAbstractScrollArea(parent), document_(document) {
  setFocusPolicy(Qt::StrongFocus);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  horizontalScrollBar()->setRange(0, kScrollSteps);
  horizontalScrollBar()->setSingleStep(std::max(1, kScrollSteps / 200));
  setMinimumSize(400, 160);
  viewport()->setAutoFillBackground(false);
  setToolTip({});
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this,
          &TimelineView::onHorizontalScroll);
  connect(document_, &TraceDocument::traceReset, this, &TimelineView::onTraceReset);
  connect(document_, &TraceDocument::spansAppended, this, &TimelineView::onSpansAppended);
  connect(document_, &TraceDocument::countersAppended, this, [this] {
    layoutRows();
    viewport()->update();
  });
  onTraceReset();
}

// ---- geometry -----------------------------------------------------------------------------

int TimelineView::dataWidth() const {
  return std::max(1, viewport()->width() - kLabelWidth);
}

int TimelineView::contentTop() const {
  return kRulerHeight - verticalScrollBar()->value();
}

double TimelineView::xForTime(std::int64_t t) const {
  // In doubles: a hostile trace's times may be far enough apart to overflow a difference.
  return kLabelWidth + (static_cast<double>(t) - static_cast<double>(view_start_ns_)) / ns_per_px_;
}

ViewWindow TimelineView::window() const {
  return ViewWindow{view_start_ns_, ns_per_px_, dataWidth()};
}

int TimelineView::rowHeight(std::size_t row) const {
  const auto& rows = document_->timeline().rows();
  const int lanes =
      row < rows.size() ? std::max<int>(1, static_cast<int>(rows[row].lanes.size())) : 1;
  return lanes * kLaneHeight + 2 * kRowPadding;
}

int TimelineView::laneCenterY(std::size_t row, int lane) const {
  return contentTop() + layout_.rowTop(row) + kRowPadding + lane * kLaneHeight + kLaneHeight / 2;
}

std::pair<std::size_t, std::size_t> TimelineView::visibleLines() const {
  const int first_y = verticalScrollBar()->value();
  return layout_.linesBetween(first_y, first_y + std::max(0, viewport()->height() - kRulerHeight));
}

void TimelineView::layoutRows() {
  layout_.build(document_->timeline().rows(), document_->processNames(), collapsed_,
                [this](std::size_t row) { return rowHeight(row); });
  counters_top_ = layout_.height();
  content_height_ = counters_top_ + CounterTrackPainter::height(document_->counterSeries());
  updateScrollBars();
}

void TimelineView::setGroupCollapsed(const std::string& key, bool collapsed) {
  if (collapsed ? !collapsed_.insert(key).second : collapsed_.erase(key) == 0) return;
  layoutRows();
  viewport()->update();
}

std::optional<std::size_t> TimelineView::groupLineAt(const QPoint& pos) const {
  if (pos.y() < kRulerHeight) return std::nullopt;
  const std::optional<std::size_t> line = layout_.lineAt(pos.y() - contentTop());
  if (!line || layout_.lines()[*line].type != TimelineLine::Type::group) return std::nullopt;
  return line;
}

void TimelineView::updateScrollBars() {
  updating_scrollbars_ = true;
  const int visible_height = std::max(0, viewport()->height() - kRulerHeight);
  verticalScrollBar()->setRange(0, std::max(0, content_height_ - visible_height));
  verticalScrollBar()->setPageStep(std::max(1, visible_height));
  verticalScrollBar()->setSingleStep(kLaneHeight);
  const TimelineIndex& index = document_->timeline();
  const double visible = dataWidth() * ns_per_px_;
  const double domain =
      std::max(1.0, (static_cast<double>(index.end_ns()) - static_cast<double>(index.start_ns())));
  const double low = static_cast<double>(index.start_ns()) - visible / 2;
  const double fraction = (static_cast<double>(view_start_ns_) - low) / domain;
  horizontalScrollBar()->setPageStep(
      static_cast<int>(std::clamp(visible / domain * kScrollSteps, 1.0, double{kScrollSteps})));
  horizontalScrollBar()->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kScrollSteps));
  updating_scrollbars_ = false;
}

void TimelineView::onHorizontalScroll(int value) {
  if (updating_scrollbars_) return;
  const TimelineIndex& index = document_->timeline();
  const double visible = dataWidth() * ns_per_px_;
  const double domain =
      std::max(1.0, (static_cast<double>(index.end_ns()) - static_cast<double>(index.start_ns())));
  const double low = static_cast<double>(index.start_ns()) - visible / 2;
  view_start_ns_ = static_cast<std::int64_t>(low + domain * value / kScrollSteps);
  stopFollowing();
  viewChanged();
}

void TimelineView::scrollContentsBy(int, int) {
  viewport()->update();
}

void TimelineView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollBars();
}

// ---- view window ----------------------------------------------------------------------------

void TimelineView::clampView() {
  const TimelineIndex& index = document_->timeline();
  const double duration = std::max<double>(
      1000, (static_cast<double>(index.end_ns()) - static_cast<double>(index.start_ns())));
  const double max_ns_per_px = duration * 4 / dataWidth();
  if (!std::isfinite(ns_per_px_)) ns_per_px_ = max_ns_per_px;
  ns_per_px_ = std::clamp(ns_per_px_, kMinNsPerPx, std::max(kMinNsPerPx, max_ns_per_px));
  const double visible = dataWidth() * ns_per_px_;
  const double low = static_cast<double>(index.start_ns()) - visible / 2;
  const double high = static_cast<double>(index.end_ns()) - visible / 2;
  view_start_ns_ = static_cast<std::int64_t>(
      std::clamp(static_cast<double>(view_start_ns_), low, std::max(low, high)));
}

void TimelineView::viewChanged() {
  clampView();
  updateScrollBars();
  viewport()->update();
  const ViewWindow view = window();
  Q_EMIT viewRangeChanged(view.start_ns, view.end_ns());
}

void TimelineView::fitAll() {
  const TimelineIndex& index = document_->timeline();
  const double duration = std::max<double>(
      1, (static_cast<double>(index.end_ns()) - static_cast<double>(index.start_ns())));
  const double margin = duration * 0.01;
  ns_per_px_ = (duration + 2 * margin) / dataWidth();
  view_start_ns_ = index.start_ns() - static_cast<std::int64_t>(margin);
  fitted_once_ = !document_->isEmpty();
  viewChanged();
}

void TimelineView::setViewRange(std::int64_t start_ns, std::int64_t end_ns) {
  if (end_ns <= start_ns) end_ns = start_ns + 1;
  ns_per_px_ = static_cast<double>(end_ns - start_ns) / dataWidth();
  view_start_ns_ = start_ns;
  viewChanged();
}

void TimelineView::zoomBy(double factor, double anchor_x) {
  if (!(factor > 0)) return;
  const double anchor_t = static_cast<double>(view_start_ns_) + anchor_x * ns_per_px_;
  ns_per_px_ /= factor;
  clampView();
  view_start_ns_ = static_cast<std::int64_t>(anchor_t - anchor_x * ns_per_px_);
  viewChanged();
}

void TimelineView::panByPixels(double dx) {
  view_start_ns_ += static_cast<std::int64_t>(dx * ns_per_px_);
  viewChanged();
}

void TimelineView::setFollowLatest(bool follow) {
  if (follow_ == follow) return;
  follow_ = follow;
  Q_EMIT followLatestChanged(follow_);
  if (follow_ && !document_->isEmpty()) {
    view_start_ns_ =
        document_->timeline().end_ns() - static_cast<std::int64_t>(dataWidth() * ns_per_px_ * 0.95);
    viewChanged();
  }
}

void TimelineView::stopFollowing() {
  if (follow_) setFollowLatest(false);
}

// ---- document -------------------------------------------------------------------------------

void TimelineView::onTraceReset() {
  selected_ = -1;
  mask_.build(document_->timeline(), document_->spans(), filter_);
  layoutRows();
  verticalScrollBar()->setValue(0);
  fitted_once_ = false;
  if (follow_ != document_->isLive()) {
    follow_ = document_->isLive();
    Q_EMIT followLatestChanged(follow_);
  }
  if (!document_->isEmpty()) fitAll();
  viewport()->update();
}

void TimelineView::onSpansAppended() {
  if (filter_.active()) mask_.build(document_->timeline(), document_->spans(), filter_);
  layoutRows();
  if (!fitted_once_) {
    fitAll();
  } else if (follow_) {
    const std::int64_t end = document_->timeline().end_ns();
    const double visible = dataWidth() * ns_per_px_;
    if (static_cast<double>(end) > static_cast<double>(view_start_ns_) + visible * 0.95)
      view_start_ns_ = end - static_cast<std::int64_t>(visible * 0.95);
    viewChanged();
  } else {
    updateScrollBars();
    viewport()->update();
  }
}

void TimelineView::setFilter(const SpanFilter& filter) {
  if (filter == filter_) return;
  filter_ = filter;
  mask_.build(document_->timeline(), document_->spans(), filter_);
  viewport()->update();
}

void TimelineView::setFilterMode(FilterMode mode) {
  filter_mode_ = mode;
  viewport()->update();
}

// ---- selection and hit testing --------------------------------------------------------------

qsizetype TimelineView::spanAt(const QPoint& pos) const {
  if (pos.x() < kLabelWidth || pos.y() < kRulerHeight) return -1;
  const int y = pos.y() - contentTop();
  const std::optional<std::size_t> line = layout_.lineAt(y);
  if (!line || layout_.lines()[*line].type != TimelineLine::Type::row) return -1;
  const std::size_t row = layout_.lines()[*line].row;
  const int inside = y - layout_.rowTop(row) - kRowPadding;
  const TimelineRow& timeline_row = document_->timeline().rows()[row];
  if (inside < 0 || inside >= rowHeight(row) - 2 * kRowPadding) return -1;
  const auto lane = static_cast<std::size_t>(inside / kLaneHeight);
  if (lane >= timeline_row.lanes.size()) return -1;
  const TimelineLane& spans = timeline_row.lanes[lane];
  const std::int64_t t = window().time_at(pos.x() - kLabelWidth);
  const auto found = span_at(spans, t, static_cast<std::int64_t>(3 * ns_per_px_));
  if (!found) return -1;
  const std::uint32_t index = spans.span[*found];
  if (filter_mode_ == FilterMode::hide && !mask_.matches(index)) return -1;
  return static_cast<qsizetype>(index);
}

QRectF TimelineView::spanRect(std::size_t index) const {
  const TimelineIndex& timeline = document_->timeline();
  const int row = timeline.row_of(index);
  const int lane = timeline.lane_of(index);
  if (row < 0 || lane < 0 || layout_.rowTop(static_cast<std::size_t>(row)) < 0) return {};
  const telemetry::Span& span = document_->spans()[index];
  const double top = contentTop() + layout_.rowTop(static_cast<std::size_t>(row)) + kRowPadding +
                     lane * kLaneHeight;
  const double x0 = xForTime(span.start_ns);
  const double x1 = xForTime(span.end_ns);
  return QRectF(x0, top + 1, std::max(1.0, x1 - x0), kLaneHeight - 2);
}

void TimelineView::selectSpan(qsizetype index, bool reveal) {
  if (index >= static_cast<qsizetype>(document_->spans().size())) index = -1;
  const bool changed = index != selected_;
  selected_ = index;
  if (reveal && index >= 0) {
    const telemetry::Span& span = document_->spans()[static_cast<std::size_t>(index)];
    const ViewWindow view = window();
    const std::int64_t length = span.end_ns - span.start_ns;
    const std::int64_t visible = view.end_ns() - view.start_ns;
    if (length > visible * 0.8) {
      setViewRange(span.start_ns - length / 4, span.end_ns + length / 4);
    } else if (span.start_ns < view.start_ns || span.end_ns > view.end_ns()) {
      view_start_ns_ = span.start_ns + length / 2 - visible / 2;
      viewChanged();
    }
    const int row = document_->timeline().row_of(static_cast<std::size_t>(index));
    if (row >= 0 && layout_.rowTop(static_cast<std::size_t>(row)) < 0) {
      // Revealing a span opens the collapsed groups that hide its row.
      for (const std::string& key : layout_.groupsOf(static_cast<std::size_t>(row)))
        collapsed_.erase(key);
      layoutRows();
    }
    if (row >= 0) {
      const int top = layout_.rowTop(static_cast<std::size_t>(row));
      const int visible_height = viewport()->height() - kRulerHeight;
      const int scroll = verticalScrollBar()->value();
      if (top < scroll || top + rowHeight(static_cast<std::size_t>(row)) > scroll + visible_height)
        verticalScrollBar()->setValue(top - visible_height / 3);
    }
    stopFollowing();
  }
  viewport()->update();
  if (changed) Q_EMIT spanSelected(selected_);
}

// ---- painting -------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(viewport());
  const QRect area = viewport()->rect();
  painter.fillRect(area, QColor(0xff, 0xff, 0xff));
  if (document_->isEmpty()) {
    paintRuler(painter);
    painter.setPen(QColor(0x70, 0x70, 0x70));
    painter.drawText(area.adjusted(0, kRulerHeight, 0, 0), Qt::AlignCenter,
                     document_->isLive()
                         ? tr("Listening: run a program with WEFT_MONITOR=1 and its spans "
                              "appear here.")
                         : tr("Open a trace (File > Open, or drop a .wefttrace file here), or "
                              "attach to running programs (File > Attach live)."));
    return;
  }
  paintRows(painter, area);
  paintEdges(painter, area);
  paintLabels(painter);
  CounterTrackPainter::paint(
      painter, document_->counterSeries(),
      {contentTop() + counters_top_, kLabelWidth, kRulerHeight, area, window()});
  paintRuler(painter);
}

std::vector<std::int64_t> TimelineView::tickTimes() const {
  // Counted rather than stepped until the end, so that times near the int64 limits (a
  // hostile trace) cannot overflow into an endless loop.
  const ViewWindow view = window();
  const std::int64_t step = nice_tick_step(ns_per_px_ * kTickSpacingPx);
  const std::int64_t first = (view.start_ns / step) * step;
  const double count = (static_cast<double>(view.end_ns()) - static_cast<double>(first)) / step;
  std::vector<std::int64_t> ticks;
  for (int i = 0; i <= std::min(count, 1000.0); ++i) {
    const double t =
        static_cast<double>(first) + static_cast<double>(i) * static_cast<double>(step);
    if (t > 9.0e18) break;
    ticks.push_back(first + static_cast<std::int64_t>(i) * step);
  }
  return ticks;
}

void TimelineView::paintRows(QPainter& painter, const QRect& area) {
  const QRect data(kLabelWidth, kRulerHeight, area.width() - kLabelWidth,
                   area.height() - kRulerHeight);
  painter.save();
  painter.setClipRect(data);
  const ViewWindow view = window();
  const auto& rows = document_->timeline().rows();
  const auto& spans = document_->spans();
  const QFontMetrics metrics(font());

  // Faint grid lines at the ruler's ticks.
  painter.setPen(QColor(0xee, 0xee, 0xf0));
  for (const std::int64_t t : tickTimes()) {
    const double x = xForTime(t);
    if (x >= kLabelWidth) painter.drawLine(QPointF(x, kRulerHeight), QPointF(x, area.height()));
  }

  const auto [first_line, end_line] = visibleLines();
  for (std::size_t line = first_line; line < end_line; ++line) {
    const TimelineLine& layout_line = layout_.lines()[line];
    const int top = contentTop() + layout_line.top;
    if (layout_line.type == TimelineLine::Type::group) {
      painter.fillRect(QRect(kLabelWidth, top, data.width(), layout_line.height),
                       QColor(0xe4, 0xe7, 0xec));
      continue;
    }
    const std::size_t row = layout_line.row;
    const int height = layout_line.height;
    if (row % 2 == 1)
      painter.fillRect(QRect(kLabelWidth, top, data.width(), height), QColor(0xf6, 0xf7, 0xf9));
    const auto& lanes = rows[row].lanes;
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      const double y = top + kRowPadding + static_cast<double>(lane) * kLaneHeight + 1;
      const double h = kLaneHeight - 2;
      items_.clear();
      lod_items(lanes[lane], view, items_);
      // Runs of equally coloured density blocks become one rectangle.
      QRectF run;
      QColor run_color;
      auto flush_run = [&] {
        if (run.width() > 0) painter.fillRect(run, run_color);
        run = QRectF();
      };
      for (const LodItem& item : items_) {
        const std::uint32_t index = lanes[lane].span[item.first];
        const telemetry::Span& span = spans[index];
        if (item.type == LodItem::Type::block) {
          const std::size_t matching = mask_.matching(row, lane, item.first, item.count);
          if (matching == 0 && filter_mode_ == FilterMode::hide) continue;
          QColor color = block_color(kind_color(span.kind), item.count);
          if (matching == 0) color = dimmed(color);
          const double x = kLabelWidth + item.x0;
          if (run.width() > 0 && color == run_color && std::abs(run.right() - x) < 0.5) {
            run.setRight(x + 1);
          } else {
            flush_run();
            run = QRectF(x, y, 1, h);
            run_color = color;
          }
          continue;
        }
        flush_run();
        const bool matches = mask_.matches(index);
        if (!matches && filter_mode_ == FilterMode::hide) continue;
        const double x0 = std::max<double>(kLabelWidth - 2, kLabelWidth + item.x0);
        const double x1 = std::min<double>(area.width() + 2, kLabelWidth + item.x1);
        const QRectF rect(x0, y, std::max(1.0, x1 - x0), h);
        const QColor color = matches ? kind_color(span.kind) : dimmed(kind_color(span.kind));
        painter.fillRect(rect, color);
        if (rect.width() > 4)
          painter.fillRect(QRectF(rect.right() - 1, y, 1, h), color.darker(135));
        if (span.kind == telemetry::SpanKind::callback) {
          const std::string* status = span.arg("status");
          if (status && *status != "ok") {
            painter.setPen(QPen(QColor(0xc0, 0x10, 0x10), 2));
            painter.drawRect(rect.adjusted(1, 1, -1, -1));
          }
        }
        const double text_left = std::max<double>(rect.left(), kLabelWidth) + 3;
        const double text_width = rect.right() - text_left - 2;
        if (text_width > 24) {
          painter.setPen(matches ? text_color_on(color) : QColor(0x99, 0x99, 0x99));
          const QString name = metrics.elidedText(display_name(span.name), Qt::ElideRight,
                                                  static_cast<int>(text_width));
          painter.drawText(QRectF(text_left, y, text_width, h), Qt::AlignVCenter | Qt::AlignLeft,
                           name);
        }
      }
      flush_run();
    }
  }

  if (selected_ >= 0) {
    const QRectF rect = spanRect(static_cast<std::size_t>(selected_));
    if (!rect.isEmpty()) {
      painter.setPen(QPen(QColor(0x10, 0x10, 0x10), 2));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(rect.adjusted(-1, -1, 1, 1));
    }
  }
  painter.restore();
}

void TimelineView::paintEdges(QPainter& painter, const QRect& area) {
  const auto& edges = document_->edges();
  if (edges.empty()) return;
  const auto& spans = document_->spans();
  const TimelineIndex& timeline = document_->timeline();
  const ViewWindow view = window();
  const std::int64_t t0 = view.start_ns, t1 = view.end_ns();
  std::vector<std::size_t> visible;
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const std::int64_t a = spans[edges[e].from].end_ns, b = spans[edges[e].to].start_ns;
    if (std::max(a, b) >= t0 && std::min(a, b) <= t1) visible.push_back(e);
  }
  const bool crowded = visible.size() > kMaxEdgesDrawn;
  painter.save();
  painter.setClipRect(
      QRect(kLabelWidth, kRulerHeight, area.width() - kLabelWidth, area.height() - kRulerHeight));
  painter.setRenderHint(QPainter::Antialiasing, true);
  auto draw = [&](const ResolvedEdge& edge, bool highlighted) {
    const int from_row = timeline.row_of(edge.from), to_row = timeline.row_of(edge.to);
    if (from_row < 0 || to_row < 0) return;
    // An end in a collapsed group has nowhere to be drawn.
    if (layout_.rowTop(static_cast<std::size_t>(from_row)) < 0 ||
        layout_.rowTop(static_cast<std::size_t>(to_row)) < 0)
      return;
    const QPointF from(
        xForTime(spans[edge.from].end_ns),
        laneCenterY(static_cast<std::size_t>(from_row), timeline.lane_of(edge.from)));
    const QPointF to(xForTime(spans[edge.to].start_ns),
                     laneCenterY(static_cast<std::size_t>(to_row), timeline.lane_of(edge.to)));
    QColor color = effect_color(edge.effect);
    if (selected_ >= 0 && !highlighted) color.setAlpha(110);
    painter.setPen(QPen(color, highlighted ? 2.5 : 1.2));
    painter.drawLine(from, to);
    // The arrowhead points along the line; a vertical hand-off points straight down or up.
    const QLineF line(from, to);
    if (line.length() < 4) return;
    const double angle = std::atan2(to.y() - from.y(), to.x() - from.x());
    const double size = highlighted ? 8 : 6;
    QPainterPath head;
    head.moveTo(to);
    head.lineTo(to.x() - size * std::cos(angle - 0.45), to.y() - size * std::sin(angle - 0.45));
    head.lineTo(to.x() - size * std::cos(angle + 0.45), to.y() - size * std::sin(angle + 0.45));
    head.closeSubpath();
    painter.fillPath(head, color);
  };
  std::vector<std::size_t> highlighted;
  if (selected_ >= 0) {
    for (std::size_t e : document_->edgesInto(static_cast<std::size_t>(selected_)))
      highlighted.push_back(e);
    for (std::size_t e : document_->edgesOutOf(static_cast<std::size_t>(selected_)))
      highlighted.push_back(e);
  }
  if (!crowded) {
    for (std::size_t e : visible) {
      if (std::find(highlighted.begin(), highlighted.end(), e) == highlighted.end())
        draw(edges[e], false);
    }
  }
  for (std::size_t e : highlighted) draw(edges[e], true);
  painter.restore();
  if (crowded) {
    const QString note = tr("%1 token arrows in view: zoom in to see them (a selected "
                            "callback's arrows are always drawn)")
                             .arg(visible.size());
    const QFontMetrics metrics(font());
    const QRect box(area.width() - metrics.horizontalAdvance(note) - 16, kRulerHeight + 4,
                    metrics.horizontalAdvance(note) + 10, metrics.height() + 4);
    painter.fillRect(box, QColor(255, 255, 255, 220));
    painter.setPen(QColor(0x60, 0x60, 0x60));
    painter.drawText(box, Qt::AlignCenter, note);
  }
}

void TimelineView::paintLabels(QPainter& painter) {
  const QRect gutter(0, kRulerHeight, kLabelWidth, viewport()->height() - kRulerHeight);
  painter.save();
  painter.setClipRect(gutter);
  painter.fillRect(gutter, QColor(0xee, 0xf0, 0xf3));
  const auto& rows = document_->timeline().rows();
  const QFontMetrics metrics(font());
  constexpr int kIndent = 12;
  const auto [first_line, end_line] = visibleLines();
  for (std::size_t line = first_line; line < end_line; ++line) {
    const TimelineLine& layout_line = layout_.lines()[line];
    const int top = contentTop() + layout_line.top;
    const int left = 8 + layout_line.depth * kIndent;
    if (layout_line.type == TimelineLine::Type::group) {
      painter.fillRect(QRect(0, top, kLabelWidth, layout_line.height), QColor(0xdc, 0xe0, 0xe6));
      painter.setPen(QColor(0x20, 0x20, 0x20));
      QFont bold = painter.font();
      bold.setBold(true);
      painter.setFont(bold);
      // ▸ collapsed, ▾ open; the count says what a collapsed group hides.
      const QString title = QStringLiteral("%1 %2 (%3)")
                                .arg(layout_line.collapsed ? QChar(0x25B8) : QChar(0x25BE))
                                .arg(display_name(layout_line.title))
                                .arg(layout_line.row_count);
      const QRect text(left - 4, top, kLabelWidth - left, layout_line.height);
      painter.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                       QFontMetrics(bold).elidedText(title, Qt::ElideMiddle, text.width()));
      painter.setFont(font());
      continue;
    }
    const std::size_t row = layout_line.row;
    const int height = layout_line.height;
    const telemetry::Track& track = rows[row].track;
    painter.setPen(QColor(0x20, 0x20, 0x20));
    const QRect text(left, top, kLabelWidth - left - 6,
                     std::min(height, kLaneHeight + 2 * kRowPadding));
    painter.drawText(text, Qt::AlignVCenter | Qt::AlignLeft,
                     metrics.elidedText(display_name(track.name), Qt::ElideMiddle, text.width()));
    if (height > kLaneHeight + 2 * kRowPadding + 4) {
      painter.setPen(QColor(0x80, 0x80, 0x80));
      painter.drawText(QRect(left, top + kLaneHeight, kLabelWidth - left - 6, kLaneHeight),
                       Qt::AlignVCenter | Qt::AlignLeft,
                       QStringLiteral("%1 · %2 spans")
                           .arg(to_qstring(telemetry::to_string(track.kind)))
                           .arg(rows[row].span_count));
    }
  }
  painter.setPen(QColor(0xb0, 0xb4, 0xba));
  painter.drawLine(kLabelWidth - 1, kRulerHeight, kLabelWidth - 1, viewport()->height());
  painter.restore();
}

void TimelineView::paintRuler(QPainter& painter) {
  const int width = viewport()->width();
  painter.fillRect(QRect(0, 0, width, kRulerHeight), QColor(0xe3, 0xe6, 0xeb));
  painter.setPen(QColor(0xb0, 0xb4, 0xba));
  painter.drawLine(0, kRulerHeight - 1, width, kRulerHeight - 1);
  const ViewWindow view = window();
  painter.setPen(QColor(0x30, 0x30, 0x30));
  const QString span_text =
      tr("window %1").arg(to_qstring(format_duration(view.end_ns() - view.start_ns)));
  painter.drawText(QRect(8, 0, kLabelWidth - 12, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
                   follow_ ? span_text + tr(" · following") : span_text);
  if (document_->isEmpty()) return;
  painter.save();
  painter.setClipRect(QRect(kLabelWidth, 0, width - kLabelWidth, kRulerHeight));
  const std::int64_t step = nice_tick_step(ns_per_px_ * kTickSpacingPx);
  for (const std::int64_t t : tickTimes()) {
    const double x = xForTime(t);
    painter.setPen(QColor(0x60, 0x60, 0x60));
    painter.drawLine(QPointF(x, kRulerHeight - 8), QPointF(x, kRulerHeight - 1));
    for (int minor = 1; minor < 5; ++minor) {
      const double mx = xForTime(t) + static_cast<double>(step) * minor / 5 / ns_per_px_;
      painter.drawLine(QPointF(mx, kRulerHeight - 4), QPointF(mx, kRulerHeight - 1));
    }
    painter.setPen(QColor(0x20, 0x20, 0x20));
    painter.drawText(QRectF(x + 3, 2, kTickSpacingPx - 6, kRulerHeight - 10),
                     Qt::AlignLeft | Qt::AlignVCenter, to_qstring(format_tick(t, step)));
  }
  painter.restore();
  if (drag_ == Drag::band) {
    const int left = std::min(press_pos_.x(), band_to_x_),
              right = std::max(press_pos_.x(), band_to_x_);
    painter.fillRect(QRect(left, 0, right - left, viewport()->height()),
                     QColor(0x30, 0x70, 0xd0, 50));
    painter.setPen(QColor(0x20, 0x50, 0xa0));
    painter.drawRect(QRect(left, 0, right - left, viewport()->height() - 1));
    const std::int64_t length =
        view.time_at(right - kLabelWidth) - view.time_at(left - kLabelWidth);
    painter.drawText(QRect(left + 4, kRulerHeight + 2, 200, 20), Qt::AlignLeft,
                     to_qstring(format_duration(length)));
  }
}

// ---- input ----------------------------------------------------------------------------------

void TimelineView::wheelEvent(QWheelEvent* event) {
  const QPoint delta = event->angleDelta();
  const int amount = delta.y() != 0 ? delta.y() : delta.x();
  const QPointF pos = event->position();
  if (event->modifiers() & Qt::AltModifier || pos.x() < kLabelWidth) {
    verticalScrollBar()->setValue(verticalScrollBar()->value() - amount * kLaneHeight / 40);
  } else if (event->modifiers() & Qt::ShiftModifier) {
    stopFollowing();
    panByPixels(-amount / 120.0 * dataWidth() * 0.1);
  } else {
    zoomBy(std::pow(1.0015, amount), pos.x() - kLabelWidth);
  }
  event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QAbstractScrollArea::mousePressEvent(event);
  press_pos_ = event->position().toPoint();
  press_view_start_ = view_start_ns_;
  press_scroll_y_ = verticalScrollBar()->value();
  const bool on_data = press_pos_.x() >= kLabelWidth;
  if (on_data && (press_pos_.y() < kRulerHeight || (event->modifiers() & Qt::ShiftModifier))) {
    drag_ = Drag::band;
    band_to_x_ = press_pos_.x();
  } else {
    drag_ = Drag::pending;
  }
  event->accept();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (drag_ == Drag::pending && (pos - press_pos_).manhattanLength() > 3) {
    drag_ = Drag::pan;
    viewport()->setCursor(Qt::ClosedHandCursor);
  }
  if (drag_ == Drag::pan) {
    stopFollowing();
    view_start_ns_ =
        press_view_start_ - static_cast<std::int64_t>((pos.x() - press_pos_.x()) * ns_per_px_);
    verticalScrollBar()->setValue(press_scroll_y_ - (pos.y() - press_pos_.y()));
    viewChanged();
  } else if (drag_ == Drag::band) {
    band_to_x_ = std::clamp(pos.x(), kLabelWidth, viewport()->width());
    viewport()->update();
  }
  event->accept();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QAbstractScrollArea::mouseReleaseEvent(event);
  const Drag drag = drag_;
  drag_ = Drag::none;
  viewport()->unsetCursor();
  const QPoint pos = event->position().toPoint();
  if (drag == Drag::band) {
    const int left = std::min(press_pos_.x(), band_to_x_),
              right = std::max(press_pos_.x(), band_to_x_);
    if (right - left >= 3) {
      const ViewWindow view = window();
      const std::int64_t from = view.time_at(left - kLabelWidth),
                         to = view.time_at(right - kLabelWidth);
      stopFollowing();
      setViewRange(from, to);
      Q_EMIT timeRangeSelected(from, to);
    }
    viewport()->update();
  } else if (drag == Drag::pending) {
    if (const std::optional<std::size_t> group = groupLineAt(pos)) {
      const TimelineLine& line = layout_.lines()[*group];
      setGroupCollapsed(line.key, !line.collapsed);
    } else {
      selectSpan(spanAt(pos));
    }
  }
  event->accept();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
  const qsizetype index = spanAt(event->position().toPoint());
  if (index < 0) return;
  const telemetry::Span& span = document_->spans()[static_cast<std::size_t>(index)];
  const std::int64_t margin = std::max<std::int64_t>(10, (span.end_ns - span.start_ns) / 4);
  stopFollowing();
  setViewRange(span.start_ns - margin, span.end_ns + margin);
  selectSpan(index);
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
  const double center = dataWidth() / 2.0;
  switch (event->key()) {
    case Qt::Key_F:
      fitAll();
      break;
    case Qt::Key_W:
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomBy(1.25, center);
      break;
    case Qt::Key_S:
    case Qt::Key_Minus:
      zoomBy(0.8, center);
      break;
    case Qt::Key_A:
    case Qt::Key_Left:
      stopFollowing();
      panByPixels(-dataWidth() * 0.1);
      break;
    case Qt::Key_D:
    case Qt::Key_Right:
      stopFollowing();
      panByPixels(dataWidth() * 0.1);
      break;
    case Qt::Key_Up:
      verticalScrollBar()->setValue(verticalScrollBar()->value() - 2 * kLaneHeight);
      break;
    case Qt::Key_Down:
      verticalScrollBar()->setValue(verticalScrollBar()->value() + 2 * kLaneHeight);
      break;
    case Qt::Key_Home:
      stopFollowing();
      view_start_ns_ = document_->timeline().start_ns();
      viewChanged();
      break;
    case Qt::Key_End:
      view_start_ns_ = document_->timeline().end_ns() -
                       static_cast<std::int64_t>(dataWidth() * ns_per_px_ * 0.95);
      viewChanged();
      if (document_->isLive()) setFollowLatest(true);
      break;
    case Qt::Key_Escape:
      selectSpan(-1);
      break;
    default:
      QAbstractScrollArea::keyPressEvent(event);
      return;
  }
  event->accept();
}

bool TimelineView::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const qsizetype index = spanAt(help->pos());
    if (index < 0) {
      QToolTip::hideText();
      return true;
    }
    const telemetry::Span& span = document_->spans()[static_cast<std::size_t>(index)];
    QString text = QStringLiteral("<b>%1</b> (%2)<br>%3 at %4")
                       .arg(display_name(span.name).toHtmlEscaped(),
                            to_qstring(telemetry::to_string(span.kind)),
                            to_qstring(format_duration(span.end_ns - span.start_ns)),
                            to_qstring(format_time_point(span.start_ns)));
    if (!span.effect.empty())
      text += QStringLiteral("<br>effect %1, seq %2")
                  .arg(to_qstring(span.effect).toHtmlEscaped())
                  .arg(span.seq);
    QToolTip::showText(help->globalPos(), text, viewport());
    return true;
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace weft::monitor

#include "counter_track_painter.h"

#include <QFontMetrics>
#include <algorithm>

#include "qt_text.h"

namespace weft::monitor {

namespace {

// Line colours per row, cycling (the area under the line is the same, faint).
const QColor kLineColors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0x2c, 0xa0, 0x2c),
                              QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd),
                              QColor(0xff, 0x7f, 0x0e)};

void paint_chart(QPainter& painter, const CounterSeries& series, const QRect& row,
                 const ViewWindow& view, const QColor& color) {
  const std::vector<CounterColumn> columns =
      series.columns(view.start_ns, view.ns_per_px, row.width());
  const double scale = series.peak() > 0 ? series.peak() : 1.0;
  const double bottom = row.bottom() - 2;
  const double span = row.height() - 6;
  auto y_of = [&](double value) { return bottom - std::clamp(value / scale, 0.0, 1.0) * span; };
  QColor fill = color;
  fill.setAlpha(60);
  painter.setPen(QPen(color, 1));
  // One vertical stroke per column from its lowest to its highest value (a step seen from
  // afar), and the area under the value each column ends with.
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const CounterColumn& c = columns[i];
    if (!c.known) continue;
    const double x = row.left() + static_cast<double>(i) + 0.5;
    painter.fillRect(QRectF(x - 0.5, y_of(c.last), 1.0, bottom - y_of(c.last)), fill);
    painter.drawLine(QPointF(x, y_of(c.min)), QPointF(x, y_of(c.max)));
    if (i > 0 && columns[i - 1].known) {
      const double from = y_of(columns[i - 1].last);
      painter.drawLine(QPointF(x - 1, from), QPointF(x, from));
    }
  }
}

}  // namespace

int CounterTrackPainter::height(const std::vector<CounterSeries>& series) {
  if (series.empty()) return 0;
  return kGap + static_cast<int>(series.size()) * (kRowHeight + 1);
}

void CounterTrackPainter::paint(QPainter& painter, const std::vector<CounterSeries>& series,
                                const CounterTrackLayout& layout) {
  if (series.empty()) return;
  painter.save();
  const QRect& viewport = layout.viewport;
  painter.setClipRect(
      QRect(0, layout.clip_top, viewport.width(), viewport.height() - layout.clip_top));
  const QFontMetrics metrics(painter.font());
  const int data_width = viewport.width() - layout.label_width;
  painter.setPen(QColor(0xb0, 0xb4, 0xba));
  painter.drawLine(0, layout.top + kGap - 4, viewport.width(), layout.top + kGap - 4);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const int top = layout.top + kGap + static_cast<int>(i) * (kRowHeight + 1);
    if (top + kRowHeight < layout.clip_top || top > viewport.height()) continue;
    const CounterSeries& s = series[i];
    const QRect data(layout.label_width, top, data_width, kRowHeight);
    painter.fillRect(data, i % 2 == 1 ? QColor(0xf6, 0xf7, 0xf9) : QColor(0xff, 0xff, 0xff));
    paint_chart(painter, s, data, layout.view, kLineColors[i % std::size(kLineColors)]);

    const QRect gutter(0, top, layout.label_width - 1, kRowHeight);
    painter.fillRect(gutter, QColor(0xee, 0xf0, 0xf3));
    painter.setPen(QColor(0x20, 0x20, 0x20));
    const QRect name(8, top, layout.label_width - 14, kRowHeight / 2 + 2);
    painter.drawText(name, Qt::AlignBottom | Qt::AlignLeft,
                     metrics.elidedText(to_qstring(s.label()), Qt::ElideMiddle, name.width()));
    const std::optional<double> now = s.value_at(layout.view.end_ns());
    painter.setPen(QColor(0x80, 0x80, 0x80));
    painter.drawText(
        QRect(8, top + kRowHeight / 2 + 2, layout.label_width - 14, kRowHeight / 2 - 2),
        Qt::AlignTop | Qt::AlignLeft,
        QStringLiteral("%1 · peak %2")
            .arg(now ? to_qstring(format_counter_value(s.name(), *now)) : QStringLiteral("-"))
            .arg(to_qstring(format_counter_value(s.name(), s.peak()))));
  }
  painter.restore();
}

}  // namespace weft::monitor

// Draws the timeline's counter tracks: one short row per counter below the span rows, a step
// chart scaled from zero to the counter's peak, with its name and the value at the view's end
// in the label gutter. Kept apart from TimelineView, which only says where the rows go.
#pragma once

#include <QPainter>
#include <QRect>
#include <vector>

#include "counter_series.h"
#include "timeline_lod.h"

namespace weft::monitor {

struct CounterTrackLayout {
  int top = 0;          // viewport y of the first counter row
  int label_width = 0;  // the gutter left of the data
  int clip_top = 0;     // nothing is drawn above this (the ruler)
  QRect viewport;       // the whole viewport
  ViewWindow view;      // the time shown in the data area
};

class CounterTrackPainter {
 public:
  static constexpr int kRowHeight = 34;
  static constexpr int kGap = 6;  // above the first counter row, as between row groups

  // The content height the tracks take (0 without counters).
  static int height(const std::vector<CounterSeries>& series);
  static void paint(QPainter& painter, const std::vector<CounterSeries>& series,
                    const CounterTrackLayout& layout);
};

}  // namespace weft::monitor

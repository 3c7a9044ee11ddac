// Level of detail for one lane of the timeline: what to draw for a view window. Spans at least
// `min_span_px` wide are drawn one by one; narrower ones are merged into one density block per
// pixel column, so a million spans cost a few thousand items at any zoom.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "timeline_index.h"

namespace weft::monitor {

// The visible time window mapped onto pixels: x = (t - start_ns) / ns_per_px.
struct ViewWindow {
  std::int64_t start_ns = 0;
  double ns_per_px = 1;
  int width_px = 0;

  std::int64_t end_ns() const;
  double x_of(std::int64_t t) const {
    return (static_cast<double>(t) - static_cast<double>(start_ns)) / ns_per_px;
  }
  std::int64_t time_at(double x) const;
};

struct LodItem {
  enum class Type { span, block };
  Type type = Type::span;
  std::size_t first = 0;  // lane position of the (first) span
  std::size_t count = 1;  // spans merged (1 for a span)
  double x0 = 0;          // span: its unclipped extent; block: its pixel column [x0, x0 + 1)
  double x1 = 0;
};

// Appends the items for `lane` within `view` to `out`.
void lod_items(const TimelineLane& lane, const ViewWindow& view, std::vector<LodItem>& out,
               double min_span_px = 1.0);

// Lane positions of the spans overlapping [t0, t1] (inclusive), in start order.
std::vector<std::size_t> visible_positions(const TimelineLane& lane, std::int64_t t0,
                                           std::int64_t t1);

// The span at time `t`, or the nearest one within `tolerance_ns`; a lane position.
std::optional<std::size_t> span_at(const TimelineLane& lane, std::int64_t t,
                                   std::int64_t tolerance_ns);

}  // namespace weft::monitor

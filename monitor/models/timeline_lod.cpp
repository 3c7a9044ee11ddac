#include "timeline_lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weft::monitor {

std::int64_t ViewWindow::end_ns() const {
  return time_at(static_cast<double>(width_px));
}

std::int64_t ViewWindow::time_at(double x) const {
  const double t = static_cast<double>(start_ns) + x * ns_per_px;
  constexpr double kLimit = 9.0e18;
  return static_cast<std::int64_t>(std::llround(std::clamp(t, -kLimit, kLimit)));
}

void lod_items(const TimelineLane& lane, const ViewWindow& view, std::vector<LodItem>& out,
               double min_span_px) {
  if (lane.size() == 0 || view.width_px <= 0 || !(view.ns_per_px > 0)) return;
  const std::int64_t t0 = view.start_ns;
  const std::int64_t t1 = view.end_ns();
  const std::size_t hi = lane.first_starting_after(t1);
  std::size_t i = lane.first_ending_at_or_after(t0);
  while (i < hi) {
    if (lane.end[i] < t0) {  // an earlier span nested in an overlapping one (crowded lane)
      ++i;
      continue;
    }
    const double x0 = view.x_of(lane.start[i]);
    const double x1 = view.x_of(lane.end[i]);
    if (x1 - x0 >= min_span_px) {
      out.push_back({LodItem::Type::span, i, 1, x0, x1});
      ++i;
      continue;
    }
    const double column = std::max(0.0, std::floor(x0));
    const double next_column_ns = static_cast<double>(t0) + (column + 1) * view.ns_per_px;
    const auto next_start = static_cast<std::int64_t>(
        std::min(std::ceil(next_column_ns),
                 static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2)));
    std::size_t j = std::min(hi, lane.first_starting_at_or_after(next_start, i + 1));
    // The last span starting in this column may reach beyond it: it is drawn on its own.
    if (j - 1 > i && view.x_of(lane.end[j - 1]) - view.x_of(lane.start[j - 1]) >= min_span_px) --j;
    out.push_back({LodItem::Type::block, i, j - i, column, column + 1});
    i = j;
  }
}

std::vector<std::size_t> visible_positions(const TimelineLane& lane, std::int64_t t0,
                                           std::int64_t t1) {
  std::vector<std::size_t> result;
  const std::size_t hi = lane.first_starting_after(t1);
  for (std::size_t i = lane.first_ending_at_or_after(t0); i < hi; ++i)
    if (lane.end[i] >= t0) result.push_back(i);
  return result;
}

std::optional<std::size_t> span_at(const TimelineLane& lane, std::int64_t t,
                                   std::int64_t tolerance_ns) {
  if (lane.size() == 0) return std::nullopt;
  tolerance_ns = std::max<std::int64_t>(tolerance_ns, 0);
  const std::size_t lo = lane.first_ending_at_or_after(t - tolerance_ns);
  const std::size_t hi = lane.first_starting_after(t + tolerance_ns);
  if (lo >= hi) return std::nullopt;
  auto distance = [&](std::size_t i) -> std::int64_t {
    if (t < lane.start[i]) return lane.start[i] - t;
    if (t > lane.end[i]) return t - lane.end[i];
    return 0;
  };
  std::optional<std::size_t> best;
  std::int64_t best_distance = tolerance_ns + 1;
  auto consider = [&](std::size_t i) {
    const std::int64_t d = distance(i);
    if (d < best_distance) {
      best_distance = d;
      best = i;
    }
  };
  constexpr std::size_t kScanLimit = 64;
  if (hi - lo <= kScanLimit) {
    for (std::size_t i = lo; i < hi; ++i) consider(i);
  } else {
    // Crowded: the spans starting right before and after t are the candidates.
    const std::size_t after = lane.first_starting_after(t);
    for (std::size_t i = after >= 2 ? after - 2 : 0; i < std::min(hi, after + 1); ++i) consider(i);
  }
  return best;
}

}  // namespace weft::monitor

#include "timeline_index.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "track_order.h"

namespace weft::monitor {

namespace {

// Lanes nest best when, at equal starts, the longer (enclosing) span comes first.
bool sorts_before(const telemetry::Span& a, const telemetry::Span& b) {
  return std::make_tuple(a.start_ns, -a.end_ns, a.id) <
         std::make_tuple(b.start_ns, -b.end_ns, b.id);
}

}  // namespace

std::size_t TimelineLane::first_ending_at_or_after(std::int64_t t) const {
  return static_cast<std::size_t>(std::lower_bound(max_end.begin(), max_end.end(), t) -
                                  max_end.begin());
}

std::size_t TimelineLane::first_starting_after(std::int64_t t) const {
  return static_cast<std::size_t>(std::upper_bound(start.begin(), start.end(), t) - start.begin());
}

std::size_t TimelineLane::first_starting_at_or_after(std::int64_t t, std::size_t from) const {
  from = std::min(from, start.size());
  return static_cast<std::size_t>(
      std::lower_bound(start.begin() + static_cast<std::ptrdiff_t>(from), start.end(), t) -
      start.begin());
}

void TimelineIndex::clear() {
  rows_.clear();
  states_.clear();
  row_of_.clear();
  lane_of_.clear();
  start_ns_ = end_ns_ = 0;
}

void TimelineIndex::build(const std::vector<telemetry::Span>& spans) {
  clear();
  append(spans, 0);
}

std::size_t TimelineIndex::row_for_track(const telemetry::Track& track) {
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    const telemetry::Track& known = rows_[row].track;
    if (known.kind == track.kind && known.name == track.name && known.device == track.device)
      return row;
  }
  rows_.push_back(TimelineRow{track, {}, 0});
  states_.emplace_back();
  return rows_.size() - 1;
}

int TimelineIndex::row_of_track(const telemetry::Track& track) const {
  for (std::size_t row = 0; row < rows_.size(); ++row)
    if (rows_[row].track == track) return static_cast<int>(row);
  return -1;
}

int TimelineIndex::row_of(std::size_t span_index) const {
  return span_index < row_of_.size() ? row_of_[span_index] : -1;
}

int TimelineIndex::lane_of(std::size_t span_index) const {
  return span_index < lane_of_.size() && row_of_[span_index] >= 0 ? lane_of_[span_index] : -1;
}

void TimelineIndex::place(std::size_t row, const telemetry::Span& span, std::uint32_t index) {
  RowState& state = states_[row];
  while (!state.open_ends.empty() && state.open_ends.back() <= span.start_ns)
    state.open_ends.pop_back();
  const std::size_t depth =
      std::min<std::size_t>(state.open_ends.size(), static_cast<std::size_t>(kMaxLanes - 1));
  state.open_ends.push_back(span.end_ns);
  std::vector<TimelineLane>& lanes = rows_[row].lanes;
  if (lanes.size() <= depth) lanes.resize(depth + 1);
  TimelineLane& lane = lanes[depth];
  const std::int64_t previous_max = lane.max_end.empty() ? span.end_ns : lane.max_end.back();
  lane.start.push_back(span.start_ns);
  lane.end.push_back(span.end_ns);
  lane.max_end.push_back(std::max(previous_max, span.end_ns));
  lane.span.push_back(index);
  row_of_[index] = static_cast<std::int32_t>(row);
  lane_of_[index] = static_cast<std::uint8_t>(depth);
}

void TimelineIndex::rebuild_row(std::size_t row, const std::vector<telemetry::Span>& spans) {
  RowState& state = states_[row];
  std::sort(state.members.begin(), state.members.end(),
            [&](std::uint32_t a, std::uint32_t b) { return sorts_before(spans[a], spans[b]); });
  state.open_ends.clear();
  state.sorted_tail = true;
  rows_[row].lanes.clear();
  for (std::uint32_t index : state.members) place(row, spans[index], index);
}

void TimelineIndex::sort_rows() {
  std::vector<std::size_t> order(rows_.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return track_before(rows_[a].track, rows_[b].track);
  });
  std::vector<std::int32_t> new_position(rows_.size());
  std::vector<TimelineRow> rows;
  std::vector<RowState> states;
  rows.reserve(rows_.size());
  states.reserve(states_.size());
  for (std::size_t position = 0; position < order.size(); ++position) {
    new_position[order[position]] = static_cast<std::int32_t>(position);
    rows.push_back(std::move(rows_[order[position]]));
    states.push_back(std::move(states_[order[position]]));
  }
  rows_ = std::move(rows);
  states_ = std::move(states);
  for (std::int32_t& row : row_of_)
    if (row >= 0) row = new_position[static_cast<std::size_t>(row)];
}

void TimelineIndex::append(const std::vector<telemetry::Span>& spans, std::size_t first) {
  if (first >= spans.size()) return;
  const std::size_t rows_before = rows_.size();
  const bool was_empty = row_of_.empty();
  row_of_.resize(spans.size(), -1);
  lane_of_.resize(spans.size(), 0);
  std::vector<bool> dirty;
  std::size_t cached_row = 0;
  for (std::size_t i = first; i < spans.size(); ++i) {
    const telemetry::Span& span = spans[i];
    // Spans of one row often come in runs; try the previous row before searching.
    std::size_t row = cached_row;
    if (row >= rows_.size() || rows_[row].track.kind != span.track.kind ||
        rows_[row].track.name != span.track.name || rows_[row].track.device != span.track.device)
      row = row_for_track(span.track);
    cached_row = row;
    if (dirty.size() < rows_.size()) dirty.resize(rows_.size(), false);
    RowState& state = states_[row];
    const auto index = static_cast<std::uint32_t>(i);
    if (!state.members.empty() && sorts_before(span, spans[state.members.back()]))
      state.sorted_tail = false;
    state.members.push_back(index);
    ++rows_[row].span_count;
    // Rows built in one go (a file) are sorted once at the end; a live row places its span
    // now unless it arrived out of order.
    if (!was_empty && state.sorted_tail && !dirty[row]) {
      place(row, span, index);
    } else {
      dirty[row] = true;
    }
    if (was_empty && i == first) {
      start_ns_ = span.start_ns;
      end_ns_ = span.end_ns;
    } else {
      start_ns_ = std::min(start_ns_, span.start_ns);
      end_ns_ = std::max(end_ns_, span.end_ns);
    }
  }
  for (std::size_t row = 0; row < dirty.size(); ++row)
    if (dirty[row]) rebuild_row(row, spans);
  if (rows_.size() != rows_before) sort_rows();
}

}  // namespace weft::monitor

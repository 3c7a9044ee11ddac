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
  id_of_.clear();
  position_of_.clear();
  id_by_key_.clear();
  track_of_.clear();
  lane_of_.clear();
  start_ns_ = end_ns_ = 0;
}

void TimelineIndex::build(const std::vector<telemetry::Span>& spans) {
  clear();
  append(spans, 0);
}

std::string TimelineIndex::track_key(const telemetry::Track& track, std::uint32_t process) {
  std::string key = std::to_string(process);
  key += '\x1f';
  key += std::to_string(static_cast<int>(track.kind));
  key += '\x1f';
  key += track.device;
  key += '\x1f';
  key += track.name;
  return key;
}

std::size_t TimelineIndex::row_for_track(const telemetry::Track& track, std::uint32_t process) {
  const auto [found, inserted] =
      id_by_key_.try_emplace(track_key(track, process), static_cast<std::uint32_t>(rows_.size()));
  if (!inserted) return position_of_[found->second];
  rows_.push_back(TimelineRow{track, process, {}, 0});
  states_.emplace_back();
  id_of_.push_back(found->second);
  position_of_.push_back(static_cast<std::uint32_t>(rows_.size() - 1));
  return rows_.size() - 1;
}

int TimelineIndex::row_of_track(const telemetry::Track& track, std::uint32_t process) const {
  const auto found = id_by_key_.find(track_key(track, process));
  return found == id_by_key_.end() ? -1 : static_cast<int>(position_of_[found->second]);
}

int TimelineIndex::row_of(std::size_t span_index) const {
  if (span_index >= track_of_.size() || track_of_[span_index] < 0) return -1;
  return static_cast<int>(position_of_[static_cast<std::size_t>(track_of_[span_index])]);
}

int TimelineIndex::lane_of(std::size_t span_index) const {
  return span_index < lane_of_.size() && track_of_[span_index] >= 0 ? lane_of_[span_index] : -1;
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
  track_of_[index] = static_cast<std::int32_t>(id_of_[row]);
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

void TimelineIndex::sort_new_rows(std::size_t rows_before) {
  auto before = [this](std::size_t a, std::size_t b) {
    if (rows_[a].process != rows_[b].process) return rows_[a].process < rows_[b].process;
    return track_before(rows_[a].track, rows_[b].track);
  };
  // The old rows are in order already: sort the new ones and merge, O(rows) moves.
  std::vector<std::size_t> added(rows_.size() - rows_before);
  std::iota(added.begin(), added.end(), rows_before);
  std::sort(added.begin(), added.end(), before);
  std::vector<std::size_t> order(rows_before);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::size_t> merged(rows_.size());
  std::merge(order.begin(), order.end(), added.begin(), added.end(), merged.begin(), before);
  std::vector<TimelineRow> rows;
  std::vector<RowState> states;
  std::vector<std::uint32_t> ids;
  rows.reserve(rows_.size());
  states.reserve(states_.size());
  ids.reserve(id_of_.size());
  for (std::size_t from : merged) {
    rows.push_back(std::move(rows_[from]));
    states.push_back(std::move(states_[from]));
    ids.push_back(id_of_[from]);
  }
  rows_ = std::move(rows);
  states_ = std::move(states);
  id_of_ = std::move(ids);
  for (std::size_t position = 0; position < id_of_.size(); ++position)
    position_of_[id_of_[position]] = static_cast<std::uint32_t>(position);
}

void TimelineIndex::append(const std::vector<telemetry::Span>& spans, std::size_t first,
                           const std::vector<std::uint32_t>* processes) {
  if (first >= spans.size()) return;
  const std::size_t rows_before = rows_.size();
  const bool was_empty = track_of_.empty();
  track_of_.resize(spans.size(), -1);
  lane_of_.resize(spans.size(), 0);
  std::vector<bool> dirty;
  std::size_t cached_row = 0;
  for (std::size_t i = first; i < spans.size(); ++i) {
    const telemetry::Span& span = spans[i];
    const std::uint32_t process =
        processes && i < processes->size() ? (*processes)[i] : std::uint32_t{0};
    // Spans of one row often come in runs; try the previous row before hashing.
    std::size_t row = cached_row;
    if (row >= rows_.size() || rows_[row].process != process ||
        rows_[row].track.kind != span.track.kind || rows_[row].track.name != span.track.name ||
        rows_[row].track.device != span.track.device)
      row = row_for_track(span.track, process);
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
  if (rows_.size() != rows_before) sort_new_rows(rows_before);
}

}  // namespace weft::monitor

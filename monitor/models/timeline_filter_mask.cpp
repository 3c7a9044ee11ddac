#include "timeline_filter_mask.h"

namespace weft::monitor {

void TimelineFilterMask::clear() {
  active_ = false;
  match_.clear();
  prefix_.clear();
  total_ = 0;
}

void TimelineFilterMask::build(const TimelineIndex& index,
                               const std::vector<telemetry::Span>& spans,
                               const SpanFilter& filter) {
  clear();
  if (!filter.active()) return;
  active_ = true;
  match_.resize(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    match_[i] = filter.matches(spans[i]) ? 1 : 0;
    total_ += match_[i];
  }
  prefix_.resize(index.rows().size());
  for (std::size_t row = 0; row < index.rows().size(); ++row) {
    const auto& lanes = index.rows()[row].lanes;
    prefix_[row].resize(lanes.size());
    for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
      std::vector<std::uint32_t>& counts = prefix_[row][lane];
      counts.resize(lanes[lane].size() + 1);
      counts[0] = 0;
      for (std::size_t p = 0; p < lanes[lane].size(); ++p)
        counts[p + 1] = counts[p] + match_[lanes[lane].span[p]];
    }
  }
}

bool TimelineFilterMask::matches(std::size_t span_index) const {
  return !active_ || (span_index < match_.size() && match_[span_index] != 0);
}

std::size_t TimelineFilterMask::matching(std::size_t row, std::size_t lane, std::size_t first,
                                         std::size_t count) const {
  if (!active_) return count;
  if (row >= prefix_.size() || lane >= prefix_[row].size()) return 0;
  const std::vector<std::uint32_t>& counts = prefix_[row][lane];
  if (first + count >= counts.size()) return 0;
  return counts[first + count] - counts[first];
}

}  // namespace weft::monitor

// Which spans the active filter matches, arranged for the timeline: a flag per span and, per
// lane, a running count, so a density block of thousands of spans knows in O(1) how many of
// them match (and is dimmed or hidden when none does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "span_filter.h"
#include "timeline_index.h"

namespace weft::monitor {

class TimelineFilterMask {
 public:
  void build(const TimelineIndex& index, const std::vector<telemetry::Span>& spans,
             const SpanFilter& filter);
  void clear();

  // False when no filter is set: everything matches.
  bool active() const { return active_; }
  bool matches(std::size_t span_index) const;
  // How many of the lane's spans at positions [first, first + count) match.
  std::size_t matching(std::size_t row, std::size_t lane, std::size_t first,
                       std::size_t count) const;
  std::size_t total_matching() const { return total_; }

 private:
  bool active_ = false;
  std::vector<std::uint8_t> match_;
  std::vector<std::vector<std::vector<std::uint32_t>>> prefix_;  // [row][lane][position + 1]
  std::size_t total_ = 0;
};

}  // namespace weft::monitor

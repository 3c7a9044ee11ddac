// The timeline's rows and their spans, arranged for drawing a million spans quickly: each row
// splits into lanes by nesting depth (a compile above its phases), and each lane keeps its
// spans sorted by start with a running maximum of their ends, so the spans overlapping any
// time range are found by binary search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor {

struct TimelineLane {
  // Parallel arrays, sorted by start (then longer first, then id).
  std::vector<std::int64_t> start;
  std::vector<std::int64_t> end;
  std::vector<std::int64_t> max_end;  // max_end[i] = max(end[0..i]): non-decreasing
  std::vector<std::uint32_t> span;    // index into the trace's spans

  std::size_t size() const { return span.size(); }
  // The first position whose span may end at or after `t` (every earlier one ends before).
  std::size_t first_ending_at_or_after(std::int64_t t) const;
  // The first position whose span starts after `t`.
  std::size_t first_starting_after(std::int64_t t) const;
  // The first position at or after `from` whose span starts at or after `t`.
  std::size_t first_starting_at_or_after(std::int64_t t, std::size_t from) const;
};

struct TimelineRow {
  telemetry::Track track;
  // The process whose row this is: 0 in a trace file; in a live session, the program's
  // index in TraceDocument::processes(). Rows sort by process first.
  std::uint32_t process = 0;
  std::vector<TimelineLane> lanes;  // lane 0 holds the outermost spans
  std::size_t span_count = 0;
};

class TimelineIndex {
 public:
  // Deeper nesting than this shares the last lane (drawn overlapping, still found and counted).
  static constexpr int kMaxLanes = 8;

  // Indexes every span of `spans` from scratch.
  void build(const std::vector<telemetry::Span>& spans);
  // Adds spans[first..] (spans before `first` are indexed already). Rows that receive a span
  // starting before their latest one are rebuilt; new tracks take their place in the order.
  // `processes` (optional, parallel to `spans`): the process of each span's row (0 without).
  // Costs O(new spans + rows): a track is found by hashing, never by scanning the rows.
  void append(const std::vector<telemetry::Span>& spans, std::size_t first,
              const std::vector<std::uint32_t>* processes = nullptr);
  void clear();

  const std::vector<TimelineRow>& rows() const { return rows_; }
  // The row and lane of spans[index]; -1 for a span not indexed.
  int row_of(std::size_t span_index) const;
  int lane_of(std::size_t span_index) const;
  int row_of_track(const telemetry::Track& track, std::uint32_t process = 0) const;

  // Earliest start and latest end over all spans (0, 0 when empty).
  std::int64_t start_ns() const { return start_ns_; }
  std::int64_t end_ns() const { return end_ns_; }
  std::size_t span_count() const { return track_of_.size(); }

 private:
  struct RowState {
    std::vector<std::uint32_t> members;   // every span of the row, in arrival order
    std::vector<std::int64_t> open_ends;  // ends of the spans enclosing the latest one
    bool sorted_tail = true;              // the latest span sorts after every other one
  };

  // A row's identity (process, kind, device, name) as one hashable string.
  static std::string track_key(const telemetry::Track& track, std::uint32_t process);

  void place(std::size_t row, const telemetry::Span& span, std::uint32_t index);
  void rebuild_row(std::size_t row, const std::vector<telemetry::Span>& spans);
  std::size_t row_for_track(const telemetry::Track& track, std::uint32_t process);
  // Puts the rows added since `rows_before` (appended unsorted) into display order.
  void sort_new_rows(std::size_t rows_before);

  std::vector<TimelineRow> rows_;  // in display order
  std::vector<RowState> states_;   // parallel to rows_
  // Rows keep a stable id from their creation, so reordering rows never touches the spans:
  // row_of(span) = position_of_[track_of_[span]].
  std::vector<std::uint32_t> id_of_;        // [display row] = stable id
  std::vector<std::uint32_t> position_of_;  // [stable id] = display row
  std::unordered_map<std::string, std::uint32_t> id_by_key_;
  std::vector<std::int32_t> track_of_;  // [span] = stable id of its row, -1 when not indexed
  std::vector<std::uint8_t> lane_of_;
  std::int64_t start_ns_ = 0;
  std::int64_t end_ns_ = 0;
};

}  // namespace weft::monitor

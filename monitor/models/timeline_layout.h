// Where the timeline's rows go vertically, grouped: per process (when a live session shows
// several programs), per thread kind (host threads, device queues, runtime threads, callback
// threads, the cache writer) and, where a kind has several rows on each of several devices,
// per device. Each group has a header line that collapses it; collapsed groups hide their
// rows. Building costs O(rows); finding the lines in view is a binary search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "timeline_index.h"

namespace weft::monitor {

struct TimelineLine {
  enum class Type { group, row };
  Type type = Type::row;
  int depth = 0;              // nesting: 0 outermost
  std::size_t row = 0;        // a row line's row; a group's first row
  std::size_t row_count = 0;  // a group's rows, shown or not
  std::string key;            // a group's identity ("p0/k1/dcpu:0"), kept across rebuilds
  std::string title;          // a group's title
  bool collapsed = false;     // a group's state
  int top = 0;                // content y
  int height = 0;
};

class TimelineLayout {
 public:
  static constexpr int kGroupHeight = 20;

  // `process_names[p]` titles process p's group (shown only when the rows hold several
  // processes); `collapsed` holds the keys of collapsed groups; `row_height` gives a row's
  // height in pixels.
  void build(const std::vector<TimelineRow>& rows, const std::vector<std::string>& process_names,
             const std::set<std::string>& collapsed,
             const std::function<int(std::size_t)>& row_height);

  const std::vector<TimelineLine>& lines() const { return lines_; }
  int height() const { return height_; }
  // A row's top in content y; -1 while a collapsed group hides it.
  int rowTop(std::size_t row) const;
  // The line at content y, if any.
  std::optional<std::size_t> lineAt(int y) const;
  // Lines [first, end) overlapping content y in [y0, y1].
  std::pair<std::size_t, std::size_t> linesBetween(int y0, int y1) const;
  // The keys of the groups holding `row`, outermost first (to expand them to reveal it).
  std::vector<std::string> groupsOf(std::size_t row) const;

 private:
  std::vector<TimelineLine> lines_;
  std::vector<int> row_top_;
  std::vector<std::vector<std::string>> row_groups_;
  int height_ = 0;
};

// The title of a thread kind's group ("Device queues").
const char* track_group_title(int group);

}  // namespace weft::monitor

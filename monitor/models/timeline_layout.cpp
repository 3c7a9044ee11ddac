#include "timeline_layout.h"

#include <algorithm>
#include <map>

#include "track_order.h"

namespace weft::monitor {

const char* track_group_title(int group) {
  switch (group) {
    case 0:
      return "Host threads";
    case 1:
      return "Device queues";
    case 2:
      return "Runtime threads";
    case 3:
      return "Callback threads";
    case 4:
      return "Cache writer";
    default:
      return "Other";
  }
}

void TimelineLayout::build(const std::vector<TimelineRow>& rows,
                           const std::vector<std::string>& process_names,
                           const std::set<std::string>& collapsed,
                           const std::function<int(std::size_t)>& row_height) {
  lines_.clear();
  row_top_.assign(rows.size(), -1);
  row_groups_.assign(rows.size(), {});
  height_ = 0;
  // Rows come sorted by process, kind group, device: groups are runs. A kind group splits by
  // device only when it holds several devices and some device has several rows there (one
  // queue per device needs no header of its own).
  bool several_processes = false;
  std::map<std::pair<std::uint32_t, int>, std::map<std::string, std::size_t>> devices;
  for (const TimelineRow& row : rows) {
    several_processes |= row.process != rows.front().process;
    if (!row.track.device.empty())
      ++devices[{row.process, track_group(row.track.kind)}][row.track.device];
  }
  std::set<std::pair<std::uint32_t, int>> split_by_device;
  for (const auto& [group, rows_per_device] : devices) {
    std::size_t most = 0;
    for (const auto& [device, count] : rows_per_device) most = std::max(most, count);
    if (rows_per_device.size() > 1 && most > 1) split_by_device.insert(group);
  }

  struct Open {
    std::string key;
    std::size_t line;
  };
  std::vector<Open> open;  // the groups the current row is in, outermost first
  int hidden_below = -1;   // depth of the outermost collapsed open group, -1 when none
  int y = 0;
  auto open_group = [&](std::size_t depth, std::string key, std::string title, std::size_t row) {
    while (open.size() > depth) open.pop_back();
    if (hidden_below >= static_cast<int>(depth)) hidden_below = -1;
    const bool is_collapsed = collapsed.count(key) > 0;
    std::size_t line = lines_.size();
    if (hidden_below < 0) {
      TimelineLine header;
      header.type = TimelineLine::Type::group;
      header.depth = static_cast<int>(depth);
      header.row = row;
      header.key = key;
      header.title = std::move(title);
      header.collapsed = is_collapsed;
      header.top = y;
      header.height = kGroupHeight;
      y += kGroupHeight + 1;
      lines_.push_back(std::move(header));
    } else {
      line = SIZE_MAX;  // inside a collapsed group: no header, nothing counted on screen
    }
    if (is_collapsed && hidden_below < 0) hidden_below = static_cast<int>(depth);
    open.push_back({std::move(key), line});
  };

  for (std::size_t r = 0; r < rows.size(); ++r) {
    const TimelineRow& row = rows[r];
    const int group = track_group(row.track.kind);
    std::vector<std::pair<std::string, std::string>> path;  // (key, title)
    std::string key;
    if (several_processes) {
      key = "p" + std::to_string(row.process);
      path.emplace_back(key, row.process < process_names.size()
                                 ? process_names[row.process]
                                 : "process " + std::to_string(row.process + 1));
    }
    key += (key.empty() ? "k" : "/k") + std::to_string(group);
    path.emplace_back(key, track_group_title(group));
    if (!row.track.device.empty() && split_by_device.count({row.process, group}) > 0) {
      key += "/d" + row.track.device;
      path.emplace_back(key, row.track.device);
    }
    // Open the groups this row enters; groups it shares with the previous row stay open.
    std::size_t shared = 0;
    while (shared < open.size() && shared < path.size() && open[shared].key == path[shared].first)
      ++shared;
    for (std::size_t depth = shared; depth < path.size(); ++depth)
      open_group(depth, path[depth].first, path[depth].second, r);
    while (open.size() > path.size()) open.pop_back();
    for (const Open& group_open : open) {
      row_groups_[r].push_back(group_open.key);
      if (group_open.line != SIZE_MAX) ++lines_[group_open.line].row_count;
    }
    if (hidden_below >= 0) continue;
    TimelineLine line;
    line.type = TimelineLine::Type::row;
    line.depth = static_cast<int>(path.size());
    line.row = r;
    line.top = y;
    line.height = row_height(r);
    row_top_[r] = y;
    y += line.height + 1;
    lines_.push_back(std::move(line));
  }
  height_ = y;
}

int TimelineLayout::rowTop(std::size_t row) const {
  return row < row_top_.size() ? row_top_[row] : -1;
}

std::optional<std::size_t> TimelineLayout::lineAt(int y) const {
  auto after =
      std::upper_bound(lines_.begin(), lines_.end(), y,
                       [](int value, const TimelineLine& line) { return value < line.top; });
  if (after == lines_.begin()) return std::nullopt;
  const auto index = static_cast<std::size_t>(after - lines_.begin() - 1);
  const TimelineLine& line = lines_[index];
  if (y >= line.top + line.height) return std::nullopt;
  return index;
}

std::pair<std::size_t, std::size_t> TimelineLayout::linesBetween(int y0, int y1) const {
  auto by_top = [](int value, const TimelineLine& line) { return value < line.top; };
  auto first = std::upper_bound(lines_.begin(), lines_.end(), y0, by_top);
  if (first != lines_.begin()) --first;
  const auto end = std::upper_bound(first, lines_.end(), y1, by_top);
  return {static_cast<std::size_t>(first - lines_.begin()),
          static_cast<std::size_t>(end - lines_.begin())};
}

std::vector<std::string> TimelineLayout::groupsOf(std::size_t row) const {
  return row < row_groups_.size() ? row_groups_[row] : std::vector<std::string>{};
}

}  // namespace weft::monitor

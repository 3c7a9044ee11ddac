// Perfetto's rule for the complete ("X") slices of one thread in Chrome trace-event JSON: a
// slice either lies inside the slice open when it starts or starts after that one ends.
// Perfetto drops a slice that breaks it, so an export must have none.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace weft::testing {

// The slices of `document` that start inside another slice of their thread and end after it.
inline std::size_t partial_overlaps(const nlohmann::json& document) {
  // Nanoseconds, as Perfetto reads the microsecond times back.
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> by_thread;
  for (const nlohmann::json& e : document.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const std::int64_t start = std::llround(e.at("ts").get<double>() * 1000.0);
    const std::int64_t end = start + std::llround(e.at("dur").get<double>() * 1000.0);
    by_thread[{e.at("pid").get<int>(), e.at("tid").get<int>()}].emplace_back(start, -end);
  }
  std::size_t overlaps = 0;
  for (auto& [thread, slices] : by_thread) {
    std::sort(slices.begin(), slices.end());  // by start, the longer first
    std::vector<std::int64_t> open_ends;
    for (const auto& [start, negative_end] : slices) {
      const std::int64_t end = -negative_end;
      while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) {
        ++overlaps;
        continue;
      }
      open_ends.push_back(end);
    }
  }
  return overlaps;
}

}  // namespace weft::testing

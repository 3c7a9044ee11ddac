#include "track_order.h"

#include <cctype>

namespace weft::monitor {

namespace {

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

int natural_compare(std::string_view a, std::string_view b) {
  // Equal numbers written differently ("007", "7") order by their digits' count, so that only
  // equal texts compare equal.
  int tie = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t a_end = i, b_end = j;
      while (a_end < a.size() && is_digit(a[a_end])) ++a_end;
      while (b_end < b.size() && is_digit(b[b_end])) ++b_end;
      // Leading zeros carry no value: compare the significant digits by length, then text.
      std::size_t a_start = i, b_start = j;
      while (a_start + 1 < a_end && a[a_start] == '0') ++a_start;
      while (b_start + 1 < b_end && b[b_start] == '0') ++b_start;
      const std::size_t a_len = a_end - a_start, b_len = b_end - b_start;
      if (a_len != b_len) return a_len < b_len ? -1 : 1;
      if (int c = a.substr(a_start, a_len).compare(b.substr(b_start, b_len)); c != 0)
        return c < 0 ? -1 : 1;
      if (tie == 0 && a_end - i != b_end - j) tie = a_end - i < b_end - j ? -1 : 1;
      i = a_end;
      j = b_end;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  return tie;
}

int track_group(telemetry::TrackKind kind) {
  switch (kind) {
    case telemetry::TrackKind::host_thread:
      return 0;
    case telemetry::TrackKind::queue:
      return 1;
    case telemetry::TrackKind::runtime:
      return 2;
    case telemetry::TrackKind::callback:
      return 3;
    case telemetry::TrackKind::cache_writer:
      return 4;
  }
  return 5;
}

bool track_before(const telemetry::Track& a, const telemetry::Track& b) {
  const int group_a = track_group(a.kind), group_b = track_group(b.kind);
  if (group_a != group_b) return group_a < group_b;
  if (int c = natural_compare(a.device, b.device); c != 0) return c < 0;
  return natural_compare(a.name, b.name) < 0;
}

}  // namespace weft::monitor

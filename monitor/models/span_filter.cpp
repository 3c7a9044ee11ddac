#include "span_filter.h"

#include <algorithm>
#include <cctype>

namespace weft::monitor {

std::string_view span_device(const telemetry::Span& span) {
  if (const std::string* device = span.arg("device"); device && !device->empty()) return *device;
  return span.track.device;
}

bool contains_ignoring_case(std::string_view text, std::string_view needle) {
  if (needle.empty()) return true;
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

bool SpanFilter::active() const {
  return !name.empty() || !device.empty() || !effect.empty() || from_ns || to_ns;
}

bool SpanFilter::matches(const telemetry::Span& span) const {
  if (from_ns && span.end_ns < *from_ns) return false;
  if (to_ns && span.start_ns > *to_ns) return false;
  if (!effect.empty() && span.effect != effect) return false;
  if (!device.empty() && span_device(span) != device) return false;
  return contains_ignoring_case(span.name, name);
}

}  // namespace weft::monitor

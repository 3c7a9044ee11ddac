// std::string_view to QString (UTF-8), for the models' display text.
#pragma once

#include <QString>
#include <cstddef>
#include <string_view>

namespace weft::monitor {

inline QString to_qstring(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// Names (spans, rows, effects, devices) come from untrusted traces and may be megabytes long;
// every view shows at most this many bytes of one, so laying text out never grows with a
// name's length.
inline constexpr std::size_t kMaxShownNameBytes = 240;

// Argument values (shapes, fused op lists) may be longer than names, still bounded.
inline constexpr std::size_t kMaxShownValueBytes = 4096;

// The first `max_bytes` of `text` (cut at a UTF-8 character boundary) and "…" when it is
// longer; the whole text otherwise.
QString display_text(std::string_view text, std::size_t max_bytes);
inline QString display_name(std::string_view name) {
  return display_text(name, kMaxShownNameBytes);
}

}  // namespace weft::monitor

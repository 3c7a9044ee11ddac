#include "weft/telemetry/record.h"

#include <array>

namespace weft::telemetry {

namespace {

// The file format's names: never rename one (old traces must still read).
constexpr std::array<std::string_view, kSpanKindCount> kSpanKindNames = {
    "dispatch", "kernel",        "transfer",     "loop_iteration", "predicate_read", "callback",
    "compile",  "compile_phase", "cache_lookup", "cache_store",    "barrier_wait",   "array_wait"};
constexpr std::array<std::string_view, kTrackKindCount> kTrackKindNames = {
    "host_thread", "queue", "callback", "runtime", "cache_writer"};

template <typename Enum, std::size_t N>
std::optional<Enum> parse(std::string_view text, const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Enum>(i);
  return std::nullopt;
}

}  // namespace

std::string_view to_string(SpanKind kind) {
  return kSpanKindNames.at(static_cast<std::size_t>(kind));
}

std::string_view to_string(TrackKind kind) {
  return kTrackKindNames.at(static_cast<std::size_t>(kind));
}

std::optional<SpanKind> parse_span_kind(std::string_view text) {
  return parse<SpanKind>(text, kSpanKindNames);
}

std::optional<TrackKind> parse_track_kind(std::string_view text) {
  return parse<TrackKind>(text, kTrackKindNames);
}

const std::string* Span::arg(std::string_view key) const {
  for (const auto& [k, v] : args)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace weft::telemetry

// Did the effects run in program order? Callbacks are grouped into streams by the host thread
// that dispatched them and their effect; each stream lists its callbacks in program order
// (seq) beside the same callbacks in execution order (start time). Where the two differ an
// ordered effect ran out of order, a bug; an unordered one merely did what it may.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor {

// Which callbacks to look at: all, those of one dispatch, those starting in a time range.
struct EffectOrderScope {
  std::optional<telemetry::Id> dispatch;
  std::optional<std::int64_t> from_ns;
  std::optional<std::int64_t> to_ns;
};

struct EffectStream {
  std::string thread;  // the dispatching host thread's row
  std::string effect;  // the effect's name (a callback's own name when it has none)
  bool ordered = true;
  std::vector<std::uint32_t> program_order;    // span indices by seq
  std::vector<std::uint32_t> execution_order;  // the same spans by start time
  std::vector<bool> differs;                   // per position: the two columns disagree
  // Callbacks that would have to move to restore program order (length minus the longest
  // run of execution order that is in program order): 1 for a swapped pair.
  std::size_t out_of_order = 0;
  std::size_t positions_differing = 0;

  std::size_t size() const { return program_order.size(); }
  // "print: 120 effects, in program order", "print: 120 effects, 1 out of order", ...
  std::string summary() const;
};

// Streams sorted by thread then effect.
// A callback's place in program order as people read it: "3.12" is the 12th host step of its
// thread's 3rd dispatch (Span::seq packs the two, see docs/telemetry.md).
std::string format_program_position(std::int64_t seq);

std::vector<EffectStream> analyze_effect_order(const std::vector<telemetry::Span>& spans,
                                               const EffectOrderScope& scope = {});

}  // namespace weft::monitor

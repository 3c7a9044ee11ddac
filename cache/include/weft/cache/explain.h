// Why a lookup missed, as `weft cache explain` and the monitor's cache view show it: the miss
// remembered in the database, whether the key is stored since, and the nearest entries with
// the key components they differ in.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "weft/cache/store.h"

namespace weft::cache {

struct MissExplanation {
  RecentMiss miss;
  bool now_cached = false;  // the key has an entry now (stored after the miss)
  // Other keys stored before the miss (at most 4), fewest differing components first; empty
  // for a first compile.
  std::vector<ExplainCandidate> nearest;
};

// The `limit` latest misses of every process, newest first.
std::vector<MissExplanation> explain_recent_misses(ProgramStore& store, std::size_t limit = 10);
// The latest remembered miss of `key`, explained; nullopt when the database has none (only the
// latest kRecentMissesKept misses are kept).
std::optional<MissExplanation> explain_miss(ProgramStore& store, const std::string& key);

// "2026-11-22 18:37:02  f  0123456789ab  not_found on DEVICE (PLATFORM)" and one indented line
// per nearest entry, newline-terminated: `weft cache explain`'s text.
std::string format_explanation(const MissExplanation& explanation);
// "2026-11-22 18:37:02" in local time.
std::string format_local_time(double epoch_seconds);

}  // namespace weft::cache

#include "weft/cache/explain.h"

#include <ctime>
#include <limits>

namespace weft::cache {

namespace {

constexpr std::size_t kNearestShown = 4;

MissExplanation explain(ProgramStore& store, RecentMiss miss) {
  MissExplanation out;
  out.now_cached = store.show(miss.key).has_value();
  // Only an entry that existed when the lookup missed can tell why it missed: one stored
  // since (the missed key's own, or a neighbour compiled later) was not there to be hit, and a
  // miss with no such entry was a first compile. So every candidate is asked for, nearest
  // first, and those created at or after the miss are passed over.
  for (auto& candidate : store.explain(miss.components, std::numeric_limits<std::size_t>::max())) {
    if (out.nearest.size() == kNearestShown) break;
    if (candidate.entry.key != miss.key && candidate.entry.created < miss.time)
      out.nearest.push_back(std::move(candidate));
  }
  out.miss = std::move(miss);
  return out;
}

std::string device_of(const StoredComponents& c) {
  return c.device_name + " (" + c.platform_name + ")";
}

}  // namespace

std::vector<MissExplanation> explain_recent_misses(ProgramStore& store, std::size_t limit) {
  std::vector<MissExplanation> out;
  for (RecentMiss& miss : store.recent_misses(limit))
    out.push_back(explain(store, std::move(miss)));
  return out;
}

std::optional<MissExplanation> explain_miss(ProgramStore& store, const std::string& key) {
  for (RecentMiss& miss : store.recent_misses(kRecentMissesKept))
    if (miss.key == key) return explain(store, std::move(miss));
  return std::nullopt;
}

std::string format_local_time(double epoch_seconds) {
  const auto seconds = static_cast<std::time_t>(epoch_seconds);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

std::string format_explanation(const MissExplanation& e) {
  std::string text = format_local_time(e.miss.time) + "  " + e.miss.components.function_name +
                     "  " + e.miss.key.substr(0, 12) + "  " +
                     std::string(to_string(e.miss.reason)) + " on " + device_of(e.miss.components) +
                     (e.now_cached ? "  (stored since)" : "") + "\n";
  if (e.nearest.empty()) return text + "    no entry of the same function or IR: a first compile\n";
  for (const ExplainCandidate& n : e.nearest) {
    std::string differing;
    for (const std::string& d : n.differing) differing += (differing.empty() ? "" : ", ") + d;
    text += "    nearest " + n.entry.key.substr(0, 12) + " (" + n.entry.components.function_name +
            ") differs in: " + (differing.empty() ? "nothing (the same key)" : differing) + "\n";
  }
  return text;
}

}  // namespace weft::cache

#include "effect_order.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "track_order.h"

namespace weft::monitor {

namespace {

std::string plural(std::size_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// Length of the longest strictly increasing subsequence (patience sorting).
std::size_t longest_increasing_run(const std::vector<std::int64_t>& values) {
  std::vector<std::int64_t> tails;
  for (std::int64_t value : values) {
    auto at = std::lower_bound(tails.begin(), tails.end(), value);
    if (at == tails.end())
      tails.push_back(value);
    else
      *at = value;
  }
  return tails.size();
}

}  // namespace

std::string EffectStream::summary() const {
  std::string text = effect + ": " + plural(size(), "effect", "effects") + ", ";
  if (ordered) {
    if (out_of_order == 0) return text + "in program order";
    return text + std::to_string(out_of_order) + " out of order";
  }
  if (positions_differing == 0) return text + "unordered, ran in program order";
  return text + "unordered, " + plural(out_of_order, "ran", "ran") +
         " out of program order (allowed for an unordered effect)";
}

std::vector<EffectStream> analyze_effect_order(const std::vector<telemetry::Span>& spans,
                                               const EffectOrderScope& scope) {
  std::map<std::tuple<std::string, std::string, bool>, EffectStream> streams;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const telemetry::Span& span = spans[i];
    if (span.kind != telemetry::SpanKind::callback) continue;
    if (scope.dispatch && span.parent != *scope.dispatch) continue;
    if (scope.from_ns && span.start_ns < *scope.from_ns) continue;
    if (scope.to_ns && span.start_ns > *scope.to_ns) continue;
    const std::string* thread = span.arg("thread");
    const std::string* ordered = span.arg("ordered");
    const bool is_ordered = ordered ? *ordered == "true" : !span.effect.empty();
    std::string effect = span.effect.empty() ? span.name : span.effect;
    auto key = std::make_tuple(thread ? *thread : std::string(), effect, is_ordered);
    EffectStream& stream = streams[key];
    if (stream.program_order.empty()) {
      stream.thread = std::get<0>(key);
      stream.effect = std::move(effect);
      stream.ordered = is_ordered;
    }
    stream.program_order.push_back(static_cast<std::uint32_t>(i));
  }

  std::vector<EffectStream> result;
  result.reserve(streams.size());
  for (auto& [key, stream] : streams) {
    auto seq_order = [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(spans[a].seq, spans[a].id) < std::tie(spans[b].seq, spans[b].id);
    };
    auto start_order = [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(spans[a].start_ns, spans[a].seq, spans[a].id) <
             std::tie(spans[b].start_ns, spans[b].seq, spans[b].id);
    };
    stream.execution_order = stream.program_order;
    std::sort(stream.program_order.begin(), stream.program_order.end(), seq_order);
    std::sort(stream.execution_order.begin(), stream.execution_order.end(), start_order);
    stream.differs.resize(stream.size());
    std::vector<std::int64_t> executed_seqs;
    executed_seqs.reserve(stream.size());
    for (std::size_t p = 0; p < stream.size(); ++p) {
      stream.differs[p] = stream.program_order[p] != stream.execution_order[p];
      if (stream.differs[p]) ++stream.positions_differing;
      executed_seqs.push_back(spans[stream.execution_order[p]].seq);
    }
    stream.out_of_order = stream.size() - longest_increasing_run(executed_seqs);
    result.push_back(std::move(stream));
  }
  std::stable_sort(result.begin(), result.end(), [](const EffectStream& a, const EffectStream& b) {
    if (int c = natural_compare(a.thread, b.thread); c != 0) return c < 0;
    return natural_compare(a.effect, b.effect) < 0;
  });
  return result;
}

std::string format_program_position(std::int64_t seq) {
  if (seq < 0) return "-";
  return std::to_string(seq >> 32) + "." + std::to_string(seq & 0xffffffff);
}

}  // namespace weft::monitor

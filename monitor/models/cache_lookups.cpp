#include "cache_lookups.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weft::monitor {

std::vector<std::uint32_t> cache_lookup_spans(const std::vector<telemetry::Span>& spans) {
  std::vector<std::uint32_t> result;
  for (std::size_t i = 0; i < spans.size(); ++i)
    if (spans[i].kind == telemetry::SpanKind::cache_lookup)
      result.push_back(static_cast<std::uint32_t>(i));
  std::stable_sort(result.begin(), result.end(), [&](std::uint32_t a, std::uint32_t b) {
    return spans[a].start_ns < spans[b].start_ns;
  });
  return result;
}

CacheLookupHistogram histogram_cache_lookups(const std::vector<telemetry::Span>& spans,
                                             const std::vector<std::uint32_t>& lookups,
                                             int bucket_count) {
  CacheLookupHistogram histogram;
  histogram.statuses = {"hit", "miss", "corrupt", "error"};
  bucket_count = std::max(bucket_count, 1);
  histogram.lookups = lookups.size();
  if (lookups.empty()) return histogram;
  std::int64_t first = spans[lookups.front()].start_ns, last = first;
  for (std::uint32_t index : lookups) {
    first = std::min(first, spans[index].start_ns);
    last = std::max(last, spans[index].start_ns);
  }
  histogram.start_ns = first;
  // Ceiling division: the last lookup falls into the last bucket, never past it.
  histogram.bucket_ns = std::max<std::int64_t>(1, (last - first) / bucket_count + 1);
  histogram.counts.assign(static_cast<std::size_t>(bucket_count), {});
  for (std::uint32_t index : lookups) {
    const telemetry::Span& span = spans[index];
    const std::string* status_arg = span.arg("status");
    const std::string status = status_arg && !status_arg->empty() ? *status_arg : "unknown";
    auto column = std::find(histogram.statuses.begin(), histogram.statuses.end(), status);
    if (column == histogram.statuses.end()) {
      histogram.statuses.push_back(status);
      column = histogram.statuses.end() - 1;
    }
    const auto column_index = static_cast<std::size_t>(column - histogram.statuses.begin());
    const auto bucket = static_cast<std::size_t>(
        std::min<std::int64_t>((span.start_ns - first) / histogram.bucket_ns, bucket_count - 1));
    std::vector<std::size_t>& counts = histogram.counts[bucket];
    if (counts.size() <= column_index) counts.resize(histogram.statuses.size(), 0);
    ++counts[column_index];
    ++histogram.totals[status];
  }
  for (std::vector<std::size_t>& counts : histogram.counts)
    counts.resize(histogram.statuses.size(), 0);
  return histogram;
}

BucketLabels bucket_labels(const CacheLookupHistogram& histogram) {
  BucketLabels result;
  const std::size_t buckets = histogram.counts.size();
  if (buckets == 0) return result;
  // One unit for the whole axis: the one the latest bucket start reads best in.
  const double last = static_cast<double>(histogram.start_ns) +
                      static_cast<double>(histogram.bucket_ns) * static_cast<double>(buckets - 1);
  struct Unit {
    double ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}};
  Unit unit = kUnits[3];
  for (const Unit& candidate : kUnits) {
    if (std::fabs(last) >= candidate.ns) {
      unit = candidate;
      break;
    }
  }
  result.unit = unit.name;
  // Buckets at least 10^-decimals units apart round to different texts.
  const double width = static_cast<double>(std::max<std::int64_t>(1, histogram.bucket_ns));
  const int decimals =
      std::clamp(static_cast<int>(std::ceil(std::log10(unit.ns / width) - 1e-9)), 0, 9);
  for (std::size_t b = 0; b < buckets; ++b) {
    const double start = static_cast<double>(histogram.start_ns) +
                         static_cast<double>(histogram.bucket_ns) * static_cast<double>(b);
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, start / unit.ns);
    result.labels.emplace_back(text);
  }
  return result;
}

}  // namespace weft::monitor

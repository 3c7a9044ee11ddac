// The persistent cache as the trace saw it: every cache_lookup span (hit, miss, corrupt,
// error) and their counts per status over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor {

struct CacheLookupHistogram {
  std::int64_t start_ns = 0;
  std::int64_t bucket_ns = 1;
  // Column order: hit, miss, corrupt, error, then any other status the trace names.
  std::vector<std::string> statuses;
  std::vector<std::vector<std::size_t>> counts;  // [bucket][status]
  std::map<std::string, std::size_t> totals;     // lookups per status
  std::size_t lookups = 0;
};

// Indices of the cache_lookup spans, in start order.
std::vector<std::uint32_t> cache_lookup_spans(const std::vector<telemetry::Span>& spans);

// Short, distinct labels of the histogram's buckets (their start times as plain numbers, in
// `unit`: "s", "ms", "µs" or "ns"), so that a narrow chart shows them whole: the decimals
// follow the bucket width, so neighbours never print alike.
struct BucketLabels {
  std::string unit;
  std::vector<std::string> labels;
};
BucketLabels bucket_labels(const CacheLookupHistogram& histogram);

// Counts `lookups` (indices into `spans`) in `bucket_count` equal buckets over their time span.
CacheLookupHistogram histogram_cache_lookups(const std::vector<telemetry::Span>& spans,
                                             const std::vector<std::uint32_t>& lookups,
                                             int bucket_count);

}  // namespace weft::monitor

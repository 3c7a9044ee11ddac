// The primitives real programs lean on, beside JAX on the same CPU and the device's streaming
// bandwidth (the hand-written triad), same shapes as bench/jax_primitives_peer.py:
//
//   embedding gather   4096 rows of a 50,000x512 f32 table   goal >= 0.5x triad GB/s (bytes:
//                      rows read + written, indices read)
//   segment_sum        1M f32 values into 100k segments      goal <= 1.0x JAX CPU time
//   sort               f32[2^20]                             goal <= 1.0x JAX CPU time
//   top_k              k=20 of f32[64, 32000]                goal <= 1.0x JAX CPU time
//   cumsum             f32[2^24]                             goal >= 0.5x triad GB/s (8 B/elem)
//
// (random normal f32[2^24] has its own, bench_random.)
// Each weft result is checked against a host computation (or weft's interpreter) first. JAX's
// figures come from bench/jax_primitives_peer.py as a child process when python3 can import jax.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
using weft::bench::format;
namespace np = weft::np;
namespace lax = weft::lax;

// sort and top_k take a second or more per call on PoCL today: few rounds.
constexpr int kRounds = 5;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_primitives: %s\n", what.c_str());
  std::exit(1);
}

std::map<std::string, double> jax_seconds() {
  return weft::bench::jax_peer_seconds(
      std::string(WEFT_BENCH_SOURCE_DIR) + "/jax_primitives_peer.py", kRounds);
}

}  // namespace

int main() {
  std::printf("bench_primitives on %s\n", weft::bench::device_line().c_str());
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0, 1);

  // Embedding gather.
  const std::int64_t vocab = 50000, width = 512, rows = 4096;
  std::vector<float> table_v(static_cast<std::size_t>(vocab * width));
  for (float& v : table_v) v = normal(rng);
  std::vector<std::int32_t> rows_v(rows);
  std::uniform_int_distribution<std::int32_t> row_of(0, vocab - 1);
  for (auto& r : rows_v) r = row_of(rng);
  const Array table = Array::from_vector<float>({vocab, width}, table_v);
  const Array row_ids = Array::from_vector<std::int32_t>({rows}, rows_v);
  auto gather = weft::jit([](const Array& t, const Array& r) { return np::take(t, r, 0); });
  {
    const std::vector<float> got = gather(table, row_ids).to_vector<float>();
    for (std::int64_t i = 0; i < rows; i += 97)
      for (std::int64_t c = 0; c < width; c += 31)
        if (got[i * width + c] != table_v[rows_v[i] * width + c])
          fail("embedding gather differs at row " + std::to_string(i));
  }

  // segment_sum.
  const std::int64_t values_n = 1 << 20, segments = 100000;
  std::vector<float> values_v(values_n);
  std::vector<std::int32_t> ids_v(values_n);
  std::uniform_int_distribution<std::int32_t> segment_of(0, segments - 1);
  for (std::int64_t i = 0; i < values_n; ++i) {
    values_v[i] = normal(rng);
    ids_v[i] = segment_of(rng);
  }
  const Array values = Array::from_vector<float>({values_n}, values_v);
  const Array ids = Array::from_vector<std::int32_t>({values_n}, ids_v);
  auto segment_sum = weft::jit(
      [segments](const Array& v, const Array& s) { return np::segment_sum(v, s, segments); });
  {
    std::vector<double> want(segments, 0.0);
    for (std::int64_t i = 0; i < values_n; ++i) want[ids_v[i]] += values_v[i];
    const std::vector<float> got = segment_sum(values, ids).to_vector<float>();
    for (std::int64_t s = 0; s < segments; ++s)
      if (std::abs(got[s] - want[s]) > 1e-4 * (1 + std::abs(want[s])))
        fail("segment_sum differs at segment " + std::to_string(s));
  }

  // cumsum.
  const std::int64_t long_n = std::int64_t{1} << 24;
  std::vector<float> long_v(long_n);
  std::uniform_real_distribution<float> unit(0, 1);
  for (float& v : long_v) v = unit(rng);
  const Array long_x = Array::from_vector<float>({long_n}, long_v);
  auto cumsum = weft::jit([](const Array& x) { return lax::cumsum(x, 0); });
  {
    const std::vector<float> got = cumsum(long_x).to_vector<float>();
    double running = 0;
    for (std::int64_t i = 0; i < long_n; ++i) {
      running += long_v[i];
      if ((i & 65535) == 65535 && std::abs(got[i] - running) > 1e-4 * running)
        fail("cumsum differs at " + std::to_string(i));
    }
  }

  // sort and top_k.
  auto sort = weft::jit([](const Array& x) { return lax::sort(x, 0); });
  {
    std::vector<float> want = values_v;
    std::sort(want.begin(), want.end());
    if (sort(values).to_vector<float>() != want) fail("sort differs from std::sort");
  }
  std::vector<float> logits_v(64 * 32000);
  for (float& v : logits_v) v = normal(rng);
  const Array logits = Array::from_vector<float>({64, 32000}, logits_v);
  auto top_k = weft::jit([](const Array& x) { return lax::top_k(x, 20).first; });
  {
    const std::vector<float> got = top_k(logits).to_vector<float>();
    for (int r = 0; r < 64; ++r) {
      std::vector<float> row(logits_v.begin() + r * 32000, logits_v.begin() + (r + 1) * 32000);
      std::partial_sort(row.begin(), row.begin() + 20, row.end(), std::greater<float>());
      for (int k = 0; k < 20; ++k)
        if (got[r * 20 + k] != row[k]) fail("top_k differs in row " + std::to_string(r));
    }
  }

  const weft::bench::TriadResult triad = weft::bench::measure_triad(std::size_t{1} << 24, kRounds);
  const auto samples =
      weft::bench::time_interleaved({
                                        [&] {
                                          for (int i = 0; i < 20; ++i)
                                            gather(table, row_ids).block_until_ready();
                                        },
                                        [&] {
                                          for (int i = 0; i < 10; ++i)
                                            segment_sum(values, ids).block_until_ready();
                                        },
                                        [&] { sort(values).block_until_ready(); },
                                        [&] { top_k(logits).block_until_ready(); },
                                        [&] { cumsum(long_x).block_until_ready(); },
                                    },
                                    1, kRounds);
  const double weft_s[] = {samples[0].median() / 20, samples[1].median() / 10, samples[2].median(),
                           samples[3].median(), samples[4].median()};
  const char* names[] = {"embedding_gather", "segment_sum", "sort", "top_k", "cumsum"};
  const char* titles[] = {"embedding gather 4096 of 50000x512", "segment_sum 1M -> 100k",
                          "sort f32[2^20]", "top_k k=20 of f32[64,32000]", "cumsum f32[2^24]"};
  // Bytes moved, for the bandwidth-bound ones (0: compared by time with JAX).
  const double bytes[] = {2.0 * 4 * rows * width + 4.0 * rows, 0, 0, 0, 8.0 * long_n};
  const std::map<std::string, double> jax = jax_seconds();
  if (jax.empty()) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");

  std::printf("\ntriad (hand-written, same device): %.2f GB/s\n", triad.best_gbps());
  std::printf("\nprogram                              weft ms      JAX ms   weft/JAX\n");
  std::vector<weft::bench::SummaryRow> summary;
  for (int i = 0; i < 5; ++i) {
    const auto found = jax.find(names[i]);
    const double j = found == jax.end() ? -1 : found->second;
    std::printf("%-34s %10.3f  %10.3f   %8.2f\n", titles[i], weft_s[i] * 1e3, j * 1e3,
                j > 0 ? weft_s[i] / j : 0.0);
    if (bytes[i] > 0) {
      const double gbps = bytes[i] / weft_s[i] / 1e9;
      summary.push_back({titles[i], format(gbps, 2) + " GB/s",
                         format(triad.best_gbps(), 2) + " GB/s (triad)",
                         format(gbps / triad.best_gbps(), 2) + "x triad", ">= 0.5x",
                         weft::bench::met(gbps >= 0.5 * triad.best_gbps())});
    } else {
      summary.push_back({std::string(titles[i]) + " vs JAX", format(weft_s[i] * 1e3, 3) + " ms",
                         j > 0 ? format(j * 1e3, 3) + " ms (JAX CPU)" : "JAX not installed",
                         j > 0 ? format(weft_s[i] / j, 2) + "x weft/JAX time" : "n/a", "<= 1.0x",
                         j > 0 ? weft::bench::met(weft_s[i] <= j) : "n/a"});
    }
  }
  weft::bench::print_summary(summary);
  return 0;
}

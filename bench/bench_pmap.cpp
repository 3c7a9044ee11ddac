// pmap over two devices against one device, timed in the same run (interleaved rounds,
// medians, compilation never timed). Needs two devices: run_all.sh runs it with
// POCL_DEVICES="pthread pthread".
//
//   map   y = sqrt(x * x + 1) * 0.5 - x on f32[2, 2^24] (bandwidth-bound: 8 bytes per element),
//         pmap over cpu:0 and cpu:1 (the input split from cpu:0, the result stacked back on
//         cpu:0, as pmap returns it) against jit of the same function on cpu:0 over the whole
//         array. The figure is the speed-up, one device's time / pmap's; with PoCL's CPU
//         devices both devices share the same cores, so it shows pmap's overhead more than a
//         gain.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.h"
#include "weft/transforms/pmap.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
namespace lax = weft::lax;

constexpr std::int64_t kPerDevice = std::int64_t{1} << 24;
constexpr int kRounds = 9;

Array map_fn(const Array& x) {
  return lax::sqrt(x * x + 1.0) * 0.5 - x;
}

}  // namespace

int main() {
  std::printf("bench_pmap on %s\n", weft::bench::device_line().c_str());
  if (weft::devices().size() < 2) {
    std::fprintf(stderr,
                 "bench_pmap: needs two devices; run with POCL_DEVICES=\"pthread pthread\"\n");
    return 1;
  }
  std::vector<float> values(static_cast<std::size_t>(2 * kPerDevice));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000) * 0.01f;
  const Array x = Array::from_vector<float>({2, kPerDevice}, values);
  auto one_device = weft::jit(map_fn);
  const weft::ArrayFunction mapped =
      weft::pmap([](const std::vector<Array>& a) { return std::vector<Array>{map_fn(a[0])}; });
  {
    const std::vector<float> a = one_device(x).to_vector<float>();
    const std::vector<float> b = mapped({x}).at(0).to_vector<float>();
    for (std::size_t i = 0; i < a.size(); i += 4099)
      if (std::abs(a[i] - b[i]) > 1e-5f * (1 + std::abs(a[i]))) {
        std::fprintf(stderr, "bench_pmap: pmap and jit differ at %zu\n", i);
        return 1;
      }
  }
  const auto samples = weft::bench::time_interleaved(
      {[&] { mapped({x}).at(0).block_until_ready(); }, [&] { one_device(x).block_until_ready(); }},
      1, kRounds);
  const double pmap_ms = samples[0].median() * 1e3, one_ms = samples[1].median() * 1e3;
  const double bytes = 8.0 * static_cast<double>(2 * kPerDevice);
  std::printf("\ncontender              median ms   GB/s\n");
  std::printf("pmap over 2 devices  %11.2f %6.1f\n", pmap_ms, bytes / pmap_ms / 1e6);
  std::printf("jit on cpu:0         %11.2f %6.1f\n", one_ms, bytes / one_ms / 1e6);
  weft::bench::print_summary(
      {{"pmap map f32[2,2^24]", format(pmap_ms, 2) + " ms", format(one_ms, 2) + " ms (one device)",
        format(one_ms / pmap_ms, 2) + "x speed-up", "info", "n/a"}});
  return 0;
}

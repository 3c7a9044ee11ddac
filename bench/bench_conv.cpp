// weft beside JAX on the same CPU (issue 29): a 3x3 SAME convolution, batch 32,
// 56x56x64 -> 64, NHWC input, HWIO filter, f32: the forward pass, the input gradient and the
// filter gradient (each the gradient of sum(conv(x, w) * ct), jitted), steady state, call +
// wait. JAX's figures come from bench/jax_conv_peer.py (precision HIGHEST: full f32, as weft
// computes), run as a child process when python3 can import jax. Goal: each <= 1.0x JAX's time.
// Each weft result is checked first against sums computed here at sampled positions. The
// figures are also given in GFLOP/s (2 * 32 * 56 * 56 * 64 * 64 * 9 flops each).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common.h"
#include "weft/transforms/grad.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
namespace lax = weft::lax;

constexpr int kRounds = 10;
constexpr std::int64_t kN = 32, kH = 56, kW = 56, kC = 64, kO = 64, kK = 3;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_conv: %s\n", what.c_str());
  std::exit(1);
}

std::vector<float> normal(std::size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0, scale);
  std::vector<float> v(n);
  for (float& value : v) value = d(rng);
  return v;
}

Array conv(const Array& x, const Array& w) {
  static const lax::ConvDimensionNumbers nhwc = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, nhwc);
}

Array loss(const Array& x, const Array& w, const Array& ct) {
  return lax::reduce_sum(lax::mul(conv(x, w), ct), {0, 1, 2, 3});
}

std::map<std::string, double> jax_seconds() {
  return weft::bench::jax_peer_seconds(std::string(WEFT_BENCH_SOURCE_DIR) + "/jax_conv_peer.py",
                                       kRounds);
}

// Element accessors of the NHWC activations and the HWIO filter (zero outside the image).
struct Host {
  const std::vector<float>& x;
  const std::vector<float>& w;
  const std::vector<float>& ct;
  float act(const std::vector<float>& a, std::int64_t n, std::int64_t y, std::int64_t x_,
            std::int64_t c) const {
    if (y < 0 || y >= kH || x_ < 0 || x_ >= kW) return 0;
    return a[static_cast<std::size_t>(((n * kH + y) * kW + x_) * kC + c)];
  }
  float filter(std::int64_t ky, std::int64_t kx, std::int64_t c, std::int64_t o) const {
    return w[static_cast<std::size_t>(((ky * kK + kx) * kC + c) * kO + o)];
  }
  double forward(std::int64_t n, std::int64_t y, std::int64_t x_, std::int64_t o) const {
    double s = 0;
    for (std::int64_t ky = 0; ky < kK; ++ky)
      for (std::int64_t kx = 0; kx < kK; ++kx)
        for (std::int64_t c = 0; c < kC; ++c)
          s += double(act(x, n, y + ky - 1, x_ + kx - 1, c)) * filter(ky, kx, c, o);
    return s;
  }
  double input_grad(std::int64_t n, std::int64_t y, std::int64_t x_, std::int64_t c) const {
    double s = 0;
    for (std::int64_t ky = 0; ky < kK; ++ky)
      for (std::int64_t kx = 0; kx < kK; ++kx)
        for (std::int64_t o = 0; o < kO; ++o)
          s += double(act(ct, n, y - ky + 1, x_ - kx + 1, o)) * filter(ky, kx, c, o);
    return s;
  }
  double filter_grad(std::int64_t ky, std::int64_t kx, std::int64_t c, std::int64_t o) const {
    double s = 0;
    for (std::int64_t n = 0; n < kN; ++n)
      for (std::int64_t y = 0; y < kH; ++y)
        for (std::int64_t x_ = 0; x_ < kW; ++x_)
          s += double(act(x, n, y + ky - 1, x_ + kx - 1, c)) * act(ct, n, y, x_, o);
    return s;
  }
};

void check(const std::vector<float>& got, double want, std::size_t at, double scale,
           const char* what) {
  if (std::abs(got[at] - want) > 1e-4 * scale + 1e-3)
    fail(std::string(what) + " differs at " + std::to_string(at) + ": " + std::to_string(got[at]) +
         " vs " + std::to_string(want));
}

}  // namespace

int main() {
  std::printf("weft device: %s\n", weft::bench::device_line().c_str());
  std::mt19937 rng(29);
  const std::vector<float> xv = normal(kN * kH * kW * kC, 1, rng);
  const std::vector<float> wv = normal(kK * kK * kC * kO, 0.05f, rng);
  const std::vector<float> cv = normal(kN * kH * kW * kO, 1, rng);
  const Array x = Array::from_vector<float>({kN, kH, kW, kC}, xv);
  const Array w = Array::from_vector<float>({kK, kK, kC, kO}, wv);
  const Array ct = Array::from_vector<float>({kN, kH, kW, kO}, cv);

  auto forward =
      weft::jit([](const std::vector<Array>& a) { return std::vector<Array>{conv(a[0], a[1])}; });
  auto input_grad = weft::jit(weft::grad(
      [](const std::vector<Array>& a) { return std::vector<Array>{loss(a[0], a[1], a[2])}; },
      weft::GradOptions{{0}}));
  auto filter_grad = weft::jit(weft::grad(
      [](const std::vector<Array>& a) { return std::vector<Array>{loss(a[0], a[1], a[2])}; },
      weft::GradOptions{{1}}));
  const std::vector<Array> fwd_args{x, w};
  const std::vector<Array> grad_args{x, w, ct};

  const Host host{xv, wv, cv};
  std::uniform_int_distribution<std::int64_t> pick_n(0, kN - 1), pick_y(0, kH - 1),
      pick_c(0, kC - 1), pick_k(0, kK - 1);
  {
    const std::vector<float> y = forward(fwd_args).at(0).template to_vector<float>();
    const std::vector<float> dx = input_grad(grad_args).at(0).template to_vector<float>();
    const std::vector<float> dw = filter_grad(grad_args).at(0).template to_vector<float>();
    for (int i = 0; i < 64; ++i) {
      // Borders too: the first and last rows and columns.
      const std::int64_t n = pick_n(rng),
                         r = i % 4 == 0   ? 0
                             : i % 4 == 1 ? kH - 1
                                          : pick_y(rng),
                         col = i % 3 == 0 ? kW - 1 : pick_y(rng), c = pick_c(rng);
      const auto at = static_cast<std::size_t>(((n * kH + r) * kW + col) * kC + c);
      check(y, host.forward(n, r, col, c), at, 10, "forward");
      check(dx, host.input_grad(n, r, col, c), at, 10, "input gradient");
    }
    for (int i = 0; i < 8; ++i) {
      const std::int64_t ky = pick_k(rng), kx = pick_k(rng), c = pick_c(rng), o = pick_c(rng);
      const auto at = static_cast<std::size_t>(((ky * kK + kx) * kC + c) * kO + o);
      check(dw, host.filter_grad(ky, kx, c, o), at, 1000, "filter gradient");
    }
  }

  const auto samples =
      weft::bench::time_interleaved({
                                        [&] { forward(fwd_args).at(0).block_until_ready(); },
                                        [&] { input_grad(grad_args).at(0).block_until_ready(); },
                                        [&] { filter_grad(grad_args).at(0).block_until_ready(); },
                                    },
                                    2, kRounds);
  const char* names[] = {"conv3x3_forward", "conv3x3_input_grad", "conv3x3_filter_grad"};
  const char* titles[] = {"conv 3x3 32x56x56x64->64 forward", "conv 3x3 input gradient",
                          "conv 3x3 filter gradient"};
  const double flops = 2.0 * kN * kH * kW * kC * kO * kK * kK;
  const std::map<std::string, double> jax = jax_seconds();
  if (jax.empty()) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");
  std::printf(
      "\nprogram                               weft ms  GFLOP/s     JAX ms  GFLOP/s  weft/JAX\n");
  std::vector<weft::bench::SummaryRow> rows;
  for (int i = 0; i < 3; ++i) {
    const double s = samples[i].median();
    const auto found = jax.find(names[i]);
    const double j = found == jax.end() ? -1 : found->second;
    std::printf("%-34s %10.2f %8.1f %10.2f %8.1f  %8.2f\n", titles[i], s * 1e3, flops / s / 1e9,
                j * 1e3, j > 0 ? flops / j / 1e9 : 0.0, j > 0 ? s / j : 0.0);
    rows.push_back({std::string(titles[i]) + " vs JAX",
                    format(s * 1e3, 2) + " ms, " + format(flops / s / 1e9, 1) + " GFLOP/s",
                    j > 0 ? format(j * 1e3, 2) + " ms (JAX CPU)" : "JAX not installed",
                    j > 0 ? format(s / j, 2) + "x weft/JAX time" : "n/a", "<= 1.0x",
                    j > 0 ? weft::bench::met(s <= j) : "n/a"});
  }
  weft::bench::print_summary(rows);
  return 0;
}

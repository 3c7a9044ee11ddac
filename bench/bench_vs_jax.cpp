// weft beside JAX on the same CPU (issue 13's table), same shapes, steady state, call + wait:
//
//   softmax      rows of f32[256,1000] (np::softmax)
//   MLP forward  batch 64, 784 -> 256 (tanh) -> 10
//   layer norm   f32[64,768] over the last axis, with scale and offset, eps 1e-5
//   GELU block   batch 64, 768 -> 3072 (exact GELU, erf) -> 768: a transformer MLP block
//   exp/tanh     min(max(tanh(exp(x/2) - 1) * 2 + 0.5, 0), 2) over f32[2^25] (GB/s, in + out)
//
// JAX's figures come from bench/jax_cpu_peer.py, run as a child process when python3 can import
// jax (optional: without it only weft's figures are printed). Goals (issue 13): weft <= 1.0x
// JAX's time for the first four. Each weft result is checked against a host computation first.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
namespace np = weft::np;
namespace lax = weft::lax;

constexpr int kRounds = 15;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_vs_jax: %s\n", what.c_str());
  std::exit(1);
}

std::vector<float> normal(std::size_t n, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

const lax::DotDims kMatmul{
    .lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}};

Array dense(const Array& x, const Array& w, const Array& b) {
  const Array y = lax::dot_general(x, w, kMatmul);
  return y + lax::broadcast_in_dim(b, y.shape(), {1});
}

Array gelu(const Array& x) {
  return x * 0.5f * (np::erf(x * 0.70710678f) + 1.0f);
}

Array layer_norm(const Array& x, const Array& scale, const Array& offset) {
  const Array mean = np::mean(x, {-1}, true);
  const Array centred = x - mean;
  const Array var = np::mean(centred * centred, {-1}, true);
  const Array y = centred * np::rsqrt(var + 1e-5f);
  return y * lax::broadcast_in_dim(scale, x.shape(), {1}) +
         lax::broadcast_in_dim(offset, x.shape(), {1});
}

Array chain(const Array& x) {
  const Array t = np::tanh(np::exp(x * 0.5f) - 1.0f) * 2.0f + 0.5f;
  return np::minimum(np::maximum(t, Array::scalar(0.0f)), Array::scalar(2.0f));
}

// Seconds per call of each JAX program by name, or empty when python3 or jax is missing.
std::map<std::string, double> jax_seconds() {
  return weft::bench::jax_peer_seconds(std::string(WEFT_BENCH_SOURCE_DIR) + "/jax_cpu_peer.py",
                                       kRounds);
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol,
                 const char* what) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))))
      fail(std::string(what) + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
           ", the host computes " + std::to_string(want[i]));
}

}  // namespace

int main() {
  std::printf("bench_vs_jax on %s\n", weft::bench::device_line().c_str());
  std::mt19937 rng(1);

  // softmax
  const std::vector<float> sx = normal(256 * 1000, 2.0f, rng);
  const Array softmax_x = Array::from_vector<float>({256, 1000}, sx);
  auto softmax = weft::jit([](const Array& x) { return np::softmax(x, -1); });
  {
    std::vector<double> want(sx.size());
    for (int r = 0; r < 256; ++r) {
      double m = -1e30, s = 0;
      for (int c = 0; c < 1000; ++c) m = std::max<double>(m, sx[r * 1000 + c]);
      for (int c = 0; c < 1000; ++c) s += std::exp(sx[r * 1000 + c] - m);
      for (int c = 0; c < 1000; ++c) want[r * 1000 + c] = std::exp(sx[r * 1000 + c] - m) / s;
    }
    expect_near(softmax(softmax_x).to_vector<float>(), want, 1e-5, "softmax");
  }

  // MLP forward
  const std::vector<float> w1v = normal(784 * 256, 0.05f, rng), b1v = normal(256, 0.01f, rng);
  const std::vector<float> w2v = normal(256 * 10, 0.05f, rng), b2v = normal(10, 0.01f, rng);
  const std::vector<float> xv = normal(64 * 784, 1.0f, rng);
  const Array w1 = Array::from_vector<float>({784, 256}, w1v),
              b1 = Array::from_vector<float>({256}, b1v);
  const Array w2 = Array::from_vector<float>({256, 10}, w2v),
              b2 = Array::from_vector<float>({10}, b2v);
  const Array mlp_x = Array::from_vector<float>({64, 784}, xv);
  auto mlp = weft::jit([](const std::vector<Array>& a) {
    return std::vector<Array>{dense(np::tanh(dense(a[0], a[1], a[2])), a[3], a[4])};
  });
  const std::vector<Array> mlp_args{mlp_x, w1, b1, w2, b2};
  {
    std::vector<double> want(64 * 10);
    for (int i = 0; i < 64; ++i) {
      std::vector<double> h(256);
      for (int j = 0; j < 256; ++j) {
        double s = b1v[j];
        for (int k = 0; k < 784; ++k) s += double(xv[i * 784 + k]) * w1v[k * 256 + j];
        h[j] = std::tanh(s);
      }
      for (int j = 0; j < 10; ++j) {
        double s = b2v[j];
        for (int k = 0; k < 256; ++k) s += h[k] * w2v[k * 10 + j];
        want[i * 10 + j] = s;
      }
    }
    expect_near(mlp(mlp_args).at(0).to_vector<float>(), want, 1e-4, "MLP forward");
  }

  // layer norm
  const std::vector<float> lx = normal(64 * 768, 3.0f, rng);
  const std::vector<float> gv = normal(768, 1.0f, rng), ov = normal(768, 1.0f, rng);
  const Array ln_x = Array::from_vector<float>({64, 768}, lx);
  const Array ln_g = Array::from_vector<float>({768}, gv),
              ln_o = Array::from_vector<float>({768}, ov);
  auto layernorm = weft::jit(
      [](const std::vector<Array>& a) { return std::vector<Array>{layer_norm(a[0], a[1], a[2])}; });
  const std::vector<Array> ln_args{ln_x, ln_g, ln_o};
  {
    std::vector<double> want(lx.size());
    for (int r = 0; r < 64; ++r) {
      double m = 0, v = 0;
      for (int c = 0; c < 768; ++c) m += lx[r * 768 + c];
      m /= 768;
      for (int c = 0; c < 768; ++c) v += (lx[r * 768 + c] - m) * (lx[r * 768 + c] - m);
      v /= 768;
      for (int c = 0; c < 768; ++c)
        want[r * 768 + c] = (lx[r * 768 + c] - m) / std::sqrt(v + 1e-5) * gv[c] + ov[c];
    }
    expect_near(layernorm(ln_args).at(0).to_vector<float>(), want, 1e-4, "layer norm");
  }

  // GELU block
  const Array g_x = Array::from_vector<float>({64, 768}, normal(64 * 768, 1.0f, rng));
  const std::vector<float> gw1 = normal(768 * 3072, 0.03f, rng), gb1 = normal(3072, 0.01f, rng);
  const std::vector<float> gw2 = normal(3072 * 768, 0.02f, rng), gb2 = normal(768, 0.01f, rng);
  const std::vector<Array> gelu_args{
      g_x, Array::from_vector<float>({768, 3072}, gw1), Array::from_vector<float>({3072}, gb1),
      Array::from_vector<float>({3072, 768}, gw2), Array::from_vector<float>({768}, gb2)};
  auto gelu_block = weft::jit([](const std::vector<Array>& a) {
    return std::vector<Array>{dense(gelu(dense(a[0], a[1], a[2])), a[3], a[4])};
  });
  {
    // Row 0 only on the host (the full block is 3.6 GFLOP in double).
    const std::vector<float> x0 = g_x.to_vector<float>();
    std::vector<double> h(3072), want(768);
    for (int j = 0; j < 3072; ++j) {
      double s = gb1[j];
      for (int k = 0; k < 768; ++k) s += double(x0[k]) * gw1[k * 3072 + j];
      h[j] = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
    }
    for (int j = 0; j < 768; ++j) {
      double s = gb2[j];
      for (int k = 0; k < 3072; ++k) s += h[k] * gw2[k * 768 + j];
      want[j] = s;
    }
    std::vector<float> got = gelu_block(gelu_args).at(0).to_vector<float>();
    got.resize(768);
    expect_near(got, want, 1e-3, "GELU block");
  }

  // exp/tanh chain
  const std::int64_t n = std::int64_t{1} << 25;
  std::vector<float> cv(static_cast<std::size_t>(n));
  std::uniform_real_distribution<float> u(-3, 3);
  for (float& v : cv) v = u(rng);
  const Array chain_x = Array::from_vector<float>({n}, cv);
  auto chain_fn = weft::jit([](const Array& x) { return chain(x); });
  {
    const std::vector<float> got = chain_fn(chain_x).to_vector<float>();
    for (std::size_t i = 0; i < got.size(); i += 4099) {
      const double want =
          std::min(std::max(std::tanh(std::exp(cv[i] * 0.5) - 1) * 2 + 0.5, 0.0), 2.0);
      if (std::abs(got[i] - want) > 1e-5) fail("exp/tanh chain differs at " + std::to_string(i));
    }
  }

  const auto samples =
      weft::bench::time_interleaved({
                                        [&] {
                                          for (int i = 0; i < 20; ++i)
                                            softmax(softmax_x).block_until_ready();
                                        },
                                        [&] {
                                          for (int i = 0; i < 20; ++i)
                                            mlp(mlp_args).at(0).block_until_ready();
                                        },
                                        [&] {
                                          for (int i = 0; i < 20; ++i)
                                            layernorm(ln_args).at(0).block_until_ready();
                                        },
                                        [&] {
                                          for (int i = 0; i < 5; ++i)
                                            gelu_block(gelu_args).at(0).block_until_ready();
                                        },
                                        [&] { chain_fn(chain_x).block_until_ready(); },
                                    },
                                    2, kRounds);
  const double weft_s[] = {samples[0].median() / 20, samples[1].median() / 20,
                           samples[2].median() / 20, samples[3].median() / 5, samples[4].median()};
  const char* names[] = {"softmax", "mlp_forward", "layer_norm", "gelu_block", "exp_tanh_chain"};
  const char* titles[] = {"softmax rows f32[256,1000]", "MLP forward 64x784x256x10",
                          "layer norm f32[64,768]", "GELU MLP block 64x768x3072x768",
                          "exp/tanh chain f32[2^25]"};
  const std::map<std::string, double> jax = jax_seconds();
  if (jax.empty()) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");

  std::printf("\nprogram                              weft ms      JAX ms   weft/JAX\n");
  std::vector<weft::bench::SummaryRow> rows;
  for (int i = 0; i < 5; ++i) {
    const auto found = jax.find(names[i]);
    const double j = found == jax.end() ? -1 : found->second;
    std::printf("%-34s %10.3f  %10.3f   %8.2f\n", titles[i], weft_s[i] * 1e3, j * 1e3,
                j > 0 ? weft_s[i] / j : 0.0);
    const bool timed_goal = i < 4;
    std::string weft_text = format(weft_s[i] * 1e3, 3) + " ms";
    std::string jax_text = j > 0 ? format(j * 1e3, 3) + " ms (JAX CPU)" : "JAX not installed";
    if (i == 4) {
      const double bytes = 8.0 * static_cast<double>(n);
      weft_text = format(bytes / weft_s[i] / 1e9, 2) + " GB/s";
      if (j > 0) jax_text = format(bytes / j / 1e9, 2) + " GB/s (JAX CPU)";
    }
    rows.push_back({std::string(titles[i]) + " vs JAX", weft_text, jax_text,
                    j > 0 ? format(weft_s[i] / j, 2) + "x weft/JAX time" : "n/a",
                    timed_goal ? "<= 1.0x" : "info",
                    j > 0 && timed_goal ? weft::bench::met(weft_s[i] <= j) : "n/a"});
  }
  weft::bench::print_summary(rows);
  return 0;
}

// weft's linear algebra beside JAX on the same CPU: cholesky of f32 1024x1024 and 2048x2048,
// triangular_solve (left side, lower) of a 1024x1024 triangle with 1 and with 1024 right-hand
// sides, lu (getrf with partial pivoting: factors, pivots and permutation) of f32 1024x1024, and
// batches of 64 matrices of 64x64 for cholesky and lu; each jitted, steady state, call + wait.
// JAX's figures come from bench/jax_linalg_peer.py (LAPACK potrf, trsm, getrf through XLA's CPU
// custom calls), run as a child process when python3 can import jax. Goals: cholesky 1024 and
// triangular_solve with 1024 right-hand sides <= 1.5x JAX's time, lu 1024 <= 2x.
// `bench_linalg NAME` runs the cases whose name contains NAME (cholesky_1024, lu, ...).
// Each weft result is checked first against products computed here at sampled positions.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
using Args = std::vector<Array>;
namespace lax = weft::lax;

constexpr int kRounds = 10;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_linalg: %s\n", what.c_str());
  std::exit(1);
}

// `batch` symmetric, diagonally dominant (so positive definite) n x n matrices.
std::vector<float> spd(std::int64_t batch, std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<std::size_t>(batch * n * n));
  for (std::int64_t b = 0; b < batch; ++b) {
    float* m = a.data() + b * n * n;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < i; ++j) m[i * n + j] = m[j * n + i] = u(rng);
      m[i * n + i] = static_cast<float>(n) + u(rng);
    }
  }
  return a;
}

// A well-conditioned lower triangle (garbage above the diagonal, which must not be read).
std::vector<float> lower_triangle(std::int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      a[i * n + j] = j < i ? u(rng) / static_cast<float>(n) : j == i ? 1.5f + 0.5f * u(rng) : 1e3f;
  return a;
}

std::vector<float> uniform(std::int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = u(rng);
  return v;
}

void check_close(double got, double want, double scale, const std::string& what) {
  if (!(std::abs(got - want) <= 1e-4 * scale))
    fail(what + ": " + std::to_string(got) + " vs " + std::to_string(want));
}

// L L^T against a at sampled positions of each matrix.
void check_cholesky(const std::vector<float>& a, const std::vector<float>& l, std::int64_t batch,
                    std::int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  for (std::int64_t b = 0; b < batch; ++b)
    for (int s = 0; s < 16; ++s) {
      std::int64_t i = pick(rng), j = pick(rng);
      if (j > i) std::swap(i, j);
      if (s == 0) i = j = n - 1;
      const float* L = l.data() + b * n * n;
      double sum = 0;
      for (std::int64_t k = 0; k <= j; ++k) sum += double(L[i * n + k]) * L[j * n + k];
      check_close(sum, a[b * n * n + i * n + j], static_cast<double>(n),
                  "cholesky " + std::to_string(n) + " (L L^T)[" + std::to_string(i) + "][" +
                      std::to_string(j) + "]");
      if (i != j && L[j * n + i] != 0) fail("cholesky: nonzero above the diagonal");
    }
}

// L x against b at sampled positions.
void check_solve(const std::vector<float>& l, const std::vector<float>& b,
                 const std::vector<float>& x, std::int64_t n, std::int64_t cols,
                 std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> pick_row(0, n - 1), pick_col(0, cols - 1);
  for (int s = 0; s < 64; ++s) {
    const std::int64_t i = s == 0 ? n - 1 : pick_row(rng), c = pick_col(rng);
    double sum = 0;
    for (std::int64_t k = 0; k <= i; ++k) sum += double(l[i * n + k]) * x[k * cols + c];
    check_close(sum, b[i * cols + c], 1, "triangular_solve (L x)[" + std::to_string(i) + "]");
  }
}

// L U against the permuted a at sampled positions.
void check_lu(const std::vector<float>& a, const std::vector<float>& f,
              const std::vector<std::int32_t>& perm, std::int64_t batch, std::int64_t n,
              std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  for (std::int64_t b = 0; b < batch; ++b)
    for (int s = 0; s < 16; ++s) {
      const std::int64_t i = s == 0 ? n - 1 : pick(rng), j = pick(rng);
      const float* F = f.data() + b * n * n;
      double sum = 0;
      for (std::int64_t k = 0; k <= std::min(i, j); ++k)
        sum += (k == i ? 1.0 : double(F[i * n + k])) * F[k * n + j];
      const std::int64_t row = perm[static_cast<std::size_t>(b * n + i)];
      check_close(sum, a[b * n * n + row * n + j], static_cast<double>(n),
                  "lu " + std::to_string(n) + " (L U)[" + std::to_string(i) + "][" +
                      std::to_string(j) + "]");
    }
}

struct Case {
  const char* name;   // the JAX peer's name
  const char* title;  // the table's
  std::function<void()> run;
  std::function<void()> check;  // fails the benchmark when the result is wrong
  double goal;                  // weft/JAX time; 0: no goal
};

}  // namespace

int main(int argc, char** argv) {
  // An argument runs only the cases whose name contains it (JAX's peer still runs all).
  const std::string filter = argc > 1 ? argv[1] : "";
  std::printf("weft device: %s\n", weft::bench::device_line().c_str());
  std::mt19937 rng(31);
  auto cholesky = weft::jit(
      [](const std::vector<Array>& a) { return std::vector<Array>{lax::cholesky(a[0])}; });
  auto solve = weft::jit([](const std::vector<Array>& a) {
    return std::vector<Array>{
        lax::triangular_solve(a[0], a[1], {.left_side = true, .lower = true})};
  });
  auto lu = weft::jit([](const std::vector<Array>& a) {
    auto [factors, pivots, permutation] = lax::lu(a[0]);
    return std::vector<Array>{factors, pivots, permutation};
  });

  const std::vector<float> a1024 = spd(1, 1024, rng), a2048 = spd(1, 2048, rng),
                           a64 = spd(64, 64, rng);
  const std::vector<float> l1024 = lower_triangle(1024, rng), b1 = uniform(1024, rng),
                           b1024 = uniform(1024 * 1024, rng), g1024 = uniform(1024 * 1024, rng),
                           g64 = uniform(64 * 64 * 64, rng);
  const Array A1024 = Array::from_vector<float>({1024, 1024}, a1024);
  const Array A2048 = Array::from_vector<float>({2048, 2048}, a2048);
  const Array A64 = Array::from_vector<float>({64, 64, 64}, a64);
  const Array L = Array::from_vector<float>({1024, 1024}, l1024);
  const Array B1 = Array::from_vector<float>({1024, 1}, b1);
  const Array B1024 = Array::from_vector<float>({1024, 1024}, b1024);
  const Array G1024 = Array::from_vector<float>({1024, 1024}, g1024);
  const Array G64 = Array::from_vector<float>({64, 64, 64}, g64);

  auto wait = [](const std::vector<Array>& out) {
    for (const Array& o : out) o.block_until_ready();
  };
  auto check_lu_of = [&](const std::vector<float>& a, const Array& g, std::int64_t batch,
                         std::int64_t n) {
    const std::vector<Array> out = lu(Args{g});
    check_lu(a, out.at(0).to_vector<float>(), out.at(2).to_vector<std::int32_t>(), batch, n, rng);
  };
  const std::vector<Case> all = {
      {"cholesky_1024", "cholesky f32 1024", [&] { wait(cholesky(Args{A1024})); },
       [&] { check_cholesky(a1024, cholesky(Args{A1024}).at(0).to_vector<float>(), 1, 1024, rng); },
       1.5},
      {"cholesky_2048", "cholesky f32 2048", [&] { wait(cholesky(Args{A2048})); },
       [&] { check_cholesky(a2048, cholesky(Args{A2048}).at(0).to_vector<float>(), 1, 2048, rng); },
       0},
      {"cholesky_batch64x64", "cholesky f32 64 x 64x64", [&] { wait(cholesky(Args{A64})); },
       [&] { check_cholesky(a64, cholesky(Args{A64}).at(0).to_vector<float>(), 64, 64, rng); }, 0},
      {"triangular_solve_1024_1", "triangular_solve 1024, 1 rhs",
       [&] {
         wait(solve(Args{L, B1}));
       },
       [&] {
         check_solve(l1024, b1, solve(Args{L, B1}).at(0).to_vector<float>(), 1024, 1, rng);
       },
       0},
      {"triangular_solve_1024_1024", "triangular_solve 1024, 1024 rhs",
       [&] {
         wait(solve(Args{L, B1024}));
       },
       [&] {
         check_solve(l1024, b1024, solve(Args{L, B1024}).at(0).to_vector<float>(), 1024, 1024, rng);
       },
       1.5},
      {"lu_1024", "lu f32 1024", [&] { wait(lu(Args{G1024})); },
       [&] { check_lu_of(g1024, G1024, 1, 1024); }, 2.0},
      {"lu_batch64x64", "lu f32 64 x 64x64", [&] { wait(lu(Args{G64})); },
       [&] { check_lu_of(g64, G64, 64, 64); }, 0},
  };
  std::vector<Case> cases;
  for (const Case& c : all)
    if (std::string(c.name).find(filter) != std::string::npos) cases.push_back(c);
  for (const Case& c : cases) c.check();
  std::vector<std::function<void()>> runs;
  for (const Case& c : cases) runs.push_back(c.run);
  const auto samples = weft::bench::time_interleaved(runs, 2, kRounds);

  const std::map<std::string, double> jax = weft::bench::jax_peer_seconds(
      std::string(WEFT_BENCH_SOURCE_DIR) + "/jax_linalg_peer.py", kRounds);
  if (jax.empty()) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");
  std::printf("\nprogram                                weft ms      JAX ms  weft/JAX\n");
  std::vector<weft::bench::SummaryRow> rows;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const double s = samples[i].median();
    const auto found = jax.find(cases[i].name);
    const double j = found == jax.end() ? -1 : found->second;
    std::printf("%-34s %10.2f %11.2f  %8.2f\n", cases[i].title, s * 1e3, j * 1e3,
                j > 0 ? s / j : 0.0);
    const bool has_goal = cases[i].goal > 0;
    rows.push_back({std::string(cases[i].title) + " vs JAX", format(s * 1e3, 2) + " ms",
                    j > 0 ? format(j * 1e3, 2) + " ms (JAX CPU)" : "JAX not installed",
                    j > 0 ? format(s / j, 2) + "x weft/JAX time" : "n/a",
                    has_goal ? "<= " + format(cases[i].goal, 1) + "x" : "info",
                    j > 0 && has_goal ? weft::bench::met(s <= cases[i].goal * j) : "n/a"});
  }
  weft::bench::print_summary(rows);
  return 0;
}

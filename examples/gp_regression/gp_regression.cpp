// Gaussian-process regression with a learned RBF kernel, with its JAX twin (twin.py beside this
// file): noisy samples of sin(2x), the kernel's three log-scales trained by gradient descent on
// the negative log marginal likelihood through the Cholesky factor (np::linalg::cholesky,
// solve_triangular), then the posterior mean at test points (cho_solve).
//
//   example_gp_regression [--size small|full] [--check examples/gp_regression/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/np_linalg.h"
#include "weft/random.h"
#include "weft/transforms/grad.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace linalg = weft::np::linalg;
namespace random = weft::random;
using weft::examples::key_at;

constexpr float kLearningRate = 0.5f;  // divided by the number of points: the loss grows with it

struct Sizes {
  std::int64_t points, tests, steps;
};

// params[i] as a scalar.
Array at(const Array& params, std::int64_t i) {
  return weft::lax::reshape(weft::lax::slice(params, {i}, {i + 1}), {});
}

Array rbf(const Array& a, const Array& b, const Array& log_scale, const Array& log_length) {
  const Array d = np::expand_dims(a, 1) - np::expand_dims(b, 0);
  return np::exp(log_scale * 2.0f) * np::exp(d * d * -0.5f / np::exp(log_length * 2.0f));
}

Array factor(const Array& params, const Array& x) {
  const std::int64_t n = x.shape()[0];
  const Array k =
      rbf(x, x, at(params, 0), at(params, 1)) + np::exp(at(params, 2) * 2.0f) * np::eye(n);
  return linalg::cholesky(k);
}

Array nll(const Array& params, const Array& x, const Array& y) {
  const Array L = factor(params, x);
  const Array v = linalg::solve_triangular(L, y, 0, true);
  const std::int64_t n = x.shape()[0];
  const Array log_det = np::sum(np::log(np::sum(L * np::eye(n), {1})));
  return np::sum(v * v) * 0.5f + log_det +
         static_cast<float>(0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi));
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options = ex::parse_options(
      argc, argv, "Gaussian-process regression with a learned kernel (examples/README.md).");
  const Sizes s = options.size == "small" ? Sizes{24, 8, 3} : Sizes{1024, 256, 3};
  try {
    // The data drawn in one traced program (eagerly, each random op would build a program).
    const std::vector<Array> drawn = weft::jit([&s](const std::vector<Array>& key) {
      const Array k = random::split(key[0], 3);
      const Array x = random::uniform(key_at(k, 0), {s.points}, DType::F32, -3.0, 3.0);
      const Array y = np::sin(x * 2.0f) + random::normal(key_at(k, 1), {s.points}) * 0.1f;
      const Array x_test = random::uniform(key_at(k, 2), {s.tests}, DType::F32, -3.0, 3.0);
      return std::vector<Array>{x, y, x_test};
    })(std::vector<Array>{random::key(31)});
    const Array &x = drawn[0], &y = drawn[1], &x_test = drawn[2];
    const Array params = Array::from_vector<float>({3}, {0.0f, -0.5f, -1.5f});

    const weft::ArrayFunction value_and_grad = weft::value_and_grad(
        [](const std::vector<Array>& a) { return std::vector<Array>{nll(a[0], a[1], a[2])}; },
        {.argnums = {0}});
    const float rate = kLearningRate / static_cast<float>(s.points);
    auto step = weft::jit([&](const std::vector<Array>& a) {
      const std::vector<Array> lg = value_and_grad(a);
      return std::vector<Array>{lg[0], a[0] - lg[1] * rate};
    });
    auto predict = weft::jit([](const std::vector<Array>& a) {
      const Array L = factor(a[0], a[1]);
      const Array alpha = linalg::cho_solve({L, true}, a[2]);
      return std::vector<Array>{np::matmul(rbf(a[3], a[1], at(a[0], 0), at(a[0], 1)), alpha)};
    });

    if (options.size == "full") {
      ex::time_step(
          "gp_regression", {params, x, y},
          [&] {
            step(std::vector<Array>{params, x, y}).front().to_host();
          },
          options.repeats);
      return 0;
    }
    std::vector<float> losses;
    Array current = params;
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(std::vector<Array>{current, x, y});
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      current = out[1];
    }
    const Array mean = predict(std::vector<Array>{current, x, y, x_test}).at(0);
    std::printf("gp_regression small: losses");
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.x", x, oracle.inputs.at("x"));
    check.expect("inputs.y", y, oracle.inputs.at("y"));
    check.expect("inputs.x_test", x_test, oracle.inputs.at("x_test"));
    check.expect("params.log_scales", params, oracle.params.at("log_scales"), 1e-6);
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    check.expect("final_params.log_scales", current, oracle.expected.at("final_params.log_scales"),
                 1e-3);
    check.expect("mean", mean, oracle.expected.at("mean"), 1e-3);
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_gp_regression: %s\n", e.what());
    return 1;
  }
}

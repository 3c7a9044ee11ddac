// The program of the time-to-first-result issue, as a new user writes it from the README:
// logistic regression by gradient descent, the gradient of the loss inside a fori_loop inside
// jit, an ordered debug_print under a cond, a vmap for the per-example logits, and a few eager
// ops preparing the data. Its JAX twin is logistic_regression_twin.py: both print the same
// weights (to 5 digits). bench/cold_start.sh times both from a cold start.
#include <cstdio>
#include <vector>

#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

using namespace weft;

int main() {
  constexpr int n = 256, d = 8, steps = 100;
  constexpr float learning_rate = 0.5f;
  // Deterministic data, exact in f32, so that the twin builds the same arrays bit for bit.
  std::vector<float> raw(n * d), labels(n);
  const float true_w[d] = {1.5f, -2.0f, 0.5f, 0.0f, 1.0f, -0.5f, 2.0f, -1.0f};
  for (int i = 0; i < n; ++i) {
    float z = 0;
    for (int j = 0; j < d; ++j) {
      raw[i * d + j] = static_cast<float>((i * 7 + j * 13 + i * j) % 17 - 8) / 8.0f;  // exact
      z += true_w[j] * raw[i * d + j];
    }
    labels[i] = z > 0 ? 1.0f : 0.0f;
  }
  // Eager ops (each one runs at once): standardize the features.
  Array x = Array::from_vector<float>({n, d}, raw);
  Array y = Array::from_vector<float>({n}, labels);
  Array mean = np::mean(x, {0});
  Array centered = x - mean;
  x = centered / np::sqrt(np::mean(centered * centered, {0}) + 1e-6f);

  auto logit = [](const std::vector<Array>& a) {  // w, b, one example
    return std::vector<Array>{np::sum(a[0] * a[2]) + a[1]};
  };
  auto loss = [&](const std::vector<Array>& a) {  // w, b, x, y
    Array z = vmap(
        logit, {.in_axes = {std::nullopt, std::nullopt, 0}, .out_axes = {}})({a[0], a[1], a[2]})[0];
    // Binary cross-entropy on logits: softplus(z) - y z.
    return std::vector<Array>{
        np::mean(np::log1p(np::exp(-np::abs(z))) + np::maximum(z, Array::scalar(0.0)) - a[3] * z)};
  };
  auto train = jit(
      [&](const Array& w0, const Array& b0, const Array& xs, const Array& ys) {
        return lax::fori_loop(
            0, steps,
            [&](const Array& i, const std::pair<Array, Array>& p) {
              std::vector<Array> g = grad(loss, {.argnums = {0, 1}})({p.first, p.second, xs, ys});
              lax::cond(
                  i % 25 == 0,
                  [&] {
                    debug_print("step {} loss {}", i, loss({p.first, p.second, xs, ys})[0],
                                DebugPrintOptions{.ordered = true});
                  },
                  [] {});
              return std::pair{p.first - learning_rate * g[0], p.second - learning_rate * g[1]};
            },
            std::pair{w0, b0});
      },
      {.name = "train"});
  auto [w, b] = train(np::zeros({d}, DType::F32), np::zeros({}, DType::F32), x, y);
  const std::vector<float> weights = w.to_vector<float>();
  std::printf("w =");
  for (float v : weights) std::printf(" %.5f", v);
  std::printf("\nb = %.5f\n", b.item<float>());
  return 0;
}

// A small CNN trained on synthetic digits, with its JAX twin (twin.py beside this file): ten
// random binary templates, images of their label's template plus Gaussian noise (NHWC), two
// 3x3 SAME convolutions with ReLU and 2x2 max pools, dropout (random::bernoulli keep mask, a
// fresh key per step from split), a dense layer to 10 logits, softmax cross-entropy against
// one-hot labels, and SGD. Its full size is issue 29's CNN training step (28x28, batch 128).
//
//   example_cnn_classifier [--size small|full] [--check examples/cnn_classifier/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/random.h"
#include "weft/transforms/grad.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace lax = weft::lax;
namespace random = weft::random;
using weft::examples::key_at;

constexpr float kLearningRate = 0.05f;
constexpr float kKeep = 0.75f;

struct Sizes {
  std::int64_t side, batch, c1, c2, steps;
};

// Each image is its label's binary template plus N(0, 0.3^2) noise; returns (images, labels).
std::pair<Array, Array> images(const Array& key, std::int64_t batch, std::int64_t side) {
  const Array k = random::split(key, 3);
  const Array templates =
      np::astype(random::uniform(key_at(k, 0), {10, side, side, 1}) > 0.7f, DType::F32);
  const Array labels = random::randint(key_at(k, 1), {batch}, 0, 10);
  const Array noise = random::normal(key_at(k, 2), {batch, side, side, 1}) * 0.3f;
  return {np::take(templates, labels, 0) + noise, labels};
}

// The parameters in the twin's order (conv1, conv2, dense; "w" then "b" in each).
const std::vector<std::string> kNames = {"conv1.w", "conv1.b", "conv2.w",
                                         "conv2.b", "dense.w", "dense.b"};

std::vector<Array> init(const Array& key, const Sizes& s) {
  const Array k = random::split(key, 3);
  const std::int64_t flat = (s.side / 4) * (s.side / 4) * s.c2;
  return {random::normal(key_at(k, 0), {3, 3, 1, s.c1}) / 3.0f,
          np::zeros({s.c1}),
          random::normal(key_at(k, 1), {3, 3, s.c1, s.c2}) / std::sqrt(9.0f * float(s.c1)),
          np::zeros({s.c2}),
          random::normal(key_at(k, 2), {flat, 10}) / std::sqrt(float(flat)),
          np::zeros({10})};
}

Array conv(const Array& x, const Array& w, const Array& b) {
  static const lax::ConvDimensionNumbers nhwc = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, nhwc) + b;
}

Array pool(const Array& x) {
  return np::max_pool(x, {2, 2}, {2, 2});
}

Array loss_of(const std::vector<Array>& p, const Array& x, const Array& labels, const Array& key) {
  Array h = pool(np::relu(conv(x, p[0], p[1])));
  h = pool(np::relu(conv(h, p[2], p[3])));
  h = np::reshape(h, {h.shape()[0], -1});
  const Array keep = random::bernoulli(key, kKeep, h.shape());
  h = np::where(keep, h / kKeep, 0.0f);
  const Array logits = np::matmul(h, p[4]) + p[5];
  const Array logp = logits - np::expand_dims(np::logsumexp(logits, -1), -1);
  return -np::mean(np::sum(logp * np::one_hot(labels, 10), {-1}));
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options =
      ex::parse_options(argc, argv, "A CNN trained on synthetic digits (examples/README.md).");
  const Sizes s = options.size == "small" ? Sizes{12, 8, 4, 8, 3} : Sizes{28, 128, 16, 32, 3};
  try {
    // The parameters and data drawn in one traced program: eagerly, each of the random bit
    // generator's ops would be a program of its own to build.
    const Array keys = random::split(random::key(29), 3);
    const std::vector<Array> drawn = weft::jit([&s](const std::vector<Array>& k) {
      std::vector<Array> out = init(k[0], s);
      const auto [images_, labels_] = images(k[1], s.batch, s.side);
      out.push_back(images_);
      out.push_back(labels_);
      return out;
    })(std::vector<Array>{key_at(keys, 0), key_at(keys, 1)});
    const std::vector<Array> params(drawn.begin(), drawn.begin() + 6);
    const Array x = drawn[6], labels = drawn[7];

    auto loss = [](const std::vector<Array>& a) -> std::vector<Array> {
      return {loss_of({a.begin(), a.begin() + 6}, a[6], a[7], a[8])};
    };
    weft::GradOptions grad_options;
    grad_options.argnums = {0, 1, 2, 3, 4, 5};
    const weft::ArrayFunction value_and_grad = weft::value_and_grad(loss, grad_options);
    // (params, x, labels, key) -> (loss, new params, next key)
    auto step = weft::jit([&](const std::vector<Array>& a) {
      const auto [next_key, drop_key] = random::split2(a[8]);
      std::vector<Array> args(a.begin(), a.begin() + 8);
      args.push_back(drop_key);
      const std::vector<Array> lg = value_and_grad(args);
      std::vector<Array> out = {lg[0]};
      for (std::size_t i = 0; i < 6; ++i) out.push_back(a[i] - lg[1 + i] * kLearningRate);
      out.push_back(next_key);
      return out;
    });
    std::vector<Array> current = params;
    current.push_back(x);
    current.push_back(labels);
    current.push_back(key_at(keys, 2));

    if (options.size == "full") {
      ex::time_step(
          "cnn_classifier", current, [&] { step(current).front().to_host(); }, options.repeats);
      return 0;
    }
    std::vector<float> losses;
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(current);
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      for (std::size_t p = 0; p < 6; ++p) current[p] = out[1 + p];
      current[8] = out[7];
    }
    std::printf("cnn_classifier small: losses");
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.images", x, oracle.inputs.at("images"));
    check.expect("inputs.labels", labels, oracle.inputs.at("labels"));
    for (std::size_t p = 0; p < 6; ++p)
      check.expect("params." + kNames[p], params[p], oracle.params.at(kNames[p]), 1e-6);
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    for (std::size_t p = 0; p < 6; ++p)
      check.expect("final_params." + kNames[p], current[p],
                   oracle.expected.at("final_params." + kNames[p]), 1e-3);
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_cnn_classifier: %s\n", e.what());
    return 1;
  }
}

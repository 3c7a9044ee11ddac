// A ResNet basic block with batch normalisation trained data-parallel over two devices, with its
// JAX twin (twin.py beside this file): synthetic images (ten random binary templates, each image
// its label's template plus Gaussian noise, NHWC with three channels), split over the devices
// along a leading axis. The model: a 3x3 SAME stem convolution with bias and ReLU, one basic
// block (conv3x3, batch norm, ReLU, conv3x3, batch norm, plus the identity shortcut, ReLU),
// global average pool, a dense layer to 10 logits, softmax cross-entropy. Batch norm uses the
// whole batch's statistics across devices: each device's mean and mean square averaged with
// pmean (as flax.linen.BatchNorm does with an axis_name). weft::pmap over the devices with the
// parameters replicated (in_axes nullopt); as in JAX, grad inside pmap differentiates the sum
// of the devices' losses, so the gradients are averaged with pmean, then SGD. Its full size is
// issue 29's "ResNet basic block with batch normalisation trained data-parallel over two
// devices" (2 x 64 images of 32x32x3, 32 channels). It needs two devices:
// POCL_DEVICES="pthread pthread" (CTest sets it).
//
//   example_resnet_pmap [--size small|full] [--check examples/resnet_pmap/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/random.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/pmap.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace lax = weft::lax;
namespace random = weft::random;
using weft::examples::key_at;

constexpr float kLearningRate = 0.1f;
constexpr float kEps = 1e-5f;
constexpr std::size_t kParams = 10;

struct Sizes {
  std::int64_t devices, batch, side, channels, steps;
};

// Each image is its label's binary template plus N(0, 0.3^2) noise; returns (images, labels)
// split over the devices: [devices, batch, side, side, 3] and [devices, batch].
std::pair<Array, Array> images(const Array& key, const Sizes& s) {
  const Array k = random::split(key, 3);
  const std::int64_t n = s.devices * s.batch;
  const Array templates =
      np::astype(random::uniform(key_at(k, 0), {10, s.side, s.side, 3}) > 0.7f, DType::F32);
  const Array labels = random::randint(key_at(k, 1), {n}, 0, 10);
  const Array noise = random::normal(key_at(k, 2), {n, s.side, s.side, 3}) * 0.3f;
  return {
      np::reshape(np::take(templates, labels, 0) + noise, {s.devices, s.batch, s.side, s.side, 3}),
      np::reshape(labels, {s.devices, s.batch})};
}

// The parameters in the twin's order.
const std::vector<std::string> kNames = {"stem.w",   "stem.b",  "conv1.w",   "bn1.scale",
                                         "bn1.bias", "conv2.w", "bn2.scale", "bn2.bias",
                                         "dense.w",  "dense.b"};

std::vector<Array> init(const Array& key, std::int64_t c) {
  const Array k = random::split(key, 4);
  const float fan = std::sqrt(9.0f * float(c));
  return {random::normal(key_at(k, 0), {3, 3, 3, c}) / std::sqrt(27.0f),
          np::zeros({c}),
          random::normal(key_at(k, 1), {3, 3, c, c}) / fan,
          np::ones({c}),
          np::zeros({c}),
          random::normal(key_at(k, 2), {3, 3, c, c}) / fan,
          np::ones({c}),
          np::zeros({c}),
          random::normal(key_at(k, 3), {c, 10}) / std::sqrt(float(c)),
          np::zeros({10})};
}

Array conv(const Array& x, const Array& w) {
  static const lax::ConvDimensionNumbers nhwc = lax::conv_dimension_numbers("NHWC", "HWIO", "NHWC");
  return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, nhwc);
}

// Cross-device batch norm, as flax.linen.BatchNorm computes it with an axis_name: the batch's
// mean and mean square, each device's averaged in one pmean, and the variance from them.
Array batch_norm(const Array& x, const Array& scale, const Array& bias) {
  const std::int64_t c = x.shape().back();
  const Array stats =
      weft::pmean(np::concatenate({np::mean(x, {0, 1, 2}), np::mean(x * x, {0, 1, 2})}), "i");
  const Array mean = lax::slice(stats, {0}, {c});
  const Array mean2 = lax::slice(stats, {c}, {2 * c});
  const Array var = np::maximum(mean2 - mean * mean, np::zeros_like(mean));
  return (x - mean) * np::rsqrt(var + kEps) * scale + bias;
}

// One device's loss: the mean cross-entropy over its part of the batch.
Array loss_of(const std::vector<Array>& p, const Array& x, const Array& labels) {
  const Array h = np::relu(conv(x, p[0]) + p[1]);
  Array y = np::relu(batch_norm(conv(h, p[2]), p[3], p[4]));
  y = batch_norm(conv(y, p[5]), p[6], p[7]);
  const Array pooled = np::mean(np::relu(y + h), {1, 2});
  const Array logits = np::matmul(pooled, p[8]) + p[9];
  const Array logp = logits - np::expand_dims(np::logsumexp(logits, -1), -1);
  return -np::mean(np::sum(logp * np::one_hot(labels, 10), {-1}));
}

// xs raveled and concatenated (jax.flatten_util.ravel_pytree), and back: `unravel(flat, like)`
// splits a vector into arrays shaped as `like`.
Array ravel(const std::vector<Array>& xs) {
  std::vector<Array> flat;
  for (const Array& x : xs) flat.push_back(np::reshape(x, {-1}));
  return np::concatenate(flat);
}
std::vector<Array> unravel(const Array& flat, const std::vector<Array>& like) {
  std::vector<Array> out;
  std::int64_t start = 0;
  for (const Array& x : like) {
    const std::int64_t n = x.size();
    out.push_back(np::reshape(lax::slice(flat, {start}, {start + n}), x.shape()));
    start += n;
  }
  return out;
}

// Row i of x along its leading axis (JAX's x[i]).
Array row(const Array& x, std::int64_t i) {
  weft::Shape start(x.shape().size(), 0), limit = x.shape();
  start[0] = i;
  limit[0] = i + 1;
  return lax::reshape(lax::slice(x, start, limit),
                      weft::Shape(x.shape().begin() + 1, x.shape().end()));
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options = ex::parse_options(
      argc, argv,
      "A ResNet basic block trained data-parallel over two devices (examples/README.md).");
  const Sizes s = options.size == "small" ? Sizes{2, 4, 8, 8, 3} : Sizes{2, 64, 32, 32, 3};
  try {
    if (static_cast<std::int64_t>(weft::devices().size()) < s.devices) {
      std::fprintf(stderr,
                   "example_resnet_pmap: needs %lld devices, found %zu; run with "
                   "POCL_DEVICES=\"pthread pthread\"\n",
                   static_cast<long long>(s.devices), weft::devices().size());
      return 1;
    }
    // The parameters and data drawn in one traced program: eagerly, each of the random bit
    // generator's ops would be a program of its own to build.
    const std::vector<Array> drawn = weft::jit([&s](const std::vector<Array>& key) {
      const auto [k_params, k_data] = random::split2(key[0]);
      std::vector<Array> out = init(k_params, s.channels);
      const auto [images_, labels_] = images(k_data, s);
      out.push_back(images_);
      out.push_back(labels_);
      return out;
    })(std::vector<Array>{random::key(29)});
    const std::vector<Array> params(drawn.begin(), drawn.begin() + kParams);
    const Array x = drawn[kParams], labels = drawn[kParams + 1];

    auto loss = [](const std::vector<Array>& a) -> std::vector<Array> {
      return {loss_of({a.begin(), a.begin() + kParams}, a[kParams], a[kParams + 1])};
    };
    weft::GradOptions grad_options;
    grad_options.argnums.clear();
    for (std::size_t i = 0; i < kParams; ++i) grad_options.argnums.push_back(static_cast<int>(i));
    const weft::ArrayFunction value_and_grad = weft::value_and_grad(loss, grad_options);
    // One device's part of a step, (params, x, labels) -> (loss, new params raveled): its loss
    // and gradients, averaged over the devices in one pmean of them raveled (one collective
    // where a pmean per gradient would be eleven), then SGD.
    weft::PmapOptions pmap_options;
    pmap_options.axis_name = "i";
    pmap_options.in_axes.assign(kParams, std::nullopt);
    pmap_options.in_axes.push_back(0);
    pmap_options.in_axes.push_back(0);
    const std::int64_t n_params = ravel(params).size();
    const weft::ArrayFunction step = weft::pmap(
        [&](const std::vector<Array>& a) {
          const Array mean = weft::pmean(ravel(value_and_grad(a)), "i");
          const Array p = ravel({a.begin(), a.begin() + kParams});
          return std::vector<Array>{lax::reshape(lax::slice(mean, {0}, {1}), {}),
                                    p - lax::slice(mean, {1}, {1 + n_params}) * kLearningRate};
        },
        pmap_options);
    // Device 0's and device 1's parameters from the stacked raveled ones, in one program (eagerly,
    // each slice would be a program of its own).
    const weft::ArrayFunction rows = weft::jit([&params](const std::vector<Array>& a) {
      std::vector<Array> out = unravel(row(a[0], 0), params);
      for (const Array& p : unravel(row(a[0], 1), params)) out.push_back(p);
      return out;
    });
    std::vector<Array> current = params;
    current.push_back(x);
    current.push_back(labels);

    if (options.size == "full") {
      // Each call waits for the loss and every device's new parameters.
      ex::time_step(
          "resnet_pmap", current,
          [&] {
            for (const Array& out : step(current)) out.to_host();
          },
          options.repeats);
      return 0;
    }
    std::vector<float> losses;
    std::vector<Array> second;  // device 1's parameters after the last step
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(current);
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      // Every device holds the same parameters; the next step takes device 0's.
      second = rows({out[1]});
      for (std::size_t p = 0; p < kParams; ++p) current[p] = second[p];
      second.erase(second.begin(), second.begin() + kParams);
    }
    std::printf("resnet_pmap small: losses");
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.images", x, oracle.inputs.at("images"));
    check.expect("inputs.labels", labels, oracle.inputs.at("labels"));
    for (std::size_t p = 0; p < kParams; ++p)
      check.expect("params." + kNames[p], params[p], oracle.params.at(kNames[p]), 1e-6);
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    for (std::size_t p = 0; p < kParams; ++p) {
      check.expect("final_params." + kNames[p], current[p],
                   oracle.expected.at("final_params." + kNames[p]), 1e-3);
      // Device 1's copy is device 0's.
      check.expect("final_params." + kNames[p] + " (device 1)", second[p], current[p].to_host(), 0,
                   0);
    }
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_resnet_pmap: %s\n", e.what());
    return 1;
  }
}

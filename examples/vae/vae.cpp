// A variational autoencoder trained on synthetic images, with its JAX twin (twin.py beside this
// file): crosses with Bernoulli pixel noise, an MLP encoder to the mean and log-variance,
// reparameterised sampling z = mu + exp(logvar / 2) * eps (random::normal with a fresh key per
// step from split), an MLP decoder to pixel logits, and SGD on the negative ELBO.
//
//   example_vae [--size small|full] [--check examples/vae/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <map>
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

constexpr float kLearningRate = 0.01f;

struct Sizes {
  std::int64_t side, batch, hidden, latent, steps;
};

// Each image lights one row and one column (a cross), with 5% of its pixels flipped.
Array images(const Array& key, std::int64_t batch, std::int64_t side) {
  const Array k = random::split(key, 3);
  const Array rows = random::randint(key_at(k, 0), {batch}, 0, side);
  const Array cols = random::randint(key_at(k, 1), {batch}, 0, side);
  const weft::Shape cube{batch, side, side};
  const Array on_row =
      lax::eq(lax::iota(DType::I32, cube, 1), lax::broadcast_in_dim(rows, cube, {0}));
  const Array on_col =
      lax::eq(lax::iota(DType::I32, cube, 2), lax::broadcast_in_dim(cols, cube, {0}));
  const Array flip = random::bernoulli(key_at(k, 2), 0.05, cube);
  const Array pixels = np::logical_xor(np::logical_or(on_row, on_col), flip);
  return np::reshape(np::astype(pixels, DType::F32), {batch, side * side});
}

// The layers in the twin's order: enc, mu, logvar, dec, out; each "NAME.w" and "NAME.b".
const std::vector<std::string> kLayers = {"enc", "mu", "logvar", "dec", "out"};

std::vector<std::string> param_names() {
  std::vector<std::string> names;
  for (const std::string& layer : kLayers) {
    names.push_back(layer + ".w");
    names.push_back(layer + ".b");
  }
  return names;
}

std::vector<Array> init(const Array& key, const Sizes& s) {
  const std::int64_t pixels = s.side * s.side;
  const std::int64_t fan[5][2] = {{pixels, s.hidden},
                                  {s.hidden, s.latent},
                                  {s.hidden, s.latent},
                                  {s.latent, s.hidden},
                                  {s.hidden, pixels}};
  const Array k = random::split(key, 5);
  std::vector<Array> p;
  for (std::int64_t l = 0; l < 5; ++l) {
    p.push_back(random::normal(key_at(k, l), {fan[l][0], fan[l][1]}) / std::sqrt(float(fan[l][0])));
    p.push_back(np::zeros({fan[l][1]}));
  }
  return p;
}

Array apply(const std::vector<Array>& p, int layer, const Array& x) {
  return np::matmul(x, p[2 * layer]) + p[2 * layer + 1];
}

Array loss_of(const std::vector<Array>& p, const Array& x, const Array& key) {
  const Array h = np::relu(apply(p, 0, x));
  const Array mu = apply(p, 1, h), logvar = apply(p, 2, h);
  const Array eps = random::normal(key, mu.shape());
  const Array z = mu + np::exp(logvar * 0.5f) * eps;
  const Array logits = apply(p, 4, np::relu(apply(p, 3, z)));
  // Sigmoid cross-entropy, written as optax writes it.
  const Array bce = np::sum(np::maximum(logits, np::zeros_like(logits)) - logits * x +
                                np::log1p(np::exp(-np::abs(logits))),
                            {-1});
  const Array kl = np::sum(1.0f + logvar - mu * mu - np::exp(logvar), {-1}) * -0.5f;
  return np::mean(bce + kl);
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options =
      ex::parse_options(argc, argv, "A VAE trained on synthetic images (examples/README.md).");
  const Sizes s = options.size == "small" ? Sizes{8, 8, 16, 2, 3} : Sizes{28, 128, 256, 16, 3};
  try {
    // The parameters and images drawn in one traced program: eagerly, each op of the key split
    // and of each sampler would be a program of its own to build.
    // key -> (ten parameters, images, the steps' first key)
    const std::vector<Array> drawn = weft::jit([&s](const std::vector<Array>& a) {
      const Array keys = random::split(a[0], 3);
      std::vector<Array> out = init(key_at(keys, 0), s);
      out.push_back(images(key_at(keys, 1), s.batch, s.side));
      out.push_back(key_at(keys, 2));
      return out;
    })(std::vector<Array>{random::key(3)});
    const std::vector<Array> params(drawn.begin(), drawn.begin() + 10);
    const Array& x = drawn[10];
    const std::vector<std::string> names = param_names();

    auto loss = [](const std::vector<Array>& a) -> std::vector<Array> {
      return {loss_of({a.begin(), a.begin() + 10}, a[10], a[11])};
    };
    weft::GradOptions grad_options;
    grad_options.argnums = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const weft::ArrayFunction value_and_grad = weft::value_and_grad(loss, grad_options);
    // (params, x, key) -> (loss, new params, next key)
    auto step = weft::jit([&](const std::vector<Array>& a) {
      const auto [next_key, sample_key] = random::split2(a[11]);
      std::vector<Array> args(a.begin(), a.begin() + 11);
      args.push_back(sample_key);
      const std::vector<Array> lg = value_and_grad(args);
      std::vector<Array> out = {lg[0]};
      for (std::size_t i = 0; i < 10; ++i) out.push_back(a[i] - lg[1 + i] * kLearningRate);
      out.push_back(next_key);
      return out;
    });
    std::vector<Array> current = params;
    current.push_back(x);
    current.push_back(drawn[11]);

    if (options.size == "full") {
      ex::time_step(
          "vae", current, [&] { step(current).front().to_host(); }, options.repeats);
      return 0;
    }
    std::vector<float> losses;
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(current);
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      for (std::size_t p = 0; p < 10; ++p) current[p] = out[1 + p];
      current[11] = out[11];
    }
    std::printf("vae small: losses");
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.images", x, oracle.inputs.at("images"));
    for (std::size_t p = 0; p < 10; ++p)
      check.expect("params." + names[p], params[p], oracle.params.at(names[p]), 1e-6);
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    for (std::size_t p = 0; p < 10; ++p)
      check.expect("final_params." + names[p], current[p],
                   oracle.expected.at("final_params." + names[p]), 1e-3);
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_vae: %s\n", e.what());
    return 1;
  }
}

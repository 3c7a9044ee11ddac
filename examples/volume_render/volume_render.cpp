// A NeRF-style volume renderer with its JAX twin (twin.py beside this file): rays through a
// density and colour field given by a small MLP, one stratified random sample per depth bin
// (random::uniform), alpha compositing with the transmittance as an exclusive cumprod, and one
// training step (the gradient of the photometric loss, through the cumprod).
//
//   example_volume_render [--size small|full] [--check examples/volume_render/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <vector>

#include "support/example.h"
#include "weft/random.h"
#include "weft/transforms/grad.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
using weft::Shape;
namespace np = weft::np;
namespace lax = weft::lax;
namespace random = weft::random;
using weft::examples::key_at;

constexpr float kNear = 2.0f, kFar = 6.0f, kLearningRate = 0.1f;

struct Sizes {
  std::int64_t rays, samples, hidden;
};

Array vector3(float x, float y, float z) {
  return Array::from_vector<float>({3}, {x, y, z});
}

// The MLP's parameters in the order the step takes them: w1, b1, w2, b2.
std::vector<Array> init(const Array& key, std::int64_t hidden) {
  const Array k = random::split(key, 4);
  return {random::normal(key_at(k, 0), {3, hidden}) * 0.5f,
          random::normal(key_at(k, 1), {hidden}) * 0.1f,
          random::normal(key_at(k, 2), {hidden, 4}) * (1.0 / std::sqrt(double(hidden))),
          random::normal(key_at(k, 3), {4}) * 0.1f};
}

std::pair<Array, Array> rays(const Array& key, std::int64_t n) {
  auto [k1, k2] = random::split2(key);
  const Array origins = random::uniform(k1, {n, 3}, DType::F32, -1.0, 1.0) + vector3(0, 0, -4);
  Array dirs = random::normal(k2, {n, 3}) * 0.1f + vector3(0, 0, 1);
  dirs = dirs / np::sqrt(np::sum(dirs * dirs, {-1}, true));
  return {origins, dirs};
}

// The colour and depth of each ray.
std::pair<Array, Array> render(const std::vector<Array>& params, const Array& origins,
                               const Array& dirs, const Array& key, std::int64_t samples) {
  const std::int64_t n = origins.shape()[0];
  // The bins' edges, as jnp.linspace(near, far, samples + 1) spaces them.
  const float width = (kFar - kNear) / float(samples);
  const Array lower = lax::iota(DType::F32, {samples}, 0) * width + kNear;
  const Array u = random::uniform(key, {n, samples});
  const Array t = lower + u * width;  // one stratified sample per bin
  const Array points =
      np::expand_dims(origins, 1) + np::expand_dims(t, 2) * np::expand_dims(dirs, 1);
  const Array h = np::tanh(np::matmul(points, params[0]) + params[1]);
  const Array out = np::matmul(h, params[2]) + params[3];
  const Array raw_sigma = lax::reshape(lax::slice(out, {0, 0, 0}, {n, samples, 1}), {n, samples});
  // softplus as jax.nn.softplus (logaddexp(x, 0)).
  const Array sigma =
      np::maximum(raw_sigma, np::zeros_like(raw_sigma)) + np::log1p(np::exp(-np::abs(raw_sigma)));
  const Array rgb = np::sigmoid(lax::slice(out, {0, 0, 1}, {n, samples, 4}));
  const Array gaps = lax::slice(t, {0, 1}, {n, samples}) - lax::slice(t, {0, 0}, {n, samples - 1});
  const Array delta = np::concatenate({gaps, np::full({n, 1}, 1e10)}, -1);
  const Array alpha = 1.0f - np::exp(-sigma * delta);
  const Array through = lax::cumprod(1.0f - alpha + 1e-10f, 1);
  const Array transmittance =
      np::concatenate({np::ones({n, 1}), lax::slice(through, {0, 0}, {n, samples - 1})}, -1);
  const Array weights = alpha * transmittance;
  const Array color = np::sum(np::expand_dims(weights, 2) * rgb, {1});
  const Array depth = np::sum(weights * t, {-1});
  return {color, depth};
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options = ex::parse_options(
      argc, argv, "A NeRF-style volume renderer and one training step (examples/README.md).");
  const Sizes sizes = options.size == "small" ? Sizes{64, 16, 32} : Sizes{4096, 64, 64};
  try {
    // The parameters and data drawn in one traced program: eagerly, each op of the key split and
    // of each sampler would be a program of its own to build.
    // key -> (w1, b1, w2, b2, origins, dirs, target, sample key)
    const std::vector<Array> drawn = weft::jit([&sizes](const std::vector<Array>& a) {
      const Array keys = random::split(a[0], 4);
      std::vector<Array> out = init(key_at(keys, 0), sizes.hidden);
      const auto [origins, dirs] = rays(key_at(keys, 1), sizes.rays);
      out.insert(out.end(), {origins, dirs, random::uniform(key_at(keys, 2), {sizes.rays, 3}),
                             key_at(keys, 3)});
      return out;
    })(std::vector<Array>{random::key(0)});
    const std::vector<Array> params(drawn.begin(), drawn.begin() + 4);
    const Array &origins = drawn[4], &dirs = drawn[5], &target = drawn[6], &sample_key = drawn[7];
    const std::int64_t samples = sizes.samples;

    // (w1, b1, w2, b2, origins, dirs, key, target) -> loss, the four gradients.
    auto loss = [samples](const std::vector<Array>& a) -> std::vector<Array> {
      const auto [color, depth] = render({a[0], a[1], a[2], a[3]}, a[4], a[5], a[6], samples);
      const Array error = color - a[7];
      return {np::mean(error * error)};
    };
    const weft::ArrayFunction value_and_grad =
        weft::value_and_grad(loss, {.argnums = {0, 1, 2, 3}});
    auto step = weft::jit([&](const std::vector<Array>& a) {
      std::vector<Array> out = value_and_grad(a);  // loss, then one gradient per parameter
      for (std::size_t p = 0; p < 4; ++p) out.push_back(a[p] - out[1 + p] * kLearningRate);
      return out;
    });
    const std::vector<Array> args = {params[0], params[1], params[2],  params[3],
                                     origins,   dirs,      sample_key, target};

    if (options.size == "full") {
      ex::time_step(
          "volume_render", args, [&] { step(args).back().to_host(); }, options.repeats);
      return 0;
    }
    const std::vector<Array> out = step(args);
    // (w1, b1, w2, b2, origins, dirs, key) -> (colour, depth), traced too.
    const std::vector<Array> rendered = weft::jit([samples](const std::vector<Array>& a) {
      const auto [color, depth] = render({a[0], a[1], a[2], a[3]}, a[4], a[5], a[6], samples);
      return std::vector<Array>{color, depth};
    })(std::vector<Array>(args.begin(), args.begin() + 7));
    const Array &color = rendered[0], &depth = rendered[1];
    std::printf("volume_render small: %lld rays, %lld samples, loss %.6f\n",
                static_cast<long long>(sizes.rays), static_cast<long long>(samples),
                out[0].to_host().get_f64(0));
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    // weft::random gives the twin's inputs bit for bit (floats within an ulp).
    check.expect("inputs.origins", origins, oracle.inputs.at("origins"), 1e-6);
    check.expect("inputs.dirs", dirs, oracle.inputs.at("dirs"), 1e-6);
    check.expect("inputs.target", target, oracle.inputs.at("target"), 1e-6);
    const char* names[] = {"w1", "b1", "w2", "b2"};
    for (int p = 0; p < 4; ++p)
      check.expect(std::string("params.") + names[p], params[p], oracle.params.at(names[p]), 1e-6);
    check.expect("color", color, oracle.expected.at("color"));
    check.expect("depth", depth, oracle.expected.at("depth"));
    check.expect("loss", out[0], oracle.expected.at("loss"));
    for (int p = 0; p < 4; ++p) {
      check.expect(std::string("grads.") + names[p], out[1 + p],
                   oracle.expected.at(std::string("grads.") + names[p]), 1e-3);
      check.expect(std::string("new_params.") + names[p], out[5 + p],
                   oracle.expected.at(std::string("new_params.") + names[p]));
    }
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_volume_render: %s\n", e.what());
    return 1;
  }
}

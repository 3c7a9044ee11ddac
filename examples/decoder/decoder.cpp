// Autoregressive decoding with a KV cache and top-k sampling, with its JAX twin (twin.py beside
// this file): a one-layer transformer decoder (token and position embeddings, single-head causal
// attention over a key/value cache, an MLP block, tied output embedding) with bf16 weights and
// activations (f32 softmax and logits). A lax::while_loop generates one token per step: it writes
// the step's key and value into the cache (dynamic_update_slice), keeps the k most likely next
// tokens (lax::top_k) and samples one of them (random::categorical, a key folded in per step).
//
//   example_decoder [--size small|full] [--check examples/decoder/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "support/example.h"
#include "weft/random.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::DType;
namespace np = weft::np;
namespace lax = weft::lax;
namespace random = weft::random;
using weft::examples::key_at;

struct Sizes {
  std::int64_t vocab, model, mlp, max_len, prompt, top_k;
};

// The parameters in the twin's order.
const std::vector<std::string> kNames = {"embedding", "position", "wq",    "wk",
                                         "wv",        "w_up",     "w_down"};
enum Param { kEmbedding, kPosition, kWq, kWk, kWv, kWUp, kWDown };

std::vector<Array> init(const Array& key, const Sizes& s) {
  const Array k = random::split(key, 7);
  auto w = [&](std::int64_t i, weft::Shape shape, float fan_in) {
    return np::astype(random::normal(key_at(k, i), shape) / std::sqrt(fan_in), DType::BF16);
  };
  const float d = static_cast<float>(s.model);
  return {w(0, {s.vocab, s.model}, 1.0f),
          w(1, {s.max_len, s.model}, 4.0f),
          w(2, {s.model, s.model}, d),
          w(3, {s.model, s.model}, d),
          w(4, {s.model, s.model}, d),
          w(5, {s.model, s.mlp}, d),
          w(6, {s.mlp, s.model}, static_cast<float>(s.mlp))};
}

Array rms_norm(const Array& x) {
  const Array x32 = np::astype(x, DType::F32);
  return np::astype(x32 * np::rsqrt(np::mean(x32 * x32, {-1}, true) + 1e-6f), DType::BF16);
}

// jax.nn.gelu's default tanh approximation, in x's dtype.
Array gelu(const Array& x) {
  const float sqrt_2_over_pi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
  return x * (0.5f * (1.0f + np::tanh(sqrt_2_over_pi * (x + 0.044715f * np::power(x, 3)))));
}

// Row `i` (an i32 scalar) of a matrix.
Array row(const Array& m, const Array& i) {
  const Array zero = lax::constant(0, DType::I32);
  return lax::reshape(lax::dynamic_slice(m, {i, zero}, {1, m.shape()[1]}), {m.shape()[1]});
}

Array element(const Array& v, const Array& i) {
  return lax::reshape(lax::dynamic_slice(v, {i}, {1}), {});
}

struct StepOut {
  Array logits, cache_k, cache_v;
};

// Logits for the next token after `token` at `position`, and the updated cache.
StepOut step_logits(const std::vector<Array>& p, const Array& token, const Array& position,
                    const Array& cache_k, const Array& cache_v) {
  const Array zero = lax::constant(0, DType::I32);
  const std::int64_t d = p[kWq].shape()[0], max_len = cache_k.shape()[0];
  Array x = row(p[kEmbedding], token) + row(p[kPosition], position);
  const Array h = rms_norm(x);
  const Array q = np::matmul(h, p[kWq]), k = np::matmul(h, p[kWk]), v = np::matmul(h, p[kWv]);
  const Array new_k = lax::dynamic_update_slice(cache_k, np::reshape(k, {1, d}), {position, zero});
  const Array new_v = lax::dynamic_update_slice(cache_v, np::reshape(v, {1, d}), {position, zero});
  Array scores = np::astype(np::matmul(new_k, q), DType::F32) / std::sqrt(static_cast<float>(d));
  const Array visible = np::less_equal(np::arange(max_len), position);
  scores = np::where(visible, scores, -std::numeric_limits<float>::infinity());
  const Array attention = np::astype(np::softmax(scores), DType::BF16);
  x = x + np::matmul(attention, new_v);
  x = x + np::matmul(gelu(np::matmul(rms_norm(x), p[kWUp])), p[kWDown]);
  const Array logits =
      np::astype(np::matmul(rms_norm(x), np::transpose(p[kEmbedding])), DType::F32);
  return {logits, new_k, new_v};
}

// (params..., prompt, key) -> (tokens, last logits)
std::vector<Array> generate(const std::vector<Array>& a, const Sizes& s) {
  const std::vector<Array> p(a.begin(), a.begin() + 7);
  const Array& prompt = a[7];
  const Array& key = a[8];
  const std::int64_t prompt_len = prompt.shape()[0];
  const Array tokens =
      lax::concatenate({prompt, np::zeros({s.max_len - prompt_len}, DType::I32)}, 0);
  const Array cache = np::zeros({s.max_len, s.model}, DType::BF16);
  // (position, tokens, cache_k, cache_v, last_logits)
  const std::vector<Array> state = {lax::constant(0, DType::I32), tokens, cache, cache,
                                    np::zeros({s.vocab})};
  const std::vector<Array> out = lax::while_loop(
      [&](const std::vector<Array>& c) {
        return np::less(c[0], lax::constant(double(s.max_len - 1), DType::I32));
      },
      [&](const std::vector<Array>& c) {
        const Array& position = c[0];
        const StepOut step = step_logits(p, element(c[1], position), position, c[2], c[3]);
        const auto [values, indices] = lax::top_k(step.logits, s.top_k);
        const Array choice = random::categorical(random::fold_in(key, position), values);
        const Array sampled = element(indices, choice);
        const Array next = position + 1;
        // Inside the prompt the next token is given; after it, the sample is.
        const Array following =
            np::where(np::less(next, lax::constant(double(prompt_len), DType::I32)),
                      element(c[1], next), sampled);
        const Array new_tokens =
            lax::dynamic_update_slice(c[1], np::reshape(following, {1}), {next});
        return std::vector<Array>{next, new_tokens, step.cache_k, step.cache_v, step.logits};
      },
      state);
  return {out[1], out[4]};
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options = ex::parse_options(
      argc, argv,
      "Autoregressive decoding with a KV cache and top-k sampling (examples/README.md).");
  const Sizes s =
      options.size == "small" ? Sizes{64, 16, 32, 12, 3, 5} : Sizes{32000, 512, 2048, 128, 8, 20};
  try {
    // The parameters and prompt drawn in one traced program: eagerly, each op of the key split
    // and of each sampler would be a program of its own to build.
    // key -> (parameters, prompt, the sampling key)
    const std::vector<Array> args = weft::jit([&s](const std::vector<Array>& a) {
      const Array keys = random::split(a[0], 3);
      std::vector<Array> out = init(key_at(keys, 0), s);
      out.push_back(random::randint(key_at(keys, 1), {s.prompt}, 0, s.vocab));
      out.push_back(key_at(keys, 2));
      return out;
    })(std::vector<Array>{random::key(4)});
    const std::vector<Array> params(args.begin(), args.end() - 2);
    const Array& prompt = args[params.size()];
    auto run = weft::jit([&](const std::vector<Array>& a) { return generate(a, s); });

    if (options.size == "full") {
      ex::time_step(
          "decoder", args, [&] { run(args).front().to_host(); }, options.repeats);
      return 0;
    }
    const std::vector<Array> out = run(args);
    const weft::HostArray tokens = out[0].to_host();
    std::printf("decoder small: tokens");
    for (std::int64_t i = 0; i < s.max_len; ++i) std::printf(" %lld", (long long)tokens.get_i64(i));
    std::printf("\n");
    if (options.check.empty()) return 0;
    // The first step's logits, traced too: (parameters, prompt) -> logits.
    const std::size_t count = params.size();
    const Array first_logits = weft::jit([&s, count](const std::vector<Array>& a) {
      const Array zero = lax::constant(0, DType::I32);
      const Array empty = np::zeros({s.max_len, s.model}, DType::BF16);
      const std::vector<Array> p(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(count));
      return std::vector<Array>{step_logits(p, element(a[count], zero), zero, empty, empty).logits};
    })(std::vector<Array>(args.begin(), args.end() - 1))[0];

    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.prompt", prompt, oracle.inputs.at("prompt"));
    // weft::random's normal is within a few ulp of JAX's (docs/random.md); rounding to bf16
    // mostly hides that, but a value near a bf16 rounding boundary may land one bf16 ulp away.
    for (std::size_t i = 0; i < params.size(); ++i)
      check.expect("params." + kNames[i], params[i], oracle.params.at(kNames[i]), 1e-2);
    check.expect("first_logits", first_logits, oracle.expected.at("first_logits"));
    // The twin's jitted loop lets XLA fold the bf16 rounding of the logits' matmul into an f32
    // dot (its first_logits, computed op by op, are rounded as written, and match exactly);
    // weft rounds as the program is written, so the last logits agree to bf16 precision.
    check.expect("last_logits", out[1], oracle.expected.at("last_logits"), 1e-2);
    check.expect("tokens", tokens, oracle.expected.at("tokens"));
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_decoder: %s\n", e.what());
    return 1;
  }
}

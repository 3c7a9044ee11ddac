// An LSTM text classifier with its JAX twin (twin.py beside this file): token ids index an
// embedding table (a gather forward, a scatter-add backward), an LSTM runs over the sequence
// (lax::scan), the last hidden state gives class logits, and SGD steps minimise the
// cross-entropy.
//
//   example_lstm_classifier [--size small|full] [--check
//   examples/lstm_classifier/oracle_small.json]
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
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

constexpr float kLearningRate = 0.5f;

struct Sizes {
  std::int64_t vocab, embed, hidden, classes, batch, length, steps;
};

// The parameters in the twin's tree order (its keys sorted): b, bo, embedding, wh, wo, wx.
const std::vector<std::string> kNames = {"b", "bo", "embedding", "wh", "wo", "wx"};
enum Param { kB, kBo, kEmbedding, kWh, kWo, kWx };

std::vector<Array> init(const Array& key, const Sizes& s) {
  const Array k = random::split(key, 4);
  const std::int64_t h = s.hidden;
  std::vector<Array> p(6);
  p[kEmbedding] = random::normal(key_at(k, 0), {s.vocab, s.embed}) * 0.1f;
  p[kWx] = random::normal(key_at(k, 1), {s.embed, 4 * h}) / std::sqrt(float(s.embed));
  p[kWh] = random::normal(key_at(k, 2), {h, 4 * h}) / std::sqrt(float(h));
  p[kB] = np::zeros({4 * h});
  p[kWo] = random::normal(key_at(k, 3), {h, s.classes}) / std::sqrt(float(h));
  p[kBo] = np::zeros({s.classes});
  return p;
}

// Columns [from, from + width) of a [batch, 4h] matrix.
Array columns(const Array& z, std::int64_t from, std::int64_t width) {
  return lax::slice(z, {0, from}, {z.shape()[0], from + width});
}

Array logits_of(const std::vector<Array>& p, const Array& tokens) {
  const std::int64_t batch = tokens.shape()[0], hidden = p[kWh].shape()[0];
  const Array xs = np::take(p[kEmbedding], tokens, 0);  // [batch, length, embed]
  auto cell = [&](const std::pair<Array, Array>& carry, const Array& x) {
    const auto& [h, c] = carry;
    const Array z = np::matmul(x, p[kWx]) + np::matmul(h, p[kWh]) + p[kB];
    const Array i = columns(z, 0, hidden), f = columns(z, hidden, hidden),
                g = columns(z, 2 * hidden, hidden), o = columns(z, 3 * hidden, hidden);
    const Array c2 = np::sigmoid(f) * c + np::sigmoid(i) * np::tanh(g);
    const Array h2 = np::sigmoid(o) * np::tanh(c2);
    return std::pair<std::pair<Array, Array>, std::tuple<>>({h2, c2}, {});
  };
  const Array zeros = np::zeros({batch, hidden});
  const auto [last, ys] =
      lax::scan(cell, std::pair<Array, Array>(zeros, zeros), np::transpose(xs, {1, 0, 2}));
  return np::matmul(last.first, p[kWo]) + p[kBo];
}

Array loss_of(const std::vector<Array>& p, const Array& tokens, const Array& labels) {
  const Array logits = logits_of(p, tokens);
  const Array log_probs = logits - np::expand_dims(np::logsumexp(logits, -1), 1);
  const Array one_hot = np::one_hot(labels, logits.shape()[1]);
  return -np::mean(np::sum(one_hot * log_probs, {-1}));
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options =
      ex::parse_options(argc, argv, "An LSTM text classifier (examples/README.md).");
  const Sizes s =
      options.size == "small" ? Sizes{50, 8, 12, 3, 4, 6, 3} : Sizes{20000, 128, 256, 4, 64, 64, 3};
  try {
    // The parameters and data drawn in one traced program: eagerly, each op of the key split and
    // of each sampler would be a program of its own to build.
    // key -> (six parameters, tokens, labels)
    const std::vector<Array> drawn = weft::jit([&s](const std::vector<Array>& a) {
      const Array keys = random::split(a[0], 3);
      std::vector<Array> out = init(key_at(keys, 0), s);
      out.push_back(random::randint(key_at(keys, 1), {s.batch, s.length}, 0, s.vocab));
      out.push_back(random::randint(key_at(keys, 2), {s.batch}, 0, s.classes));
      return out;
    })(std::vector<Array>{random::key(2)});
    const std::vector<Array> params(drawn.begin(), drawn.begin() + 6);
    const Array &tokens = drawn[6], &labels = drawn[7];

    auto loss = [](const std::vector<Array>& a) -> std::vector<Array> {
      return {loss_of({a[0], a[1], a[2], a[3], a[4], a[5]}, a[6], a[7])};
    };
    const weft::ArrayFunction value_and_grad =
        weft::value_and_grad(loss, {.argnums = {0, 1, 2, 3, 4, 5}});
    auto step = weft::jit([&](const std::vector<Array>& a) {
      const std::vector<Array> lg = value_and_grad(a);
      std::vector<Array> out = {lg[0]};
      for (std::size_t i = 0; i < 6; ++i) out.push_back(a[i] - lg[1 + i] * kLearningRate);
      return out;
    });
    std::vector<Array> args = params;
    args.push_back(tokens);
    args.push_back(labels);

    if (options.size == "full") {
      ex::time_step(
          "lstm_classifier", args, [&] { step(args).front().to_host(); }, options.repeats);
      return 0;
    }
    std::vector<float> losses;
    std::vector<Array> current = args;
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(current);
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      for (std::size_t p = 0; p < 6; ++p) current[p] = out[1 + p];
    }
    std::printf("lstm_classifier small: losses");
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    check.expect("inputs.tokens", tokens, oracle.inputs.at("tokens"));
    check.expect("inputs.labels", labels, oracle.inputs.at("labels"));
    for (std::size_t p = 0; p < 6; ++p)
      check.expect("params." + kNames[p], params[p], oracle.params.at(kNames[p]), 1e-6);
    // The first parameters' logits, traced too.
    const Array logits = weft::jit([](const std::vector<Array>& a) {
      return std::vector<Array>{logits_of({a[0], a[1], a[2], a[3], a[4], a[5]}, a[6])};
    })(args)[0];
    check.expect("logits", logits, oracle.expected.at("logits"));
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    for (std::size_t p = 0; p < 6; ++p)
      check.expect("final_params." + kNames[p], current[p],
                   oracle.expected.at("final_params." + kNames[p]), 1e-3);
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_lstm_classifier: %s\n", e.what());
    return 1;
  }
}

// Message passing on a random graph with its JAX twin (twin.py beside this file): two rounds of
// an edge MLP on the gathered sender and receiver features, the mean of each node's incoming
// messages (segment_sum over receivers), a node MLP, a per-node regression head, and SGD steps
// on the mean squared error: gathers forward, scatter-adds backward.
//
//   example_graph_network [--size small|full] [--check examples/graph_network/oracle_small.json]
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

constexpr int kRounds = 2;
constexpr float kLearningRate = 0.05f;

struct Sizes {
  std::int64_t nodes, edges, features, hidden, steps;
};

// Parameters by name ("edge0.w", "edge0.b", ..., "head.b"), in the twin's tree order.
using Params = std::map<std::string, Array>;

void dense(Params& p, const std::string& name, const Array& key, std::int64_t fan_in,
           std::int64_t fan_out) {
  p[name + ".w"] = random::normal(key, {fan_in, fan_out}) / std::sqrt(float(fan_in));
  p[name + ".b"] = np::zeros({fan_out});
}

Params init(const Array& key, std::int64_t features, std::int64_t hidden) {
  const Array keys = random::split(key, 2 * kRounds + 1);
  Params p;
  std::int64_t width = features;
  for (int r = 0; r < kRounds; ++r) {
    dense(p, "edge" + std::to_string(r), key_at(keys, 2 * r),
          2 * width + (r == 0 ? features : hidden), hidden);
    dense(p, "node" + std::to_string(r), key_at(keys, 2 * r + 1), width + hidden, hidden);
    width = hidden;
  }
  dense(p, "head", key_at(keys, 2 * kRounds), hidden, 1);
  return p;
}

Array apply(const Params& p, const std::string& layer, const Array& x) {
  return np::matmul(x, p.at(layer + ".w")) + p.at(layer + ".b");
}

Array forward(const Params& p, Array nodes, Array edges, const Array& senders,
              const Array& receivers) {
  const std::int64_t n = nodes.shape()[0];
  // The mean of the incoming messages: a high-degree node's sum would grow with its degree.
  const Array degree = np::segment_sum(np::ones({receivers.shape()[0]}), receivers, n);
  const Array divisor = np::expand_dims(np::maximum(degree, np::ones_like(degree)), 1);
  for (int r = 0; r < kRounds; ++r) {
    const std::string round = std::to_string(r);
    const Array inputs =
        np::concatenate({np::take(nodes, senders, 0), np::take(nodes, receivers, 0), edges}, -1);
    edges = np::relu(apply(p, "edge" + round, inputs));
    const Array incoming = np::segment_sum(edges, receivers, n) / divisor;
    nodes = np::relu(apply(p, "node" + round, np::concatenate({nodes, incoming}, -1)));
  }
  const Array out = apply(p, "head", nodes);
  return lax::reshape(out, {n});
}

}  // namespace

int main(int argc, char** argv) {
  namespace ex = weft::examples;
  const ex::Options options =
      ex::parse_options(argc, argv, "Message passing on a random graph (examples/README.md).");
  const Sizes s =
      options.size == "small" ? Sizes{24, 64, 8, 16, 3} : Sizes{10000, 100000, 32, 64, 3};
  try {
    // The parameters and data drawn in one traced program: eagerly, each op of the key split and
    // of each sampler would be a program of its own to build.
    std::vector<std::string> names;  // the parameters', in name order (the tree's)
    // key -> (parameters in name order, nodes, edges, senders, receivers, targets)
    const std::vector<Array> drawn = weft::jit([&s, &names](const std::vector<Array>& a) {
      const Array keys = random::split(a[0], 6);
      std::vector<Array> out;
      names.clear();
      for (const auto& [name, value] : init(key_at(keys, 0), s.features, s.hidden)) {
        names.push_back(name);
        out.push_back(value);
      }
      out.insert(out.end(), {random::normal(key_at(keys, 1), {s.nodes, s.features}),
                             random::normal(key_at(keys, 2), {s.edges, s.features}),
                             random::randint(key_at(keys, 3), {s.edges}, 0, s.nodes),
                             random::randint(key_at(keys, 4), {s.edges}, 0, s.nodes),
                             random::normal(key_at(keys, 5), {s.nodes})});
      return out;
    })(std::vector<Array>{random::key(1)});
    const std::size_t count = names.size();
    Params params;
    for (std::size_t i = 0; i < count; ++i) params[names[i]] = drawn[i];
    const Array &nodes = drawn[count], &edges = drawn[count + 1], &senders = drawn[count + 2],
                &receivers = drawn[count + 3], &targets = drawn[count + 4];
    // (parameters in name order, nodes, edges, senders, receivers, targets) -> loss.
    auto loss = [names, count](const std::vector<Array>& a) -> std::vector<Array> {
      Params p;
      for (std::size_t i = 0; i < count; ++i) p[names[i]] = a[i];
      const Array error =
          forward(p, a[count], a[count + 1], a[count + 2], a[count + 3]) - a[count + 4];
      return {np::mean(error * error)};
    };
    weft::GradOptions grad_options;
    grad_options.argnums.clear();
    for (std::size_t i = 0; i < count; ++i) grad_options.argnums.push_back(static_cast<int>(i));
    const weft::ArrayFunction value_and_grad = weft::value_and_grad(loss, grad_options);
    // One SGD step: the loss, then the new parameters.
    auto step = weft::jit([&](const std::vector<Array>& a) {
      const std::vector<Array> lg = value_and_grad(a);
      std::vector<Array> out = {lg[0]};
      for (std::size_t i = 0; i < count; ++i) out.push_back(a[i] - lg[1 + i] * kLearningRate);
      return out;
    });
    std::vector<Array> args;
    for (const auto& [name, value] : params) args.push_back(value);
    for (const Array& a : {nodes, edges, senders, receivers, targets}) args.push_back(a);

    if (options.size == "full") {
      ex::time_step(
          "graph_network", args, [&] { step(args).front().to_host(); }, options.repeats);
      return 0;
    }
    std::vector<float> losses;
    std::vector<Array> current = args;
    for (std::int64_t i = 0; i < s.steps; ++i) {
      const std::vector<Array> out = step(current);
      losses.push_back(static_cast<float>(out[0].to_host().get_f64(0)));
      for (std::size_t p = 0; p < count; ++p) current[p] = out[1 + p];
    }
    std::printf("graph_network small: %lld nodes, %lld edges, losses",
                static_cast<long long>(s.nodes), static_cast<long long>(s.edges));
    for (float l : losses) std::printf(" %.6f", l);
    std::printf("\n");
    if (options.check.empty()) return 0;
    const ex::Oracle oracle = ex::load_oracle(options.check);
    ex::Checker check;
    const char* inputs[] = {"nodes", "edges", "senders", "receivers", "targets"};
    for (std::size_t i = 0; i < 5; ++i)
      check.expect(std::string("inputs.") + inputs[i], args[count + i], oracle.inputs.at(inputs[i]),
                   1e-6);
    for (std::size_t p = 0; p < count; ++p)
      check.expect("params." + names[p], args[p], oracle.params.at(names[p]), 1e-6);
    // The first parameters' prediction, traced too.
    const Array prediction = weft::jit([&names, count](const std::vector<Array>& a) {
      Params p;
      for (std::size_t i = 0; i < count; ++i) p[names[i]] = a[i];
      return std::vector<Array>{forward(p, a[count], a[count + 1], a[count + 2], a[count + 3])};
    })(args)[0];
    check.expect("prediction", prediction, oracle.expected.at("prediction"));
    check.expect("losses", Array::from_vector<float>({s.steps}, losses),
                 oracle.expected.at("losses"));
    for (std::size_t p = 0; p < count; ++p)
      check.expect("final_params." + names[p], current[p],
                   oracle.expected.at("final_params." + names[p]), 1e-3);
    return check.exit_code();
  } catch (const weft::Error& e) {
    std::fprintf(stderr, "example_graph_network: %s\n", e.what());
    return 1;
  }
}

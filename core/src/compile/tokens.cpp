#include "weft/compile/tokens.h"

#include <map>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/walk.h"

namespace weft {
namespace {

// The stream of unordered effects' tokens ("done"); ordered streams are named by their effect.
const std::string kDone;

using Streams = std::vector<std::string>;  // ordered effects by name, then kDone if needed

Streams streams_of(const std::vector<Effect>& effects) {
  Streams streams;
  bool unordered = false;
  for (const Effect& e : effects) {
    if (!e.ordered) {
      unordered = true;
    } else if (streams.empty() || streams.back() != e.name) {
      streams.push_back(e.name);
    }
  }
  if (unordered) streams.push_back(kDone);
  return streams;
}

Streams streams_of_regions(const Node& n) {
  std::vector<Effect> effects;
  for (const Graph& region : n.regions) {
    std::vector<Effect> e = graph_effects(region);
    effects.insert(effects.end(), e.begin(), e.end());
  }
  std::sort(effects.begin(), effects.end());
  effects.erase(std::unique(effects.begin(), effects.end()), effects.end());
  return streams_of(effects);
}

const TensorType kToken{DType::Token, {}};

class Threader {
 public:
  // The tokens of the graph being written: the current one per stream, and tokens of unordered
  // ops not yet joined into the done stream.
  struct State {
    std::map<std::string, ValueId> token;
    std::vector<ValueId> unordered;
  };

  static ValueId add_param(Graph& out, const TensorType& type) {
    Node n;
    n.op = OpKind::Parameter;
    n.dtype = type.dtype;
    n.shape = type.shape;
    n.attrs = IndexAttrs{static_cast<std::int64_t>(out.params.size())}.write();
    const ValueId id = out.add(std::move(n));
    out.params.push_back(id);
    return id;
  }

  static ValueId after_all(Graph& out, std::vector<ValueId> tokens, const OpOrigin& origin) {
    if (tokens.size() == 1) return tokens[0];  // a join of one token is that token
    Node n;
    n.op = OpKind::AfterAll;
    n.dtype = DType::Token;
    n.inputs = std::move(tokens);
    n.origin = origin;
    return out.add(std::move(n));
  }

  // Joins the unordered tokens so far into the done stream.
  static void settle(Graph& out, State& state, const OpOrigin& origin) {
    if (state.unordered.empty()) return;
    std::vector<ValueId> all;
    if (auto it = state.token.find(kDone); it != state.token.end()) all.push_back(it->second);
    all.insert(all.end(), state.unordered.begin(), state.unordered.end());
    state.token[kDone] = after_all(out, std::move(all), origin);
    state.unordered.clear();
  }

  // The current token of `stream`; the function's done stream starts with a fresh token.
  static ValueId token_of(Graph& out, State& state, const std::string& stream,
                          const OpOrigin& origin) {
    if (stream == kDone) settle(out, state, origin);
    auto it = state.token.find(stream);
    if (it != state.token.end()) return it->second;
    if (stream != kDone)
      throw InvalidGraphError("thread_effect_tokens: internal error: no token for effect " +
                              stream);
    return state.token[kDone] = after_all(out, {}, origin);
  }

  // Writes the nodes of `g` into `out` with g's parameters bound to `args`, threading tokens
  // through `state`; returns the values of g's outputs.
  std::vector<ValueId> emit(const Graph& g, Graph& out, const std::vector<ValueId>& args,
                            State& state) {
    std::vector<ValueId> map(g.nodes.size(), -1);
    for (std::size_t p = 0; p < g.params.size(); ++p) map[g.params[p]] = args.at(p);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op == OpKind::Parameter || n.op == OpKind::Result) continue;  // bound already
      std::vector<ValueId> inputs;
      for (ValueId in : n.inputs) inputs.push_back(map[in]);
      if (is_host_op(n.op)) {
        emit_host(n, i, std::move(inputs), out, state, map);
      } else if (is_control(n.op) && has_effect(n)) {
        emit_control(n, i, std::move(inputs), out, state, map);
      } else if (is_multi_result(n.op)) {
        Node copy = n;
        copy.inputs = std::move(inputs);
        const ValueId first = out.add_control(std::move(copy));
        for (std::size_t k = 0; k < n.results.size(); ++k)
          map[i + 1 + k] = first + static_cast<ValueId>(k);
      } else {
        Node copy = n;
        copy.inputs = std::move(inputs);
        map[i] = out.add(std::move(copy));
      }
    }
    std::vector<ValueId> outputs;
    for (ValueId o : g.outputs) outputs.push_back(map[o]);
    return outputs;
  }

 private:
  void emit_host(const Node& n, std::size_t i, std::vector<ValueId> inputs, Graph& out,
                 State& state, std::vector<ValueId>& map) {
    const std::optional<Effect> effect = node_effect(n);
    Node copy = n;
    copy.inputs = std::move(inputs);
    ValueId shift = 0;
    if (effect) {
      copy.results.insert(copy.results.begin(), kToken);
      shift = 1;
      if (effect->ordered)
        copy.inputs.insert(copy.inputs.begin(), token_of(out, state, effect->name, n.origin));
    }
    const ValueId first = out.add_control(std::move(copy));
    for (std::size_t k = 0; k < n.results.size(); ++k)
      map[i + 1 + k] = first + shift + static_cast<ValueId>(k);
    if (!effect) return;
    if (effect->ordered) {
      state.token[effect->name] = first;
    } else {
      state.unordered.push_back(first);
    }
  }

  // A region of a control op with the streams' tokens as parameters at `tokens_in` and, when
  // `tokens_out` is set, as outputs at that position.
  Graph region_with_tokens(const Graph& region, std::size_t tokens_in, const Streams& streams,
                           std::optional<std::size_t> tokens_out) {
    Graph r;
    r.name = region.name;
    State state;
    std::vector<ValueId> args;
    for (std::size_t p = 0; p < region.params.size(); ++p) {
      if (p == tokens_in)
        for (const std::string& s : streams) state.token[s] = add_param(r, kToken);
      args.push_back(add_param(r, region.node(region.params[p]).type()));
    }
    if (tokens_in == region.params.size())
      for (const std::string& s : streams) state.token[s] = add_param(r, kToken);
    std::vector<ValueId> outputs = emit(region, r, args, state);
    settle(r, state, {});
    if (tokens_out) {
      std::vector<ValueId> tokens;
      for (const std::string& s : streams) tokens.push_back(state.token.at(s));
      outputs.insert(outputs.begin() + static_cast<std::ptrdiff_t>(*tokens_out), tokens.begin(),
                     tokens.end());
    }
    r.outputs = std::move(outputs);
    return r;
  }

  void emit_control(const Node& n, std::size_t i, std::vector<ValueId> inputs, Graph& out,
                    State& state, std::vector<ValueId>& map) {
    const Streams streams = streams_of_regions(n);
    const auto t = static_cast<std::ptrdiff_t>(streams.size());
    if (prim::primitive(n.op).control_flow == prim::ControlFlow::conditional_loop &&
        !graph_effects(n.regions[0]).empty()) {
      emit_loop_with_effectful_condition(n, i, std::move(inputs), out, state, map, streams);
      return;
    }
    std::vector<ValueId> tokens;
    for (const std::string& s : streams) tokens.push_back(token_of(out, state, s, n.origin));
    const prim::TokenPlacement at = placement_of(n);
    Node copy;
    copy.op = n.op;
    copy.attrs = n.attrs;
    copy.origin = n.origin;
    copy.results = n.results;
    copy.inputs = std::move(inputs);
    copy.inputs.insert(copy.inputs.begin() + static_cast<std::ptrdiff_t>(at.operands_at),
                       tokens.begin(), tokens.end());
    if (at.as_carries)
      copy.attrs.set(WhileAttrs::kCarries,
                     WhileAttrs::read(n.attrs).carries + static_cast<std::int64_t>(t));
    for (std::size_t k = 0; k < n.regions.size(); ++k)
      copy.regions.push_back(region_with_tokens(n.regions[k], at.regions.at(k).params_at, streams,
                                                at.regions.at(k).outputs_at));
    const std::size_t results_at = at.results_at;  // where the tokens sit among the results
    copy.results.insert(copy.results.begin() + static_cast<std::ptrdiff_t>(results_at),
                        static_cast<std::size_t>(t), kToken);
    const ValueId first = out.add_control(std::move(copy));
    for (std::size_t k = 0; k < n.results.size(); ++k)
      map[i + 1 + k] = first + static_cast<ValueId>(k < results_at ? k : k + streams.size());
    for (std::size_t s = 0; s < streams.size(); ++s)
      state.token[streams[s]] = first + static_cast<ValueId>(results_at + s);
  }

  static prim::TokenPlacement placement_of(const Node& n) {
    if (const auto placement = prim::primitive(n.op).token_placement) return placement(n);
    throw InvalidGraphError("thread_effect_tokens: " + std::string(op_name(n.op)) +
                            " states no token placement in its definition (a bug in weft)");
  }

  // A loop whose condition has effects, as JAX lowers while: the condition runs before the loop
  // and at the end of every iteration, its predicate carried; so it runs once more than the
  // body, and every one of its effects is ordered with the body's.
  void emit_loop_with_effectful_condition(const Node& n, std::size_t i, std::vector<ValueId> inputs,
                                          Graph& out, State& state, std::vector<ValueId>& map,
                                          const Streams& streams) {
    const auto carries = static_cast<std::size_t>(WhileAttrs::read(n.attrs).carries);
    const Graph& cond = n.regions[0];
    const Graph& body = n.regions[1];
    std::vector<ValueId> carried(inputs.begin(),
                                 inputs.begin() + static_cast<std::ptrdiff_t>(carries));
    std::vector<ValueId> captured(inputs.begin() + static_cast<std::ptrdiff_t>(carries),
                                  inputs.end());
    const ValueId first_predicate = emit(cond, out, inputs, state).at(0);
    std::vector<ValueId> tokens;
    for (const std::string& s : streams) tokens.push_back(token_of(out, state, s, n.origin));

    // Carries: the predicate, the user's carries, the tokens; then the captured values.
    std::vector<TensorType> carry_types{TensorType{DType::Bool, {}}};
    for (std::size_t k = 0; k < carries; ++k) carry_types.push_back(n.results[k]);
    carry_types.insert(carry_types.end(), streams.size(), kToken);
    auto make_params = [&](Graph& r, std::vector<ValueId>& user, std::vector<ValueId>& token_params,
                           std::vector<ValueId>& captured_params) {
      for (const TensorType& type : carry_types) {
        const ValueId p = add_param(r, type);
        if (r.params.size() == 1) continue;  // the predicate
        if (r.params.size() <= 1 + carries) {
          user.push_back(p);
        } else {
          token_params.push_back(p);
        }
      }
      for (ValueId c : captured) captured_params.push_back(add_param(r, out.node(c).type()));
    };

    Graph new_cond;
    new_cond.name = cond.name;
    {
      std::vector<ValueId> user, token_params, captured_params;
      make_params(new_cond, user, token_params, captured_params);
      new_cond.outputs = {new_cond.params[0]};
    }
    Graph new_body;
    new_body.name = body.name;
    {
      std::vector<ValueId> user, token_params, captured_params;
      make_params(new_body, user, token_params, captured_params);
      State inner;
      for (std::size_t s = 0; s < streams.size(); ++s) inner.token[streams[s]] = token_params[s];
      std::vector<ValueId> args = user;
      args.insert(args.end(), captured_params.begin(), captured_params.end());
      std::vector<ValueId> next = emit(body, new_body, args, inner);
      std::vector<ValueId> cond_args = next;
      cond_args.insert(cond_args.end(), captured_params.begin(), captured_params.end());
      const ValueId predicate = emit(cond, new_body, cond_args, inner).at(0);
      settle(new_body, inner, n.origin);
      new_body.outputs = {predicate};
      new_body.outputs.insert(new_body.outputs.end(), next.begin(), next.end());
      for (const std::string& s : streams) new_body.outputs.push_back(inner.token.at(s));
    }

    Node loop;
    loop.op = n.op;
    loop.origin = n.origin;
    loop.attrs = n.attrs;
    loop.attrs.set(WhileAttrs::kCarries, static_cast<std::int64_t>(carry_types.size()));
    loop.inputs = {first_predicate};
    loop.inputs.insert(loop.inputs.end(), carried.begin(), carried.end());
    loop.inputs.insert(loop.inputs.end(), tokens.begin(), tokens.end());
    loop.inputs.insert(loop.inputs.end(), captured.begin(), captured.end());
    loop.results = carry_types;
    loop.regions.push_back(std::move(new_cond));
    loop.regions.push_back(std::move(new_body));
    const ValueId first = out.add_control(std::move(loop));
    for (std::size_t k = 0; k < carries; ++k) map[i + 1 + k] = first + 1 + static_cast<ValueId>(k);
    for (std::size_t s = 0; s < streams.size(); ++s)
      state.token[streams[s]] = first + 1 + static_cast<ValueId>(carries + s);
  }
};

}  // namespace

bool has_tokens(const Graph& graph) {
  bool found = false;
  for_each_graph(graph, [&](const Graph& g, int) {
    for (const Node& n : g.nodes) {
      found |= n.dtype == DType::Token && !is_multi_result(n.op);
      for (const TensorType& r : n.results) found |= r.dtype == DType::Token;
    }
  });
  return found;
}

bool effects_are_threaded(const Graph& graph) {
  bool threaded = true;
  for_each_graph(graph, [&](const Graph& g, int) {
    for (const Node& n : g.nodes) {
      const std::optional<Effect> effect = node_effect(n);
      if (!effect) continue;
      const bool token_in = !n.inputs.empty() && g.node(n.inputs[0]).dtype == DType::Token;
      const bool token_out = !n.results.empty() && n.results[0].dtype == DType::Token;
      threaded &= token_out && token_in == effect->ordered;
    }
  });
  return threaded;
}

ThreadedGraph thread_effect_tokens(const Graph& traced) {
  verify(traced);
  reject_transformation_only_ops(traced, "thread_effect_tokens");
  if (has_tokens(traced))
    throw InvalidGraphError("thread_effect_tokens: graph '" + traced.name +
                            "' has tokens already; thread a traced graph (without tokens) once");
  ThreadedGraph result;
  result.tokens.params = traced.params.size();
  result.tokens.outputs = traced.outputs.size();
  const std::vector<Effect> effects = graph_effects(traced);
  if (effects.empty()) {
    result.graph = traced;
    return result;
  }
  const Streams streams = streams_of(effects);
  Graph out;
  out.name = traced.name;
  out.callbacks = traced.callbacks;
  std::vector<ValueId> args;
  for (ValueId p : traced.params) args.push_back(Threader::add_param(out, traced.node(p).type()));
  Threader::State state;
  for (const std::string& s : streams) {
    if (s == kDone) continue;
    state.token[s] = Threader::add_param(out, kToken);
    result.tokens.ordered_effects.push_back(s);
  }
  Threader threader;
  std::vector<ValueId> outputs = threader.emit(traced, out, args, state);
  Threader::settle(out, state, {});
  std::vector<ValueId> all;
  for (const std::string& s : result.tokens.ordered_effects) {
    outputs.push_back(state.token.at(s));
    all.push_back(state.token.at(s));
  }
  if (auto done = state.token.find(kDone); done != state.token.end()) all.push_back(done->second);
  outputs.push_back(Threader::after_all(out, std::move(all), {}));
  result.tokens.output_token = true;
  out.outputs = std::move(outputs);
  verify(out);
  result.graph = std::move(out);
  return result;
}

}  // namespace weft

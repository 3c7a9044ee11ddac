// weft::lax control flow (cond, switch_, while_loop, fori_loop, scan) and the closure
// conversion of the functions they trace. Every case of tests/data/control_flow_oracle/
// cases.json (written by tools/oracles/control_flow.py with jax.lax) has a C++ twin here: it is
// traced with jit(...).lower, verified and run in the reference interpreter, and each output
// must match JAX's dtype, shape and values. The OpenCL backend does not run control flow yet,
// so nothing here executes on a device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "support/test_support.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/walk.h"
#include "weft/trace/trace.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using Pair = std::pair<Array, Array>;
using Arrays = std::vector<Array>;

std::string here(int line) {
  return std::string("control_flow_test.cpp:") + std::to_string(line);
}

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

// ---- the C++ twins of the oracle's functions ------------------------------------------------

Arrays collatz(const Arrays& in, const Arrays&) {
  using State = std::tuple<Array, Array>;
  auto [n, steps] = lax::while_loop(
      [](const State& s) { return std::get<0>(s) != 1; },
      [](const State& s) {
        const Array& n = std::get<0>(s);
        Array next = np::where(n % 2 == 0, np::floor_divide(n, np::full_like(n, 2)), 3 * n + 1);
        return State{next, std::get<1>(s) + 1};
      },
      State{in[0], Array::scalar_int(0)});
  return {steps, n};
}

Arrays zero_trip_while(const Arrays& in, const Arrays&) {
  auto r = lax::while_loop([](const Pair& s) { return s.first < 0; },
                           [](const Pair& s) {
                             return Pair{s.first + 1, s.second * 2.0};
                           },
                           Pair{Array::scalar_int(5), in[0]});
  return {r.first, r.second};
}

Arrays zero_trip_fori(const Arrays& in, const Arrays&) {
  auto plus_one = [](const Array&, const Array& v) { return v + 1.0; };
  return {lax::fori_loop(3, 3, plus_one, in[0]), lax::fori_loop(5, 2, plus_one, in[0]),
          lax::fori_loop(in[1], in[2], plus_one, in[0])};
}

Arrays fori_sum_static(const Arrays& in, const Arrays&) {
  const Array& x = in[0];
  return {lax::fori_loop(
      2, 7, [&](const Array& i, const Array& acc) { return acc + i * x; }, np::zeros_like(x))};
}

Arrays fori_sum_array_bounds(const Arrays& in, const Arrays&) {
  return {lax::fori_loop(
      in[0], in[1], [](const Array& i, const Array& acc) { return acc + i * i; },
      Array::scalar_int(0))};
}

auto cumsum_step = [](const Array& c, const Array& x) {
  Array s = c + x;
  return std::make_pair(s, s);
};

Arrays scan_cumsum(const Arrays& in, const Arrays&) {
  auto [c, ys] = lax::scan(cumsum_step, Array::scalar(0.0), in[0]);
  return {c, ys};
}

Arrays scan_reverse(const Arrays& in, const Arrays&) {
  auto [c, ys] = lax::scan(
      [](const Array& c, const Array& x) {
        Array s = c + x;
        return std::make_pair(s, s * 10.0);
      },
      Array::scalar(0.0), in[0], {.reverse = true});
  return {c, ys};
}

Arrays scan_no_xs(const Arrays& in, const Arrays&) {
  auto [c, ys] =
      lax::scan([](const Array& c, const std::tuple<>&) { return std::make_pair(c * 2 + 1, c); },
                in[0], lax::no_xs, {.length = 5});
  return {c, ys};
}

Arrays cond_in_scan(const Arrays& in, const Arrays&) {
  auto [c, ys] = lax::scan(
      [](const Array& c, const Array& x) {
        Array next = lax::cond(
            x > 0, [](const Array& c, const Array& x) { return c + x; },
            [](const Array& c, const Array& x) { return c - 2.0 * x; }, c, x);
        return std::make_pair(next, next);
      },
      Array::scalar(1.0), in[0]);
  return {c, ys};
}

Arrays scan_in_cond(const Arrays& in, const Arrays&) {
  auto cumsum = [](const Array& xs) {
    return lax::scan(cumsum_step, Array::scalar(0.0), xs).second;
  };
  auto cumprod = [](const Array& xs) {
    return lax::scan(
               [](const Array& c, const Array& x) {
                 Array p = c * x;
                 return std::make_pair(p, p);
               },
               Array::scalar(1.0), xs)
        .second;
  };
  return {lax::cond(in[0], cumsum, cumprod, in[1])};
}

Arrays nested_three_deep(const Arrays& in, const Arrays&) {
  const Array& x = in[0];
  auto outer = [&](const Array& i, const Array& acc) {
    Array fi = i.astype(DType::F32);
    auto wbody = [&](const Pair& s) {
      Array fj = s.first.astype(DType::F32);
      auto sbody = [&](const Array& c, const Array& xv) {
        Array c2 = c + xv * (fj + 1.0) - fi;
        return std::make_pair(c2, c2 * 0.5);
      };
      auto [c, ys] = lax::scan(sbody, s.second, x);
      return Pair{s.first + 1, c + np::sum(ys) * 0.125};
    };
    return lax::while_loop([&](const Pair& s) { return s.first < i + 2; }, wbody,
                           Pair{Array::scalar_int(0), acc})
        .second;
  };
  return {lax::fori_loop(0, 3, outer, Array::scalar(0.0))};
}

Arrays switch_index(const Arrays& in, const Arrays&) {
  return {lax::switch_(
      in[0],
      std::make_tuple([](const Array& x) { return x + 1.0; },
                      [](const Array& x) { return x * 2.0; }, [](const Array& x) { return -x; }),
      in[1])};
}

Arrays switch_index_vector(const Arrays& in, const Arrays&) {
  std::vector<std::function<Array(const Array&)>> branches{[](const Array& x) { return x + 1.0; },
                                                           [](const Array& x) { return x * 2.0; },
                                                           [](const Array& x) { return -x; }};
  return {lax::switch_(in[0], branches, in[1])};
}

Arrays mixed_tuple_loop(const Arrays& in, const Arrays&) {
  using State = std::tuple<Array, Array, Array>;
  auto [v, count, done] = lax::while_loop(
      [](const State& s) {
        return np::logical_and(std::get<1>(s) < 10, np::logical_not(std::get<2>(s)));
      },
      [](const State& s) {
        Array v = std::get<0>(s) * 1.5 + 1.0;
        return State{v, std::get<1>(s) + 1, np::sum(v) > 60.0};
      },
      State{in[0], Array::scalar_int(0), Array::scalar_int(0, DType::Bool)});
  return {v, count, done};
}

Arrays closures(const Arrays& in, const Arrays& constants) {
  const Array& x = in[0];
  const Array& w = constants[0];
  auto r = lax::while_loop([](const Pair& s) { return s.first < 3; },
                           [&](const Pair& s) {
                             auto acc = lax::scan(
                                            [&](const Array& c, const Array& wi) {
                                              return std::make_pair(c + wi * x + np::sum(w),
                                                                    std::tuple<>{});
                                            },
                                            s.second, w)
                                            .first;
                             return Pair{s.first + 1, acc};
                           },
                           Pair{Array::scalar_int(0), np::zeros_like(x)});
  return {r.second};
}

Arrays reduce_and_dot(const Arrays& in, const Arrays&) {
  const Array& m = in[0];
  return {lax::fori_loop(
      0, 6,
      [&](const Array&, const Array& v) {
        Array w = np::matmul(m, v);
        return w / np::sum(np::abs(w));
      },
      in[1])};
}

using Twin = Arrays (*)(const Arrays&, const Arrays&);
const std::multimap<std::string, Twin>& twins() {
  static const std::multimap<std::string, Twin> all{
      {"collatz", collatz},
      {"zero_trip_while", zero_trip_while},
      {"zero_trip_fori", zero_trip_fori},
      {"fori_sum_static", fori_sum_static},
      {"fori_sum_array_bounds", fori_sum_array_bounds},
      {"scan_cumsum", scan_cumsum},
      {"scan_reverse", scan_reverse},
      {"scan_no_xs", scan_no_xs},
      {"cond_in_scan", cond_in_scan},
      {"scan_in_cond", scan_in_cond},
      {"nested_three_deep", nested_three_deep},
      {"switch_index", switch_index},
      {"switch_index", switch_index_vector},
      {"mixed_tuple_loop", mixed_tuple_loop},
      {"closures", closures},
      {"reduce_and_dot", reduce_and_dot},
  };
  return all;
}

// ---- the oracle -----------------------------------------------------------------------------

HostArray host_array(const json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const json& values = spec.at("values");
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const json& v = values.at(static_cast<std::size_t>(i));
    if (is_float(*dtype)) {
      h.set_f64(i, v.get<double>());
    } else {
      h.set_i64(i, v.get<std::int64_t>());
    }
  }
  return h;
}

json load_oracle() {
  const auto path = std::filesystem::path(WEFT_CF_ORACLE_DIR) / "cases.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return json::parse(in);
}

// Traces the twin, checks the graph and runs it in the reference interpreter.
std::vector<HostArray> run_twin(Twin twin, const std::vector<HostArray>& inputs,
                                const std::vector<HostArray>& constant_values, Graph* graph_out) {
  Arrays args, constants;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  for (const HostArray& h : constant_values) constants.push_back(Array::from_host(h));
  auto f = jit([&](const Arrays& in) { return twin(in, constants); }, {.name = "twin"});
  Lowered lowered = f.lower(args);
  verify(lowered.graph());
  std::vector<HostArray> feed = inputs;
  for (const Array& c : lowered.captured()) feed.push_back(c.to_host());
  if (graph_out) *graph_out = lowered.graph();
  return interpret(lowered.graph(), feed);
}

TEST(ControlFlowOracle, EveryCaseMatchesJax) {
  const json doc = load_oracle();
  int checked = 0;
  for (const json& c : doc.at("cases")) {
    const std::string name = c.at("name");
    const std::string function = c.at("function");
    std::vector<HostArray> inputs, constants, expected;
    for (const json& a : c.at("inputs")) inputs.push_back(host_array(a));
    for (const json& a : c.at("constants")) constants.push_back(host_array(a));
    for (const json& a : c.at("expected")) expected.push_back(host_array(a));
    auto [first, last] = twins().equal_range(function);
    ASSERT_NE(first, last) << "no C++ twin for " << function;
    for (auto it = first; it != last; ++it) {
      SCOPED_TRACE(name);
      std::vector<HostArray> got;
      try {
        got = run_twin(it->second, inputs, constants, nullptr);
      } catch (const std::exception& e) {
        ADD_FAILURE() << name << " threw: " << e.what();
        continue;
      }
      ASSERT_EQ(got.size(), expected.size()) << name;
      for (std::size_t k = 0; k < got.size(); ++k)
        EXPECT_EQ(testing::compare_arrays(got[k], expected[k], 1e-5, 1e-6), "")
            << name << " output " << k;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

// ---- the graphs -----------------------------------------------------------------------------

const Node* find_op(const Graph& g, OpKind op) {
  for (const Node& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

bool has_op(const Graph& g, OpKind op) {
  return find_op(g, op) != nullptr;
}

TEST(ControlFlowGraph, CapturedValuesBecomeOperandsAndRegionParameters) {
  // A while loop whose body closes over the traced argument y and the concrete array w, and
  // whose condition closes over neither: both regions take (carry, y, w).
  Array w = Array::from_vector<float>({2}, {10, 20});
  auto f = jit(
      [&](const Array& x, const Array& y) {
        return lax::while_loop([](const Pair& s) { return s.first < 4; },
                               [&](const Pair& s) {
                                 return Pair{s.first + 1, s.second * y + w};
                               },
                               Pair{Array::scalar_int(0), x})
            .second;
      },
      {.name = "captures"});
  Array x = Array::from_vector<float>({2}, {1, 2});
  Array y = Array::from_vector<float>({2}, {2, 3});
  Lowered lowered = f.lower(x, y);
  const Graph& g = lowered.graph();
  ASSERT_EQ(g.params.size(), 3u) << "x, y and the captured w";
  ASSERT_EQ(lowered.captured().size(), 1u);
  const Node* loop = find_op(g, OpKind::While);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->inputs.size(), 4u) << "two carries, then y and w";
  EXPECT_EQ(loop->inputs[2], g.params[1]) << "y is passed in as the first captured operand";
  EXPECT_EQ(loop->inputs[3], g.params[2]) << "w is a parameter of the jitted graph";
  ASSERT_EQ(loop->regions.size(), 2u);
  for (const Graph& region : loop->regions) {
    ASSERT_EQ(region.params.size(), 4u) << region.name;
    EXPECT_EQ(region.node(region.params[2]).type(), (TensorType{DType::F32, {2}}));
    EXPECT_EQ(region.node(region.params[3]).type(), (TensorType{DType::F32, {2}}));
  }
  EXPECT_EQ(loop->regions[0].name, "cond");
  EXPECT_EQ(loop->regions[1].name, "body");
  const auto out = interpret(g, std::vector<HostArray>{x.to_host(), y.to_host(), w.to_host()});
  // x -> x*y + w four times: 1 -> 12 -> 34 -> 78 -> 166; 2 -> 26 -> 98 -> 314 -> 962.
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{166, 962}));
}

TEST(ControlFlowGraph, SiblingRegionsShareTheUnionOfTheirCaptures) {
  // cond_fn closes over `limit`, body_fn over `step` and then `limit`: both regions take
  // (carry, limit, step), in first-use order, and the loop passes each once.
  auto f = jit([](const Array& x, const Array& limit, const Array& step) {
    return lax::while_loop([&](const Array& v) { return v < limit; },
                           [&](const Array& v) { return v + step + limit * 0; }, x);
  });
  Array x = Array::from_vector<int>({}, {1});
  Array limit = Array::from_vector<int>({}, {10});
  Array step = Array::from_vector<int>({}, {4});
  const Graph g = f.lower(x, limit, step).graph();
  const Node* loop = find_op(g, OpKind::While);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->inputs, (std::vector<ValueId>{g.params[0], g.params[1], g.params[2]}));
  for (const Graph& region : loop->regions) EXPECT_EQ(region.params.size(), 3u) << region.name;
  const Graph& cond = loop->regions[0];
  const Node* lt = find_op(cond, OpKind::Lt);
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(lt->inputs[1], cond.params[1]) << "limit is the first capture";
  const auto out =
      interpret(g, std::vector<HostArray>{x.to_host(), limit.to_host(), step.to_host()});
  EXPECT_EQ(out[0].to_vector<int>(), (std::vector<int>{13}));  // 1, 5, 9, 13
}

TEST(ControlFlowGraph, CapturesThreadThroughEveryLevel) {
  // A scan body two regions down uses the jitted argument: each level gets a parameter for it.
  auto f = jit([](const Array& x) {
    return lax::fori_loop(
        0, 2,
        [&](const Array&, const Array& acc) {
          return lax::cond(
              acc < 100.0,
              [&](const Array& a) {
                return lax::scan(
                           [&](const Array& c, const std::tuple<>&) {
                             return std::make_pair(c + np::sum(x), std::tuple<>{});
                           },
                           a, lax::no_xs, {.length = 3})
                    .first;
              },
              [](const Array& a) { return a; }, acc);
        },
        Array::scalar(0.0));
  });
  Array x = Array::from_vector<float>({3}, {1, 2, 3});
  const Graph g = f.lower(x).graph();
  verify(g);
  const Node* fori = find_op(g, OpKind::Scan);
  ASSERT_NE(fori, nullptr);
  EXPECT_EQ(fori->inputs.back(), g.params[0]) << "x enters the fori_loop's scan as a capture";
  const Graph& fori_body = fori->regions[0];
  const Node* cond = find_op(fori_body, OpKind::Cond);
  ASSERT_NE(cond, nullptr);
  ASSERT_EQ(cond->regions.size(), 2u);
  // Both branches take (acc, x), though only the true branch uses x.
  for (const Graph& branch : cond->regions) EXPECT_EQ(branch.params.size(), 2u) << branch.name;
  const Node* inner = find_op(cond->regions[1], OpKind::Scan);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->regions[0].params.size(), 3u) << "iteration, carry, x";
  const auto out = interpret(g, std::vector<HostArray>{x.to_host()});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{36}));
}

TEST(ControlFlowGraph, OmnistagingHoldsInsideRegions) {
  // 1 + 1 on constants inside a body is a node of the body, not folded and not hoisted.
  auto f = jit([](const Array& x) {
    return lax::fori_loop(
        0, 3,
        [](const Array&, const Array& v) {
          return v * (Array::scalar_int(1) + Array::scalar_int(1));
        },
        x);
  });
  Array x = Array::from_vector<int>({}, {3});
  const std::int64_t eager_before = detail::eager_op_count();
  const Graph g = f.lower(x).graph();
  EXPECT_EQ(detail::eager_op_count(), eager_before) << "tracing must not run ops eagerly";
  EXPECT_FALSE(has_op(g, OpKind::Add)) << "the add belongs to the body";
  const Node* scan = find_op(g, OpKind::Scan);
  ASSERT_NE(scan, nullptr);
  const Graph& body = scan->regions[0];
  const Node* add = find_op(body, OpKind::Add);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(body.node(add->inputs[0]).op, OpKind::Constant);
  EXPECT_EQ(body.node(add->inputs[1]).op, OpKind::Constant);
  EXPECT_EQ(interpret(g, std::vector<HostArray>{x.to_host()})[0].to_vector<int>(),
            (std::vector<int>{24}));
}

TEST(ControlFlowGraph, CondRegionsAreInIndexOrder) {
  // lax::cond(pred, true_fn, false_fn) is cond with regions [false_fn, true_fn].
  auto f = jit([](const Array& p, const Array& x) {
    return lax::cond(
        p, [](const Array& x) { return x + 1.0; }, [](const Array& x) { return x - 1.0; }, x);
  });
  Array x = Array::from_vector<float>({}, {5});
  const Graph g = f.lower(Array::from_vector<bool>({}, {true}), x).graph();
  const Node* cond = find_op(g, OpKind::Cond);
  ASSERT_NE(cond, nullptr);
  EXPECT_TRUE(has_op(cond->regions[0], OpKind::Sub));
  EXPECT_TRUE(has_op(cond->regions[1], OpKind::Add));
  for (bool p : {true, false}) {
    const auto out =
        interpret(g, std::vector<HostArray>{HostArray::from<bool>({}, {p}), x.to_host()});
    EXPECT_EQ(out[0].to_vector<float>()[0], p ? 6.0f : 4.0f);
  }
}

TEST(ControlFlowGraph, IntegerPredicateMeansNonZero) {
  auto f = jit([](const Array& p, const Array& x) {
    return lax::cond(
        p, [](const Array& x) { return x + 1.0; }, [](const Array& x) { return x - 1.0; }, x);
  });
  Array x = Array::from_vector<float>({}, {5});
  const Graph g = f.lower(Array::from_vector<int>({}, {0}), x).graph();
  for (int p : {0, 3, -1}) {
    const auto out =
        interpret(g, std::vector<HostArray>{HostArray::from<int>({}, {p}), x.to_host()});
    EXPECT_EQ(out[0].to_vector<float>()[0], p != 0 ? 6.0f : 4.0f) << p;
  }
}

TEST(ControlFlowGraph, ContainersOfEveryKindAsCarries) {
  // Maps, std::arrays and vectors as a scan carry; a static value rides along unchanged.
  using Carry =
      std::tuple<std::map<std::string, Array>, std::array<Array, 2>, std::vector<Array>, int>;
  auto f = jit([](const Array& x) {
    Carry init{{{"a", x}, {"b", x * 2.0}}, {x, x}, {x}, 7};
    auto [last, ys] = lax::scan(
        [](const Carry& c, const Array& row) {
          const auto& [m, arr, vec, seven] = c;
          Carry next{{{"a", m.at("a") + row}, {"b", m.at("b")}},
                     {arr[0] * 2.0, arr[1]},
                     {vec[0] - row},
                     seven};
          return std::make_pair(next, std::get<0>(next).at("a"));
        },
        init, np::arange(4.0));
    EXPECT_EQ(std::get<3>(last), 7);
    return std::make_tuple(std::get<0>(last).at("a"), std::get<1>(last)[0], std::get<2>(last)[0],
                           ys);
  });
  Array x = Array::from_vector<float>({}, {1});
  const Graph g = f.lower(x).graph();
  const auto out = interpret(g, std::vector<HostArray>{x.to_host()});
  EXPECT_EQ(out[0].to_vector<float>()[0], 7.0f);   // 1 + 0+1+2+3
  EXPECT_EQ(out[1].to_vector<float>()[0], 16.0f);  // 1 * 2^4
  EXPECT_EQ(out[2].to_vector<float>()[0], -5.0f);  // 1 - 6
  EXPECT_EQ(out[3].to_vector<float>(), (std::vector<float>{1, 2, 4, 7}));
}

TEST(ControlFlowGraph, PrintGraphOfRegions) {
  auto f = jit(
      [](const Array& x) {
        return lax::fori_loop(
            0, 3, [](const Array& i, const Array& v) { return v + i; }, x);
      },
      {.name = "printed"});
  const Graph g = f.lower(Array::from_vector<int>({}, {1})).graph();
  std::string text;
  try {
    text = print_graph(g);
  } catch (const std::exception& e) {
    GTEST_SKIP() << "the printer does not print regions yet: " << e.what();
  }
  EXPECT_THAT(text, HasSubstr("scan"));
  EXPECT_THAT(text, HasSubstr("body("));
  EXPECT_THAT(text, HasSubstr("printed"));
}

TEST(ControlFlowGraph, TracedRegionsRoundTripThroughTheText) {
  // Regions are named as the parser names them (region_name), so a traced graph with every
  // control op parses back equal.
  Array w = Array::from_vector<float>({2}, {1, 2});
  auto f = jit([&](const Array& x, const Array& i) {
    Array a = lax::while_loop([](const Array& v) { return np::sum(v) < 100.0; },
                              [&](const Array& v) { return v * 2.0 + w; }, x);
    Array b = lax::switch_(
        i, std::make_tuple([](const Array& v) { return v; }, [](const Array& v) { return -v; }), a);
    return lax::scan(cumsum_step, Array::scalar(0.0), b, {.reverse = true}).second;
  });
  const Graph g =
      f.lower(Array::from_vector<float>({2}, {1, 1}), Array::from_vector<int>({}, {1})).graph();
  const std::string text = print_graph(g);
  Graph parsed;
  try {
    parsed = parse_graph(text);
  } catch (const ParseError& e) {
    GTEST_SKIP() << "the parser does not read regions yet: " << e.what();
  }
  EXPECT_TRUE(parsed == g) << text << "\n---\n" << print_graph(parsed);
}

TEST(ControlFlowGraph, NestedJitInsideABodyIsInlined) {
  auto inner = jit([](const Array& v) { return v * 3; });
  auto f = jit([&](const Array& x) {
    return lax::fori_loop(
        0, 2, [&](const Array&, const Array& v) { return inner(v); }, x);
  });
  Array x = Array::from_vector<int>({}, {2});
  const Graph g = f.lower(x).graph();
  EXPECT_EQ(inner.trace_count(), 0);
  EXPECT_EQ(interpret(g, std::vector<HostArray>{x.to_host()})[0].to_vector<int>(),
            (std::vector<int>{18}));
}

// ---- escaped tracers and concretization --------------------------------------------------

TEST(ControlFlowErrors, ATracerLeakedFromABodyHasEscaped) {
  Array leaked;
  int line = 0;
  auto f = jit([&](const Array& x) {
    return lax::fori_loop(
        0, 2,
        [&](const Array&, const Array& v) {
          line = __LINE__ + 1;
          leaked = np::exp(v);
          return v;
        },
        x);
  });
  f.lower(Array::from_vector<float>({}, {1}));
  std::string msg = message_of<EscapedTracerError>([&] { (void)(leaked + 1.0); });
  EXPECT_THAT(msg, HasSubstr("after its trace ended"));
  EXPECT_THAT(msg, HasSubstr(here(line)));
  EXPECT_THAT(msg, HasSubstr("fori_loop"));
}

TEST(ControlFlowErrors, ATracerOfASiblingRegionHasEscaped) {
  // cond_fn's tracers are dead by the time body_fn is traced.
  Array from_cond;
  auto f = jit([&](const Array& x) {
    return lax::while_loop(
        [&](const Array& v) {
          from_cond = v * 2;
          return v < 10;
        },
        [&](const Array& v) { return v + from_cond; }, x);
  });
  std::string msg =
      message_of<EscapedTracerError>([&] { f.lower(Array::from_vector<int>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr("after its trace ended"));
  EXPECT_THAT(msg, HasSubstr("cond_fn"));
}

TEST(ControlFlowErrors, OnlyRegionsCaptureTracersOfEnclosingTraces) {
  // A jit lowered inside another trace is a trace of its own, not a region: it may not close
  // over the outer function's tracers.
  auto f = jit([](const Array& x) {
    auto inner = jit([&](const Array& v) { return v + x; });
    (void)inner.lower(Array::from_vector<float>({}, {1}));
    return x;
  });
  std::string msg =
      message_of<EscapedTracerError>([&] { f.lower(Array::from_vector<float>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr("not nested in it as a control-flow region"));
}

TEST(ControlFlowErrors, ConcretizationOfARegionParameterSaysWhatItIs) {
  auto f = jit([](const Array& x) {
    return lax::fori_loop(
        0, 2, [](const Array& i, const Array& v) { return v + static_cast<float>(i.item<int>()); },
        x);
  });
  std::string msg =
      message_of<ConcretizationError>([&] { f.lower(Array::from_vector<float>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr("parameter 0 of the traced function (a carry, operand, row of xs or "
                             "loop index"));
  EXPECT_THAT(msg, HasSubstr("'body_fn' (fori_loop at"));
}

TEST(ControlFlowErrors, ConcretizationSuggestsStructuredControlFlow) {
  int line = 0;
  auto f = jit([&](const Array& x) {
    line = __LINE__ + 1;
    if ((x > 0).item<bool>()) return x;
    return -x;
  });
  std::string msg =
      message_of<ConcretizationError>([&] { f.lower(Array::from_vector<float>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr(here(line)));
  EXPECT_THAT(msg, HasSubstr("lax::cond"));
  EXPECT_THAT(msg, HasSubstr("lax::switch_"));
  EXPECT_THAT(msg, HasSubstr("lax::while_loop"));
}

TEST(ControlFlowErrors, ConcretizationInsideABodyNamesTheRegion) {
  auto f = jit(
      [](const Array& x) {
        return lax::while_loop([](const Array& v) { return v < 10; },
                               [](const Array& v) {
                                 if (v > 5) return v * 2;
                                 return v + 1;
                               },
                               x);
      },
      {.name = "outer"});
  std::string msg =
      message_of<ConcretizationError>([&] { f.lower(Array::from_vector<int>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr("'body_fn' (while_loop at"));
  EXPECT_THAT(msg, HasSubstr("inside 'outer'"));
  EXPECT_THAT(msg, HasSubstr("lax::cond"));
}

// ---- user errors: typed, naming the user's line ----------------------------------------------

template <typename E, typename F>
void expect_traced_error(F&& fn, const int& line, std::vector<std::string> words) {
  std::string msg = message_of<E>(fn);
  EXPECT_THAT(msg, HasSubstr(here(line)));
  for (const std::string& w : words) EXPECT_THAT(msg, HasSubstr(w));
}

Array f32s(std::vector<float> v) {
  return Array::from_vector<float>({static_cast<std::int64_t>(v.size())}, v);
}

TEST(ControlFlowErrors, BranchesWithDifferentTrees) {
  int line = 0;
  auto f = jit([&](const Array& p, const Array& x) {
    line = __LINE__ + 1;
    return lax::cond(
        p, [](const Array& x) { return std::vector<Array>{x}; },
        [](const Array& x) {
          return std::vector<Array>{x, x};
        },
        x);
  });
  expect_traced_error<TreeStructureError>(
      [&] { f.lower(Array::from_vector<bool>({}, {true}), f32s({1})); }, line,
      {"tree structure", "true_fn", "false_fn", "vector(Array)", "vector(Array, Array)"});
}

TEST(ControlFlowErrors, BranchesWithDifferentDtypesNameTheLeaf) {
  int line = 0;
  auto f = jit([&](const Array& p, const Array& x) {
    line = __LINE__ + 1;
    return lax::cond(
        p,
        [](const Array& x) {
          return Pair{x, x};
        },
        [](const Array& x) {
          return Pair{x, x.astype(DType::I32)};
        },
        x);
  });
  expect_traced_error<DTypeError>(
      [&] {
        f.lower(Array::from_vector<bool>({}, {true}), f32s({1, 2}));
      },
      line, {"output.second", "f32[2]", "i32[2]", "false_fn"});
}

TEST(ControlFlowErrors, SwitchBranchesWithDifferentShapes) {
  int line = 0;
  auto f = jit([&](const Array& i, const Array& x) {
    line = __LINE__ + 1;
    return lax::switch_(i,
                        std::make_tuple([](const Array& x) { return x; },
                                        [](const Array& x) { return np::sum(x); }),
                        x);
  });
  expect_traced_error<ShapeError>(
      [&] {
        f.lower(Array::from_vector<int>({}, {0}), f32s({1, 2}));
      },
      line, {"output", "f32[2]", "f32[]", "branch 1"});
}

TEST(ControlFlowErrors, BodyThatChangesItsCarryType) {
  int line = 0;
  auto f = jit([&](const Array& x) {
    line = __LINE__ + 1;
    return lax::while_loop([](const Pair& s) { return s.first < 3; },
                           [](const Pair& s) {
                             return Pair{s.first + 1.5, s.second};
                           },
                           Pair{Array::scalar_int(0), x});
  });
  expect_traced_error<DTypeError>([&] { f.lower(f32s({1})); }, line,
                                  {"carry.first", "i32[]", "f32[]", "body_fn", "astype"});
}

TEST(ControlFlowErrors, BodyThatChangesItsCarryShape) {
  int line = 0;
  auto f = jit([&](const Array& x) {
    line = __LINE__ + 1;
    return lax::fori_loop(
        0, 3, [](const Array&, const Array& v) { return np::sum(v); }, x);
  });
  expect_traced_error<ShapeError>(
      [&] {
        f.lower(f32s({1, 2}));
      },
      line, {"fori_loop", "carry", "f32[2]", "f32[]"});
}

TEST(ControlFlowErrors, BodyThatChangesItsCarryTree) {
  int line = 0;
  auto g = jit([&](const Array& x) {
    line = __LINE__ + 1;
    return lax::scan(
        [](const std::vector<Array>& c, const Array& row) {
          return std::make_pair(std::vector<Array>{c[0] + row, c[0]}, row);
        },
        std::vector<Array>{np::sum(x)}, x);
  });
  expect_traced_error<TreeStructureError>(
      [&] {
        g.lower(f32s({1, 2}));
      },
      line, {"scan", "tree structure", "init", "vector(Array)", "vector(Array, Array)"});
}

TEST(ControlFlowErrors, CondFnMustReturnABoolScalar) {
  int line = 0;
  auto f = jit([&](const Array& x) {
    line = __LINE__ + 1;
    return lax::while_loop([](const Array& v) { return v; }, [](const Array& v) { return v; }, x);
  });
  expect_traced_error<DTypeError>([&] { f.lower(Array::from_vector<int>({}, {1})); }, line,
                                  {"cond_fn", "bool scalar", "i32[]"});
  expect_traced_error<ShapeError>(
      [&] {
        f.lower(Array::from_vector<bool>({2}, {true, false}));
      },
      line, {"cond_fn", "bool scalar", "bool[2]"});
}

TEST(ControlFlowErrors, PredicateAndIndexTypes) {
  auto same = [](const Array& x) { return x; };
  int line = 0;
  Array x = f32s({1});
  auto pred_vector = jit([&](const Array& p) {
    line = __LINE__ + 1;
    return lax::cond(p, same, same, x);
  });
  expect_traced_error<ShapeError>(
      [&] {
        pred_vector.lower(Array::from_vector<bool>({2}, {true, true}));
      },
      line, {"cond", "predicate", "scalar", "bool[2]"});
  expect_traced_error<DTypeError>([&] { pred_vector.lower(Array::from_vector<float>({}, {1})); },
                                  line, {"cond", "predicate", "bool or an integer", "f32[]"});
  auto switch_on = jit([&](const Array& i) {
    line = __LINE__ + 1;
    return lax::switch_(i, std::make_tuple(same, same), x);
  });
  expect_traced_error<DTypeError>([&] { switch_on.lower(Array::from_vector<bool>({}, {true})); },
                                  line, {"switch_", "index", "integer", "bool[]", "lax::cond"});
  expect_traced_error<DTypeError>([&] { switch_on.lower(Array::from_vector<float>({}, {1})); },
                                  line, {"switch_", "index", "integer", "f32[]"});
  expect_traced_error<ShapeError>([&] { switch_on.lower(Array::from_vector<int>({1}, {1})); }, line,
                                  {"switch_", "index", "scalar", "i32[1]"});
  std::vector<std::function<Array(const Array&)>> none;
  auto no_branches = jit([&](const Array& i) {
    line = __LINE__ + 1;
    return lax::switch_(i, none, x);
  });
  expect_traced_error<InvalidArgumentError>(
      [&] { no_branches.lower(Array::from_vector<int>({}, {0})); }, line, {"at least one branch"});
}

TEST(ControlFlowErrors, ScanLengths) {
  int line = 0;
  auto step = [](const Array& c, const Pair& row) { return std::make_pair(c, row.first); };
  auto ragged = jit([&](const Array& a, const Array& b) {
    line = __LINE__ + 1;
    return lax::scan(step, Array::scalar(0.0), Pair{a, b}).second;
  });
  expect_traced_error<ShapeError>(
      [&] {
        ragged.lower(f32s({1, 2, 3}), f32s({1, 2}));
      },
      line, {"leading axis", "xs.first", "f32[3]", "xs.second", "f32[2]"});
  auto wrong_length = jit([&](const Array& a) {
    line = __LINE__ + 1;
    return lax::scan(cumsum_step, Array::scalar(0.0), a, {.length = 4}).second;
  });
  expect_traced_error<ShapeError>(
      [&] {
        wrong_length.lower(f32s({1, 2, 3}));
      },
      line, {"length=4", "leading axis 3"});
  auto scalar_xs = jit([&](const Array& a) {
    line = __LINE__ + 1;
    return lax::scan(cumsum_step, Array::scalar(0.0), a).second;
  });
  expect_traced_error<ShapeError>([&] { scalar_xs.lower(Array::from_vector<float>({}, {1})); },
                                  line, {"xs", "scalar", "leading axis"});
  auto no_length = jit([&](const Array& a) {
    line = __LINE__ + 1;
    return lax::scan([](const Array& c, const std::tuple<>&) { return std::make_pair(c, c); }, a,
                     lax::no_xs)
        .second;
  });
  expect_traced_error<InvalidArgumentError>([&] { no_length.lower(f32s({1})); }, line,
                                            {"no length", ".length"});
}

TEST(ControlFlowErrors, ForiLoopBounds) {
  auto body = [](const Array& i, const Array& v) { return v + i; };
  int line = 0;
  auto float_bound = jit([&](const Array& hi) {
    line = __LINE__ + 1;
    return lax::fori_loop(0, hi, body, Array::scalar(0.0));
  });
  expect_traced_error<DTypeError>([&] { float_bound.lower(Array::from_vector<float>({}, {3})); },
                                  line, {"fori_loop", "upper bound", "integer scalar", "f32[]"});
  expect_traced_error<ShapeError>([&] { float_bound.lower(Array::from_vector<int>({1}, {3})); },
                                  line, {"fori_loop", "upper bound", "integer scalar", "i32[1]"});
  auto mixed = jit([&](const Array& lo, const Array& hi) {
    line = __LINE__ + 1;
    return lax::fori_loop(lo, hi, body, Array::scalar_int(0));
  });
  expect_traced_error<DTypeError>(
      [&] {
        mixed.lower(Array::from_vector<int>({}, {0}), Array::from_vector<std::uint32_t>({}, {3}));
      },
      line, {"one dtype", "i32[]", "u32[]"});
  expect_traced_error<InvalidArgumentError>(
      [&] {
        line = __LINE__ + 1;
        lax::fori_loop(0, std::int64_t{1} << 40, body, Array::scalar(0.0));
      },
      line, {"i32 range"});
}

TEST(ControlFlowErrors, EagerCallsCheckBeforeCompiling) {
  // Outside jit the same checks run before anything is compiled.
  int line = 0;
  std::string msg = message_of<DTypeError>([&] {
    line = __LINE__ + 1;
    lax::while_loop([](const Array& v) { return v; }, [](const Array& v) { return v; },
                    Array::from_vector<int>({}, {1}));
  });
  EXPECT_THAT(msg, HasSubstr(here(line)));
  EXPECT_THAT(msg, HasSubstr("cond_fn must return a bool scalar"));
}

}  // namespace
}  // namespace weft

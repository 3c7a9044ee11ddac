// Helpers for the reference-interpreter and HostArray tests: literal arrays, and graphs built
// node by node and run through interpret().
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "support/test_support.h"
#include "weft/host_array.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/graph.h"

namespace weft::testing {

using I64s = std::vector<std::int64_t>;

inline constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
inline constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
inline constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::uint32_t kU32Max = std::numeric_limits<std::uint32_t>::max();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// 1-D arrays by default; pass a shape for anything else.
template <typename T>
HostArray arr(std::vector<T> values, Shape shape = {-1}) {
  if (shape == Shape{-1}) shape = {static_cast<std::int64_t>(values.size())};
  return HostArray::from<T>(shape, values);
}
template <typename T>
HostArray scalar(T value) {
  return HostArray::from<T>({}, {value});
}

// Exact comparison (NaN matches NaN).
#define EXPECT_ARRAY_EQ(actual, expected) \
  EXPECT_EQ(::weft::testing::compare_arrays(actual, expected, 0, 0), "")

inline ValueId add_node(Graph& g, OpKind op, DType dtype, Shape shape, std::vector<ValueId> inputs,
                        Attrs attrs) {
  Node n;
  n.op = op;
  n.dtype = dtype;
  n.shape = std::move(shape);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  return g.add(std::move(n));
}

inline ValueId add_param(Graph& g, DType dtype, Shape shape) {
  const auto index = static_cast<std::int64_t>(g.params.size());
  ValueId id = add_node(g, OpKind::Parameter, dtype, shape, {}, Attrs{{"index", index}});
  g.params.push_back(id);
  return id;
}

// Sets the outputs, verifies the graph and interprets it.
inline std::vector<HostArray> run(Graph& g, std::vector<ValueId> outputs,
                                  const std::vector<HostArray>& inputs) {
  g.outputs = std::move(outputs);
  verify(g);
  return interpret(g, inputs);
}

// A graph of one op applied to parameters holding `inputs`.
inline HostArray run_op(OpKind op, DType dtype, Shape shape, const std::vector<HostArray>& inputs,
                        Attrs attrs = {}) {
  Graph g;
  std::vector<ValueId> ins;
  for (const auto& in : inputs) ins.push_back(add_param(g, in.dtype(), in.shape()));
  ValueId out = add_node(g, op, dtype, shape, ins, attrs);
  return run(g, {out}, inputs).at(0);
}

// Elementwise ops keep the first operand's type.
inline HostArray run_same(OpKind op, const std::vector<HostArray>& inputs) {
  return run_op(op, inputs[0].dtype(), inputs[0].shape(), inputs);
}
inline HostArray run_compare(OpKind op, const HostArray& a, const HostArray& b) {
  return run_op(op, DType::Bool, a.shape(), {a, b});
}
inline HostArray run_convert(DType to, const HostArray& x) {
  return run_op(OpKind::Convert, to, x.shape(), {x});
}

}  // namespace weft::testing

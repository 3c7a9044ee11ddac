// The interpreter's internal value representation and the evaluators of each op class.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "weft/dtype.h"
#include "weft/host_array.h"
#include "weft/ir/graph.h"
#include "weft/shape.h"

namespace weft::interp {

// A node's value during interpretation. Float dtypes live in `f`, each element already rounded
// to the dtype. Bool and integer dtypes live in `i` in canonical form (bool 0/1, i32 sign-
// extended, u32 zero-extended), so int64 comparisons order every integer dtype correctly.
struct Value {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> f;
  std::vector<std::int64_t> i;

  std::int64_t size() const { return num_elements(shape); }
};

Value make_value(DType dtype, Shape shape);  // zero-filled storage of the right kind
Value from_host(const HostArray& host);
HostArray to_host(const Value& value);

// Rounds a double result to a float dtype (f32 results are rounded after every op).
inline double round_to(DType t, double x) {
  return t == DType::F32 ? static_cast<double>(static_cast<float>(x)) : x;
}

// Reduces a two's-complement result to the canonical form of a bool or integer dtype.
inline std::int64_t wrap_to(DType t, std::uint64_t x) {
  switch (t) {
    case DType::Bool:
      return x != 0 ? 1 : 0;
    case DType::I32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(x));
    case DType::U32:
      return static_cast<std::int64_t>(x & 0xFFFFFFFFu);
    default:
      return static_cast<std::int64_t>(x);
  }
}
inline std::int64_t wrap_to(DType t, std::int64_t x) {
  return wrap_to(t, static_cast<std::uint64_t>(x));
}

// Smallest and largest value of an integer dtype, in canonical form.
std::int64_t int_lowest(DType t);
std::int64_t int_highest(DType t);

using Operands = std::span<const Value* const>;

// debug_print and host_call; returns the node's results in order (host_call runs
// its callback from `callbacks`, the function's table).
std::vector<Value> eval_host(const Node& node, Operands operands,
                             const std::vector<std::shared_ptr<const HostCallback>>& callbacks);

// Runs a region on its parameters' values and returns its outputs' values.
using RunGraph = std::function<std::vector<Value>(const Graph&, std::vector<Value>)>;
// Control ops and the custom ops (their definitions' evaluate_control); returns the node's results
// in order.
std::vector<Value> eval_control(const Node& node, Operands operands, const RunGraph& run);

}  // namespace weft::interp

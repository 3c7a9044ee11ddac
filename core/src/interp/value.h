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
// to the dtype. Bool and integer dtypes live in `i` in canonical form (bool 0/1, signed ints
// sign-extended, u8/u16/u32 zero-extended), so int64 comparisons order them correctly; u64
// holds its bit pattern, so it orders, divides and converts through the helpers below
// (int_less, int_div, int_to_double), never through plain int64 operators.
struct Value {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> f;
  std::vector<std::int64_t> i;

  std::int64_t size() const { return num_elements(shape); }
};

Value make_value(DType dtype, Shape shape);  // zero-filled storage of the right kind

// Storage of large values released during a run (after their last use) is kept and handed to
// the next make_value of a similar size: allocating a fresh block of megabytes and touching
// its pages costs the kernel more than the op computing into it, and loop bodies make the
// same sizes every iteration. Kept only while a RecyclingScope is open on the thread.
void recycle(Value&& value);
class RecyclingScope {
 public:
  RecyclingScope();
  ~RecyclingScope();  // the outermost scope frees what was kept
  RecyclingScope(const RecyclingScope&) = delete;
  RecyclingScope& operator=(const RecyclingScope&) = delete;
};
Value from_host(const HostArray& host);
HostArray to_host(const Value& value);

// Rounds a double result to a float dtype (f32 results are rounded after every op). f16 and
// bf16 compute in f32 and round from there, as XLA's CPU backend does.
inline double round_to(DType t, double x) {
  switch (t) {
    case DType::F32:
      return static_cast<float>(x);
    case DType::F16:
      return float16::to_float(float16::from_float(static_cast<float>(x)));
    case DType::BF16:
      return bfloat16::to_float(bfloat16::from_float(static_cast<float>(x)));
    default:
      return x;
  }
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
    case DType::I8:
      return static_cast<std::int8_t>(static_cast<std::uint8_t>(x));
    case DType::U8:
      return static_cast<std::int64_t>(x & 0xFFu);
    case DType::I16:
      return static_cast<std::int16_t>(static_cast<std::uint16_t>(x));
    case DType::U16:
      return static_cast<std::int64_t>(x & 0xFFFFu);
    default:  // i64 and u64 keep all 64 bits
      return static_cast<std::int64_t>(x);
  }
}
inline std::int64_t wrap_to(DType t, std::int64_t x) {
  return wrap_to(t, static_cast<std::uint64_t>(x));
}

// Smallest and largest value of an integer dtype, in canonical form (u64's largest is the
// all-ones bit pattern, -1 as an int64).
std::int64_t int_lowest(DType t);
std::int64_t int_highest(DType t);

// Integer order, division and conversion in canonical form: unsigned for u64.
inline bool int_less(DType t, std::int64_t a, std::int64_t b) {
  if (t == DType::U64) return static_cast<std::uint64_t>(a) < static_cast<std::uint64_t>(b);
  return a < b;
}
inline std::int64_t int_max(DType t, std::int64_t a, std::int64_t b) {
  return int_less(t, a, b) ? b : a;
}
inline std::int64_t int_min(DType t, std::int64_t a, std::int64_t b) {
  return int_less(t, b, a) ? b : a;
}
// a / b and a % b for b != 0 (callers handle zero and the signed overflow case).
inline std::int64_t int_div(DType t, std::int64_t a, std::int64_t b) {
  if (t == DType::U64)
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) / static_cast<std::uint64_t>(b));
  return a / b;
}
inline std::int64_t int_rem(DType t, std::int64_t a, std::int64_t b) {
  if (t == DType::U64)
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) % static_cast<std::uint64_t>(b));
  return a % b;
}
// The integer's value as a double (one rounding, from the exact integer).
inline double int_to_double(DType t, std::int64_t x) {
  if (t == DType::U64) return static_cast<double>(static_cast<std::uint64_t>(x));
  return static_cast<double>(x);
}
inline float int_to_float(DType t, std::int64_t x) {
  if (t == DType::U64) return static_cast<float>(static_cast<std::uint64_t>(x));
  return static_cast<float>(x);
}

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

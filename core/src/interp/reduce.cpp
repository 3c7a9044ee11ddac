// Reductions. The operand is first transposed so the kept axes lead and the reduced axes
// trail; each result element then reduces one contiguous row-major block.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "index.h"

namespace weft::interp {

namespace {

using U64 = std::uint64_t;

// Floats accumulate in double and round once; max/min propagate NaN.
double reduce_floats(OpKind op, const double* x, std::int64_t n) {
  switch (op) {
    case OpKind::ReduceSum: {
      double acc = 0.0;
      for (std::int64_t k = 0; k < n; ++k) acc += x[k];
      return acc;
    }
    case OpKind::ReduceProd: {
      double acc = 1.0;
      for (std::int64_t k = 0; k < n; ++k) acc *= x[k];
      return acc;
    }
    case OpKind::ReduceMax: {
      double acc = -std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < n; ++k) {
        if (std::isnan(x[k])) return x[k];
        if (x[k] > acc || (x[k] == acc && !std::signbit(x[k]))) acc = x[k];
      }
      return acc;
    }
    default: {  // ReduceMin
      double acc = std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < n; ++k) {
        if (std::isnan(x[k])) return x[k];
        if (x[k] < acc || (x[k] == acc && std::signbit(x[k]))) acc = x[k];
      }
      return acc;
    }
  }
}

std::int64_t reduce_ints(OpKind op, DType t, const std::int64_t* x, std::int64_t n) {
  switch (op) {
    case OpKind::ReduceSum: {
      U64 acc = 0;
      for (std::int64_t k = 0; k < n; ++k) acc += static_cast<U64>(x[k]);
      return wrap_to(t, acc);
    }
    case OpKind::ReduceProd: {
      U64 acc = 1;
      for (std::int64_t k = 0; k < n; ++k) acc *= static_cast<U64>(x[k]);
      return wrap_to(t, acc);
    }
    case OpKind::ReduceMax: {
      std::int64_t acc = int_lowest(t);
      for (std::int64_t k = 0; k < n; ++k) acc = std::max(acc, x[k]);
      return acc;
    }
    default: {  // ReduceMin
      std::int64_t acc = int_highest(t);
      for (std::int64_t k = 0; k < n; ++k) acc = std::min(acc, x[k]);
      return acc;
    }
  }
}

// The position of the first extreme element; for floats, of the first NaN if there is one.
template <typename T>
std::int64_t arg_extreme(bool is_max, const T* x, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x[k])) return k;
    }
    if (is_max ? x[k] > x[best] : x[k] < x[best]) best = k;
  }
  return best;
}

}  // namespace

Value eval_reduce(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const auto& axes = node.attrs.get_ints("axes");
  std::vector<std::int64_t> perm;
  std::int64_t block = 1;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.shape.size()); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) perm.push_back(d);
  for (auto a : axes) {
    perm.push_back(a);
    block *= x.shape[a];
  }
  const Value xt = transposed(x, perm);
  Value out = make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  const bool is_arg = node.op == OpKind::ArgMax || node.op == OpKind::ArgMin;
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t first = k * block;
    if (is_arg) {
      const bool is_max = node.op == OpKind::ArgMax;
      out.i[k] = is_float(x.dtype) ? arg_extreme(is_max, xt.f.data() + first, block)
                                   : arg_extreme(is_max, xt.i.data() + first, block);
    } else if (is_float(x.dtype)) {
      out.f[k] = round_to(node.dtype, reduce_floats(node.op, xt.f.data() + first, block));
    } else {
      out.i[k] = reduce_ints(node.op, node.dtype, xt.i.data() + first, block);
    }
  }
  return out;
}

}  // namespace weft::interp

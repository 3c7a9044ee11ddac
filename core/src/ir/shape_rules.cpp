#include "weft/ir/shape_rules.h"

#include <algorithm>
#include <numeric>

#include "primitives/primitive.h"
#include "weft/error.h"

namespace weft {

std::string type_to_string(const TensorType& t) {
  return std::string(dtype_name(t.dtype)) + shape_to_string(t.shape);
}

namespace {

std::string list_to_string(const std::vector<std::int64_t>& v) {
  return shape_to_string(v);
}

std::string operands_to_string(std::span<const TensorType> operands) {
  std::string s;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) s += ", ";
    s += type_to_string(operands[i]);
  }
  return s;
}

[[noreturn]] void shape_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what) {
  throw ShapeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

[[noreturn]] void dtype_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what) {
  throw DTypeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

void expect_arity(OpKind op, std::span<const TensorType> operands, std::size_t n) {
  if (operands.size() != n)
    shape_fail(
        op, operands,
        "expects " + std::to_string(n) + " operand(s), got " + std::to_string(operands.size()));
}

void check_axes_list(OpKind op, std::span<const TensorType> operands,
                     const std::vector<std::int64_t>& axes, std::size_t rank, const char* attr) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<std::int64_t>(rank))
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(axes) + " names an axis outside rank " +
                     std::to_string(rank));
    if (i && axes[i] <= axes[i - 1])
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(axes) + " must be strictly increasing");
  }
}

TensorType infer_dot(std::span<const TensorType> operands, const Attrs& attrs) {
  const OpKind op = OpKind::DotGeneral;
  expect_arity(op, operands, 2);
  const auto& lhs = operands[0];
  const auto& rhs = operands[1];
  if (lhs.dtype != rhs.dtype)
    dtype_fail(op, operands, "operands must have the same dtype; convert one of them");
  if (lhs.dtype == DType::Bool) dtype_fail(op, operands, "is not defined for bool operands");
  const auto& lc = attrs.get_ints("lhs_contracting");
  const auto& rc = attrs.get_ints("rhs_contracting");
  const auto& lb = attrs.get_ints("lhs_batch");
  const auto& rb = attrs.get_ints("rhs_batch");
  if (lc.size() != rc.size() || lb.size() != rb.size())
    shape_fail(op, operands,
               "contracting and batch dimension lists must pair up: lhs_contracting=" +
                   list_to_string(lc) + " rhs_contracting=" + list_to_string(rc) +
                   " lhs_batch=" + list_to_string(lb) + " rhs_batch=" + list_to_string(rb));
  auto check_dims = [&](const TensorType& t, const std::vector<std::int64_t>& c,
                        const std::vector<std::int64_t>& b, const char* side) {
    std::vector<bool> used(t.shape.size(), false);
    for (auto list : {&c, &b})
      for (auto d : *list) {
        if (d < 0 || d >= static_cast<std::int64_t>(t.shape.size()) || used[d])
          shape_fail(op, operands,
                     std::string(side) + " dimension " + std::to_string(d) +
                         " is out of range or listed twice");
        used[d] = true;
      }
  };
  check_dims(lhs, lc, lb, "lhs");
  check_dims(rhs, rc, rb, "rhs");
  for (std::size_t i = 0; i < lc.size(); ++i)
    if (lhs.shape[lc[i]] != rhs.shape[rc[i]])
      shape_fail(op, operands,
                 "contracting dimensions differ in size: lhs dim " + std::to_string(lc[i]) +
                     " is " + std::to_string(lhs.shape[lc[i]]) + ", rhs dim " +
                     std::to_string(rc[i]) + " is " + std::to_string(rhs.shape[rc[i]]));
  for (std::size_t i = 0; i < lb.size(); ++i)
    if (lhs.shape[lb[i]] != rhs.shape[rb[i]])
      shape_fail(op, operands,
                 "batch dimensions differ in size: lhs dim " + std::to_string(lb[i]) +
                     " vs rhs dim " + std::to_string(rb[i]));
  Shape out;
  for (auto d : lb) out.push_back(lhs.shape[d]);
  auto free_dims = [](const TensorType& t, const std::vector<std::int64_t>& c,
                      const std::vector<std::int64_t>& b, Shape& out) {
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(t.shape.size()); ++d)
      if (std::find(c.begin(), c.end(), d) == c.end() &&
          std::find(b.begin(), b.end(), d) == b.end())
        out.push_back(t.shape[d]);
  };
  free_dims(lhs, lc, lb, out);
  free_dims(rhs, rc, rb, out);
  return {lhs.dtype, out};
}

}  // namespace

TensorType infer_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                      const TensorType& declared) {
  const OpInfo& info = op_info(op);
  if (info.arity >= 0) expect_arity(op, operands, static_cast<std::size_t>(info.arity));
  for (const auto& t : operands)
    for (auto d : t.shape)
      if (d < 0) shape_fail(op, operands, "negative dimension");
  for (auto d : declared.shape)
    if (d < 0)
      shape_fail(op, operands,
                 "result shape " + shape_to_string(declared.shape) + " has a negative dimension");

  // Migration to core/src/primitives/: a definition's type rule wins over the switch below.
  if (auto rule = prim::primitive(op).type) return rule(op, operands, attrs, declared);
  switch (info.op_class) {
    case OpClass::Layout:
      break;
    case OpClass::Reduce: {
      const auto& in = operands[0];
      const auto& axes = attrs.get_ints("axes");
      check_axes_list(op, operands, axes, in.shape.size(), "axes");
      if (in.dtype == DType::Bool)
        dtype_fail(op, operands, "is not defined for bool; convert first");
      Shape out;
      for (std::int64_t d = 0; d < static_cast<std::int64_t>(in.shape.size()); ++d)
        if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(in.shape[d]);
      if (op == OpKind::ArgMax || op == OpKind::ArgMin) {
        if (declared.dtype != DType::I32 && declared.dtype != DType::I64)
          dtype_fail(op, operands, "the index dtype must be i32 or i64");
        std::int64_t reduced = 1;
        for (auto a : axes) reduced *= in.shape[a];
        if (reduced == 0)
          shape_fail(op, operands, "cannot take an arg-reduction over zero elements");
        return {declared.dtype, out};
      }
      return {in.dtype, out};
    }
    case OpClass::Dot:
      return infer_dot(operands, attrs);
    case OpClass::Result:
      // The type is the control node's result `index`; verify checks it there.
      if (attrs.get_int("index") < 0) shape_fail(op, operands, "negative result index");
      return declared;
    case OpClass::Control:
    case OpClass::Host:
      throw InvalidGraphError(std::string(op_name(op)) +
                              " has several results: verify checks them with the op's rules");
    case OpClass::Leaf:
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Convert:
      shape_fail(op, operands, "has no shape rule");  // their definitions give it
    case OpClass::Token:
      for (const TensorType& t : operands)
        if (t.dtype != DType::Token)
          dtype_fail(op, operands, "takes tokens only; effects order through tokens");
      return {DType::Token, {}};
  }

  // Layout ops.
  const auto& in = operands.empty() ? declared : operands[0];
  const std::size_t rank = in.shape.size();
  switch (op) {
    case OpKind::BroadcastInDim: {
      const auto& dims = attrs.get_ints("dims");
      if (dims.size() != rank)
        shape_fail(op, operands,
                   "dims=" + list_to_string(dims) + " must name one result axis per operand axis");
      check_axes_list(op, operands, dims, declared.shape.size(), "dims");
      for (std::size_t i = 0; i < rank; ++i)
        if (in.shape[i] != 1 && in.shape[i] != declared.shape[dims[i]])
          shape_fail(op, operands,
                     "operand axis " + std::to_string(i) + " of size " +
                         std::to_string(in.shape[i]) + " cannot broadcast to size " +
                         std::to_string(declared.shape[dims[i]]) + " of result " +
                         shape_to_string(declared.shape));
      return {in.dtype, declared.shape};
    }
    case OpKind::Reshape:
      if (num_elements(in.shape) != num_elements(declared.shape))
        shape_fail(op, operands,
                   "cannot reshape " + shape_to_string(in.shape) + " (" +
                       std::to_string(num_elements(in.shape)) + " elements) to " +
                       shape_to_string(declared.shape) + " (" +
                       std::to_string(num_elements(declared.shape)) + " elements)");
      return {in.dtype, declared.shape};
    case OpKind::Transpose: {
      const auto& perm = attrs.get_ints("permutation");
      std::vector<std::int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::int64_t> iota(rank);
      std::iota(iota.begin(), iota.end(), 0);
      if (sorted != iota)
        shape_fail(op, operands,
                   "permutation=" + list_to_string(perm) + " is not a permutation of rank " +
                       std::to_string(rank));
      Shape out(rank);
      for (std::size_t i = 0; i < rank; ++i) out[i] = in.shape[perm[i]];
      return {in.dtype, out};
    }
    case OpKind::Slice: {
      const auto& start = attrs.get_ints("start");
      const auto& limit = attrs.get_ints("limit");
      const auto& stride = attrs.get_ints("stride");
      if (start.size() != rank || limit.size() != rank || stride.size() != rank)
        shape_fail(op, operands, "start, limit and stride need one entry per axis");
      Shape out(rank);
      for (std::size_t i = 0; i < rank; ++i) {
        if (start[i] < 0 || start[i] > limit[i] || limit[i] > in.shape[i] || stride[i] < 1)
          shape_fail(op, operands,
                     "axis " + std::to_string(i) + ": start=" + std::to_string(start[i]) +
                         " limit=" + std::to_string(limit[i]) +
                         " stride=" + std::to_string(stride[i]) + " is not a valid range of size " +
                         std::to_string(in.shape[i]));
        out[i] = (limit[i] - start[i] + stride[i] - 1) / stride[i];
      }
      return {in.dtype, out};
    }
    case OpKind::DynamicSlice:
    case OpKind::DynamicUpdateSlice: {
      const bool update = op == OpKind::DynamicUpdateSlice;
      const std::size_t first_start = update ? 2 : 1;
      if (operands.size() != first_start + rank)
        shape_fail(op, operands,
                   "expects " + std::to_string(first_start) +
                       " array operand(s) and one scalar start index per axis (" +
                       std::to_string(rank) + ")");
      for (std::size_t i = first_start; i < operands.size(); ++i)
        if (!operands[i].shape.empty() || !is_integer(operands[i].dtype))
          dtype_fail(op, operands, "start indices must be integer scalars");
      if (update) {
        const auto& upd = operands[1];
        if (upd.dtype != in.dtype) dtype_fail(op, operands, "update dtype must match the operand");
        if (upd.shape.size() != rank)
          shape_fail(op, operands, "update rank must match the operand");
        for (std::size_t i = 0; i < rank; ++i)
          if (upd.shape[i] > in.shape[i])
            shape_fail(op, operands,
                       "update is larger than the operand on axis " + std::to_string(i));
        return in;
      }
      const auto& sizes = attrs.get_ints("sizes");
      if (sizes.size() != rank)
        shape_fail(op, operands, "sizes=" + list_to_string(sizes) + " needs one entry per axis");
      for (std::size_t i = 0; i < rank; ++i)
        if (sizes[i] < 0 || sizes[i] > in.shape[i])
          shape_fail(op, operands,
                     "sizes=" + list_to_string(sizes) + " exceeds the operand on axis " +
                         std::to_string(i));
      return {in.dtype, sizes};
    }
    case OpKind::Concatenate: {
      if (operands.empty()) shape_fail(op, operands, "needs at least one operand");
      const std::int64_t dim = attrs.get_int("dimension");
      if (dim < 0 || dim >= static_cast<std::int64_t>(rank))
        shape_fail(op, operands,
                   "dimension=" + std::to_string(dim) + " is outside rank " + std::to_string(rank));
      Shape out = in.shape;
      out[dim] = 0;
      for (const auto& t : operands) {
        if (t.dtype != in.dtype) dtype_fail(op, operands, "operands must share one dtype");
        if (t.shape.size() != rank) shape_fail(op, operands, "operands must share one rank");
        for (std::size_t i = 0; i < rank; ++i)
          if (static_cast<std::int64_t>(i) != dim && t.shape[i] != in.shape[i])
            shape_fail(op, operands,
                       "operands differ on axis " + std::to_string(i) +
                           ", which is not the concatenation axis " + std::to_string(dim));
        out[dim] += t.shape[dim];
      }
      return {in.dtype, out};
    }
    case OpKind::Pad: {
      if (!operands[1].shape.empty() || operands[1].dtype != in.dtype)
        dtype_fail(op, operands, "the pad value must be a scalar of the operand's dtype");
      const auto& low = attrs.get_ints("low");
      const auto& high = attrs.get_ints("high");
      const auto& interior = attrs.get_ints("interior");
      if (low.size() != rank || high.size() != rank || interior.size() != rank)
        shape_fail(op, operands, "low, high and interior need one entry per axis");
      Shape out(rank);
      for (std::size_t i = 0; i < rank; ++i) {
        if (interior[i] < 0) shape_fail(op, operands, "interior padding must be non-negative");
        out[i] = low[i] + high[i] + in.shape[i] +
                 std::max<std::int64_t>(in.shape[i] - 1, 0) * interior[i];
        if (out[i] < 0)
          shape_fail(op, operands, "padding leaves a negative size on axis " + std::to_string(i));
      }
      return {in.dtype, out};
    }
    default:
      break;
  }
  shape_fail(op, operands, "has no shape rule");
}

}  // namespace weft

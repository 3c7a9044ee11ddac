// conv_general_dilated, as jax.lax's (ConvAttrs in weft/ir/op_attrs.h says what each attribute
// means). Bilinear: its jvp is the convolution of each tangent with the other operand, and its
// transposes are convolutions again, derived as JAX derives them
// (jax/_src/lax/convolution.py: _conv_general_dilated_transpose_lhs/_rhs, the batching rule
// folding a vmapped axis into the batch, feature or group axes). It runs in a kernel of its
// own (opencl/src/codegen/conv_kernel.cpp).
#include <algorithm>
#include <limits>

#include "interp/index.h"
#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// The extent of `size` elements with dilation-1 zeros between each two (0 stays 0).
std::int64_t dilated(std::int64_t size, std::int64_t dilation) {
  return size == 0 ? 0 : 1 + dilation * (size - 1);
}

void check_spec(OpKind op, std::span<const TensorType> operands, const Axes& spec, std::size_t rank,
                const char* name) {
  std::vector<bool> seen(rank, false);
  bool ok = spec.size() == rank;
  for (std::int64_t d : spec) {
    ok = ok && d >= 0 && d < static_cast<std::int64_t>(rank) && !seen[d];
    if (ok) seen[d] = true;
  }
  if (!ok)
    shape_fail(op, operands,
               std::string(name) + "=" + list_to_string(spec) + " must list each of the " +
                   std::to_string(rank) +
                   " axes once (JAX's ConvDimensionNumbers: batch or output feature, feature or "
                   "input feature, then the spatial axes)");
}

void check_per_spatial(OpKind op, std::span<const TensorType> operands, const Axes& list,
                       std::size_t spatial, const char* name, std::int64_t minimum) {
  if (list.size() != spatial)
    shape_fail(op, operands,
               std::string(name) + "=" + list_to_string(list) +
                   " needs one entry per spatial axis (" + std::to_string(spatial) + ")");
  if (minimum > std::numeric_limits<std::int64_t>::min())
    for (std::int64_t v : list)
      if (v < minimum)
        shape_fail(op, operands,
                   std::string(name) + "=" + list_to_string(list) + " must be at least " +
                       std::to_string(minimum) + " in every entry");
}

TensorType conv_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                     const TensorType&) {
  const TensorType& lhs = operands[0];
  const TensorType& rhs = operands[1];
  if (lhs.dtype != rhs.dtype)
    dtype_fail(op, operands, "operands must have the same dtype; convert one of them");
  if (lhs.dtype == DType::Bool) dtype_fail(op, operands, "is not defined for bool operands");
  const ConvAttrs a = ConvAttrs::read(attrs);
  const std::size_t rank = lhs.shape.size();
  if (rank < 2 || rhs.shape.size() != rank)
    shape_fail(op, operands,
               "lhs and rhs must have one rank of at least 2 (batch or output feature, feature, "
               "spatial axes...)");
  const std::size_t spatial = rank - 2;
  check_spec(op, operands, a.lhs_spec, rank, "lhs_spec");
  check_spec(op, operands, a.rhs_spec, rank, "rhs_spec");
  check_spec(op, operands, a.out_spec, rank, "out_spec");
  constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::min();
  check_per_spatial(op, operands, a.window_strides, spatial, "window_strides", 1);
  check_per_spatial(op, operands, a.lhs_dilation, spatial, "lhs_dilation", 1);
  check_per_spatial(op, operands, a.rhs_dilation, spatial, "rhs_dilation", 1);
  check_per_spatial(op, operands, a.padding_low, spatial, "padding_low", kAny);
  check_per_spatial(op, operands, a.padding_high, spatial, "padding_high", kAny);
  const std::int64_t groups = a.feature_group_count, batch_groups = a.batch_group_count;
  if (groups < 1 || batch_groups < 1)
    shape_fail(op, operands, "feature_group_count and batch_group_count must be at least 1");
  if (groups > 1 && batch_groups > 1)
    shape_fail(op, operands,
               "at most one of feature_group_count and batch_group_count may be above 1");
  const std::int64_t batch = lhs.shape[a.lhs_spec[0]], features = lhs.shape[a.lhs_spec[1]];
  const std::int64_t out_features = rhs.shape[a.rhs_spec[0]];
  const std::int64_t in_features = rhs.shape[a.rhs_spec[1]];
  if (features % groups != 0 || features / groups != in_features)
    shape_fail(op, operands,
               "the lhs feature axis (" + std::to_string(features) +
                   ") divided by feature_group_count (" + std::to_string(groups) +
                   ") must equal the rhs input feature axis (" + std::to_string(in_features) + ")");
  if (out_features % groups != 0 || out_features % batch_groups != 0)
    shape_fail(op, operands,
               "the rhs output feature axis (" + std::to_string(out_features) +
                   ") must be a multiple of feature_group_count and batch_group_count");
  if (batch % batch_groups != 0)
    shape_fail(op, operands,
               "batch_group_count (" + std::to_string(batch_groups) +
                   ") must divide the lhs batch axis (" + std::to_string(batch) + ")");
  Shape out(rank);
  out[a.out_spec[0]] = batch / batch_groups;
  out[a.out_spec[1]] = out_features;
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t padded = dilated(lhs.shape[a.lhs_spec[2 + i]], a.lhs_dilation[i]) +
                                a.padding_low[i] + a.padding_high[i];
    if (padded < 0)
      shape_fail(op, operands,
                 "negative padding (" + std::to_string(a.padding_low[i]) + ", " +
                     std::to_string(a.padding_high[i]) + ") on spatial axis " + std::to_string(i) +
                     " is larger than that axis; crop less");
    const std::int64_t window = dilated(rhs.shape[a.rhs_spec[2 + i]], a.rhs_dilation[i]);
    out[a.out_spec[2 + i]] = padded < window ? 0 : (padded - window) / a.window_strides[i] + 1;
  }
  return {lhs.dtype, out};
}

// The row-major strides of the axes `spec` lists, in its order.
Axes spec_strides(const Shape& shape, const Axes& spec) {
  const Axes strides = row_major_strides(shape);
  Axes out;
  for (std::int64_t d : spec) out.push_back(strides[d]);
  return out;
}

Value evaluate_conv(const Node& node, Operands operands) {
  const Value& lhs = *operands[0];
  const Value& rhs = *operands[1];
  const ConvAttrs a = ConvAttrs::read(node.attrs);
  const std::size_t spatial = a.spatial_rank();
  const Axes ls = spec_strides(lhs.shape, a.lhs_spec), rs = spec_strides(rhs.shape, a.rhs_spec);
  const std::int64_t batch = lhs.shape[a.lhs_spec[0]];
  const std::int64_t out_features = rhs.shape[a.rhs_spec[0]];
  const std::int64_t in_features = rhs.shape[a.rhs_spec[1]];
  const std::int64_t per_group = out_features / a.feature_group_count;
  const std::int64_t per_batch_group = out_features / a.batch_group_count;
  const std::int64_t batch_group_size = batch / a.batch_group_count;
  Shape window(spatial);
  for (std::size_t i = 0; i < spatial; ++i) window[i] = rhs.shape[a.rhs_spec[2 + i]];
  const bool is_f = is_float(node.dtype);
  Value out = interp::make_value(node.dtype, node.shape);
  interp::for_each_index(node.shape, [&](std::int64_t at, const std::vector<std::int64_t>& idx) {
    const std::int64_t o = idx[a.out_spec[1]];
    const std::int64_t n = (o / per_batch_group) * batch_group_size + idx[a.out_spec[0]];
    const std::int64_t first_feature = (o / per_group) * in_features;
    double acc = 0.0;
    std::uint64_t iacc = 0;
    interp::for_each_index(window, [&](std::int64_t, const std::vector<std::int64_t>& w) {
      std::int64_t lhs_at = n * ls[0], rhs_at = o * rs[0];
      for (std::size_t i = 0; i < spatial; ++i) {
        const std::int64_t p = idx[a.out_spec[2 + i]] * a.window_strides[i] +
                               w[i] * a.rhs_dilation[i] - a.padding_low[i];
        if (p < 0 || p % a.lhs_dilation[i] != 0) return;
        const std::int64_t q = p / a.lhs_dilation[i];
        if (q >= lhs.shape[a.lhs_spec[2 + i]]) return;
        lhs_at += q * ls[2 + i];
        rhs_at += w[i] * rs[2 + i];
      }
      for (std::int64_t c = 0; c < in_features; ++c) {
        const std::int64_t l = lhs_at + (first_feature + c) * ls[1], r = rhs_at + c * rs[1];
        if (is_f)
          acc += lhs.f[l] * rhs.f[r];
        else
          iacc += static_cast<std::uint64_t>(lhs.i[l]) * static_cast<std::uint64_t>(rhs.i[r]);
      }
    });
    if (is_f)
      out.f[at] = interp::round_to(node.dtype, acc);
    else
      out.i[at] = interp::wrap_to(node.dtype, iacc);
  });
  return out;
}

Array conv_with(const Array& lhs, const Array& rhs, const ConvAttrs& attrs,
                const std::source_location& loc) {
  return lax::conv_general_dilated(lhs, rhs, attrs, loc);
}

// Bilinear: the convolution of each tangent with the other operand fixed.
Tangent jvp_conv(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                 const Array&, const std::source_location& loc) {
  const ConvAttrs a = ConvAttrs::read(n.attrs);
  Tangent from_lhs, from_rhs;
  if (tangents[0]) from_lhs = conv_with(*tangents[0], primals[1], a, loc);
  if (tangents[1]) from_rhs = conv_with(primals[0], *tangents[1], a, loc);
  return add_tangents(from_lhs, from_rhs, loc);
}

// JAX's _reshape_axis_into: axis `from` of x merged into axis `into` (numbered with `from`
// removed) as its major part.
Array reshape_axis_into(std::int64_t from, std::int64_t into, const Array& x,
                        const std::source_location& loc) {
  const Shape& shape = x.shape();
  Axes perm;
  Shape merged;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d)
    if (d != from) {
      perm.push_back(d);
      merged.push_back(shape[d]);
    }
  perm.insert(perm.begin() + into, from);
  merged[into] *= shape[from];
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return lax::reshape(identity ? x : lax::transpose(x, perm, loc), merged, loc);
}

// JAX's _reshape_axis_out_of: axis `axis` of x split into (parts, the rest), parts major.
Array reshape_axis_out_of(std::int64_t axis, std::int64_t parts, const Array& x,
                          const std::source_location& loc) {
  Shape shape = x.shape();
  const std::int64_t rest = shape[axis] / parts;
  shape[axis] = rest;
  shape.insert(shape.begin() + axis, parts);
  return lax::reshape(x, shape, loc);
}

Axes spatial_sizes(const Shape& shape, const Axes& spec) {
  Axes out;
  for (std::size_t i = 2; i < spec.size(); ++i) out.push_back(shape[spec[i]]);
  return out;
}

Axes swap_first_two(Axes spec) {
  std::swap(spec[0], spec[1]);
  return spec;
}

struct Padding {
  Axes low, high;
};

// JAX's _conv_general_vjp_lhs_padding: the padding of the cotangent's convolution that gives
// the lhs back at its own size.
Padding vjp_lhs_padding(const Axes& in, const Axes& window, const Axes& out, const ConvAttrs& a) {
  Padding p;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::int64_t lhs_d = dilated(in[i], a.lhs_dilation[i]);
    const std::int64_t rhs_d = dilated(window[i], a.rhs_dilation[i]);
    const std::int64_t out_d = dilated(out[i], a.window_strides[i]);
    const std::int64_t before = rhs_d - a.padding_low[i] - 1;
    p.low.push_back(before);
    p.high.push_back(lhs_d + rhs_d - 1 - out_d - before);
  }
  return p;
}

// JAX's _conv_general_vjp_rhs_padding.
Padding vjp_rhs_padding(const Axes& in, const Axes& window, const Axes& out, const ConvAttrs& a) {
  Padding p;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::int64_t lhs_d = dilated(in[i], a.lhs_dilation[i]);
    const std::int64_t rhs_d = dilated(window[i], a.rhs_dilation[i]);
    const std::int64_t out_d = dilated(out[i], a.window_strides[i]);
    p.low.push_back(a.padding_low[i]);
    p.high.push_back((out_d - lhs_d) + (rhs_d - a.padding_low[i] - 1));
  }
  return p;
}

// The lhs cotangent: the output cotangent convolved with the spatially reversed filter, its
// feature axes swapped, strides and lhs dilation trading places.
Array transpose_lhs(const Array& ct, Array rhs, const TensorType& lhs_type, const ConvAttrs& a,
                    const std::source_location& loc) {
  std::int64_t groups = a.feature_group_count;
  if (groups > 1 || a.batch_group_count > 1) {
    // The groups move into the transposed filter's output features.
    const std::int64_t parts = std::max(groups, a.batch_group_count);
    rhs = reshape_axis_out_of(a.rhs_spec[0], parts, rhs, loc);
    rhs = reshape_axis_into(a.rhs_spec[0], a.rhs_spec[1], rhs, loc);
    groups = parts;
  }
  const Padding pad = vjp_lhs_padding(spatial_sizes(lhs_type.shape, a.lhs_spec),
                                      spatial_sizes(rhs.shape(), a.rhs_spec),
                                      spatial_sizes(ct.shape(), a.out_spec), a);
  ConvAttrs t;
  t.window_strides = a.lhs_dilation;
  t.padding_low = pad.low;
  t.padding_high = pad.high;
  t.lhs_dilation = a.window_strides;
  t.rhs_dilation = a.rhs_dilation;
  t.lhs_spec = a.out_spec;
  t.rhs_spec = swap_first_two(a.rhs_spec);
  t.out_spec = a.lhs_spec;
  t.feature_group_count = groups;
  t.batch_group_count = 1;
  const Axes spatial(a.rhs_spec.begin() + 2, a.rhs_spec.end());
  Array out = conv_with(ct, spatial.empty() ? rhs : lax::rev(rhs, spatial, loc), t, loc);
  if (a.batch_group_count > 1) {
    out = reshape_axis_out_of(a.lhs_spec[1], a.batch_group_count, out, loc);
    out = reshape_axis_into(a.lhs_spec[1], a.lhs_spec[0], out, loc);
  }
  return out;
}

// The rhs cotangent: the lhs convolved with the output cotangent, batch and feature axes
// swapped on every side, strides and rhs dilation trading places.
Array transpose_rhs(const Array& ct, const Array& lhs, const TensorType& rhs_type,
                    const ConvAttrs& a, const std::source_location& loc) {
  if (num_elements(ct.shape()) == 0) return zeros_of(rhs_type, loc);
  const Padding pad = vjp_rhs_padding(spatial_sizes(lhs.shape(), a.lhs_spec),
                                      spatial_sizes(rhs_type.shape, a.rhs_spec),
                                      spatial_sizes(ct.shape(), a.out_spec), a);
  ConvAttrs t;
  t.window_strides = a.rhs_dilation;
  t.padding_low = pad.low;
  t.padding_high = pad.high;
  t.lhs_dilation = a.lhs_dilation;
  t.rhs_dilation = a.window_strides;
  t.lhs_spec = swap_first_two(a.lhs_spec);
  t.rhs_spec = swap_first_two(a.out_spec);
  t.out_spec = swap_first_two(a.rhs_spec);
  // Feature groups become batch groups and back.
  t.feature_group_count = a.batch_group_count;
  t.batch_group_count = a.feature_group_count;
  return conv_with(lhs, ct, t, loc);
}

std::vector<Tangent> transpose_conv(const Node& n, const Array& ct,
                                    std::span<const std::optional<Array>> values,
                                    std::span<const TensorType> types,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc) {
  if (linear[0] && linear[1]) not_linear(n, api);
  const ConvAttrs a = ConvAttrs::read(n.attrs);
  std::vector<Tangent> out(2);
  if (linear[0]) out[0] = transpose_lhs(ct, *values[1], types[0], a, loc);
  if (linear[1]) out[1] = transpose_rhs(ct, *values[0], types[1], a, loc);
  return out;
}

// As JAX's _conv_general_dilated_batch_rule, the vmapped axis (leading) folded into the lhs
// batch or features, the rhs output features, or the groups, and split out of the result.
Batched batch_conv(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string&, const std::source_location& loc) {
  ConvAttrs a = ConvAttrs::read(n.attrs);
  const Batched& lhs = operands[0];
  const Batched& rhs = operands[1];
  if (batch_size == 0) return {zeros_of({n.dtype, with_leading(0, n.shape)}, loc), true};
  std::int64_t result_axis = 0;  // where the vmapped axis lands in the result
  Array out;
  if (lhs.batched && rhs.batched) {
    Array new_lhs;
    if (a.batch_group_count > 1) {
      new_lhs = reshape_axis_into(0, a.lhs_spec[0], lhs.value, loc);
      a.batch_group_count *= batch_size;
    } else {
      new_lhs = reshape_axis_into(0, a.lhs_spec[1], lhs.value, loc);
      a.feature_group_count *= batch_size;
    }
    const Array new_rhs = reshape_axis_into(0, a.rhs_spec[0], rhs.value, loc);
    out = reshape_axis_out_of(a.out_spec[1], batch_size, conv_with(new_lhs, new_rhs, a, loc), loc);
    result_axis = a.out_spec[1];
  } else if (lhs.batched) {
    Array new_lhs;
    if (a.batch_group_count == 1) {
      new_lhs = reshape_axis_into(0, a.lhs_spec[0], lhs.value, loc);
    } else {
      // The batch groups stay outermost: split them out, fold the vmapped axis in below them.
      new_lhs = reshape_axis_out_of(a.lhs_spec[0] + 1, a.batch_group_count, lhs.value, loc);
      new_lhs = reshape_axis_into(0, a.lhs_spec[0] + 1, new_lhs, loc);
      new_lhs = reshape_axis_into(a.lhs_spec[0], a.lhs_spec[0], new_lhs, loc);
    }
    out =
        reshape_axis_out_of(a.out_spec[0], batch_size, conv_with(new_lhs, rhs.value, a, loc), loc);
    result_axis = a.out_spec[0];
  } else {
    if (a.feature_group_count == 1 && a.batch_group_count == 1) {
      const Array new_rhs = reshape_axis_into(0, a.rhs_spec[0], rhs.value, loc);
      out = reshape_axis_out_of(a.out_spec[1], batch_size, conv_with(lhs.value, new_rhs, a, loc),
                                loc);
    } else {
      const std::int64_t groups = std::max(a.feature_group_count, a.batch_group_count);
      Array new_rhs = reshape_axis_out_of(a.rhs_spec[0] + 1, groups, rhs.value, loc);
      new_rhs = reshape_axis_into(0, a.rhs_spec[0] + 1, new_rhs, loc);
      new_rhs = reshape_axis_into(a.rhs_spec[0], a.rhs_spec[0], new_rhs, loc);
      out = conv_with(lhs.value, new_rhs, a, loc);
      out = reshape_axis_out_of(a.out_spec[1], groups, out, loc);
      out = reshape_axis_out_of(a.out_spec[1] + 1, batch_size, out, loc);
      out = reshape_axis_into(a.out_spec[1], a.out_spec[1] + 1, out, loc);
    }
    result_axis = a.out_spec[1];
  }
  return {result_axis == 0 ? out : axis_to_front(out, result_axis, loc), true};
}

}  // namespace

void define_conv_primitive(Definitions& defs) {
  Primitive conv = row(OpKind::ConvGeneralDilated, "conv_general_dilated", OpClass::Convolution, 2);
  conv.info.own_kernel = true;
  conv.type = conv_type;
  conv.evaluate = evaluate_conv;
  conv.jvp = rule_from(jvp_conv);
  conv.transpose = rule_from(transpose_conv);
  conv.batch = rule_from(batch_conv);
  defs.add(std::move(conv));
}

}  // namespace weft::prim

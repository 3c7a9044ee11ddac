#include "codegen/scatter_kernel.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "codegen/cl_types.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

using Axes = std::vector<std::int64_t>;

bool has(const Axes& axes, std::int64_t d) {
  for (std::int64_t a : axes)
    if (a == d) return true;
  return false;
}

std::string str(std::int64_t v) {
  return std::to_string(v) + "L";
}

// The scatter's geometry, as the interpreter's evaluator reads it.
struct Geometry {
  ScatterAttrs a;
  Shape operand, indices, updates;
  Axes window;                      // operand axes a window runs along
  Axes scatter_pos;                 // updates axes that walk the indices' batch
  std::vector<std::int64_t> sizes;  // window extent per operand axis (1 where none)
  std::int64_t rows = 0;            // index vectors
};

Geometry geometry(const Graph& g, const Node& n) {
  Geometry geo;
  geo.a = ScatterAttrs::read(n.attrs);
  geo.operand = n.shape;
  geo.indices = g.node(n.inputs[1]).shape;
  geo.updates = g.node(n.inputs[2]).shape;
  for (std::size_t d = 0; d < geo.operand.size(); ++d) {
    const auto axis = static_cast<std::int64_t>(d);
    if (!has(geo.a.inserted_window_dims, axis) && !has(geo.a.operand_batching_dims, axis))
      geo.window.push_back(axis);
  }
  for (std::size_t d = 0; d < geo.updates.size(); ++d)
    if (!has(geo.a.update_window_dims, static_cast<std::int64_t>(d)))
      geo.scatter_pos.push_back(static_cast<std::int64_t>(d));
  geo.sizes.assign(geo.operand.size(), 1);
  for (std::size_t j = 0; j < geo.window.size(); ++j)
    geo.sizes[geo.window[j]] = geo.updates[geo.a.update_window_dims[j]];
  geo.rows = num_elements(Shape(geo.indices.begin(), geo.indices.end() - 1));
  return geo;
}

// Lines declaring `names[d]` = axis d of row-major position `linear` in `shape`.
std::string unflatten(const std::string& linear, const Shape& shape,
                      const std::vector<std::string>& names, const std::string& indent) {
  std::string s;
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s += indent + "const long " + names[d] + " = (" + linear + " / " + str(stride) + ") % " +
         str(shape[d]) + ";\n";
    stride *= shape[d];
  }
  return s;
}

std::string flatten(const std::vector<std::string>& index, const Shape& shape) {
  std::string s = "0L";
  for (std::size_t d = 0; d < shape.size(); ++d)
    s = "(" + s + " * " + str(shape[d]) + " + " + index[d] + ")";
  return s;
}

// Lines reading row `row`'s starts into s0, s1, ... (clamped so the window fits), and the
// condition that every start was in bounds (for fill mode).
std::string read_starts(const Geometry& geo, const std::string& row, const std::string& indent,
                        std::vector<std::string>& start, std::string& in_bounds) {
  std::string s;
  const auto k = static_cast<std::int64_t>(geo.a.scatter_dims_to_operand_dims.size());
  in_bounds = "1";
  start.assign(geo.operand.size(), "0L");
  for (std::int64_t j = 0; j < k; ++j) {
    const auto axis = static_cast<std::size_t>(geo.a.scatter_dims_to_operand_dims[j]);
    const std::string raw = "raw" + std::to_string(j), v = "s" + std::to_string(j);
    const std::string hi = str(geo.operand[axis] - geo.sizes[axis]);
    s += indent + "const long " + raw + " = (long)idx[" + row + " * " + str(k) + " + " + str(j) +
         "];\n";
    s += indent + "const long " + v + " = " + raw + " < 0 ? 0L : (" + raw + " > " + hi + " ? " +
         hi + " : " + raw + ");\n";
    in_bounds += " && " + raw + " >= 0 && " + raw + " <= " + hi;
    start[axis] = v;
  }
  return s;
}

// One work-item per result element; every index row in order.
void emit_deterministic(KernelContext& ctx, const Node& n, const Geometry& geo,
                        const std::string& name, int x, int idx, int upd, int out) {
  const Graph& g = ctx.graph();
  const std::string T = cl_type(n.dtype), S = cl_storage_type(n.dtype);
  const std::string I = cl_storage_type(g.node(n.inputs[1]).dtype);
  const std::int64_t count = num_elements(geo.operand);
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << S << "* restrict x, __global const " << I
    << "* restrict idx, __global const " << S << "* restrict upd, __global " << S
    << "* restrict out) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << str(count) << ") return;\n";
  std::vector<std::string> p;
  for (std::size_t d = 0; d < geo.operand.size(); ++d) p.push_back("p" + std::to_string(d));
  s << unflatten("gid", geo.operand, p, "  ");
  s << "  " << T << " acc = " << cl_load(n.dtype, "x", "gid") << ";\n"
    << "  for (long q = 0; q < " << str(geo.rows) << "; ++q) {\n";
  const Shape batch(geo.indices.begin(), geo.indices.end() - 1);
  std::vector<std::string> gq;
  for (std::size_t j = 0; j < batch.size(); ++j) gq.push_back("g" + std::to_string(j));
  s << unflatten("q", batch, gq, "    ");
  std::vector<std::string> start;
  std::string in_bounds;
  s << read_starts(geo, "q", "    ", start, in_bounds);
  for (std::size_t b = 0; b < geo.a.operand_batching_dims.size(); ++b)
    start[geo.a.operand_batching_dims[b]] = gq[geo.a.scatter_indices_batching_dims[b]];
  std::string ok = geo.a.mode == IndexMode::fill ? in_bounds : "1";
  std::vector<std::string> u(geo.updates.size());
  for (std::size_t j = 0; j < geo.scatter_pos.size(); ++j) u[geo.scatter_pos[j]] = gq[j];
  std::size_t w = 0;
  for (std::size_t axis = 0; axis < geo.operand.size(); ++axis) {
    if (w < geo.window.size() && geo.window[w] == static_cast<std::int64_t>(axis)) {
      const std::string rel = "r" + std::to_string(axis);
      s << "    const long " << rel << " = " << p[axis] << " - " << start[axis] << ";\n";
      ok += " && " + rel + " >= 0 && " + rel + " < " + str(geo.sizes[axis]);
      u[geo.a.update_window_dims[w]] = rel;
      ++w;
    } else {
      ok += " && " + p[axis] + " == " + start[axis];
    }
  }
  s << "    if (" << ok << ") acc = "
    << cl_round_to_dtype(
           n.dtype,
           scatter_combined(n.op, n.dtype, "acc", cl_load(n.dtype, "upd", flatten(u, geo.updates))))
    << ";\n"
    << "  }\n"
    << "  " << cl_store(n.dtype, "out", "gid", "acc") << "\n"
    << "}\n\n";
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {x, idx, upd, out};
  launch.writes = {out};
  launch.global_size = static_cast<std::size_t>(count);
  ctx.add_launch(std::move(launch));
}

// The atomic update of `target` (an lvalue in global memory) with `u`, for 32- and 64-bit dtypes
// (64-bit ones need cl_khr_int64_base_atomics).
std::string atomic_update(OpKind op, DType t, const std::string& target, const std::string& u) {
  const std::string T = cl_type(t);
  const std::string ptr = "(volatile __global " + T + "*)&" + target;
  if (dtype_size(t) == 8) {
    // Compare-and-swap on the 64 bits (the base extension has no 64-bit min, max or float add).
    const std::string bits = "(volatile __global ulong*)&" + target;
    const std::string have = t == DType::F64 ? "as_double(want)" : "(" + T + ")want";
    const std::string next = scatter_combined(op, t, have, u);
    const std::string as_bits =
        t == DType::F64 ? "as_ulong(" + next + ")" : "(ulong)(" + next + ")";
    return "ulong want, seen = *(" + bits + ");\n    do { want = seen; seen = atom_cmpxchg(" +
           bits + ", want, " + as_bits + "); } while (seen != want);";
  }
  if (t != DType::F32) {
    if (op == OpKind::ScatterAdd) return "atomic_add(" + ptr + ", " + u + ");";
    if (op == OpKind::ScatterMin) return "atomic_min(" + ptr + ", " + u + ");";
    if (op == OpKind::ScatterMax) return "atomic_max(" + ptr + ", " + u + ");";
  }
  // Compare-and-swap on the bits until no other work-item changed them in between.
  const std::string bits = "(volatile __global uint*)&" + target;
  const std::string have = t == DType::F32 ? "as_float(want)" : "(" + T + ")want";
  const std::string next = scatter_combined(op, t, have, u);
  const std::string as_bits = t == DType::F32 ? "as_uint(" + next + ")" : "(uint)(" + next + ")";
  return "uint want, seen = *(" + bits + ");\n    do { want = seen; seen = atomic_cmpxchg(" + bits +
         ", want, " + as_bits + "); } while (seen != want);";
}

// Lines declaring `target`, the flat result position update element `linear` combines into, and
// `in_bounds`, false where fill mode drops the update.
std::string update_target(const Geometry& geo, const std::string& linear,
                          const std::string& indent) {
  std::vector<std::string> u;
  for (std::size_t d = 0; d < geo.updates.size(); ++d) u.push_back("u" + std::to_string(d));
  std::string s = unflatten(linear, geo.updates, u, indent);
  const Shape batch(geo.indices.begin(), geo.indices.end() - 1);
  std::vector<std::string> gq;
  for (std::int64_t d : geo.scatter_pos) gq.push_back(u[d]);
  s += indent + "const long row = " + flatten(gq, batch) + ";\n";
  std::vector<std::string> start;
  std::string in_bounds;
  s += read_starts(geo, "row", indent, start, in_bounds);
  s += indent + "const int in_bounds = " +
       (geo.a.mode == IndexMode::fill ? "(" + in_bounds + ")" : std::string("1")) + ";\n";
  for (std::size_t b = 0; b < geo.a.operand_batching_dims.size(); ++b)
    start[geo.a.operand_batching_dims[b]] = gq[geo.a.scatter_indices_batching_dims[b]];
  std::vector<std::string> p = start;
  for (std::size_t j = 0; j < geo.window.size(); ++j)
    p[geo.window[j]] = "(" + start[geo.window[j]] + " + " + u[geo.a.update_window_dims[j]] + ")";
  s += indent + "const long target = " + flatten(p, geo.operand) + ";\n";
  return s;
}

// One work-item per update element, combining it into its target atomically.
void emit_atomic(KernelContext& ctx, const Node& n, const Geometry& geo, const std::string& name,
                 int idx, int upd, int out) {
  const Graph& g = ctx.graph();
  const std::string T = cl_type(n.dtype), S = cl_storage_type(n.dtype);
  const std::string I = cl_storage_type(g.node(n.inputs[1]).dtype);
  const std::int64_t count = num_elements(geo.updates);
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << I << "* restrict idx, __global const " << S
    << "* restrict upd, __global " << S << "* out) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << str(count) << ") return;\n"
    << update_target(geo, "gid", "  ") << "  if (!in_bounds) return;\n"
    << "  const " << T << " value = upd[gid];\n"
    << "  {\n    " << atomic_update(n.op, n.dtype, "out[target]", "value") << "\n  }\n"
    << "}\n\n";
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {idx, upd, out};
  launch.writes = {out};
  launch.global_size = static_cast<std::size_t>(count);
  ctx.add_launch(std::move(launch));
}

// The element every combine of `op` leaves unchanged, in dtype `t` (not bool, f16 or bf16). -0.0
// for float sums, so that a -0.0 result element with no update stays -0.0.
std::string combine_identity(OpKind op, DType t) {
  const std::string T = cl_type(t);
  if (op == OpKind::ScatterMul) return "((" + T + ")1)";
  const bool is_min = op == OpKind::ScatterMin, is_max = op == OpKind::ScatterMax;
  if (is_float(t)) {
    if (is_min || is_max) return std::string(is_min ? "" : "-") + "(" + T + ")INFINITY";
    return "(" + T + ")(-0.0f)";
  }
  if (!is_min && !is_max) return "((" + T + ")0)";
  // The type's largest value (min) or smallest (max), from OpenCL C's limit macros.
  const char* largest = "INT_MAX";
  const char* smallest = "INT_MIN";
  switch (t) {
    case DType::I8:
      largest = "CHAR_MAX", smallest = "CHAR_MIN";
      break;
    case DType::U8:
      largest = "UCHAR_MAX", smallest = "0";
      break;
    case DType::I16:
      largest = "SHRT_MAX", smallest = "SHRT_MIN";
      break;
    case DType::U16:
      largest = "USHRT_MAX", smallest = "0";
      break;
    case DType::U32:
      largest = "UINT_MAX", smallest = "0";
      break;
    case DType::I64:
      largest = "LONG_MAX", smallest = "LONG_MIN";
      break;
    case DType::U64:
      largest = "ULONG_MAX", smallest = "0";
      break;
    default:
      break;  // i32 (floats and bool are handled above or never come here)
  }
  return "((" + T + ")" + (is_min ? largest : smallest) + ")";
}

// How many private copies of the result a privatised scatter folds into (0: not worth it):
// enough work-groups to keep every compute unit busy, while the copies' zeroing and merging
// stays small beside the updates' own work. CPUs only: a GPU runs a lone work-item per group
// far too slowly.
std::int64_t private_copies(const DeviceCaps& caps, const Geometry& geo, DType dtype) {
  constexpr std::int64_t kMaxScratchBytes = std::int64_t{64} << 20;
  const std::int64_t copies = 2 * std::max<std::int64_t>(1, caps.compute_units);
  const std::int64_t out = num_elements(geo.operand), updates = num_elements(geo.updates);
  const auto bytes = static_cast<std::int64_t>(dtype_size(dtype));
  if (caps.is_gpu || copies * out * bytes > kMaxScratchBytes || copies * out > updates) return 0;
  return copies;
}

// A privatised scatter: each of `copies` single-item work-groups folds a contiguous share of the
// updates, in update order, into its own copy of the result (no atomics, the copy in cache),
// then one work-item per result element combines the operand with the copies in copy order.
// The order of combines is fixed for a device, but it is not the interpreter's.
void emit_privatised(KernelContext& ctx, const Node& n, const Geometry& geo,
                     const std::string& name, std::int64_t copies, int x, int idx, int upd,
                     int out) {
  const Graph& g = ctx.graph();
  const std::string T = cl_type(n.dtype), S = cl_storage_type(n.dtype);
  const std::string I = cl_storage_type(g.node(n.inputs[1]).dtype);
  const std::int64_t count = num_elements(geo.updates), out_count = num_elements(geo.operand);
  const std::int64_t share = (count + copies - 1) / copies;
  const int scratch =
      ctx.add_temp(static_cast<std::size_t>(copies * out_count) * dtype_size(n.dtype));
  const std::string identity = combine_identity(n.op, n.dtype);
  const auto combined = [&](const std::string& acc, const std::string& u) {
    return scatter_combined(n.op, n.dtype, acc, u);
  };
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " << name
    << "_fold(__global const " << I << "* restrict idx, __global const " << S
    << "* restrict upd, __global " << S << "* restrict scratch) {\n"
    << "  __global " << S << "* restrict copy = scratch + get_global_id(0) * " << str(out_count)
    << ";\n"
    << "  for (long i = 0; i < " << str(out_count) << "; ++i) "
    << cl_store(n.dtype, "copy", "i", identity) << "\n";
  // Where the updates' last axis is a window along the result's last axis (a segment sum of
  // feature rows), each update row lands on contiguous result elements: its index is read once
  // and the row combined as a contiguous loop the compiler vectorises.
  const std::int64_t row =
      !geo.window.empty() &&
              geo.window.back() == static_cast<std::int64_t>(geo.operand.size()) - 1 &&
              geo.a.update_window_dims.back() == static_cast<std::int64_t>(geo.updates.size()) - 1
          ? geo.updates.back()
          : 1;
  if (row > 1) {
    const std::int64_t rows = count / row, row_share = (rows + copies - 1) / copies;
    s << "  const long first = get_global_id(0) * " << str(row_share) << ";\n"
      << "  const long end = min(first + " << str(row_share) << ", " << str(rows) << ");\n"
      << "  for (long r = first; r < end; ++r) {\n"
      << "    const long q = r * " << str(row) << ";\n"
      << update_target(geo, "q", "    ") << "    if (!in_bounds) continue;\n"
      << "    for (long j = 0; j < " << str(row) << "; ++j) "
      << cl_store(
             n.dtype, "copy", "target + j",
             combined(cl_load(n.dtype, "copy", "target + j"), cl_load(n.dtype, "upd", "q + j")))
      << "\n"
      << "  }\n"
      << "}\n\n";
  } else {
    s << "  const long first = get_global_id(0) * " << str(share) << ";\n"
      << "  const long end = min(first + " << str(share) << ", " << str(count) << ");\n"
      << "  for (long q = first; q < end; ++q) {\n"
      << update_target(geo, "q", "    ") << "    if (in_bounds) "
      << cl_store(n.dtype, "copy", "target",
                  combined(cl_load(n.dtype, "copy", "target"), cl_load(n.dtype, "upd", "q")))
      << "\n"
      << "  }\n"
      << "}\n\n";
  }
  s << "__kernel void " << name << "(__global const " << S << "* restrict x, __global const " << S
    << "* restrict scratch, __global " << S << "* restrict out) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << str(out_count) << ") return;\n"
    << "  " << T << " acc = " << cl_load(n.dtype, "x", "gid") << ";\n";
  for (std::int64_t c = 0; c < copies; ++c)
    s << "  acc = " << combined("acc", cl_load(n.dtype, "scratch", str(c * out_count) + " + gid"))
      << ";\n";
  s << "  " << cl_store(n.dtype, "out", "gid", "acc") << "\n"
    << "}\n\n";
  LaunchPlan fold;
  fold.kernel = name + "_fold";
  fold.args = {idx, upd, scratch};
  fold.writes = {scratch};
  fold.global_size = static_cast<std::size_t>(copies);
  fold.local_size = 1;
  ctx.add_launch(std::move(fold));
  LaunchPlan merge;
  merge.kernel = name;
  merge.args = {x, scratch, out};
  merge.writes = {out};
  merge.global_size = static_cast<std::size_t>(out_count);
  ctx.add_launch(std::move(merge));
}

}  // namespace

std::string scatter_combined(OpKind op, DType t, const std::string& acc, const std::string& u) {
  const std::string T = cl_type(t);
  const bool is_add = op == OpKind::ScatterAdd, is_mul = op == OpKind::ScatterMul;
  if (is_add || is_mul) {
    const char* sign = is_add ? " + " : " * ";
    if (t == DType::Bool) return "(" + acc + (is_add ? " || " : " && ") + u + ")";
    // Integers wrap through an unsigned type at least as wide as uint (C promotes 8- and 16-bit
    // operands to int, where 65535 * 65535 would overflow).
    if (is_signed_integer(t) || (!is_float(t) && dtype_size(t) < 4)) {
      const std::string U = dtype_size(t) == 8 ? "ulong" : "uint";
      return "((" + T + ")((" + U + ")" + acc + sign + "(" + U + ")" + u + "))";
    }
    return "(" + acc + sign + u + ")";
  }
  if (op == OpKind::ScatterMin || op == OpKind::ScatterMax) {
    const bool is_max = op == OpKind::ScatterMax;
    if (t == DType::Bool) return "(" + acc + (is_max ? " || " : " && ") + u + ")";
    if (!is_float(t)) return std::string(is_max ? "max(" : "min(") + acc + ", " + u + ")";
    return "((isnan(" + acc + ") || isnan(" + u + ")) ? (" + acc + " + " + u + ") : f" +
           (is_max ? "max(" : "min(") + acc + ", " + u + "))";
  }
  return u;
}

void emit_scatter_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(group.root);
  const Geometry geo = geometry(g, n);
  const int x = ctx.buffer_of.at(n.inputs[0]);
  const int idx = ctx.buffer_of.at(n.inputs[1]);
  const int upd = ctx.buffer_of.at(n.inputs[2]);
  const int out = ctx.buffer_of.at(group.root);
  if (num_elements(geo.operand) == 0) return;
  // Replacing scatters keep the ordered kernel, and so do bool (|| and &&), f16 and bf16 (which
  // round after each combine, so that any other order drifts by several ulps over many updates).
  const bool combines = !ctx.caps.deterministic_scatter && n.op != OpKind::Scatter &&
                        geo.rows > 0 && num_elements(geo.updates) > 0;
  const bool privatises = combines && n.dtype != DType::Bool && !is_half_float(n.dtype);
  if (const std::int64_t copies = privatises ? private_copies(ctx.caps, geo, n.dtype) : 0;
      copies > 0) {
    emit_privatised(ctx, n, geo, name, copies, x, idx, upd, out);
    return;
  }
  const bool wide = n.dtype == DType::F64 || n.dtype == DType::I64 || n.dtype == DType::U64;
  const bool atomic = combines && (n.dtype == DType::F32 || n.dtype == DType::I32 ||
                                   n.dtype == DType::U32 || (wide && ctx.caps.int64_atomics));
  if (!atomic) {
    emit_deterministic(ctx, n, geo, name, x, idx, upd, out);
    return;
  }
  const std::string S = cl_storage_type(n.dtype);
  if (wide) ctx.source << "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\n";
  ctx.source << "__kernel void " << name << "_copy(__global const " << S
             << "* restrict x, __global " << S << "* restrict out) {\n"
             << "  const long gid = get_global_id(0);\n"
             << "  if (gid < " << str(num_elements(geo.operand)) << ") out[gid] = x[gid];\n"
             << "}\n\n";
  LaunchPlan copy;
  copy.kernel = name + "_copy";
  copy.args = {x, out};
  copy.writes = {out};
  copy.global_size = static_cast<std::size_t>(num_elements(geo.operand));
  ctx.add_launch(std::move(copy));
  emit_atomic(ctx, n, geo, name, idx, upd, out);
}

}  // namespace weft::opencl

#include <algorithm>
#include <optional>
#include <sstream>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/kernel_context.h"
#include "codegen/row_phases.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

void size_blocked_launch(const KernelContext& ctx, LaunchPlan& launch, std::int64_t work_items) {
  const std::size_t per_thread = static_cast<std::size_t>(
      work_items /
      std::max<std::int64_t>(1, 2 * static_cast<std::int64_t>(ctx.caps.compute_units)));
  launch.local_size = std::min<std::size_t>(std::clamp<std::size_t>(per_thread, 1, 16),
                                            ctx.caps.max_work_group_size);
  launch.global_size =
      work_items <= 0 ? 0 : round_up(static_cast<std::size_t>(work_items), launch.local_size);
}

void size_step_launch(const KernelContext& ctx, LaunchPlan& launch, std::int64_t work_items,
                      std::size_t cpu_local) {
  const auto items = static_cast<std::size_t>(std::max<std::int64_t>(0, work_items));
  if (ctx.caps.is_gpu) {
    launch.local_size = 0;
    launch.global_size = items;
    return;
  }
  launch.local_size = std::clamp<std::size_t>(cpu_local, 1, ctx.caps.max_work_group_size);
  launch.global_size = round_up(items, launch.local_size);
}

std::string index_type_for(const KernelContext& ctx, const FusionGroup& group) {
  std::int64_t largest = 0;
  for (ValueId m : group.members)
    largest = std::max(largest, num_elements(ctx.graph().node(m).shape));
  for (ValueId in : group.inputs)
    largest = std::max(largest, num_elements(ctx.graph().node(in).shape));
  // Margin for intermediate products such as row*stride + column.
  return largest < (std::int64_t{1} << 30) ? "int" : "long";
}

std::string input_params(const KernelContext& ctx, const FusionGroup& group,
                         std::vector<int>& args) {
  std::string s;
  for (std::size_t i = 0; i < group.inputs.size(); ++i) {
    const Node& n = ctx.graph().node(group.inputs[i]);
    s += "__global const " + cl_storage_type(n.dtype) + "* restrict a" + std::to_string(i) + ", ";
    args.push_back(ctx.buffer_of.at(group.inputs[i]));
  }
  return s;
}

ExprEmitter group_emitter(const KernelContext& ctx, const FusionGroup& group,
                          const std::string& index_type) {
  return phase_emitter(ctx, group, positional_args(group), index_type);
}

std::set<ValueId> values_reaching(const Graph& g, const FusionGroup& group,
                                  const std::function<bool(ValueId)>& is_source) {
  std::set<ValueId> reached;
  for (ValueId in : group.inputs)
    if (is_source(in)) reached.insert(in);
  for (ValueId m : group.members)
    for (ValueId in : g.node(m).inputs)
      if (reached.count(in)) {
        reached.insert(m);
        break;
      }
  return reached;
}

PhaseArgs positional_args(const FusionGroup& group) {
  PhaseArgs args;
  args.input = [&group](ValueId v) -> std::string {
    for (std::size_t i = 0; i < group.inputs.size(); ++i)
      if (group.inputs[i] == v) return "a" + std::to_string(i);
    return "";
  };
  for (std::size_t i = 0; i < group.side_outputs.size(); ++i)
    args.side.push_back("side" + std::to_string(i));
  args.out = "out";
  return args;
}

ExprEmitter phase_emitter(const KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                          const std::string& index_type) {
  ExprEmitter emit(
      ctx.graph(),
      [&group, input = args.input](ValueId v) -> std::string {
        return std::find(group.inputs.begin(), group.inputs.end(), v) != group.inputs.end()
                   ? input(v)
                   : "";
      },
      index_type);
  if (!ctx.caps.builtin_math) emit.use_math(&ctx.program.math);
  for (std::size_t i = 0; i < group.side_outputs.size(); ++i)
    emit.store_side_output(group.side_outputs[i], args.side.at(i));
  return emit;
}

bool row_loop_phase_fits(const KernelContext& ctx, const FusionGroup& group) {
  const Node& root = ctx.graph().node(group.root);
  return group.kind == FusionGroup::Kind::Loop && !ctx.caps.is_gpu && root.dtype == DType::F32 &&
         root.shape.size() >= 2 && root.shape.back() >= 2 * kRowLanes &&
         lane_vectorizable(ctx.graph(), group.root, group.inputs);
}

std::string row_loop_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                           const std::string& index_type) {
  const Node& root = ctx.graph().node(group.root);
  const std::string C = std::to_string(root.shape.back()), W = std::to_string(kRowLanes);
  const Shape leading(root.shape.begin(), root.shape.end() - 1);
  std::string head;
  auto body = [&](ExprEmitter& emit, bool lanes) {
    Index outer{"row", {}, leading};
    Index at{{}, emit.dims_of(outer), root.shape};
    head += emit.take_code();
    at.dims.push_back("c");
    at.lanes = lanes;
    emit.push_scope();
    emit.set_indent("    ");
    const std::string v = emit.value(group.root, at);
    emit.line(lanes ? "vstore" + W + "(" + v + ", 0, " + args.out + " + row * " + C + " + c);"
                    : cl_store(root.dtype, args.out, "row * " + C + " + c", v));
    emit.pop_scope();
    return emit.take_code();
  };
  ctx.wide_vector_calls = true;
  ExprEmitter vemit = phase_emitter(ctx, group, args, index_type);
  vemit.set_lane_mode(kRowLanes);
  ExprEmitter emit = phase_emitter(ctx, group, args, index_type);
  const std::string vector_body = body(vemit, true);
  const std::string scalar_body = body(emit, false);
  return head + "  " + index_type + " c = 0;\n  for (; c + " + W + " <= " + C + "; c += " + W +
         ") {\n" + vector_body + "  }\n  for (; c < " + C + "; ++c) {\n" + scalar_body + "  }\n";
}

std::string per_row_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                          const std::string& index_type) {
  const Node& root = ctx.graph().node(group.root);
  ExprEmitter emit = phase_emitter(ctx, group, args, index_type);
  const std::string v = emit.value(group.root, Index{"row", {}, root.shape});
  return emit.take_code() + "  " + cl_store(root.dtype, args.out, "row", v) + "\n";
}

namespace {

// Transcendental functions are compute-bound on CPUs; 16 lanes beat PoCL's preferred 8 there.
// Cheap arithmetic stays scalar, where PoCL's own work-item vectoriser does better.
constexpr int kVectorWidth = 16;
// A work-item of a group with two or more transcendental calls computes this many independent
// vectors, one after the other in straight-line code: such a chain is one long dependency
// chain, and a single vector per work-item leaves the core waiting on latencies (exp/tanh,
// erf(exp), log1p(exp) chains ran 1.3-1.4x faster with 4 than with 1). A single call has
// enough independent work inside; there 4 blocks only add register spills (erf and log1p ran
// about 10 % slower).
constexpr int kChainVectorBlocks = 4;
// Elements per work-group (local size times elements per work-item) of 16-lane kernels, which
// is also the granule after which the scalar remainder kernel takes over.
constexpr std::size_t kVectorGroupElements = 4096;

std::vector<std::string> split_lines(const std::string& code) {
  std::vector<std::string> lines;
  std::istringstream in(code);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The blocks' statements taken in turn (each block's in its order): the compiler keeps them
// roughly so, which gives the core independent work next to each long-latency step. The
// stores come after all of it, since the compiler will not move a block's loads above another
// block's store.
std::string interleave(const std::vector<std::vector<std::string>>& blocks) {
  std::string out;
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& block : blocks)
      if (i < block.size()) {
        out += block[i] + "\n";
        any = true;
      }
    if (!any) return out;
  }
}

// Whether the group is pure f32 arithmetic with transcendental functions, on same-shaped
// inputs (and scalars): then each work-item can compute kVectorWidth neighbouring elements
// with vector types: weft's math functions (math_library.h) and the drivers' vector builtins
// then run as vector code, which PoCL does not make of them across work-items. Returns how
// many transcendental calls the group makes, 0 where it is not vectorizable.
int vector_transcendentals(const KernelContext& ctx, const FusionGroup& group) {
  const Node& root = ctx.graph().node(group.root);
  if (ctx.caps.is_gpu || root.dtype != DType::F32) return 0;
  int transcendentals = 0;
  for (ValueId m : group.members) {
    const Node& n = ctx.graph().node(m);
    const OpClass c = op_info(n.op).op_class;
    const bool arithmetic = (c == OpClass::Unary || c == OpClass::Binary) && n.dtype == DType::F32;
    const bool scalar_broadcast =
        n.op == OpKind::BroadcastInDim && ctx.graph().node(n.inputs[0]).shape.empty();
    if (!arithmetic && !scalar_broadcast && n.op != OpKind::Constant) return 0;
    if (op_info(n.op).lane_work) ++transcendentals;
  }
  for (ValueId in : group.inputs) {
    const Node& n = ctx.graph().node(in);
    if (n.dtype != DType::F32 || (n.shape != root.shape && !n.shape.empty())) return 0;
  }
  return transcendentals;
}

// Whether a CPU kernel of f32[..., C] runs one work-item per row, 16 lanes of the row at a
// time (lane mode), then the row's remainder element by element: when its values vary along
// rows only through contiguous broadcasts (a bias per column, a per-row max or mean), and it
// has such broadcasts or transcendentals, which PoCL's own vectoriser handles poorly (index
// division per element, scalar calls).
bool by_rows(const KernelContext& ctx, const FusionGroup& group) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  if (!row_loop_phase_fits(ctx, group) || num_elements(root.shape) / root.shape.back() < 2)
    return false;
  bool worth_it = false;
  for (ValueId m : group.members) {
    const Node& n = g.node(m);
    worth_it |=
        op_info(n.op).op_class == OpClass::Unary && n.op != OpKind::Neg && n.op != OpKind::Abs;
    worth_it |= n.op == OpKind::BroadcastInDim && !g.node(n.inputs[0]).shape.empty();
  }
  return worth_it;
}

// Whether a CPU kernel runs one work-item per row, walking the row's elements in a scalar loop
// the compiler vectorises, for a group that gathers whole contiguous runs of its operand's last
// axis into its own last axis (an embedding lookup: the row's index read once, its slice copied
// with contiguous loads). Element by element, each element would divide its position and load
// its index, and PoCL's vectoriser across work-items would gather from the table.
constexpr std::int64_t kGatherRunMin = 16;

bool gathers_rows(const KernelContext& ctx, const FusionGroup& group) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  if (group.kind != FusionGroup::Kind::Loop || ctx.caps.is_gpu || root.shape.size() < 2 ||
      root.shape.back() < kGatherRunMin || num_elements(root.shape) / root.shape.back() < 2)
    return false;
  for (ValueId m : group.members) {
    const Node& n = g.node(m);
    if (n.op != OpKind::Gather || n.shape != root.shape) continue;
    const GatherAttrs a = GatherAttrs::read(n.attrs);
    const auto last = static_cast<std::int64_t>(g.node(n.inputs[0]).shape.size()) - 1;
    const auto out_last = static_cast<std::int64_t>(n.shape.size()) - 1;
    const auto is_in = [](const std::vector<std::int64_t>& axes, std::int64_t axis) {
      return std::find(axes.begin(), axes.end(), axis) != axes.end();
    };
    if (last >= 0 && is_in(a.offset_dims, out_last) && !is_in(a.collapsed_slice_dims, last) &&
        !is_in(a.operand_batching_dims, last) && a.slice_sizes[last] == n.shape.back())
      return true;
  }
  return false;
}

// One work-item per row of the result, a scalar loop along the row.
void emit_scalar_rows_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                             const std::string& params, const std::vector<int>& args, int out) {
  const Node& root = ctx.graph().node(group.root);
  const std::int64_t R = num_elements(root.shape) / root.shape.back();
  const std::string idx_t = index_type_for(ctx, group), C = std::to_string(root.shape.back());
  ExprEmitter emit = group_emitter(ctx, group, idx_t);
  Index outer{"row", {}, Shape(root.shape.begin(), root.shape.end() - 1)};
  Index at{{}, emit.dims_of(outer), root.shape};
  const std::string head = emit.take_code();
  at.dims.push_back("c");
  emit.push_scope();
  emit.set_indent("    ");
  const std::string v = emit.value(group.root, at);
  emit.line(cl_store(root.dtype, "out", "row * " + C + " + c", v));
  emit.pop_scope();
  ctx.source << "__kernel void " << name << "(" << params << "__global "
             << cl_storage_type(root.dtype) << "* restrict out) {\n"
             << "  const " << idx_t << " row = (" << idx_t << ")get_global_id(0);\n"
             << "  if (row >= " << R << ") return;\n"
             << head << "  for (" << idx_t << " c = 0; c < " << C << "; ++c) {\n"
             << emit.take_code() << "  }\n}\n\n";
  const std::size_t local = std::min<std::size_t>(8, ctx.caps.max_work_group_size);
  ctx.add_launch({name, args, {out}, round_up(static_cast<std::size_t>(R), local), local});
}

void emit_rows_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                      const std::string& params, const std::vector<int>& args, int out) {
  const Node& root = ctx.graph().node(group.root);
  const std::int64_t R = num_elements(root.shape) / root.shape.back();
  const std::string idx_t = index_type_for(ctx, group);
  ctx.source << "__kernel void " << name << "(" << params << "__global float* restrict out) {\n"
             << "  const " << idx_t << " row = (" << idx_t << ")get_global_id(0);\n"
             << "  if (row >= " << R << ") return;\n"
             << row_loop_phase(ctx, group, positional_args(group), idx_t) << "}\n\n";
  const std::size_t local = std::min<std::size_t>(8, ctx.caps.max_work_group_size);
  ctx.add_launch({name, args, {out}, round_up(static_cast<std::size_t>(R), local), local});
}

// Element `gid` of a loop kernel by `body` (statements ending with the store and the closing
// brace): `bulk` work-items without a bounds check, which would keep PoCL from vectorising, then
// the remainder up to `n` in a small checked launch named `tail`.
void emit_unchecked_bulk(KernelContext& ctx, const std::string& name, const std::string& signature,
                         const std::string& idx_t, const std::string& body, std::size_t bulk,
                         std::size_t local, const std::vector<int>& args, int out) {
  ctx.source << "__kernel void " << name << signature << "  const " << idx_t << " gid = (" << idx_t
             << ")get_global_id(0);\n"
             << body;
  ctx.add_launch({name, args, {out}, bulk, local});
}
void emit_checked_tail(KernelContext& ctx, const std::string& tail, const std::string& signature,
                       const std::string& idx_t, const std::string& body, std::size_t bulk,
                       std::size_t n, const std::vector<int>& args, int out) {
  const std::size_t tail_local = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
  ctx.source << "__kernel void " << tail << signature << "  const " << idx_t << " gid = " << bulk
             << " + (" << idx_t << ")get_global_id(0);\n  if (gid >= " << n << ") return;\n"
             << body;
  ctx.add_launch({tail, args, {out}, round_up(n - bulk, tail_local), tail_local});
}

// One region of a result assembled from disjoint ranges along one axis: `value` (a member or
// input of the group) fills [offset, offset + length) of axis `axis`.
struct Region {
  ValueId value;
  std::int64_t offset, length;
};

// Whether `v` is a pad of zeros along `axis` only, with no interior padding.
std::optional<Region> zero_pad_region(const Graph& g, ValueId v, std::int64_t& axis) {
  const Node& n = g.node(v);
  if (n.op != OpKind::Pad) return std::nullopt;
  const Node& fill = g.node(n.inputs[1]);
  if (fill.op != OpKind::Constant) return std::nullopt;
  if (is_float(fill.dtype) ? ConstantAttrs::float_value(fill.attrs) != 0.0
                           : ConstantAttrs::int_value(fill.attrs) != 0)
    return std::nullopt;
  const PadAttrs pad = PadAttrs::read(n.attrs);
  std::int64_t padded = -1;
  for (std::size_t k = 0; k < pad.low.size(); ++k) {
    if (pad.interior[k] != 0 || pad.low[k] < 0 || pad.high[k] < 0) return std::nullopt;
    if (pad.low[k] == 0 && pad.high[k] == 0) continue;
    if (padded >= 0) return std::nullopt;
    padded = static_cast<std::int64_t>(k);
  }
  if (padded < 0 || (axis >= 0 && padded != axis)) return std::nullopt;
  axis = padded;
  return Region{n.inputs[0], pad.low[static_cast<std::size_t>(padded)],
                g.node(n.inputs[0]).shape[static_cast<std::size_t>(padded)]};
}

// The regions of a root that is a concatenate, or a sum of zero pads along one axis whose
// ranges tile the axis (gradients of a concatenate, such as an LSTM's four gates). Computing
// the root element by element evaluates every operand at every element and keeps one (or
// adds zeros), so each region gets a launch of its own instead. Empty when the root is neither.
std::vector<Region> assembled_regions(const KernelContext& ctx, const FusionGroup& group,
                                      std::int64_t& axis) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  std::vector<Region> regions;
  axis = -1;
  if (!group.side_outputs.empty() || root.shape.empty()) return {};
  const auto member = [&](ValueId v) {
    return std::find(group.members.begin(), group.members.end(), v) != group.members.end();
  };
  if (root.op == OpKind::Concatenate) {
    axis = DimensionAttrs::read(root.attrs).dimension;
    std::int64_t offset = 0;
    for (ValueId in : root.inputs) {
      const std::int64_t length = g.node(in).shape[static_cast<std::size_t>(axis)];
      if (length > 0) regions.push_back({in, offset, length});
      offset += length;
    }
  } else if (root.op == OpKind::Add) {
    // The add tree's leaves, each a fused zero pad.
    std::vector<ValueId> stack = {group.root};
    while (!stack.empty()) {
      const ValueId v = stack.back();
      stack.pop_back();
      const Node& n = g.node(v);
      if (n.op == OpKind::Add && member(v)) {
        stack.push_back(n.inputs[0]);
        stack.push_back(n.inputs[1]);
        continue;
      }
      std::optional<Region> region = member(v) ? zero_pad_region(g, v, axis) : std::nullopt;
      if (!region) return {};
      regions.push_back(*region);
    }
    std::sort(regions.begin(), regions.end(),
              [](const Region& a, const Region& b) { return a.offset < b.offset; });
    std::int64_t covered = 0;
    for (const Region& r : regions) {
      if (r.offset != covered) return {};  // overlapping, or a gap of zeros
      covered += r.length;
    }
    if (covered != root.shape[static_cast<std::size_t>(axis)]) return {};
  }
  if (regions.size() < 2) return {};
  return regions;
}

// One launch per region: the region's value at each of its elements, stored at its place in the
// root's buffer (a checked tail launch where the region is not a multiple of the local size).
// A sum of pads adds its zeros too, so that -0 in a region stores +0 as the sum would.
void emit_region_kernels(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                         const std::string& params, const std::vector<int>& args, int out,
                         const std::vector<Region>& regions, std::int64_t axis) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const std::string idx_t = index_type_for(ctx, group);
  const auto a = static_cast<std::size_t>(axis);
  std::int64_t inner = 1;
  for (std::size_t k = a + 1; k < root.shape.size(); ++k) inner *= root.shape[k];
  const std::int64_t row = root.shape[a] * inner;  // elements per step of the axes before
  const bool adds_zeros = root.op == OpKind::Add && is_float(root.dtype);
  const std::string signature =
      "(" + params + "__global " + cl_storage_type(root.dtype) + "* restrict out) {\n";
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const Region& region = regions[r];
    const Shape& shape = g.node(region.value).shape;
    const auto n = static_cast<std::size_t>(num_elements(shape));
    ExprEmitter emit = group_emitter(ctx, group, idx_t);
    std::string value = emit.value(region.value, Index{"gid", {}, shape});
    if (adds_zeros) value = "(" + value + " + (" + cl_type(root.dtype) + ")0)";
    const std::string part = std::to_string(region.length * inner);
    const std::string at = "(gid / " + part + ") * " + std::to_string(row) + " + " +
                           std::to_string(region.offset * inner) + " + gid % " + part;
    const std::string body =
        emit.take_code() + "  " + cl_store(root.dtype, "out", at, value) + "\n}\n\n";
    const std::string kernel = name + "_part" + std::to_string(r);
    const std::size_t local = std::min<std::size_t>(256, ctx.caps.max_work_group_size);
    const std::size_t bulk = n / local * local;
    if (bulk > 0) emit_unchecked_bulk(ctx, kernel, signature, idx_t, body, bulk, local, args, out);
    if (n > bulk)
      emit_checked_tail(ctx, kernel + "_tail", signature, idx_t, body, bulk, n, args, out);
  }
}

}  // namespace

// A bounds check in the kernel body keeps PoCL from vectorising across work-items, so the
// bulk of the elements runs in a launch without one and the remainder in a small checked
// launch that starts where the bulk ends.
void emit_loop_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const auto n = static_cast<std::size_t>(num_elements(root.shape));
  const std::string idx_t = index_type_for(ctx, group);
  const int out = ctx.buffer_of.at(group.root);
  std::vector<int> args;
  const std::string params = input_params(ctx, group, args);
  args.push_back(out);
  const int transcendentals = vector_transcendentals(ctx, group);
  if (transcendentals == 0 && by_rows(ctx, group)) {
    emit_rows_kernel(ctx, group, name, params, args, out);
    return;
  }
  if (transcendentals == 0 && gathers_rows(ctx, group)) {
    emit_scalar_rows_kernel(ctx, group, name, params, args, out);
    return;
  }
  std::int64_t axis = -1;
  if (const std::vector<Region> regions = assembled_regions(ctx, group, axis); !regions.empty()) {
    emit_region_kernels(ctx, group, name, params, args, out, regions, axis);
    return;
  }

  ExprEmitter emit = group_emitter(ctx, group, idx_t);
  Index idx{"gid", {}, root.shape};
  const std::string value = emit.value(group.root, idx);
  const std::string body =
      emit.take_code() + "  " + cl_store(root.dtype, "out", "gid", value) + "\n}\n\n";
  const std::string signature =
      "(" + params + "__global " + cl_storage_type(root.dtype) + "* restrict out) {\n";

  const int blocks = transcendentals >= 2 ? kChainVectorBlocks : 1;
  const std::size_t vector_local = kVectorGroupElements / (kVectorWidth * blocks);
  const bool vector = transcendentals > 0 && n >= kVectorGroupElements &&
                      ctx.caps.max_work_group_size >= vector_local;
  const std::size_t local =
      vector ? vector_local : std::min<std::size_t>(256, ctx.caps.max_work_group_size);
  const std::size_t width = vector ? kVectorWidth * blocks : 1;
  const std::size_t bulk = n / (local * width) * local * width;  // elements, not work-items
  if (bulk > 0 && vector) {
    ctx.wide_vector_calls = true;
    std::vector<std::vector<std::string>> block_lines;
    std::string stores;
    for (int b = 0; b < blocks; ++b) {
      ExprEmitter vemit = group_emitter(ctx, group, idx_t);
      vemit.set_vector_mode(kVectorWidth, root.shape);
      if (blocks > 1) vemit.set_name_prefix("b" + std::to_string(b) + "_");
      const std::string at =
          blocks == 1 ? std::string("gid")
                      : "(gid * " + std::to_string(blocks) + " + " + std::to_string(b) + ")";
      const std::string v = vemit.value(group.root, Index{at, {}, root.shape});
      block_lines.push_back(split_lines(vemit.take_code()));
      stores += "  vstore" + std::to_string(kVectorWidth) + "(" + v + ", " + at + ", out);\n";
    }
    ctx.source << "__kernel void " << name << signature << "  const " << idx_t << " gid = ("
               << idx_t << ")get_global_id(0);\n"
               << interleave(block_lines) << stores << "}\n\n";
    ctx.add_launch({name, args, {out}, bulk / width, local});
  } else if (bulk > 0) {
    emit_unchecked_bulk(ctx, name, signature, idx_t, body, bulk, local, args, out);
  }
  if (n > bulk)
    emit_checked_tail(ctx, bulk > 0 ? name + "_tail" : name, signature, idx_t, body, bulk, n, args,
                      out);
}

}  // namespace weft::opencl

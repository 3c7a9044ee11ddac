// Reductions with their producers fused in, in one of four shapes:
//  - serial: one work-item per output walks its reduced elements (outer-axis reductions,
//    where neighbouring work-items read neighbouring elements);
//  - cooperative: one work-group per output strides over it and combines in local memory
//    (innermost-axis reductions such as softmax rows);
//  - two-stage: few outputs over many elements; several work-groups per output write
//    partials, then one work-item per output combines them;
//  - chunked outer-axis (CPUs): a few dozen outputs over many rows; one work-item per output
//    and chunk of rows writes a partial, then one work-item per output combines them.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/kernel_context.h"
#include "codegen/lowering.h"
#include "codegen/row_phases.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

constexpr std::size_t kLocal = 256;
constexpr int kUnroll = 8;  // independent accumulators per work-item in chunked reductions

// A reduction's folding rules (its lowering, lowerings/reduce.cpp) in the operand's dtype.
struct ReduceOp {
  OpKind op;
  DType t;  // element type reduced
  const Reduction& rules() const { return *lowering(op).reduction; }
  bool is_arg() const { return rules().takes != nullptr; }
  std::string T() const { return cl_type(t); }
  std::string identity() const { return rules().identity(t); }
  // acc = acc (op) v, as an expression.
  std::string combine(const std::string& acc, const std::string& v) const {
    return rules().combine(t, acc, v);
  }
  // Whether candidate (v, i) replaces the best (bv, bi) of an arg-reduction.
  std::string takes(const std::string& bv, const std::string& bi, const std::string& v,
                    const std::string& i) const {
    return rules().takes(t, bv, bi, v, i);
  }
};

// Emits, into `emit`, the reduced element at reduction counter `r` for output index `out`.
std::string element_at(ExprEmitter& emit, const Node& root, const Shape& in_shape, ValueId operand,
                       Index& out, const std::string& r, bool lanes = false) {
  const auto axes = ReduceAttrs::read(root.attrs).axes;
  Shape reduced_shape;
  for (auto a : axes) reduced_shape.push_back(in_shape[a]);
  Index red{r, {}, reduced_shape};
  const auto& rd = emit.dims_of(red);
  const auto& od = emit.dims_of(out);
  Index at{{}, {}, in_shape};
  at.lanes = lanes;
  std::size_t ri = 0, oi = 0;
  for (std::size_t k = 0; k < in_shape.size(); ++k) {
    if (ri < axes.size() && axes[ri] == static_cast<std::int64_t>(k)) {
      at.dims.push_back(rd[ri++]);
    } else {
      at.dims.push_back(od[oi++]);
    }
  }
  return emit.value(operand, at);
}

// The lanes of vector `v` folded into `acc` one by one, in order.
std::string fold_lanes(const ReduceOp& rop, const std::string& v, const std::string& acc) {
  std::string code;
  for (int lane = 0; lane < kRowLanes; ++lane) {
    const std::string l = v + ".s" + std::string(1, "0123456789abcdef"[lane]);
    code += "  " + acc + " = " + rop.combine(acc, l) + ";\n";
  }
  return code;
}

}  // namespace

int reduction_body_copies(const DeviceCaps& caps) {
  // CPUs unroll (unrolled_loop: kUnroll folds and a remainder fold); GPUs fold once per loop.
  return caps.is_gpu ? 1 : kUnroll + 1;
}

bool row_reduce_phase_fits(const KernelContext& ctx, const FusionGroup& group) {
  const Node& root = ctx.graph().node(group.root);
  if (group.kind != FusionGroup::Kind::Reduce || ctx.caps.is_gpu) return false;
  const Shape& in_shape = ctx.graph().node(root.inputs[0]).shape;
  const auto axes = ReduceAttrs::read(root.attrs).axes;
  const Reduction* reduction = lowering(root.op).reduction;
  return reduction && reduction->folds_lanes && root.dtype == DType::F32 && axes.size() == 1 &&
         axes[0] == static_cast<std::int64_t>(in_shape.size()) - 1 &&
         in_shape.back() >= 4 * kRowLanes &&
         lane_vectorizable(ctx.graph(), root.inputs[0], group.inputs);
}

// Whole vectors of the row into one vector accumulator, its lanes into acc in order, then the
// row's remainder element by element.
std::string row_reduce_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                             const std::string& index_type) {
  const Node& root = ctx.graph().node(group.root);
  const ValueId operand = root.inputs[0];
  const Shape& in_shape = ctx.graph().node(operand).shape;
  const ReduceOp rop{root.op, ctx.graph().node(operand).dtype};
  const std::string T = rop.T(), W = std::to_string(kRowLanes);
  const std::string C = std::to_string(in_shape.back());
  ctx.wide_vector_calls = true;
  ExprEmitter emit = phase_emitter(ctx, group, args, index_type);
  Index out{"row", {}, root.shape};
  emit.dims_of(out);
  std::string code = emit.take_code();
  ExprEmitter vemit = phase_emitter(ctx, group, args, index_type);
  vemit.set_lane_mode(kRowLanes);
  Index vout{"row", {}, root.shape};
  vemit.dims_of(vout);
  code += vemit.take_code();
  vemit.push_scope();
  vemit.set_indent("    ");
  const std::string v = element_at(vemit, root, in_shape, operand, vout, "r", true);
  vemit.line("vacc = " + rop.combine("vacc", v) + ";");
  vemit.pop_scope();
  code += "  " + T + " acc = " + rop.identity() + ";\n  " + T + W + " vacc = (" + T + W + ")(" +
          rop.identity() + ");\n  " + index_type + " r = 0;\n  for (; r + " + W + " <= " + C +
          "; r += " + W + ") {\n" + vemit.take_code() + "  }\n" + fold_lanes(rop, "vacc", "acc");
  emit.push_scope();
  emit.set_indent("    ");
  const std::string e = element_at(emit, root, in_shape, operand, out, "r");
  emit.line("acc = " + rop.combine("acc", e) + ";");
  emit.pop_scope();
  code += "  for (; r < " + C + "; ++r) {\n" + emit.take_code() + "  }\n  " +
          cl_store(root.dtype, args.out, "row", "acc") + "\n";
  return code;
}

namespace {
// Partial results of f16 and bf16 reductions stay in f32: the result rounds once, at the end.
DType partial_dtype(DType t) {
  return is_half_float(t) ? DType::F32 : t;
}
}  // namespace

void emit_reduce_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const ValueId operand = root.inputs[0];
  const Shape& in_shape = ctx.graph().node(operand).shape;
  const ReduceOp rop{root.op, ctx.graph().node(operand).dtype};
  const std::int64_t outputs = num_elements(root.shape);
  const std::int64_t reduced = num_elements(in_shape) / std::max<std::int64_t>(outputs, 1);
  const std::string idx_t = index_type_for(ctx, group);
  const std::string T = rop.T();
  const std::string out_store_t = cl_storage_type(root.dtype);
  const int out_buffer = ctx.buffer_of.at(group.root);

  const PhaseArgs args = positional_args(group);
  auto make_emitter = [&] { return phase_emitter(ctx, group, args, idx_t); };
  // Inputs, then the side outputs (written where the fused producers are computed).
  auto kernel_params = [&](LaunchPlan& launch) {
    std::string params = input_params(ctx, group, launch.args);
    for (std::size_t i = 0; i < group.side_outputs.size(); ++i) {
      const Node& side = ctx.graph().node(group.side_outputs[i]);
      params +=
          "__global " + cl_storage_type(side.dtype) + "* restrict side" + std::to_string(i) + ", ";
      launch.args.push_back(ctx.buffer_of.at(group.side_outputs[i]));
      launch.writes.push_back(launch.args.back());
    }
    return params;
  };
  // The loop body that folds element `r` into (acc[, acc_i]).
  // Folds element `r` into accumulator `acc` (and `acc`_i for arg-reductions).
  auto fold_into = [&](ExprEmitter& emit, Index& out, const std::string& r,
                       const std::string& acc) {
    std::string v = element_at(emit, root, in_shape, operand, out, r);
    if (rop.is_arg()) {
      emit.line("if (" + rop.takes(acc, acc + "_i", v, r) + ") { " + acc + " = " + v + "; " + acc +
                "_i = " + r + "; }");
    } else {
      emit.line(acc + " = " + rop.combine(acc, v) + ";");
    }
  };
  auto fold = [&](ExprEmitter& emit, Index& out, const std::string& r) {
    emit.push_scope();
    emit.set_indent("    ");
    fold_into(emit, out, r, "acc");
    emit.pop_scope();
    emit.set_indent("  ");
  };
  // Folds elements [first, last) eight at a time into independent accumulators, so the
  // combines pipeline instead of waiting on each other, then a scalar tail.
  auto unrolled_loop = [&](ExprEmitter& emit, Index& out, const std::string& first,
                           const std::string& last) {
    std::string decl;
    for (int u = 1; u < kUnroll; ++u) {
      std::string d = "  " + T + " acc" + std::to_string(u) + " = " + rop.identity() + ";";
      if (rop.is_arg()) d += " long acc" + std::to_string(u) + "_i = LONG_MAX;";
      decl += d + "\n";
    }
    emit.push_scope();
    emit.set_indent("    ");
    for (int u = 0; u < kUnroll; ++u)
      fold_into(emit, out, "(r + " + std::to_string(u) + ")",
                u == 0 ? "acc" : "acc" + std::to_string(u));
    emit.pop_scope();
    std::string unrolled = emit.take_code();
    emit.push_scope();
    fold_into(emit, out, "r", "acc");
    emit.pop_scope();
    emit.set_indent("  ");
    std::string tail = emit.take_code();
    std::string merge;
    for (int u = 1; u < kUnroll; ++u) {
      const std::string a = "acc" + std::to_string(u);
      merge += rop.is_arg() ? "  if (" + rop.takes("acc", "acc_i", a, a + "_i") + ") { acc = " + a +
                                  "; acc_i = " + a + "_i; }\n"
                            : "  acc = " + rop.combine("acc", a) + ";\n";
    }
    return decl + "  " + idx_t + " r = " + first + ";\n  for (; r + " + std::to_string(kUnroll) +
           " <= " + last + "; r += " + std::to_string(kUnroll) + ") {\n" + unrolled +
           "  }\n  for (; r < " + last + "; ++r) {\n" + tail + "  }\n" + merge;
  };
  const std::string init = "  " + T + " acc = " + rop.identity() + ";\n" +
                           (rop.is_arg() ? "  long acc_i = LONG_MAX;\n" : "");
  auto result_expr = [&](const std::string& acc, const std::string& acc_i) {
    if (rop.is_arg()) return "(" + cl_type(root.dtype) + ")(" + acc_i + ")";
    return acc;
  };

  // Stage 2: one work-item per output folds its `groups` partials (output-major) in order.
  auto emit_stage2 = [&](int partial, int partial_i, std::int64_t groups) {
    LaunchPlan stage2;
    stage2.kernel = name;
    stage2.args = {partial};
    if (rop.is_arg()) stage2.args.push_back(partial_i);
    stage2.args.push_back(out_buffer);
    stage2.writes = {out_buffer};
    ctx.source << "__kernel void " << name << "(__global const "
               << cl_storage_type(partial_dtype(rop.t)) << "* restrict partial, "
               << (rop.is_arg() ? "__global const long* restrict partial_i, " : "") << "__global "
               << out_store_t << "* restrict out) {\n  const " << idx_t << " gid = (" << idx_t
               << ")get_global_id(0);\n  if (gid >= " << outputs << ") return;\n"
               << init << "  for (" << idx_t << " g = 0; g < " << groups << "; ++g) {\n"
               << "    const " << T << " v = partial[gid * " << groups << " + g];\n";
    if (rop.is_arg()) {
      ctx.source << "    const long vi = partial_i[gid * " << groups << " + g];\n    if ("
                 << rop.takes("acc", "acc_i", "v", "vi") << ") { acc = v; acc_i = vi; }\n";
    } else {
      ctx.source << "    acc = " << rop.combine("acc", "v") << ";\n";
    }
    ctx.source << "  }\n  " << cl_store(root.dtype, "out", "gid", result_expr("acc", "acc_i"))
               << "\n}\n\n";
    stage2.local_size = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
    stage2.global_size = round_up(static_cast<std::size_t>(outputs), stage2.local_size);
    ctx.add_launch(std::move(stage2));
  };

  // Work-items of one group read neighbouring elements when the innermost axis is reduced, so
  // a group per output (or several, when outputs are few) beats a serial loop per output.
  const auto axes = ReduceAttrs::read(root.attrs).axes;
  const bool innermost =
      !axes.empty() && axes.back() == static_cast<std::int64_t>(in_shape.size()) - 1;
  const bool two_stage = outputs < 64 && reduced >= 8192;
  // Work-groups are cheap on GPUs and costly on CPUs (PoCL runs them one after another), so
  // CPUs keep one work-item per output and unroll instead.
  const bool cooperative = !two_stage && innermost && reduced >= 128 && ctx.caps.is_gpu;
  const bool unrolled_serial = !two_stage && innermost && reduced >= 64 && !ctx.caps.is_gpu;
  // An outer-axis reduction to few outputs over many elements (a bias gradient, [rows, 64] ->
  // [64]) would run as one work-group on one CPU thread. Its elements are split into `splits`
  // contiguous ranges instead, each a row of work-items (neighbours still read neighbouring
  // elements), and one work-item per output folds the ranges' partials in order.
  const std::int64_t splits =
      !ctx.caps.is_gpu && !innermost && !two_stage && !rop.is_arg() && outputs < 2048
          ? std::clamp<std::int64_t>(reduced / 2048, 1, 64)
          : 1;
  if (splits > 1) {
    const std::int64_t span = (reduced + splits - 1) / splits;
    const std::int64_t row = static_cast<std::int64_t>(
        round_up(static_cast<std::size_t>(outputs),
                 std::min<std::size_t>(64, ctx.caps.max_work_group_size)));
    const int partial =
        ctx.add_temp(static_cast<std::size_t>(splits * outputs) * dtype_size(partial_dtype(rop.t)));
    LaunchPlan stage1;
    stage1.kernel = name + "_partial";
    std::string params = kernel_params(stage1);
    stage1.args.push_back(partial);
    stage1.writes.push_back(partial);
    ExprEmitter emit = make_emitter();
    Index out{"o", {}, root.shape};
    emit.dims_of(out);
    std::string head = emit.take_code();
    fold(emit, out, "r");
    ctx.source << "__kernel void " << stage1.kernel << "(" << params << "__global "
               << cl_storage_type(partial_dtype(rop.t)) << "* restrict partial) {\n  const "
               << idx_t << " gid = (" << idx_t << ")get_global_id(0);\n  const " << idx_t
               << " o = gid % " << row << ", split = gid / " << row << ";\n  if (o >= " << outputs
               << " || split >= " << splits << ") return;\n"
               << head << init << "  const " << idx_t << " last = min((split + 1) * " << span
               << ", (" << idx_t << ")" << reduced << ");\n  for (" << idx_t << " r = split * "
               << span << "; r < last; ++r) {\n"
               << emit.take_code() << "  }\n  partial[split * " << outputs << " + o] = acc;\n}\n\n";
    stage1.local_size = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
    stage1.global_size = static_cast<std::size_t>(splits * row);
    ctx.add_launch(std::move(stage1));

    LaunchPlan stage2;
    stage2.kernel = name;
    stage2.args = {partial, out_buffer};
    stage2.writes = {out_buffer};
    ctx.source << "__kernel void " << name << "(__global const "
               << cl_storage_type(partial_dtype(rop.t)) << "* restrict partial, __global "
               << out_store_t << "* restrict out) {\n  const " << idx_t << " gid = (" << idx_t
               << ")get_global_id(0);\n  if (gid >= " << outputs << ") return;\n"
               << init << "  for (" << idx_t << " s = 0; s < " << splits << "; ++s) acc = "
               << rop.combine("acc", "partial[s * " + std::to_string(outputs) + " + gid]")
               << ";\n  " << cl_store(root.dtype, "out", "gid", result_expr("acc", "acc_i"))
               << "\n}\n\n";
    stage2.local_size = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
    stage2.global_size = round_up(static_cast<std::size_t>(outputs), stage2.local_size);
    ctx.add_launch(std::move(stage2));
    return;
  }
  if (!two_stage && !cooperative) {
    LaunchPlan launch;
    launch.kernel = name;
    std::string params = kernel_params(launch);
    launch.args.push_back(out_buffer);
    launch.writes.push_back(out_buffer);
    ExprEmitter emit = make_emitter();
    Index out{"gid", {}, root.shape};
    emit.dims_of(out);
    std::string head = emit.take_code();
    std::string loop;
    if (unrolled_serial && row_reduce_phase_fits(ctx, group)) {
      ctx.source << "__kernel void " << name << "(" << params << "__global " << out_store_t
                 << "* restrict out) {\n  const " << idx_t << " row = (" << idx_t
                 << ")get_global_id(0);\n  if (row >= " << outputs << ") return;\n"
                 << row_reduce_phase(ctx, group, args, idx_t) << "}\n\n";
      launch.local_size = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
      launch.global_size = round_up(static_cast<std::size_t>(outputs), launch.local_size);
      ctx.add_launch(std::move(launch));
      return;
    } else if (unrolled_serial) {
      loop = unrolled_loop(emit, out, "0", std::to_string(reduced));
    } else {
      fold(emit, out, "r");
      loop = "  for (" + idx_t + " r = 0; r < " + std::to_string(reduced) + "; ++r) {\n" +
             emit.take_code() + "  }\n";
    }
    ctx.source << "__kernel void " << name << "(" << params << "__global " << out_store_t
               << "* restrict out) {\n  const " << idx_t << " gid = (" << idx_t
               << ")get_global_id(0);\n  if (gid >= " << outputs << ") return;\n"
               << head << init << loop << "  "
               << cl_store(root.dtype, "out", "gid", result_expr("acc", "acc_i")) << "\n}\n\n";
    launch.local_size = std::min<std::size_t>(64, ctx.caps.max_work_group_size);
    launch.global_size = round_up(static_cast<std::size_t>(outputs), launch.local_size);
    ctx.add_launch(std::move(launch));
    return;
  }

  // `groups` work-groups per output each fold a strided share, then combine in local memory.
  // Cooperative: one group per output writes the result. Two-stage: partials, then stage 2.
  // On CPUs a work-item walks a contiguous chunk (cache lines, prefetch); GPUs stride so that
  // neighbouring work-items read neighbouring elements.
  const bool chunked = two_stage && !ctx.caps.is_gpu;
  const std::size_t local =
      std::min(cooperative || chunked ? std::size_t{64} : kLocal, ctx.caps.max_work_group_size);
  const std::int64_t per_item = chunked ? 4096 : 64;
  const std::int64_t groups =
      cooperative
          ? 1
          : std::clamp<std::int64_t>(reduced / static_cast<std::int64_t>(local) / per_item, 1, 256);
  const std::int64_t partial_count = outputs * groups;
  const int partial = cooperative ? out_buffer
                                  : ctx.add_temp(static_cast<std::size_t>(partial_count) *
                                                 dtype_size(partial_dtype(rop.t)));
  const int partial_i =
      rop.is_arg() && !cooperative ? ctx.add_temp(static_cast<std::size_t>(partial_count) * 8) : -1;
  LaunchPlan stage1;
  stage1.kernel = cooperative ? name : name + "_partial";
  std::string params = kernel_params(stage1);
  stage1.args.push_back(partial);
  stage1.writes.push_back(partial);
  if (partial_i >= 0) {
    stage1.args.push_back(partial_i);
    stage1.writes.push_back(partial_i);
  }
  ExprEmitter emit = make_emitter();
  emit.line("const " + idx_t + " o = grp / " + std::to_string(groups) + ";");
  Index out{"o", {}, root.shape};
  emit.dims_of(out);
  std::string head = emit.take_code();
  const std::string L = std::to_string(local);
  std::string loop;
  if (chunked) {
    // Each work-item folds one contiguous chunk.
    const std::int64_t items = groups * static_cast<std::int64_t>(local);
    const std::int64_t chunk = ((reduced + items - 1) / items + 7) / 8 * 8;
    loop = "  const " + idx_t + " first = (g * " + L + " + lid) * " + std::to_string(chunk) +
           ";\n  const " + idx_t + " last = min(first + " + std::to_string(chunk) + ", (" + idx_t +
           ")" + std::to_string(reduced) + ");\n" + unrolled_loop(emit, out, "first", "last");
  } else {
    fold(emit, out, "r");
    loop = "  for (" + idx_t + " r = g * " + L + " + lid; r < " + std::to_string(reduced) +
           "; r += " + std::to_string(groups * static_cast<std::int64_t>(local)) + ") {\n" +
           emit.take_code() + "  }\n";
  }
  const std::string result_param =
      cooperative ? "__global " + out_store_t + "* restrict out"
                  : "__global " + cl_storage_type(partial_dtype(rop.t)) + "* restrict partial" +
                        (rop.is_arg() ? ", __global long* restrict partial_i" : "");
  ctx.source << "__kernel __attribute__((reqd_work_group_size(" << L << ", 1, 1)))\nvoid "
             << stage1.kernel << "(" << params << result_param << ") {\n  const " << idx_t
             << " lid = (" << idx_t << ")get_local_id(0);\n  const " << idx_t << " grp = (" << idx_t
             << ")get_group_id(0);\n  const " << idx_t << " g = grp % " << groups << ";\n"
             << head << init << loop << "  __local " << T << " scratch[" << L << "];\n"
             << (rop.is_arg() ? "  __local long scratch_i[" + L + "];\n  scratch_i[lid] = acc_i;\n"
                              : "")
             << "  scratch[lid] = acc;\n  barrier(CLK_LOCAL_MEM_FENCE);\n"
             << "  for (" << idx_t << " s = " << local / 2 << "; s > 0; s >>= 1) {\n"
             << "    if (lid < s) {\n";
  if (rop.is_arg()) {
    ctx.source << "      const " << T
               << " v = scratch[lid + s];\n      const long vi = scratch_i[lid + s];\n"
               << "      if (" << rop.takes("scratch[lid]", "scratch_i[lid]", "v", "vi")
               << ") { scratch[lid] = v; scratch_i[lid] = vi; }\n";
  } else {
    ctx.source << "      scratch[lid] = " << rop.combine("scratch[lid]", "scratch[lid + s]")
               << ";\n";
  }
  ctx.source << "    }\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  if (cooperative) {
    ctx.source << "  if (lid == 0) "
               << cl_store(root.dtype, "out", "grp", result_expr("scratch[0]", "scratch_i[0]"))
               << "\n}\n\n";
  } else {
    ctx.source << "  if (lid == 0) {\n    partial[grp] = scratch[0];\n"
               << (rop.is_arg() ? "    partial_i[grp] = scratch_i[0];\n" : "") << "  }\n}\n\n";
  }
  stage1.local_size = local;
  stage1.global_size = static_cast<std::size_t>(partial_count) * local;
  ctx.add_launch(std::move(stage1));
  if (cooperative) return;

  emit_stage2(partial, partial_i, groups);
}

}  // namespace weft::opencl

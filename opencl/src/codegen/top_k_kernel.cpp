// top_k without sorting: a line's positions are cut into T contiguous slices, one work-item
// each, and every work-item keeps the best k of its slice in private arrays by insertion (most
// elements fail the first comparison against the current k-th and cost one load and one
// compare). A second launch, one work-item per line, folds the T candidate lists the same way.
// Candidates are visited in increasing slice order and equal values never pass each other
// (strict comparison), so ties keep the lower position first: the same result as the stable
// sort of sort_kernel.cpp, in one pass over the data instead of log2(n) passes.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {
namespace {

// Slices of at least this many positions, and about this many work-items in all, so that both
// launches stay short and every compute unit has several work-items to take.
constexpr std::int64_t kMinSlice = 2048;
constexpr std::int64_t kTargetItems = 256;

// OpenCL C: insert value `x` at position `p` into the sorted private lists `val`/`pos` holding
// `filled` of at most `k` entries, unless it does not come before the k-th.
std::string insert_statement(DType t, std::int64_t k) {
  const std::string K = std::to_string(k);
  return "    if (filled == " + K + " && !" + sort_before(t, true, "x", "val[" + K + " - 1]") +
         ") continue;\n"
         "    int i = filled < " +
         K + " ? filled++ : " + K + " - 1;\n" + "    while (i > 0 && " +
         sort_before(t, true, "x", "val[i - 1]") +
         ") {\n"
         "      val[i] = val[i - 1];\n"
         "      pos[i] = pos[i - 1];\n"
         "      --i;\n"
         "    }\n"
         "    val[i] = x;\n"
         "    pos[i] = p;\n";
}

}  // namespace

void emit_top_k_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                       std::int64_t k, bool values) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& operand = g.node(root.inputs[0]);
  if (num_elements(operand.shape) == 0 || num_elements(root.shape) == 0) return;
  const DType t = operand.dtype;
  const std::int64_t n = operand.shape.back();
  const std::int64_t lines = num_elements(operand.shape) / n;
  const std::int64_t slices =
      std::clamp<std::int64_t>(std::min(n / kMinSlice, (kTargetItems + lines - 1) / lines), 1, n);
  const std::int64_t slice_len = (n + slices - 1) / slices;
  const std::string T = cl_type(t), S = cl_storage_type(t), K = std::to_string(k),
                    N = std::to_string(n), TS = std::to_string(slices);
  std::ostringstream& s = ctx.source;

  s << "__kernel void " << name << "_slices(__global const " << S
    << "* restrict key0, __global int* restrict candidates) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << lines * slices << ") return;\n"
    << "  const long line = gid / " << TS << ";\n"
    << "  const int begin = (int)(gid % " << TS << ") * " << slice_len << ";\n"
    << "  const int end = min(begin + " << slice_len << ", " << N << ");\n"
    << "  " << T << " val[" << K << "];\n"
    << "  int pos[" << K << "];\n"
    << "  int filled = 0;\n"
    << "  for (int p = begin; p < end; ++p) {\n"
    << "    const " << T << " x = " << cl_load(t, "key0", "line * " + N + " + p") << ";\n"
    << insert_statement(t, k) << "  }\n"
    << "  for (int i = 0; i < " << K << "; ++i) candidates[gid * " << K
    << " + i] = i < filled ? pos[i] : -1;\n"
    << "}\n\n";
  const int candidates =
      ctx.add_temp(static_cast<std::size_t>(lines * slices * k) * sizeof(std::int32_t));
  const int key = ctx.buffer_of.at(root.inputs[0]);
  LaunchPlan scan;
  scan.kernel = name + "_slices";
  scan.args = {key, candidates};
  scan.writes = {candidates};
  scan.global_size = static_cast<std::size_t>(lines * slices);
  // On CPUs, one work-item per work-group: a driver's own choice may put them all in one group,
  // which runs on one compute unit.
  if (!ctx.caps.is_gpu) scan.local_size = 1;
  ctx.add_launch(std::move(scan));

  const std::string value = values ? cl_load(t, "key0", "line * " + N + " + pos[i]") : "pos[i]";
  s << "__kernel void " << name << "(__global const " << S
    << "* restrict key0, __global const int* restrict candidates, __global "
    << cl_storage_type(root.dtype) << "* restrict y) {\n"
    << "  const long line = get_global_id(0);\n"
    << "  if (line >= " << lines << ") return;\n"
    << "  " << T << " val[" << K << "];\n"
    << "  int pos[" << K << "];\n"
    << "  int filled = 0;\n"
    << "  for (int c = 0; c < " << slices * k << "; ++c) {\n"
    << "    const int p = candidates[line * " << slices * k << " + c];\n"
    << "    if (p < 0) continue;\n"
    << "    const " << T << " x = " << cl_load(t, "key0", "line * " + N + " + p") << ";\n"
    << insert_statement(t, k) << "  }\n"
    << "  for (int i = 0; i < " << K << "; ++i) "
    << cl_store(root.dtype, "y", "line * " + K + " + i", value) << "\n"
    << "}\n\n";
  LaunchPlan fold;
  fold.kernel = name;
  fold.args = {key, candidates, ctx.buffer_of.at(group.root)};
  fold.writes = {ctx.buffer_of.at(group.root)};
  fold.global_size = static_cast<std::size_t>(lines);
  ctx.add_launch(std::move(fold));
}

}  // namespace weft::opencl

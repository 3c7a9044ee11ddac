// lu, lu_pivots and lu_permutation: one work-group per matrix factors it as LAPACK's getrf
// does, column by column in a buffer of the factors: one work-item finds the pivot (the first
// largest |a[i][j]|, i >= j; a NaN never replaces the current), the group swaps the two rows,
// divides the column below the pivot by it (unless it is zero: a singular matrix keeps its
// factors), and takes the outer product off the trailing block, with a barrier between the
// steps. The factors, the pivots and the permutation each go to the result of the op that
// keeps them (the group's root or a side output: one kernel serves all three ops of one
// operand) or to a scratch buffer.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {

void emit_lu_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& operand = g.node(root.inputs[0]);
  const std::size_t r = operand.shape.size();
  const std::int64_t m = operand.shape[r - 2], n = operand.shape[r - 1], k = std::min(m, n);
  if (num_elements(operand.shape) == 0) return;
  const std::int64_t matrices = num_elements(operand.shape) / (m * n);
  std::int64_t items = 1;
  while (items < std::max(m, n)) items *= 2;
  items = std::clamp<std::int64_t>(
      items, 1,
      std::min<std::int64_t>(256, static_cast<std::int64_t>(ctx.caps.max_work_group_size)));
  const DType t = operand.dtype;
  const std::string T = cl_type(t), M = std::to_string(m), N = std::to_string(n),
                    K = std::to_string(k), W = std::to_string(items), MN = std::to_string(m * n);
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(" << W << ", 1, 1)))\nvoid " << name
    << "(__global const " << T << "* restrict x, __global " << T
    << "* restrict factors, __global int* restrict pivots, __global int* restrict permutation) {\n"
    << "  __local int pivot_row;\n"
    << "  const long entry = get_group_id(0);\n"
    << "  __global " << T << "* a = factors + entry * " << MN << ";\n"
    << "  __global int* piv = pivots + entry * " << K << ";\n"
    << "  const int lid = (int)get_local_id(0);\n"
    << "  for (int t = lid; t < " << MN << "; t += " << W << ") a[t] = x[entry * " << MN
    << " + t];\n"
    << "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "  for (int j = 0; j < " << K << "; ++j) {\n"
    << "    if (lid == 0) {\n"
    << "      int p = j;\n"
    << "      " << T << " best = fabs(a[j * " << N << " + j]);\n"
    << "      for (int i = j + 1; i < " << M << "; ++i) {\n"
    << "        const " << T << " v = fabs(a[i * " << N << " + j]);\n"
    << "        if (v > best) {\n"
    << "          best = v;\n"
    << "          p = i;\n"
    << "        }\n"
    << "      }\n"
    << "      pivot_row = p;\n"
    << "      piv[j] = p;\n"
    << "    }\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "    const int p = pivot_row;\n"
    << "    if (p != j)\n"
    << "      for (int c = lid; c < " << N << "; c += " << W << ") {\n"
    << "        const " << T << " swapped = a[j * " << N << " + c];\n"
    << "        a[j * " << N << " + c] = a[p * " << N << " + c];\n"
    << "        a[p * " << N << " + c] = swapped;\n"
    << "      }\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "    const " << T << " pivot = a[j * " << N << " + j];\n"
    << "    if (pivot != 0)\n"
    << "      for (int i = j + 1 + lid; i < " << M << "; i += " << W << ") a[i * " << N
    << " + j] /= pivot;\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "    const int rows = " << M << " - j - 1, cols = " << N << " - j - 1;\n"
    << "    for (int t = lid; t < rows * cols; t += " << W << ") {\n"
    << "      const int i = j + 1 + t / cols, c = j + 1 + t % cols;\n"
    << "      a[i * " << N << " + c] -= a[i * " << N << " + j] * a[j * " << N << " + c];\n"
    << "    }\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "  }\n"
    << "  if (lid == 0) {\n"
    << "    __global int* perm = permutation + entry * " << M << ";\n"
    << "    for (int i = 0; i < " << M << "; ++i) perm[i] = i;\n"
    << "    for (int j = 0; j < " << K << "; ++j) {\n"
    << "      const int swapped = perm[j];\n"
    << "      perm[j] = perm[piv[j]];\n"
    << "      perm[piv[j]] = swapped;\n"
    << "    }\n"
    << "  }\n"
    << "}\n\n";
  // The group's root and its side outputs (the other ops of the family on this operand; see
  // share_own_kernels in compile/fusion.cpp) each take their part; the rest goes to scratch.
  auto buffer = [&](OpKind kind, std::size_t bytes) {
    if (root.op == kind) return ctx.buffer_of.at(group.root);
    for (ValueId side : group.side_outputs)
      if (g.node(side).op == kind) return ctx.buffer_of.at(side);
    return ctx.add_temp(bytes);
  };
  const auto count = static_cast<std::size_t>(matrices);
  const int factors = buffer(OpKind::Lu, count * static_cast<std::size_t>(m * n) * dtype_size(t));
  const int pivots =
      buffer(OpKind::LuPivots, count * static_cast<std::size_t>(k) * sizeof(std::int32_t));
  const int permutation =
      buffer(OpKind::LuPermutation, count * static_cast<std::size_t>(m) * sizeof(std::int32_t));
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), factors, pivots, permutation};
  launch.writes = {factors, pivots, permutation};
  launch.local_size = static_cast<std::size_t>(items);
  launch.global_size = static_cast<std::size_t>(matrices * items);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

// cholesky: one work-group per matrix, right-looking, column by column in the result buffer.
// The work-group first copies the operand's lower triangle (zeros above); then for each column
// j one work-item takes the square root of the pivot (a pivot <= 0 marks the matrix as not
// positive definite, as JAX's CPU potrf does; a NaN pivot goes on as NaN), the group scales the
// column below it, and updates the trailing lower triangle by that column's outer product, with a
// barrier between the steps. A failed matrix ends as NaN in its lower triangle, as JAX's CPU
// result. Any n: the trailing update is spread over the group's work-items.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {

void emit_cholesky_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const std::int64_t n = root.shape.back();
  if (num_elements(root.shape) == 0) return;
  const std::int64_t matrices = num_elements(root.shape) / (n * n);
  // Work-items per matrix: enough for a column of n (the trailing update loops over n^2).
  std::int64_t items = 1;
  while (items < n) items *= 2;
  items = std::clamp<std::int64_t>(
      items, 1,
      std::min<std::int64_t>(256, static_cast<std::int64_t>(ctx.caps.max_work_group_size)));
  const std::string T = cl_type(root.dtype), N = std::to_string(n), W = std::to_string(items);
  const std::string NN = std::to_string(n * n);
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(" << W << ", 1, 1)))\nvoid " << name
    << "(__global const " << T << "* restrict x, __global " << T << "* restrict y) {\n"
    << "  __local int failed;\n"
    << "  const long base = (long)get_group_id(0) * " << NN << ";\n"
    << "  __global const " << T << "* a = x + base;\n"
    << "  __global " << T << "* l = y + base;\n"
    << "  const int lid = (int)get_local_id(0);\n"
    << "  for (int t = lid; t < " << NN << "; t += " << W << ")\n"
    << "    l[t] = t % " << N << " <= t / " << N << " ? a[t] : (" << T << ")0;\n"
    << "  if (lid == 0) failed = 0;\n"
    << "  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);\n"
    << "  for (int j = 0; j < " << N << "; ++j) {\n"
    << "    if (lid == 0) {\n"
    << "      const " << T << " d = l[j * " << N << " + j];\n"
    << "      if (d <= 0) failed = 1; else l[j * " << N << " + j] = sqrt(d);\n"
    << "    }\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);\n"
    << "    if (failed) break;  // the same for every work-item\n"
    << "    const " << T << " pivot = l[j * " << N << " + j];\n"
    << "    for (int i = j + 1 + lid; i < " << N << "; i += " << W << ") l[i * " << N
    << " + j] /= pivot;\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "    const int r = " << N << " - j - 1;\n"
    << "    for (int t = lid; t < r * r; t += " << W << ") {\n"
    << "      const int i = j + 1 + t / r, k = j + 1 + t % r;\n"
    << "      if (k <= i) l[i * " << N << " + k] -= l[i * " << N << " + j] * l[k * " << N
    << " + j];\n"
    << "    }\n"
    << "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
    << "  }\n"
    << "  if (failed)\n"
    << "    for (int t = lid; t < " << NN << "; t += " << W << ")\n"
    << "      l[t] = t % " << N << " <= t / " << N << " ? (" << T << ")NAN : (" << T << ")0;\n"
    << "}\n\n";
  const int out = ctx.buffer_of.at(group.root);
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), out};
  launch.writes = {out};
  launch.local_size = static_cast<std::size_t>(items);
  launch.global_size = static_cast<std::size_t>(matrices * items);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

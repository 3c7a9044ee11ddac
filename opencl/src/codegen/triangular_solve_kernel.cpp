// triangular_solve: one work-item per right-hand side of each batch entry (b's columns on the
// left side, its rows on the right), substituting sequentially along the triangle. The solve
// is seen as M x = b on vectors, M being op(a) (left side) or op(a)^T (right side): its
// elements read a directly or transposed, and it is lower triangular exactly when
// lower ^ transpose_a ^ !left_side (as the evaluator in core/src/primitives/linalg.cpp).
// Work-items of one batch entry read neighbouring elements of b on the left side.
#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {

void emit_triangular_solve_kernel(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(root.attrs);
  const std::size_t r = root.shape.size();
  const std::int64_t rows = root.shape[r - 2], cols = root.shape[r - 1];
  const std::int64_t m = g.node(root.inputs[0]).shape.back();
  if (num_elements(root.shape) == 0) return;
  const std::int64_t batch = num_elements(root.shape) / (rows * cols);
  const std::int64_t vectors = at.left_side ? cols : rows;
  const std::int64_t stride = at.left_side ? cols : 1;
  const std::int64_t vector_step = at.left_side ? 1 : cols;
  const bool swap = at.transpose_a == at.left_side;
  const bool lower = (at.lower != at.transpose_a) != !at.left_side;
  const std::string T = cl_type(root.dtype), M = std::to_string(m), S = std::to_string(stride);
  auto element = [&](const std::string& i, const std::string& j) {
    return swap ? "A[" + j + " * " + M + " + " + i + "]" : "A[" + i + " * " + M + " + " + j + "]";
  };
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << T << "* restrict a, __global const " << T
    << "* restrict b, __global " << T << "* restrict y) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << batch * vectors << ") return;\n"
    << "  const long entry = gid / " << vectors << ", v = gid % " << vectors << ";\n"
    << "  __global const " << T << "* A = a + entry * " << m * m << ";\n"
    << "  const long base = entry * " << rows * cols << " + v * " << vector_step << ";\n"
    << "  for (int step = 0; step < " << M << "; ++step) {\n"
    << "    const int i = " << (lower ? "step" : M + " - 1 - step") << ";\n"
    << "    " << T << " sum = b[base + i * " << S << "];\n"
    << "    for (int j = " << (lower ? "0" : "i + 1") << "; j < " << (lower ? "i" : M)
    << "; ++j) sum -= " << element("i", "j") << " * y[base + j * " << S << "];\n"
    << "    y[base + i * " << S
    << "] = " << (at.unit_diagonal ? "sum" : "sum / " + element("i", "i")) << ";\n"
    << "  }\n"
    << "}\n\n";
  const int out = ctx.buffer_of.at(group.root);
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]), out};
  launch.writes = {out};
  launch.global_size = static_cast<std::size_t>(batch * vectors);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

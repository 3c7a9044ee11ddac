// The canonical batched matmul C[b] = A[b] (MxK) * B[b] (KxN), all row-major buffers. Each
// work-group computes a 32x32 tile of C; each of its 64 work-items a 4x4 block, accumulating
// over K in steps of 16 staged through local memory.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {
namespace {

constexpr int kTile = 32;
constexpr int kStepK = 16;
constexpr int kThreads = 64;

}  // namespace

void emit_dot_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2], K = ls[2];
  const DType t = root.dtype;
  // Integers accumulate unsigned so overflow wraps as the interpreter defines.
  const std::string T = cl_type(t);
  const std::string acc_t = is_signed_integer(t) ? (t == DType::I64 ? "ulong" : "uint") : T;
  const std::int64_t largest = std::max({B * M * K, B * K * N, B * M * N});
  const std::string idx_t = largest < (std::int64_t{1} << 30) ? "int" : "long";
  const std::int64_t tiles_m = (M + kTile - 1) / kTile, tiles_n = (N + kTile - 1) / kTile;

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};

  const std::string zero = "(" + acc_t + ")0";
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(" << kThreads << ", 1, 1)))\nvoid " << name
    << "(__global const " << T << "* restrict A, __global const " << T << "* restrict Bm, __global "
    << T << "* restrict C) {\n"
    << "  const int lid = get_local_id(0);\n"
    << "  const " << idx_t << " grp = (" << idx_t << ")get_group_id(0);\n"
    << "  const " << idx_t << " b = grp / " << tiles_m * tiles_n << ";\n"
    << "  const " << idx_t << " tm = (grp / " << tiles_n << ") % " << tiles_m << ";\n"
    << "  const " << idx_t << " tn = grp % " << tiles_n << ";\n"
    << "  const int tx = lid % 8, ty = lid / 8;\n"
    << "  __local " << acc_t << " As[" << kStepK << "][" << kTile << "];\n"
    << "  __local " << acc_t << " Bs[" << kStepK << "][" << kTile << "];\n"
    << "  " << acc_t << " acc[4][4];\n"
    << "  for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) acc[i][j] = " << zero << ";\n"
    << "  const __global " << T << "* Ab = A + b * " << M * K << ";\n"
    << "  const __global " << T << "* Bb = Bm + b * " << K * N << ";\n"
    << "  for (" << idx_t << " k0 = 0; k0 < " << K << "; k0 += " << kStepK << ") {\n"
    << "    for (int e = lid; e < " << kTile * kStepK << "; e += " << kThreads << ") {\n"
    << "      const int r = e / " << kStepK << ", c = e % " << kStepK << ";\n"
    << "      const " << idx_t << " gr = tm * " << kTile << " + r, gc = k0 + c;\n"
    << "      As[c][r] = (gr < " << M << " && gc < " << K << ") ? (" << acc_t << ")Ab[gr * " << K
    << " + gc] : " << zero << ";\n"
    << "    }\n"
    << "    for (int e = lid; e < " << kTile * kStepK << "; e += " << kThreads << ") {\n"
    << "      const int r = e / " << kTile << ", c = e % " << kTile << ";\n"
    << "      const " << idx_t << " gr = k0 + r, gc = tn * " << kTile << " + c;\n"
    << "      Bs[r][c] = (gr < " << K << " && gc < " << N << ") ? (" << acc_t << ")Bb[gr * " << N
    << " + gc] : " << zero << ";\n"
    << "    }\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "    for (int k = 0; k < " << kStepK << "; ++k) {\n"
    << "      " << acc_t << " a[4], bv[4];\n"
    << "      for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 8 * i];\n"
    << "      for (int j = 0; j < 4; ++j) bv[j] = Bs[k][tx + 8 * j];\n"
    << "      for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * bv[j];\n"
    << "    }\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "  }\n"
    << "  for (int i = 0; i < 4; ++i) {\n"
    << "    const " << idx_t << " row = tm * " << kTile << " + ty + 8 * i;\n"
    << "    if (row >= " << M << ") continue;\n"
    << "    for (int j = 0; j < 4; ++j) {\n"
    << "      const " << idx_t << " col = tn * " << kTile << " + tx + 8 * j;\n"
    << "      if (col < " << N << ") C[b * " << M * N << " + row * " << N << " + col] = (" << T
    << ")acc[i][j];\n"
    << "    }\n"
    << "  }\n"
    << "}\n\n";

  launch.local_size = kThreads;
  launch.global_size = static_cast<std::size_t>(B * tiles_m * tiles_n) * kThreads;
  if (M * N == 0) launch.global_size = 0;
  ctx.program.launches.push_back(std::move(launch));
}

}  // namespace weft::opencl

// The canonical batched matmul C[b] = A[b] (MxK) * B[b] (KxN), all row-major buffers. On GPUs
// (and for integers) each work-group computes a 32x32 tile of C, each of its 64 work-items a
// 4x4 block, accumulating over K in steps of 16 staged through local memory. CPUs get a
// register-blocked kernel instead.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {
namespace {

constexpr int kTile = 32;
constexpr int kStepK = 16;
constexpr int kThreads = 64;

// CPUs have no fast local memory to stage tiles through, but wide registers: each work-item
// keeps an 8xW block of C in eight W-wide vectors and streams rows of B past it. W is 16 for
// f32 where a register holds 16 floats (AVX-512: the 64x768x3072 dot of a transformer block
// runs 2-3x faster than with 8) and C is at least 16 wide, else 8. Blocks that cross the edge
// of C take a scalar path with bounds checks.
void emit_register_blocked(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2], K = ls[2];
  const int W =
      root.dtype == DType::F32 && ctx.caps.native_float_vector_width >= 16 && N >= 16 ? 16 : 8;
  const std::string Ws = std::to_string(W);
  const std::string T = cl_type(root.dtype), T8 = T + Ws;
  ctx.wide_vector_calls |= dtype_size(root.dtype) * W == 64;  // float16, double8, long8
  const std::int64_t MB = (M + 7) / 8, NB = (N + W - 1) / W, total = B * MB * NB;
  const std::int64_t largest = std::max({B * M * K, B * K * N, B * M * N, total});
  const std::string I = largest < (std::int64_t{1} << 30) ? "int" : "long";
  const std::string Ks = std::to_string(K), Ns = std::to_string(N), Ms = std::to_string(M);

  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << T << "* restrict A, __global const " << T
    << "* restrict Bm, __global " << T << "* restrict C) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << total << ") return;\n"
    << "  const " << I << " col8 = gid % " << NB << ";\n"
    << "  const " << I << " row8 = (gid / " << NB << ") % " << MB << ";\n"
    << "  const " << I << " b = gid / " << NB * MB << ";\n"
    << "  const __global " << T << "* a = A + b * " << M * K << " + row8 * " << 8 * K << ";\n"
    << "  const __global " << T << "* bb = Bm + b * " << K * N << ";\n"
    << "  __global " << T << "* c = C + b * " << M * N << " + row8 * " << 8 * N << ";\n"
    << "  if (row8 * 8 + 8 <= " << Ms << " && col8 * " << W << " + " << W << " <= " << Ns
    << ") {\n";
  for (int i = 0; i < 8; ++i) s << "    " << T8 << " c" << i << " = (" << T8 << ")(0);\n";
  s << "    for (" << I << " k = 0; k < " << Ks << "; ++k) {\n"
    << "      const " << T8 << " bv = vload" << Ws << "(col8, bb + k * " << Ns << ");\n";
  for (int i = 0; i < 8; ++i)
    s << "      c" << i << " = fma((" << T8 << ")(a[" << i * K << " + k]), bv, c" << i << ");\n";
  s << "    }\n";
  for (int i = 0; i < 8; ++i)
    s << "    vstore" << Ws << "(c" << i << ", col8, c + " << i * N << ");\n";
  s << "  } else {\n"
    << "    for (int i = 0; i < 8 && row8 * 8 + i < " << Ms << "; ++i)\n"
    << "      for (int j = 0; j < " << W << " && col8 * " << W << " + j < " << Ns << "; ++j) {\n"
    << "        const " << I << " col = col8 * " << W << " + j;\n"
    << "        " << T << " acc = 0;\n"
    << "        for (" << I << " k = 0; k < " << Ks << "; ++k) acc = fma(a[i * " << Ks
    << " + k], bb[k * " << Ns << " + col], acc);\n"
    << "        c[i * " << Ns << " + col] = acc;\n"
    << "      }\n"
    << "  }\n"
    << "}\n\n";

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  launch.local_size = std::min<std::size_t>(16, ctx.caps.max_work_group_size);
  launch.global_size = round_up(static_cast<std::size_t>(total), launch.local_size);
  ctx.add_launch(std::move(launch));
}

}  // namespace

void emit_dot_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  if (!ctx.caps.is_gpu && is_float(root.dtype)) {
    emit_register_blocked(ctx, group, name);
    return;
  }
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
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

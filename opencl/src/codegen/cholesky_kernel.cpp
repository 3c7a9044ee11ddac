// cholesky: right-looking and blocked, as LAPACK's potrf, in the result buffer. A first launch
// copies the operand's lower triangle (zeros above); then, per block column of NB columns:
//   diag:   the NB x NB diagonal block is factored, on CPUs by one work-item per matrix (rows
//           as dot products, Crout), on GPUs by one work-group in local memory, column by column
//           (a pivot <= 0 marks the matrix as not positive definite, as JAX's CPU potrf does; a
//           NaN pivot goes on as NaN);
//   panel:  the rows below it solve against the block's transpose, each work-item a group of
//           rows (on CPUs a vector of 16 rows as lanes); they also write the panel transposed
//           into a scratch buffer, so that the update reads its rows as vectors;
//   update: the trailing lower triangle loses the panel's outer product (a SYRK), each
//           work-item an 8 x W tile blocked in registers as the CPU dot kernel's (W = 32 floats),
//           tiles wholly above the diagonal returning at once, tiles across it storing only
//           their lower part.
// The launches of every step are the same kernels: the step lives on the device, in a small
// state buffer (per matrix: the blocks done, and whether it failed) that `diag` advances, so
// the program holds four kernels whatever n is. The last `diag` writes NaN over the lower
// triangle of a failed matrix, as JAX's CPU result. Each launch is sized to its step's work.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {
namespace {

constexpr int kTileRows = 8;  // rows of an update tile

}  // namespace

void emit_cholesky_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const std::int64_t n = root.shape.back();
  if (num_elements(root.shape) == 0) return;
  const std::int64_t batch = num_elements(root.shape) / (n * n);
  const DType t = root.dtype;
  const bool gpu = ctx.caps.is_gpu;
  // The block: 64 columns, on GPUs fewer where local memory (which holds the diagonal block)
  // would not hold it twice over.
  std::int64_t NB = 64;
  while (gpu && NB > 8 &&
         static_cast<std::size_t>(NB * NB) * dtype_size(t) * 2 > ctx.caps.local_mem_bytes)
    NB /= 2;
  const std::int64_t WG =
      std::min<std::int64_t>(NB, static_cast<std::int64_t>(ctx.caps.max_work_group_size));
  const int VW = gpu ? 1 : t == DType::F32 && ctx.caps.native_float_vector_width >= 16 ? 16 : 8;
  const int V = VW > 1 ? 2 : 1;
  const std::int64_t W = V * VW;                // columns of an update tile
  const std::int64_t LW = VW;                   // rows of a panel vector
  const int PV = 1;                             // vectors of rows of a panel work-item
  const std::int64_t PR = LW * PV;              // rows of a panel work-item
  const std::int64_t PW = (n + W - 1) / W * W;  // row length of the transposed panel
  const std::int64_t steps = (n + NB - 1) / NB;
  ctx.wide_vector_calls |= VW * dtype_size(t) == 64;
  const bool wide = batch * std::max(n * n, NB * PW) >= (std::int64_t{1} << 30);
  const std::string I = wide ? "long" : "int", T = cl_type(t);
  const std::string TV = VW == 1 ? T : T + std::to_string(VW), L = std::to_string(VW);
  auto S = [](std::int64_t v) { return std::to_string(v); };
  const std::string N = S(n), NN = S(n * n);
  std::ostringstream& s = ctx.source;

  // ---- init, one work-item per row: the lower triangle, zeros above; every matrix at block 0,
  // not failed.
  s << "__kernel void " << name << "_init(__global const " << T << "* restrict x, __global " << T
    << "* restrict y, __global int* restrict state) {\n"
    << "  const " << I << " row = (" << I << ")get_global_id(0);\n"
    << "  if (row >= " << S(batch * n) << ") return;\n"
    << "  const int i = (int)(row % " << N << ");\n"
    << "  __global const " << T << "* xr = x + row * " << N << ";\n"
    << "  __global " << T << "* yr = y + row * " << N << ";\n"
    << "  for (int j = 0; j <= i; ++j) yr[j] = xr[j];\n"
    << "  for (int j = i + 1; j < " << N << "; ++j) yr[j] = 0;\n"
    << "  if (i == 0) {\n"
    << "    state[2 * (row / " << N << ")] = 0;\n"
    << "    state[2 * (row / " << N << ") + 1] = 0;\n"
    << "  }\n}\n\n";

  // The step's columns, from entry 0's count of blocks done (every entry has the same).
  const std::string step_of_panel = "  const int k0 = (state[0] - 1) * " + S(NB) + ", b = min(" +
                                    S(NB) + ", " + N + " - k0), s0 = k0 + b, t = " + N + " - s0;\n";

  // ---- diag. CPUs: one work-item per matrix, row by row as dot products of rows (Crout), in
  // vectors of VW lanes; the block (16 KiB) stays in cache. A work-group stepping column by
  // column pays three barriers per column, which cost a 64 x 64 block 30 times its arithmetic.
  if (!gpu) {
    s << "static inline " << T << " " << name << "_dot(__global const " << T
      << "* a, __global const " << T << "* b, int len) {\n"
      << "  " << TV << " sum = (" << TV << ")(0);\n"
      << "  int k = 0;\n"
      << "  for (; k + " << VW << " <= len; k += " << VW << ") sum = fma(vload" << L
      << "(0, a + k), vload" << L << "(0, b + k), sum);\n"
      << "  " << T << " lanes[" << VW << "];\n"
      << "  vstore" << L << "(sum, 0, lanes);\n"
      << "  " << T << " total = 0;\n"
      << "  for (int l = 0; l < " << VW << "; ++l) total += lanes[l];\n"
      << "  for (; k < len; ++k) total = fma(a[k], b[k], total);\n"
      << "  return total;\n}\n"
      << "__kernel void " << name << "(__global " << T
      << "* restrict y, __global int* restrict state) {\n"
      << "  const " << I << " e = (" << I << ")get_global_id(0);\n"
      << "  if (e >= " << batch << ") return;\n"
      << "  __global " << T << "* Y = y + e * " << NN << ";\n"
      << "  const int k = state[2 * e];\n"
      << "  const int k0 = k * " << NB << ", b = min(" << NB << ", " << N << " - k0);\n"
      << "  int failed = state[2 * e + 1];\n"
      << "  for (int j = 0; j < b && !failed; ++j) {\n"
      << "    __global " << T << "* rj = Y + (k0 + j) * " << N << " + k0;\n"
      << "    const " << T << " d = rj[j] - " << name << "_dot(rj, rj, j);\n"
      << "    if (d <= 0) {\n"
      << "      failed = 1;\n"
      << "      break;\n"
      << "    }\n"
      << "    const " << T << " ljj = sqrt(d);\n"
      << "    rj[j] = ljj;\n"
      << "    for (int i = j + 1; i < b; ++i) {\n"
      << "      __global " << T << "* ri = Y + (k0 + i) * " << N << " + k0;\n"
      << "      ri[j] = (ri[j] - " << name << "_dot(ri, rj, j)) / ljj;\n"
      << "    }\n"
      << "  }\n"
      << "  state[2 * e] = k + 1;\n"
      << "  state[2 * e + 1] = failed;\n"
      << "  if (failed && k0 + b == " << N << ")\n"
      << "    for (int i = 0; i < " << N << "; ++i)\n"
      << "      for (int j = 0; j <= i; ++j) Y[i * " << N << " + j] = (" << T << ")NAN;\n"
      << "}\n\n";
  } else {
    // GPUs: one work-group per matrix, column by column in local memory.
    s << "__kernel __attribute__((reqd_work_group_size(" << WG << ", 1, 1)))\nvoid " << name
      << "(__global " << T << "* restrict y, __global int* restrict state) {\n"
      << "  __local " << T << " blk[" << NB * NB << "];\n"
      << "  __local int failed;\n"
      << "  const " << I << " e = get_group_id(0);\n"
      << "  const int lid = (int)get_local_id(0);\n"
      << "  __global " << T << "* Y = y + e * " << NN << ";\n"
      << "  const int k = state[2 * e];\n"
      << "  const int k0 = k * " << NB << ", b = min(" << NB << ", " << N << " - k0);\n"
      << "  // Read before any work-item can change `failed`: the loop below is uniform.\n"
      << "  const int done_before = state[2 * e + 1];\n"
      << "  if (lid == 0) failed = done_before;\n"
      << "  for (int at = lid; at < b * " << NB << "; at += " << WG << ") {\n"
      << "    const int i = at / " << NB << ", j = at % " << NB << ";\n"
      << "    if (j <= i) blk[at] = Y[(k0 + i) * " << N << " + k0 + j];\n"
      << "  }\n"
      << "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  for (int j = 0; j < b && !done_before; ++j) {\n"
      << "    if (lid == 0) {\n"
      << "      const " << T << " d = blk[j * " << NB << " + j];\n"
      << "      if (d <= 0) failed = 1; else blk[j * " << NB << " + j] = sqrt(d);\n"
      << "    }\n"
      << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "    if (failed) break;  // the same for every work-item\n"
      << "    const " << T << " pivot = blk[j * " << NB << " + j];\n"
      << "    for (int i = j + 1 + lid; i < b; i += " << WG << ") blk[i * " << NB
      << " + j] /= pivot;\n"
      << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "    for (int i = j + 1 + lid; i < b; i += " << WG << ") {\n"
      << "      const " << T << " lij = blk[i * " << NB << " + j];\n"
      << "      for (int c = j + 1; c <= i; ++c) blk[i * " << NB << " + c] -= lij * blk[c * " << NB
      << " + j];\n"
      << "    }\n"
      << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  }\n"
      << "  if (!failed)\n"
      << "    for (int at = lid; at < b * " << NB << "; at += " << WG << ") {\n"
      << "      const int i = at / " << NB << ", j = at % " << NB << ";\n"
      << "      if (j <= i) Y[(k0 + i) * " << N << " + k0 + j] = blk[at];\n"
      << "    }\n"
      << "  if (lid == 0) {\n"
      << "    state[2 * e] = k + 1;\n"
      << "    state[2 * e + 1] = failed;\n"
      << "  }\n"
      << "  if (failed && k0 + b == " << N << ")\n"
      << "    for (int at = lid; at < " << NN << "; at += " << WG << ")\n"
      << "      if (at % " << N << " <= at / " << N << ") Y[at] = (" << T << ")NAN;\n"
      << "}\n\n";
  }

  // ---- panel: rows s0 + r0 .. + PR of the trailing part, each solving x L_kk^T = a, in PV
  // vectors of LW rows (lanes = rows). The sums split over even and odd l keep two FMA chains
  // apart (one chain waited on each FMA's latency); one vector per work-item (PV = 1) beat two
  // (1.7 against 2.6 ms of panels per 1024 cholesky): the later steps have few row groups. Rows
  // past n read the last row; their lanes are never stored into y.
  s << "__kernel void " << name << "_panel(__global " << T << "* restrict y, __global " << T
    << "* restrict pt, __global int* restrict state) {\n"
    << step_of_panel << "  const " << I << " groups = (t + " << PR - 1 << ") / " << PR << ";\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << batch << " * groups) return;\n"
    << "  const " << I << " e = gid / groups;\n"
    << "  const int r0 = (int)(gid % groups) * " << PR << ";\n"
    << "  if (state[2 * e + 1]) return;\n"
    << "  __global " << T << "* Y = y + e * " << NN << ";\n"
    << "  __global " << T << "* P = pt + e * " << S(NB * PW) << ";\n";
  for (int q = 0; q < PV; ++q) s << "  " << TV << " x" << q << "[" << NB << "];\n";
  s << "  " << T << " lanes[" << LW << "];\n"
    << "  for (int j = 0; j < b; ++j) {\n"
    << "    __global const " << T << "* lj = Y + (k0 + j) * " << N << " + k0;\n";
  for (int q = 0; q < PV; ++q) {
    const std::string rows = "s0 + r0 + " + S(q * LW);
    if (LW == 1) {
      s << "    " << TV << " u" << q << " = Y[min(" << rows << ", " << n - 1 << ") * " << N
        << " + k0 + j], w" << q << " = 0;\n";
    } else {
      s << "    for (int l = 0; l < " << LW << "; ++l) lanes[l] = Y[min(" << rows << " + l, "
        << n - 1 << ") * " << N << " + k0 + j];\n"
        << "    " << TV << " u" << q << " = vload" << L << "(0, lanes), w" << q << " = (" << TV
        << ")(0);\n";
    }
  }
  s << "    int l = 0;\n"
    << "    for (; l + 1 < j; l += 2) {\n"
    << "      const " << TV << " m0 = (" << TV << ")(-lj[l]), m1 = (" << TV << ")(-lj[l + 1]);\n";
  for (int q = 0; q < PV; ++q)
    s << "      u" << q << " = fma(m0, x" << q << "[l], u" << q << ");\n"
      << "      w" << q << " = fma(m1, x" << q << "[l + 1], w" << q << ");\n";
  s << "    }\n";
  for (int q = 0; q < PV; ++q)
    s << "    if (l < j) u" << q << " = fma((" << TV << ")(-lj[l]), x" << q << "[l], u" << q
      << ");\n"
      << "    x" << q << "[j] = (u" << q << " + w" << q << ") / (" << TV << ")(lj[j]);\n";
  for (int q = 0; q < PV; ++q) {
    const std::string r = "r0 + " + S(q * LW);
    if (LW == 1) {
      s << "    P[j * " << PW << " + " << r << "] = x" << q << "[j];\n"
        << "    if (" << r << " < t) Y[(s0 + " << r << ") * " << N << " + k0 + j] = x" << q
        << "[j];\n";
    } else {
      s << "    vstore" << L << "(x" << q << "[j], 0, P + j * " << PW << " + " << r << ");\n"
        << "    vstore" << L << "(x" << q << "[j], 0, lanes);\n"
        << "    for (int l = 0; l < " << LW << " && " << r << " + l < t; ++l) Y[(s0 + " << r
        << " + l) * " << N << " + k0 + j] = lanes[l];\n";
    }
  }
  s << "  }\n}\n\n";

  // ---- update: the trailing lower triangle minus the panel times its transpose.
  const int R = kTileRows;
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };
  s << "__kernel void " << name << "_update(__global " << T << "* restrict y, __global const " << T
    << "* restrict pt, __global int* restrict state) {\n"
    << step_of_panel << "  const " << I << " rb = (t + " << R - 1 << ") / " << R << ", cb = (t + "
    << W - 1 << ") / " << W << ";\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << batch << " * rb * cb) return;\n"
    << "  const " << I << " e = gid / (rb * cb), tile = gid % (rb * cb);\n"
    << "  const int i0 = (int)(tile / cb) * " << R << ", j0 = (int)(tile % cb) * " << W << ";\n"
    << "  if (j0 > i0 + " << R - 1 << " || state[2 * e + 1]) return;\n"
    << "  __global " << T << "* Y = y + e * " << NN << ";\n"
    << "  __global const " << T << "* P = pt + e * " << S(NB * PW) << " + j0;\n";
  for (int i = 0; i < R; ++i)
    s << "  __global const " << T << "* a" << i << " = Y + (s0 + min(i0 + " << i << ", t - 1)) * "
      << N << " + k0;\n";
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) s << "  " << TV << " " << acc(i, v) << " = (" << TV << ")(0);\n";
  s << "  for (int l = 0; l < b; ++l) {\n";
  for (int v = 0; v < V; ++v)
    s << "    const " << TV << " p" << v << " = "
      << (VW == 1 ? "P[l * " + S(PW) + "]" : "vload" + L + "(" + S(v) + ", P + l * " + S(PW) + ")")
      << ";\n";
  for (int i = 0; i < R; ++i) {
    s << "    { const " << TV << " a = (" << TV << ")(a" << i << "[l]);";
    for (int v = 0; v < V; ++v)
      s << " " << acc(i, v) << " = fma(a, p" << v << ", " << acc(i, v) << ");";
    s << " }\n";
  }
  s << "  }\n"
    << "  __global " << T << "* C = Y + (s0 + i0) * " << N << " + s0 + j0;\n"
    << "  if (j0 + " << W << " <= i0 + 1 && i0 + " << R << " <= t) {\n";
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) {
      const std::string at = "C + " + S(i) + " * " + N;
      if (VW == 1)
        s << "    C[" << i << " * " << N << "] -= " << acc(i, v) << ";\n";
      else
        s << "    vstore" << L << "(vload" << L << "(" << v << ", " << at << ") - " << acc(i, v)
          << ", " << v << ", " << at << ");\n";
    }
  s << "  } else {\n"
    << "    " << T << " lanes[" << W << "];\n";
  for (int i = 0; i < R; ++i) {
    s << "    if (i0 + " << i << " < t) {\n";
    for (int v = 0; v < V; ++v)
      s << (VW == 1 ? "      lanes[" + S(v) + "] = " + acc(i, v) + ";\n"
                    : "      vstore" + L + "(" + acc(i, v) + ", " + S(v) + ", lanes);\n");
    s << "      for (int c = 0; c < " << W << " && j0 + c <= i0 + " << i << "; ++c) C[" << i
      << " * " << N << " + c] -= lanes[c];\n"
      << "    }\n";
  }
  s << "  }\n}\n\n";

  const int x = ctx.buffer_of.at(root.inputs[0]), y = ctx.buffer_of.at(group.root);
  const int state = ctx.add_temp(static_cast<std::size_t>(2 * batch) * sizeof(std::int32_t));
  const int pt =
      steps > 1 ? ctx.add_temp(static_cast<std::size_t>(batch * NB * PW) * dtype_size(t)) : -1;
  // `local`: work-items per group on CPUs (size_step_launch).
  auto launch = [&](const std::string& kernel, std::vector<int> args, std::int64_t items,
                    std::int64_t local) {
    LaunchPlan l;
    l.kernel = kernel;
    // Every launch writes the factor and the state (the runtime orders a buffer's writers),
    // even where it only reads them.
    l.writes = args;
    if (args[0] == x) l.writes.erase(l.writes.begin());
    l.args = std::move(args);
    size_step_launch(ctx, l, items, static_cast<std::size_t>(local));
    ctx.add_launch(std::move(l));
  };
  launch(name + "_init", {x, y, state}, batch * n, 16);
  for (std::int64_t k = 0; k < steps; ++k) {
    if (gpu) {  // one work-group per matrix
      launch(name, {y, state}, 0, 0);
      ctx.block.steps.back().launch.local_size = static_cast<std::size_t>(WG);
      ctx.block.steps.back().launch.global_size = static_cast<std::size_t>(batch * WG);
    } else {
      launch(name, {y, state}, batch, 1);
    }
    const std::int64_t tail = n - std::min(n, (k + 1) * NB);
    if (tail == 0) continue;
    launch(name + "_panel", {y, pt, state}, batch * ((tail + PR - 1) / PR), 1);
    launch(name + "_update", {y, pt, state}, batch * ((tail + R - 1) / R) * ((tail + W - 1) / W),
           4);
  }
}

}  // namespace weft::opencl

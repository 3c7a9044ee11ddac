// lu, lu_pivots and lu_permutation: LAPACK's getrf, blocked and right-looking, in a buffer of
// the factors. A first launch copies the operand; then, per block column of NB columns:
//   panel:  one work-item per matrix factors the block column (its rows from the diagonal
//           down) column by column with partial pivoting: the pivot is the first largest
//           |a[i][j]|, i >= j (a NaN never replaces the current), the two rows swap within the
//           block, the column below the pivot is divided by it (unless it is zero: a singular
//           matrix keeps its factors), and the rest of the block loses the outer product;
//   rows:   each work-item takes a tile of W columns outside the block, applies the block's row
//           swaps to it and, right of the block, solves the unit lower diagonal block into it
//           (the rows of U beside the block);
//   update: the trailing matrix loses L's block column times U's block row (a GEMM), each
//           work-item an 8 x W tile blocked in registers as the CPU dot kernel's (W = 32 floats);
//           tiles across the right edge go element by element.
// The launches of every step are the same kernels: the step lives on the device, in a state
// buffer that `panel` advances, so the program holds four kernels whatever the size. The last
// `panel` turns the pivots into the permutation. The factors, the pivots and the permutation
// each go to the result of the op that keeps them (the group's root or a side output: one
// kernel serves all three ops of one operand) or to a scratch buffer.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {
namespace {

constexpr std::int64_t kBlock = 32;  // columns of a block column
constexpr int kTileRows = 8;         // rows of an update tile

}  // namespace

void emit_lu_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& operand = g.node(root.inputs[0]);
  const std::size_t r = operand.shape.size();
  const std::int64_t m = operand.shape[r - 2], n = operand.shape[r - 1], k = std::min(m, n);
  if (num_elements(operand.shape) == 0) return;
  const std::int64_t batch = num_elements(operand.shape) / (m * n);
  const DType t = operand.dtype;
  const bool gpu = ctx.caps.is_gpu;
  const std::int64_t NB = kBlock, steps = (k + NB - 1) / NB;
  const int VW = gpu ? 1 : t == DType::F32 && ctx.caps.native_float_vector_width >= 16 ? 16 : 8;
  const int V = VW > 1 ? 2 : 1;
  const std::int64_t W = V * VW;  // columns of a rows or update tile
  const int R = kTileRows;
  ctx.wide_vector_calls |= VW * dtype_size(t) == 64;
  const bool wide = batch * m * n >= (std::int64_t{1} << 30);
  const std::string I = wide ? "long" : "int", T = cl_type(t);
  const std::string TV = VW == 1 ? T : T + std::to_string(VW), L = std::to_string(VW);
  auto S = [](std::int64_t v) { return std::to_string(v); };
  const std::string M = S(m), N = S(n), K = S(k), MN = S(m * n);
  auto vload = [&](int v, const std::string& p) {
    return VW == 1 ? p + "[" + S(v) + "]" : "vload" + L + "(" + S(v) + ", " + p + ")";
  };
  auto vstore = [&](const std::string& x, int v, const std::string& p) {
    return VW == 1 ? p + "[" + S(v) + "] = " + x
                   : "vstore" + L + "(" + x + ", " + S(v) + ", " + p + ")";
  };
  std::ostringstream& s = ctx.source;

  // ---- init, one work-item per row: the operand copied; every matrix at block 0.
  s << "__kernel void " << name << "_init(__global const " << T << "* restrict x, __global " << T
    << "* restrict f, __global int* restrict state) {\n"
    << "  const " << I << " row = (" << I << ")get_global_id(0);\n"
    << "  if (row >= " << S(batch * m) << ") return;\n"
    << "  for (int j = 0; j < " << N << "; ++j) f[row * " << N << " + j] = x[row * " << N
    << " + j];\n"
    << "  if (row % " << M << " == 0) state[row / " << M << "] = 0;\n"
    << "}\n\n";

  // ---- panel: one work-item per matrix.
  s << "__kernel void " << name << "(__global " << T
    << "* restrict f, __global int* restrict pivots, __global int* restrict state, "
    << "__global int* restrict permutation) {\n"
    << "  const " << I << " e = (" << I << ")get_global_id(0);\n"
    << "  if (e >= " << batch << ") return;\n"
    << "  __global " << T << "* A = f + e * " << MN << ";\n"
    << "  __global int* piv = pivots + e * " << K << ";\n"
    << "  const int step = state[e];\n"
    << "  const int k0 = step * " << NB << ", end = min(k0 + " << NB << ", " << K << ");\n";
  if (VW > 1) {
    // CPUs, where the block's columns lie within the rows: each row of the block is PV vectors.
    // Per column, every row below loses the pivot row's tail (its lanes past the column, within
    // the block) in vector FMAs, and the next column's pivot is sought in the same pass.
    const int PV = static_cast<int>(NB / VW);
    const std::string IV = (t == DType::F64 ? "long" : "int") + L;
    std::string lanes = "(" + IV + ")(";
    for (int l = 0; l < VW; ++l) lanes += (l ? ", " : "") + S(l);
    lanes += ")";
    auto row_vectors = [&](const std::string& indent, const std::string& body) {
      std::string out;
      for (int q = 0; q < PV; ++q) {
        std::string b = body;
        for (std::size_t at; (at = b.find('#')) != std::string::npos;) b.replace(at, 1, S(q));
        out += indent + b + "\n";
      }
      return out;
    };
    s << "  if (k0 + " << NB << " <= " << N << ") {\n"
      << "    const " << IV << " lane = " << lanes << ";\n"
      << "    int p = k0;\n"
      << "    " << T << " best = fabs(A[k0 * " << N << " + k0]);\n"
      << "    for (int i = k0 + 1; i < " << M << "; ++i) {\n"
      << "      const " << T << " v = fabs(A[i * " << N << " + k0]);\n"
      << "      if (v > best) {\n"
      << "        best = v;\n"
      << "        p = i;\n"
      << "      }\n"
      << "    }\n"
      << "    for (int j = k0; j < end; ++j) {\n"
      << "      piv[j] = p;\n"
      << "      __global " << T << "* rj = A + j * " << N << " + k0;\n"
      << "      if (p != j) {\n"
      << "        __global " << T << "* rp = A + p * " << N << " + k0;\n"
      << row_vectors("        ", "{ const " + TV + " a = vload" + L + "(#, rj), b = vload" + L +
                                     "(#, rp); const " + IV + " in = lane + # * " + L +
                                     " < end - k0; vstore" + L + "(select(a, b, in), #, rj); " +
                                     "vstore" + L + "(select(b, a, in), #, rp); }")
      << "      }\n"
      << "      const " << T << " pivot = rj[j - k0];\n"
      << row_vectors("      ", "const " + TV + " tail# = select((" + TV + ")(0), vload" + L +
                                   "(#, rj), lane + # * " + L + " > j - k0 && lane + # * " + L +
                                   " < end - k0);")
      << "      int next = j + 1;\n"
      << "      " << T << " next_best = 0;\n"
      << "      for (int i = j + 1; i < " << M << "; ++i) {\n"
      << "        __global " << T << "* ri = A + i * " << N << " + k0;\n"
      << "        " << T << " l = ri[j - k0];\n"
      << "        if (pivot != 0) l /= pivot;\n"
      << "        const " << TV << " m = (" << TV << ")(-l);\n"
      << row_vectors("        ", "vstore" + L + "(fma(m, tail#, vload" + L + "(#, ri)), #, ri);")
      << "        ri[j - k0] = l;\n"
      << "        const " << T << " v = fabs(ri[j + 1 - k0]);\n"
      << "        if (i == j + 1) next_best = v;\n"
      << "        else if (v > next_best) {\n"
      << "          next_best = v;\n"
      << "          next = i;\n"
      << "        }\n"
      << "      }\n"
      << "      p = next;\n"
      << "    }\n"
      << "  } else\n";
  }
  s << "  for (int j = k0; j < end; ++j) {\n"
    << "    int p = j;\n"
    << "    " << T << " best = fabs(A[j * " << N << " + j]);\n"
    << "    for (int i = j + 1; i < " << M << "; ++i) {\n"
    << "      const " << T << " v = fabs(A[i * " << N << " + j]);\n"
    << "      if (v > best) {\n"
    << "        best = v;\n"
    << "        p = i;\n"
    << "      }\n"
    << "    }\n"
    << "    piv[j] = p;\n"
    << "    __global " << T << "* rj = A + j * " << N << ";\n"
    << "    if (p != j) {\n"
    << "      __global " << T << "* rp = A + p * " << N << ";\n"
    << "      for (int c = k0; c < end; ++c) {\n"
    << "        const " << T << " swapped = rj[c];\n"
    << "        rj[c] = rp[c];\n"
    << "        rp[c] = swapped;\n"
    << "      }\n"
    << "    }\n"
    << "    const " << T << " pivot = rj[j];\n"
    << "    for (int i = j + 1; i < " << M << "; ++i) {\n"
    << "      __global " << T << "* ri = A + i * " << N << ";\n"
    << "      " << T << " l = ri[j];\n"
    << "      if (pivot != 0) {\n"
    << "        l /= pivot;\n"
    << "        ri[j] = l;\n"
    << "      }\n"
    << "      for (int c = j + 1; c < end; ++c) ri[c] -= l * rj[c];\n"
    << "    }\n"
    << "  }\n"
    << "  state[e] = step + 1;\n"
    << "  if (end < " << K << ") return;\n"
    << "  // The last block: the permutation from all the pivots.\n"
    << "  __global int* perm = permutation + e * " << M << ";\n"
    << "  for (int i = 0; i < " << M << "; ++i) perm[i] = i;\n"
    << "  for (int j = 0; j < " << K << "; ++j) {\n"
    << "    const int swapped = perm[j];\n"
    << "    perm[j] = perm[piv[j]];\n"
    << "    perm[piv[j]] = swapped;\n"
    << "  }\n"
    << "}\n\n";

  // The step's block, from entry 0's count of blocks done (every entry has the same).
  const std::string step_done =
      "  const int k0 = (state[0] - 1) * " + S(NB) + ", s0 = min(k0 + " + S(NB) + ", " + K + ");\n";

  // ---- rows: the block's swaps on a tile of columns left or right of it, and right of it the
  // solve with its unit lower diagonal block.
  s << "__kernel void " << name << "_rows(__global " << T
    << "* restrict f, __global int* restrict pivots, __global int* restrict state) {\n"
    << step_done << "  const int left = (k0 + " << W - 1 << ") / " << W << ", right = (" << N
    << " - s0 + " << W - 1 << ") / " << W << ";\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << batch << " * (left + right)) return;\n"
    << "  const " << I << " e = gid / (left + right);\n"
    << "  const int tile = (int)(gid % (left + right));\n"
    << "  const int c0 = tile < left ? tile * " << W << " : s0 + (tile - left) * " << W << ";\n"
    << "  const int cols = min(" << W << ", (tile < left ? k0 : " << N << ") - c0);\n"
    << "  __global " << T << "* A = f + e * " << MN << " + c0;\n"
    << "  __global const int* piv = pivots + e * " << K << ";\n"
    << "  if (cols == " << W << ") {\n"
    << "    for (int j = k0; j < s0; ++j) {\n"
    << "      const int p = piv[j];\n"
    << "      if (p == j) continue;\n";
  for (int v = 0; v < V; ++v)
    s << "      { const " << TV << " a = " << vload(v, "(A + j * " + N + ")") << "; "
      << vstore(vload(v, "(A + p * " + N + ")"), v, "(A + j * " + N + ")") << "; "
      << vstore("a", v, "(A + p * " + N + ")") << "; }\n";
  s << "    }\n"
    << "    if (tile >= left)\n"
    << "      for (int i = k0 + 1; i < s0; ++i) {\n"
    << "        __global const " << T << "* li = A - c0 + i * " << N << ";\n";
  for (int v = 0; v < V; ++v)
    s << "        " << TV << " u" << v << " = " << vload(v, "(A + i * " + N + ")") << ";\n";
  s << "        for (int l = k0; l < i; ++l) {\n"
    << "          const " << TV << " a = (" << TV << ")(-li[l]);\n";
  for (int v = 0; v < V; ++v)
    s << "          u" << v << " = fma(a, " << vload(v, "(A + l * " + N + ")") << ", u" << v
      << ");\n";
  s << "        }\n";
  for (int v = 0; v < V; ++v)
    s << "        " << vstore("u" + S(v), v, "(A + i * " + N + ")") << ";\n";
  s << "      }\n"
    << "  } else {\n"
    << "    for (int c = 0; c < cols; ++c) {\n"
    << "      for (int j = k0; j < s0; ++j) {\n"
    << "        const int p = piv[j];\n"
    << "        const " << T << " a = A[j * " << N << " + c];\n"
    << "        A[j * " << N << " + c] = A[p * " << N << " + c];\n"
    << "        A[p * " << N << " + c] = a;\n"
    << "      }\n"
    << "      if (tile >= left)\n"
    << "        for (int i = k0 + 1; i < s0; ++i) {\n"
    << "          " << T << " u = A[i * " << N << " + c];\n"
    << "          for (int l = k0; l < i; ++l) u = fma(-A[i * " << N << " + l - c0], A[l * " << N
    << " + c], u);\n"
    << "          A[i * " << N << " + c] = u;\n"
    << "        }\n"
    << "    }\n"
    << "  }\n"
    << "}\n\n";

  // ---- update: the trailing matrix minus L's block column times U's block row.
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };
  s << "__kernel void " << name << "_update(__global " << T
    << "* restrict f, __global int* restrict pivots, __global int* restrict state) {\n"
    << step_done << "  const int rows = " << M << " - s0, cols = " << N << " - s0;\n"
    << "  const int rb = (rows + " << R - 1 << ") / " << R << ", cb = (cols + " << W - 1 << ") / "
    << W << ";\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << batch << " * rb * cb) return;\n"
    << "  const " << I << " e = gid / (rb * cb);\n"
    << "  const int tile = (int)(gid % (rb * cb));\n"
    << "  const int i0 = tile / cb * " << R << ", j0 = tile % cb * " << W << ";\n"
    << "  __global " << T << "* A = f + e * " << MN << ";\n"
    << "  __global const " << T << "* B = A + k0 * " << N << " + s0 + j0;\n"
    << "  __global " << T << "* C = A + (s0 + i0) * " << N << " + s0 + j0;\n"
    << "  const int depth = s0 - k0;\n";
  for (int i = 0; i < R; ++i)
    s << "  __global const " << T << "* a" << i << " = A + (s0 + min(i0 + " << i
      << ", rows - 1)) * " << N << " + k0;\n";
  s << "  if (j0 + " << W << " <= cols) {\n";
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) s << "    " << TV << " " << acc(i, v) << " = (" << TV << ")(0);\n";
  s << "    for (int l = 0; l < depth; ++l) {\n";
  for (int v = 0; v < V; ++v)
    s << "      const " << TV << " b" << v << " = " << vload(v, "(B + l * " + N + ")") << ";\n";
  for (int i = 0; i < R; ++i) {
    s << "      { const " << TV << " a = (" << TV << ")(a" << i << "[l]);";
    for (int v = 0; v < V; ++v)
      s << " " << acc(i, v) << " = fma(a, b" << v << ", " << acc(i, v) << ");";
    s << " }\n";
  }
  s << "    }\n";
  for (int i = 0; i < R; ++i) {
    s << "    if (i0 + " << i << " < rows) {\n";
    for (int v = 0; v < V; ++v) {
      const std::string row = "(C + " + S(i) + " * " + N + ")";
      s << "      " << vstore(vload(v, row) + " - " + acc(i, v), v, row) << ";\n";
    }
    s << "    }\n";
  }
  s << "  } else {\n"
    << "    for (int i = 0; i < " << R << " && i0 + i < rows; ++i) {\n"
    << "      __global const " << T << "* a = A + (s0 + i0 + i) * " << N << " + k0;\n"
    << "      for (int c = 0; c < cols - j0; ++c) {\n"
    << "        " << T << " sum = 0;\n"
    << "        for (int l = 0; l < depth; ++l) sum = fma(a[l], B[l * " << N << " + c], sum);\n"
    << "        C[i * " << N << " + c] -= sum;\n"
    << "      }\n"
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
  const auto count = static_cast<std::size_t>(batch);
  const int x = ctx.buffer_of.at(root.inputs[0]);
  const int factors = buffer(OpKind::Lu, count * static_cast<std::size_t>(m * n) * dtype_size(t));
  const int pivots =
      buffer(OpKind::LuPivots, count * static_cast<std::size_t>(k) * sizeof(std::int32_t));
  const int permutation =
      buffer(OpKind::LuPermutation, count * static_cast<std::size_t>(m) * sizeof(std::int32_t));
  const int state = ctx.add_temp(count * sizeof(std::int32_t));
  // `local`: work-items per group on CPUs (size_step_launch).
  auto launch = [&](const std::string& kernel, std::vector<int> args, std::int64_t items,
                    std::size_t local) {
    LaunchPlan l;
    l.kernel = kernel;
    // Every launch writes what it takes but the operand: the runtime orders a buffer's
    // writers, and a buffer read by one launch may not be written by a later one.
    l.writes = args;
    if (args[0] == x) l.writes.erase(l.writes.begin());
    l.args = std::move(args);
    size_step_launch(ctx, l, items, local);
    ctx.add_launch(std::move(l));
  };
  launch(name + "_init", {x, factors, state}, batch * m, 16);
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t k0 = step * NB, s0 = std::min(k0 + NB, k);
    launch(name, {factors, pivots, state, permutation}, batch, 1);
    const std::int64_t tiles = (k0 + W - 1) / W + (n - s0 + W - 1) / W;
    if (tiles > 0) launch(name + "_rows", {factors, pivots, state}, batch * tiles, 2);
    if (m > s0 && n > s0)
      launch(name + "_update", {factors, pivots, state},
             batch * ((m - s0 + R - 1) / R) * ((n - s0 + W - 1) / W), 4);
  }
}

}  // namespace weft::opencl

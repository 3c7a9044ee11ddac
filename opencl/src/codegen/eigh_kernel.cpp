// eigh_vectors and eigh_values: one work-group per matrix runs parallel cyclic Jacobi. The
// matrix (its stored triangle mirrored) and V = I go to scratch buffers; a sweep is m - 1
// rounds of the round-robin tournament over m = n rounded up to even indices (the extra one
// of an odd n sits out), so each round's m / 2 pairs are disjoint and their rotations commute:
// the work-items compute them (sym.schur2, the same test for a negligible a_pq as the
// evaluator in core/src/primitives/eigh.cpp), then apply them to rows (J^T A), then to
// columns (A J, V J), a barrier between the phases. Sweeps end when a whole sweep makes no
// rotation, or after a cap (30 for f32, 60 for f64). Each vector's sign is then fixed (its first
// entry within 0.1% of its largest magnitude positive), the eigenvalues (the diagonal) ranked
// ascending (NaN last, ties by index) and written with their vectors to the results of the ops that
// keep them (the group's root, or a side output: one kernel serves both ops of one operand) or to
// scratch.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {

void emit_eigh_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& operand = g.node(root.inputs[0]);
  const EighAttrs attrs = EighAttrs::read(root.attrs);
  const std::int64_t n = operand.shape.back();
  if (num_elements(operand.shape) == 0) return;
  const std::int64_t matrices = num_elements(operand.shape) / (n * n);
  const std::int64_t m = n + n % 2, pairs = m / 2;
  // Enough work-items for one per (pair, row) entry of a phase, up to the device's limit.
  std::int64_t items = 1;
  while (items < std::max<std::int64_t>(pairs * n, 1)) items *= 2;
  items = std::clamp<std::int64_t>(
      items, 1,
      std::min<std::int64_t>(256, static_cast<std::int64_t>(ctx.caps.max_work_group_size)));
  const DType t = operand.dtype;
  const bool f64 = t == DType::F64;
  const std::string T = cl_type(t), N = std::to_string(n), P = std::to_string(pairs),
                    W = std::to_string(items), NN = std::to_string(n * n);
  const std::size_t local_bytes = static_cast<std::size_t>(2 * pairs + items) * dtype_size(t) +
                                  static_cast<std::size_t>(n + 1) * sizeof(std::int32_t);
  if (local_bytes > ctx.caps.local_mem_bytes)
    throw DeviceError("eigh: a " + std::to_string(n) + "x" + std::to_string(n) + " " +
                      std::string(dtype_name(t)) + " matrix needs " + std::to_string(local_bytes) +
                      " bytes of local memory; the device has " +
                      std::to_string(ctx.caps.local_mem_bytes) +
                      " (decompose smaller matrices, or use the CPU device)");
  const std::string eps = f64 ? "DBL_EPSILON" : "FLT_EPSILON";
  const std::string sweeps = f64 ? "60" : "30";
  // x's stored triangle: the lower one holds (i, j) with i >= j.
  const std::string stored = attrs.lower ? "i >= j" : "i <= j";
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(" << W << ", 1, 1)))\nvoid " << name
    << "(__global const " << T << "* restrict x, __global " << T << "* restrict work, __global "
    << T << "* restrict basis, __global " << T << "* restrict vectors, __global " << T
    << "* restrict values) {\n"
    << "  __local " << T << " cs[" << P << "], sn[" << P << "], partial[" << W << "];\n"
    << "  __local int rank[" << N << "];\n"
    << "  __local int rotated;\n"
    << "  const long entry = get_group_id(0);\n"
    << "  const int lid = (int)get_local_id(0);\n"
    << "  __global const " << T << "* in = x + entry * " << NN << ";\n"
    << "  __global " << T << "* a = work + entry * " << NN << ";\n"
    << "  __global " << T << "* v = basis + entry * " << NN << ";\n"
    << "  " << T << " squares = 0;\n"
    << "  for (int e = lid; e < " << NN << "; e += " << W << ") {\n"
    << "    const int i = e / " << N << ", j = e % " << N << ";\n"
    << "    const " << T << " value = (" << stored << ") ? in[e] : in[j * " << N << " + i];\n"
    << "    a[e] = value;\n"
    << "    v[e] = i == j ? 1 : 0;\n"
    << "    squares += value * value;\n"
    << "  }\n"
    << "  partial[lid] = squares;\n"
    << "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    << "  " << T << " norm = 0;\n"
    << "  for (int k = 0; k < " << W << "; ++k) norm += partial[k];\n"
    << "  const " << T << " negligible = " << eps << " * " << eps << " * sqrt(norm);\n"
    << "  for (int sweep = 0; sweep < " << sweeps << "; ++sweep) {\n"
    << "    if (lid == 0) rotated = 0;\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "    for (int round = 0; round < " << m - 1
    << "; ++round) {\n"
    // The circle method: index m - 1 stays, the others turn; pair k of the round joins
    // (round + k) and (round - k) mod (m - 1), pair 0 joins round and m - 1.
    << "      for (int k = lid; k < " << P << "; k += " << W << ") {\n"
    << "        const int p0 = (round + k) % " << m - 1 << ";\n"
    << "        const int q0 = k == 0 ? " << m - 1 << " : (round - k + " << m - 1 << ") % " << m - 1
    << ";\n"
    << "        const int p = min(p0, q0), q = max(p0, q0);\n"
    << "        " << T << " c = 1, sv = 0;\n"
    << "        if (q < " << N << ") {\n"
    << "          const " << T << " apq = a[p * " << N << " + q], app = a[p * " << N
    << " + p], aqq = a[q * " << N << " + q];\n"
    << "          if (fabs(apq) > fmax(" << eps << " * sqrt(fabs(app * aqq)), negligible)) {\n"
    << "            const " << T << " tau = (aqq - app) / (2 * apq);\n"
    << "            const " << T
    << " tt = (tau >= 0 ? 1 : -1) / (fabs(tau) + sqrt(1 + tau * tau));\n"
    << "            c = 1 / sqrt(1 + tt * tt);\n"
    << "            sv = tt * c;\n"
    << "            rotated = 1;\n"
    << "          }\n"
    << "        }\n"
    << "        cs[k] = c;\n"
    << "        sn[k] = sv;\n"
    << "      }\n"
    << "      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    // Rows p and q of each pair (J^T A), one work-item per (pair, column).
    << "      for (int e = lid; e < " << pairs * n << "; e += " << W << ") {\n"
    << "        const int k = e / " << N << ", j = e % " << N << ";\n"
    << "        const " << T << " sv = sn[k];\n"
    << "        if (sv == 0) continue;\n"
    << "        const int p0 = (round + k) % " << m - 1 << ";\n"
    << "        const int q0 = k == 0 ? " << m - 1 << " : (round - k + " << m - 1 << ") % " << m - 1
    << ";\n"
    << "        const int p = min(p0, q0), q = max(p0, q0);\n"
    << "        const " << T << " c = cs[k], ap = a[p * " << N << " + j], aq = a[q * " << N
    << " + j];\n"
    << "        a[p * " << N << " + j] = c * ap - sv * aq;\n"
    << "        a[q * " << N << " + j] = sv * ap + c * aq;\n"
    << "      }\n"
    << "      barrier(CLK_GLOBAL_MEM_FENCE);\n"
    // Columns p and q (A J and V J), one work-item per (pair, row); a_pq and a_qp become 0.
    << "      for (int e = lid; e < " << pairs * n << "; e += " << W << ") {\n"
    << "        const int k = e / " << N << ", i = e % " << N << ";\n"
    << "        const " << T << " sv = sn[k];\n"
    << "        if (sv == 0) continue;\n"
    << "        const int p0 = (round + k) % " << m - 1 << ";\n"
    << "        const int q0 = k == 0 ? " << m - 1 << " : (round - k + " << m - 1 << ") % " << m - 1
    << ";\n"
    << "        const int p = min(p0, q0), q = max(p0, q0);\n"
    << "        const " << T << " c = cs[k], ap = a[i * " << N << " + p], aq = a[i * " << N
    << " + q];\n"
    << "        a[i * " << N << " + p] = i == q ? 0 : c * ap - sv * aq;\n"
    << "        a[i * " << N << " + q] = i == p ? 0 : sv * ap + c * aq;\n"
    << "        const " << T << " vp = v[i * " << N << " + p], vq = v[i * " << N << " + q];\n"
    << "        v[i * " << N << " + p] = c * vp - sv * vq;\n"
    << "        v[i * " << N << " + q] = sv * vp + c * vq;\n"
    << "      }\n"
    << "      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    << "    }\n"
    << "    const int more = rotated;\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "    if (!more) break;\n"
    << "  }\n";
  // Each vector's sign: its first entry within 0.1% of its largest magnitude is positive (as
  // the evaluator's; an exact tie, as in (1, 1) / sqrt(2), picks the first).
  s << "  for (int k = lid; k < " << N << "; k += " << W << ") {\n"
    << "    " << T << " largest = 0;\n"
    << "    for (int i = 0; i < " << N << "; ++i) largest = fmax(largest, fabs(v[i * " << N
    << " + k]));\n"
    << "    int lead = 0;\n"
    << "    while (lead < " << n - 1 << " && fabs(v[lead * " << N << " + k]) < largest * "
    << (f64 ? "0.999" : "0.999f") << ") ++lead;\n"
    << "    if (v[lead * " << N << " + k] < 0)\n"
    << "      for (int i = 0; i < " << N << "; ++i) v[i * " << N << " + k] = -v[i * " << N
    << " + k];\n"
    << "  }\n"
    << "  barrier(CLK_GLOBAL_MEM_FENCE);\n";
  // Each eigenvalue's place: how many come before it (ascending, NaN last, ties by index).
  if (attrs.sort_eigenvalues)
    s << "  for (int k = lid; k < " << N << "; k += " << W << ") {\n"
      << "    const " << T << " wk = a[k * " << N << " + k];\n"
      << "    int before = 0;\n"
      << "    for (int j = 0; j < " << N << "; ++j) {\n"
      << "      const " << T << " wj = a[j * " << N << " + j];\n"
      << "      const bool less = wj < wk || (isnan(wk) && !isnan(wj));\n"
      << "      const bool same = wj == wk || (isnan(wj) && isnan(wk));\n"
      << "      before += less || (same && j < k);\n"
      << "    }\n"
      << "    rank[k] = before;\n"
      << "  }\n";
  else
    s << "  for (int k = lid; k < " << N << "; k += " << W << ") rank[k] = k;\n";
  s << "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "  for (int k = lid; k < " << N << "; k += " << W << ")\n"
    << "    values[entry * " << N << " + rank[k]] = a[k * " << N << " + k];\n"
    << "  for (int e = lid; e < " << NN << "; e += " << W << ") {\n"
    << "    const int i = e / " << N << ", k = e % " << N << ";\n"
    << "    vectors[entry * " << NN << " + i * " << N << " + rank[k]] = v[e];\n"
    << "  }\n"
    << "}\n\n";
  // The group's root and its side output (the other op of the family on this operand; see
  // share_own_kernels in compile/fusion.cpp) each take their part; the rest goes to scratch.
  auto buffer = [&](OpKind kind, std::size_t bytes) {
    if (root.op == kind) return ctx.buffer_of.at(group.root);
    for (ValueId side : group.side_outputs)
      if (g.node(side).op == kind) return ctx.buffer_of.at(side);
    return ctx.add_temp(bytes);
  };
  const auto count = static_cast<std::size_t>(matrices);
  const std::size_t matrix_bytes = count * static_cast<std::size_t>(n * n) * dtype_size(t);
  const int work = ctx.add_temp(matrix_bytes);
  const int basis = ctx.add_temp(matrix_bytes);
  const int vectors = buffer(OpKind::EighVectors, matrix_bytes);
  const int values =
      buffer(OpKind::EighValues, count * static_cast<std::size_t>(n) * dtype_size(t));
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), work, basis, vectors, values};
  launch.writes = {work, basis, vectors, values};
  launch.local_size = static_cast<std::size_t>(items);
  launch.global_size = static_cast<std::size_t>(matrices * items);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

// Sorting along one axis: each line's positions 0..n-1 (padded to a power of two P, the padding
// after every real position) are sorted by a comparator that reads the keys and breaks ties by
// position, a strict total order, so any sorting network gives the stable sort. Chunks of up
// to kLocalMax positions sort by a bitonic network in local memory, one work-group each; runs
// then merge pairwise across work-groups, each position finding its place in the merged run by
// a binary search of the other run (one launch per doubling). A last pass writes the first
// `count` sorted values or positions. A sort by one key carries each position's key beside it
// (in local memory, then in a key buffer per merge pass): comparisons read keys in order rather
// than through the position, which on PoCL's CPU device cut sort f32[2^20] by about a quarter.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/sort_lines.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

constexpr std::int64_t kLocalMax = 2048;

}  // namespace

// `x` before `y` in the order: JAX's sort puts NaN last and -0.0 with 0.0; descending (top_k)
// puts NaN first and -NaN last.
std::string sort_before(DType t, bool descending, const std::string& x, const std::string& y) {
  if (!is_float(t)) return "(" + x + (descending ? " > " : " < ") + y + ")";
  if (!descending) return "(isnan(" + y + ") ? !isnan(" + x + ") : " + x + " < " + y + ")";
  auto rank = [](const std::string& v) {
    return "(isnan(" + v + ") ? (signbit(" + v + ") ? 0 : 2) : 1)";
  };
  return "(" + rank(x) + " != " + rank(y) + " ? " + rank(x) + " > " + rank(y) + " : " + x + " > " +
         y + ")";
}

void emit_sort_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                      const SortKernel& sort) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Shape& shape = g.node(root.inputs[0]).shape;
  if (num_elements(shape) == 0 || num_elements(root.shape) == 0) return;
  const SortLines l = sort_lines(shape, sort.axis);
  if (radix_sort_fits(ctx, group, l.n)) return emit_radix_sort_kernel(ctx, group, name, sort);
  std::int64_t P = 1;
  while (P < l.n) P *= 2;
  const std::string Ps = std::to_string(P), N = std::to_string(l.n);
  std::ostringstream& s = ctx.source;

  // The comparator: whether position a of a line comes before position b.
  std::string key_params, key_args;
  for (std::size_t k = 0; k < root.inputs.size(); ++k) {
    key_params += "__global const " + cl_storage_type(g.node(root.inputs[k]).dtype) +
                  "* restrict key" + std::to_string(k) + ", ";
    key_args += "key" + std::to_string(k) + ", ";
  }
  const std::string less = name + "_before";
  s << "static bool " << less << "(" << key_params << "long line, int a, int b) {\n"
    << "  if (a >= " << N << " || b >= " << N << ") return a < b;\n";
  for (std::size_t k = 0; k < root.inputs.size(); ++k) {
    const DType t = g.node(root.inputs[k]).dtype;
    const std::string T = cl_type(t), key = "key" + std::to_string(k);
    s << "  {\n    const " << T << " x = " << cl_load(t, key, position_of(l, "line", "(long)a"))
      << ", y = " << cl_load(t, key, position_of(l, "line", "(long)b")) << ";\n"
      << "    if (" << sort_before(t, sort.descending, "x", "y") << ") return true;\n"
      << "    if (" << sort_before(t, sort.descending, "y", "x") << ") return false;\n  }\n";
  }
  s << "  return a < b;\n}\n\n";
  // With one key, the sort carries (key, position) pairs so comparisons read keys in order
  // instead of gathering them by position from the operand at every step of every pass.
  const bool carry = root.inputs.size() == 1;
  const DType key_dtype = g.node(root.inputs[0]).dtype;
  const std::string K = key_dtype == DType::Bool ? "int" : cl_type(key_dtype);
  const std::string kless = name + "_key_before";
  if (carry) {
    s << "static bool " << kless << "(" << K << " x, int a, " << K << " y, int b) {\n"
      << "  if (a >= " << N << " || b >= " << N << ") return a < b;\n"
      << "  if (" << sort_before(key_dtype, sort.descending, "x", "y") << ") return true;\n"
      << "  if (" << sort_before(key_dtype, sort.descending, "y", "x") << ") return false;\n"
      << "  return a < b;\n}\n\n";
  }
  // Carried keys are K: bool as int, f16 and bf16 as float.
  const std::size_t key_size = key_dtype == DType::Bool ? 4
                               : key_dtype == DType::F16 || key_dtype == DType::BF16
                                   ? 4
                                   : dtype_size(key_dtype);
  const std::size_t key_bytes = static_cast<std::size_t>(l.lines * P) * key_size;

  std::vector<int> keys;
  for (ValueId in : root.inputs) keys.push_back(ctx.buffer_of.at(in));
  // Chunks of Q positions sort in local memory, one work-group each.
  const std::int64_t Q = std::min(P, kLocalMax), chunks = P / Q;
  const std::string Qs = std::to_string(Q);
  const std::size_t items = static_cast<std::size_t>(std::clamp<std::int64_t>(
      Q / 2, 1,
      std::min<std::int64_t>(256, static_cast<std::int64_t>(ctx.caps.max_work_group_size))));
  const std::string W = std::to_string(items);
  const std::string load_key = cl_load(key_dtype, "key0", position_of(l, "line", "(long)pos"));
  if (carry) {
    s << "__kernel __attribute__((reqd_work_group_size(" << W << ", 1, 1)))\nvoid " << name
      << "_chunks(" << key_params << "__global int* restrict order, __global " << K
      << "* restrict sorted) {\n"
      << "  __local int idx[" << Qs << "];\n"
      << "  __local " << K << " kv[" << Qs << "];\n"
      << "  const long line = get_group_id(0) / " << chunks << ";\n"
      << "  const int first = (int)(get_group_id(0) % " << chunks << ") * " << Qs << ";\n"
      << "  const int lid = (int)get_local_id(0);\n"
      << "  for (int p = lid; p < " << Qs << "; p += " << W << ") {\n"
      << "    const int pos = first + p;\n"
      << "    idx[p] = pos;\n"
      << "    kv[p] = pos < " << N << " ? (" << K << ")(" << load_key << ") : (" << K << ")0;\n"
      << "  }\n"
      << "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  for (long k = 2; k <= " << Qs << "; k <<= 1)\n"
      << "    for (long j = k >> 1; j > 0; j >>= 1) {\n"
      << "      for (long t = lid; t < " << Q / 2 << "; t += " << W << ") {\n"
      << "        const long i = 2 * j * (t / j) + t % j, m = i + j;\n"
      << "        const int u = idx[i], v = idx[m];\n"
      << "        const " << K << " ku = kv[i], kw = kv[m];\n"
      << "        if ((i & k) == 0 ? " << kless << "(kw, v, ku, u) : " << kless
      << "(ku, u, kw, v)) {\n"
      << "          idx[i] = v;\n"
      << "          idx[m] = u;\n"
      << "          kv[i] = kw;\n"
      << "          kv[m] = ku;\n"
      << "        }\n"
      << "      }\n"
      << "      barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "    }\n"
      << "  for (int p = lid; p < " << Qs << "; p += " << W << ") {\n"
      << "    order[line * " << Ps << " + first + p] = idx[p];\n"
      << "    sorted[line * " << Ps << " + first + p] = kv[p];\n"
      << "  }\n"
      << "}\n\n";
  } else {
    s << "__kernel __attribute__((reqd_work_group_size(" << W << ", 1, 1)))\nvoid " << name
      << "_chunks(" << key_params << "__global int* restrict order) {\n"
      << "  __local int idx[" << Qs << "];\n"
      << "  const long line = get_group_id(0) / " << chunks << ";\n"
      << "  const int first = (int)(get_group_id(0) % " << chunks << ") * " << Qs << ";\n"
      << "  const int lid = (int)get_local_id(0);\n"
      << "  for (int p = lid; p < " << Qs << "; p += " << W << ") idx[p] = first + p;\n"
      << "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "  for (long k = 2; k <= " << Qs << "; k <<= 1)\n"
      << "    for (long j = k >> 1; j > 0; j >>= 1) {\n"
      << "      for (long t = lid; t < " << Q / 2 << "; t += " << W << ") {\n"
      << "        const long i = 2 * j * (t / j) + t % j, m = i + j;\n"
      << "        const int u = idx[i], v = idx[m];\n"
      << "        if ((i & k) == 0 ? " << less << "(" << key_args << "line, v, u) : " << less << "("
      << key_args << "line, u, v)) {\n"
      << "          idx[i] = v;\n"
      << "          idx[m] = u;\n"
      << "        }\n"
      << "      }\n"
      << "      barrier(CLK_LOCAL_MEM_FENCE);\n"
      << "    }\n"
      << "  for (int p = lid; p < " << Qs << "; p += " << W << ") order[line * " << Ps
      << " + first + p] = idx[p];\n"
      << "}\n\n";
  }
  int order = ctx.add_temp(static_cast<std::size_t>(l.lines * P) * sizeof(std::int32_t));
  LaunchPlan chunk_sort;
  chunk_sort.kernel = name + "_chunks";
  chunk_sort.args = keys;
  chunk_sort.args.push_back(order);
  chunk_sort.writes = {order};
  int sorted = -1;
  if (carry) {
    sorted = ctx.add_temp(key_bytes);
    chunk_sort.args.push_back(sorted);
    chunk_sort.writes.push_back(sorted);
  }
  chunk_sort.local_size = items;
  chunk_sort.global_size = static_cast<std::size_t>(l.lines * chunks) * items;
  ctx.add_launch(std::move(chunk_sort));
  // Then sorted runs of w merge pairwise, w = Q, 2Q, ... < P: each position finds its place in
  // the merged run by a binary search of the other run.
  for (std::int64_t w = Q; w < P; w *= 2) {
    const std::string kernel = name + "_merge" + std::to_string(w);
    const std::string ws = std::to_string(w);
    s << "__kernel void " << kernel << "(" << key_params
      << "__global const int* restrict src, __global int* restrict dst";
    if (carry)
      s << ", __global const " << K << "* restrict src_key, __global " << K << "* restrict dst_key";
    s << ") {\n"
      << "  const long gid = get_global_id(0);\n"
      << "  if (gid >= " << l.lines * P << ") return;\n"
      << "  const long line = gid / " << Ps << ", p = gid % " << Ps << ";\n"
      << "  const int me = src[gid];\n"
      << "  const long run = (p / " << 2 * w << ") * " << 2 * w << ";\n"
      << "  const bool in_first = p - run < " << ws << ";\n"
      << "  const long other = line * " << Ps << " + run + (in_first ? " << ws << " : 0);\n"
      << "  int lo = 0, hi = " << ws << ";\n";
    if (carry) s << "  const " << K << " my_key = src_key[gid];\n";
    s << "  while (lo < hi) {\n"
      << "    const int mid = (lo + hi) / 2;\n";
    if (carry)
      s << "    if (" << kless
        << "(src_key[other + mid], src[other + mid], my_key, me)) lo = mid + 1;\n";
    else
      s << "    if (" << less << "(" << key_args << "line, src[other + mid], me)) lo = mid + 1;\n";
    s << "    else hi = mid;\n"
      << "  }\n"
      << "  const long to = line * " << Ps << " + run + (p - run - (in_first ? 0 : " << ws
      << ")) + lo;\n"
      << "  dst[to] = me;\n";
    if (carry) s << "  dst_key[to] = my_key;\n";
    s << "}\n\n";
    const int merged = ctx.add_temp(static_cast<std::size_t>(l.lines * P) * sizeof(std::int32_t));
    LaunchPlan merge;
    merge.kernel = kernel;
    merge.args = keys;
    merge.args.push_back(order);
    merge.args.push_back(merged);
    merge.writes = {merged};
    if (carry) {
      const int merged_keys = ctx.add_temp(key_bytes);
      merge.args.push_back(sorted);
      merge.args.push_back(merged_keys);
      merge.writes.push_back(merged_keys);
      sorted = merged_keys;
    }
    merge.global_size = static_cast<std::size_t>(l.lines * P);
    ctx.add_launch(std::move(merge));
    order = merged;
  }

  // The result: the first `count` sorted positions of each line, as values of key 0 or as
  // positions, laid out as the operand with `count` along the axis.
  const std::int64_t count = sort.count > 0 ? sort.count : l.n;
  SortLines out = l;
  out.n = count;
  const std::string S = cl_storage_type(root.dtype);
  const bool from_sorted = carry && sort.values;
  const std::string value = from_sorted ? "sorted[line * " + Ps + " + p]"
                            : sort.values
                                ? cl_load(root.dtype, "key0", position_of(l, "line", "(long)from"))
                                : "from";
  s << "__kernel void " << name << "(" << key_params
    << "__global const int* restrict order, __global " << S << "* restrict y"
    << (from_sorted ? ", __global const " + K + "* restrict sorted" : "") << ") {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << l.lines * count << ") return;\n"
    << "  const long line = gid / " << count << ", p = gid % " << count << ";\n"
    << "  const int from = order[line * " << Ps << " + p];\n"
    << "  " << cl_store(root.dtype, "y", position_of(out, "line", "p"), value) << "\n"
    << "}\n\n";
  LaunchPlan result;
  result.kernel = name;
  result.args = keys;
  result.args.push_back(order);
  result.args.push_back(ctx.buffer_of.at(group.root));
  if (from_sorted) result.args.push_back(sorted);
  result.writes = {ctx.buffer_of.at(group.root)};
  result.global_size = static_cast<std::size_t>(l.lines * count);
  ctx.add_launch(std::move(result));
}

}  // namespace weft::opencl

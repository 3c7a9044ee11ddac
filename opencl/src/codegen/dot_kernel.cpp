// The canonical batched matmul C[b] = A[b] (MxK) * B[b] (KxN), all row-major buffers. On GPUs
// (and for integers) each work-group computes a 32x32 tile of C, each of its 64 work-items a
// 4x4 block, accumulating over K in steps of 16 staged through local memory. CPUs get a
// register-blocked kernel instead.
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/row_phases.h"
#include "weft/error.h"

namespace weft::opencl {
namespace {

constexpr int kTile = 32;
constexpr int kStepK = 16;
constexpr int kThreads = 64;

// Whether a kernel other than `epilogue` (or the program's caller) reads the dot's result, so
// the dot kernel must still store it.
bool dot_result_read_elsewhere(const KernelContext& ctx, const FusionGroup& dot,
                               const FusionGroup& epilogue) {
  const int d_buffer = ctx.buffer_of.at(dot.root);
  if (ctx.block.buffers.at(static_cast<std::size_t>(d_buffer)).role != BufferPlan::Role::Temp)
    return true;
  const Graph& g = ctx.graph();
  for (const FusionGroup& other : ctx.fusion.groups) {
    if (&other == &epilogue) continue;
    for (ValueId in : other.inputs)
      if (ctx.buffer_of.count(in) && ctx.buffer_of.at(in) == d_buffer) return true;
  }
  for (const Node& n : g.nodes)  // control and host steps, joins
    if (is_multi_result(n.op) || n.op == OpKind::AfterAll)
      for (ValueId in : n.inputs)
        if (ctx.buffer_of.count(in) && ctx.buffer_of.at(in) == d_buffer) return true;
  for (ValueId o : g.outputs)
    if (ctx.buffer_of.count(o) && ctx.buffer_of.at(o) == d_buffer) return true;
  return false;
}

// The float vector width of the CPU kernel's accumulators (see emit_register_blocked).
int cpu_vector_width(const KernelContext& ctx, DType t) {
  return t == DType::F32 && ctx.caps.native_float_vector_width >= 16 ? 16 : 8;
}

// Into how many ranges of k a CPU dot splits a long contraction into a small C (a weight
// gradient: 100,000 rows of x^T dy into 64 x 192). Unsplit, each work-item streams all of K for
// its block, so A and B come from memory once per column and row block; split, the work-items
// of one range run one after another while its rows of A and B (about 1 MiB) stay in cache,
// and a second kernel sums the ranges' partial Cs. 1: not split (and the dot may have an
// epilogue).
std::int64_t k_splits(const KernelContext& ctx, const Node& root) {
  if (ctx.caps.is_gpu || !is_float(root.dtype) || is_half_float(root.dtype)) return 1;
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2],
                     K = canonical_dot_lhs_transposed(root) ? ls[1] : ls[2];
  if (N < cpu_vector_width(ctx, root.dtype) || B * M * N > (std::int64_t{1} << 16)) return 1;
  const std::int64_t bytes_per_k = B * (M + N) * static_cast<std::int64_t>(dtype_size(root.dtype));
  const std::int64_t range = std::max<std::int64_t>(256, (std::int64_t{1} << 20) / bytes_per_k);
  if (K < 4 * range) return 1;
  return std::min<std::int64_t>((K + range - 1) / range, 64);
}

// CPUs have no fast local memory to stage tiles through, but wide registers: each work-item
// keeps an RxW block of C in registers (R = 8 rows, fewer for shorter C, of V vectors of VW lanes)
// and streams rows of B past it. VW is 16 for f32 where a register holds 16 floats (AVX-512), else
// 8; V is 2 where C is at least two vectors wide, so one broadcast of A feeds two FMAs and each
// step reads 128 contiguous bytes of B (on AVX-512 that is 16 of the 32 vector registers; 8x32
// blocks reach 205 GFLOP/s on 1024^3 against 196 for 8x16, and read a 64x768x3072 dot's
// weights from memory in 1.8 ms against 2.4). Blocks that cross the edge of C take a scalar
// path with bounds checks.
void emit_register_blocked(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                           const FusionGroup* epilogue) {
  const Node& root = ctx.graph().node(group.root);
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const bool lhs_t = canonical_dot_lhs_transposed(root);
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2],
                     K = lhs_t ? ls[1] : ls[2];
  const int VW = cpu_vector_width(ctx, root.dtype);
  const int V = VW == 16 && N >= 32 ? 2 : 1;
  // Split contractions: work-item `gid` computes block gid % total over range gid / total of k
  // into partial C number gid / total; the kernel `name` then sums the partials into C.
  const std::int64_t splits = epilogue ? 1 : k_splits(ctx, root);
  // C narrower than a vector (an MLP's 10 logits): one vector per row holds all N columns. A
  // vector load at row k of B reads into the rows after it, lanes past N that are never
  // stored; the last rows, where that would read past B's end, load through a private array.
  const bool narrow = N > 0 && N < VW;
  const int W = narrow ? static_cast<int>(N) : VW * V;
  const std::int64_t k_safe = narrow ? std::max<std::int64_t>(0, K - (VW - 1) / N) : K;
  const std::string T = cl_type(root.dtype), TV = T + std::to_string(VW);
  ctx.wide_vector_calls |= dtype_size(root.dtype) * VW == 64;  // float16, double8, long8
  // Rows per block: eight, or all of C's rows where it has fewer (a weight gradient W^T G with
  // four outputs and K in the hundreds of thousands), which the scalar edge path ran at a
  // fraction of the vector speed.
  const int R = static_cast<int>(std::clamp<std::int64_t>(M, 1, 8));
  const std::int64_t MB = (M + R - 1) / R, NB = (N + W - 1) / W, total = B * MB * NB;
  // Work-items run in id order on each CPU thread. Neighbouring ids take up to G row blocks of
  // one column slab of B in turn, so the slab comes from memory once per G row blocks and from
  // cache after: an MLP's 64-row activations read each weight once, where with column blocks
  // innermost every row block read all of B again (from memory once B outgrows the cache, as
  // when a second dot's weights evict the first's).
  const std::int64_t G = std::min<std::int64_t>(MB, 8);
  // Where C has many rows, each column slab of B is read once per G row blocks, down its rows
  // N apart: with N a multiple of 1024 those rows share a few cache sets and evict each other,
  // and the prefetcher sees short runs (sgemm 4096^3 ran at 34% of the FP32 peak). A first
  // kernel copies B into slabs of W columns laid out contiguously, k after k (zero past N),
  // as BLAS libraries pack panels; the copy is one pass over B against M / (8 G) reads of it,
  // so it pays from a few hundred rows (1024^3: 150 -> 200 GFLOP/s per core).
  const bool pack_b = !narrow && splits == 1 && M >= 256 && K >= 64;
  const std::int64_t span = (K + splits - 1) / splits;  // k per split
  const std::int64_t largest =
      std::max({B * M * K, B * NB * K * W, splits * B * M * N, splits * total});
  const std::string I = largest < (std::int64_t{1} << 30) ? "int" : "long";
  const std::string Ks = std::to_string(K), Ns = std::to_string(N), Ms = std::to_string(M);
  const std::string ldb = pack_b ? std::to_string(W) : Ns;  // between rows k of a slab of B
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };
  // Element (row i of the block, k) of A: rows of the block lie K apart, or (A stored [K, M])
  // side by side, each k a row of M.
  auto a_at = [&](const std::string& i, const std::string& k) {
    return lhs_t ? "a[" + k + " * " + std::to_string(M) + " + " + i + "]"
                 : "a[" + i + " * " + std::to_string(K) + " + " + k + "]";
  };

  // With an epilogue, each block of C goes through the loop group after the dot before it is
  // stored: `at` is the block's first element, `d` its value (a vector of lanes, or one).
  const bool store_c = !epilogue || dot_result_read_elsewhere(ctx, group, *epilogue);
  std::string lane_epilogue, scalar_epilogue, epilogue_params;
  std::vector<int> epilogue_args;
  if (epilogue) {
    const int d_buffer = ctx.buffer_of.at(group.root);
    PhaseArgs args;
    std::vector<ValueId> loaded;
    for (ValueId in : epilogue->inputs)
      if (ctx.buffer_of.at(in) != d_buffer) loaded.push_back(in);
    args.input = [loaded](ValueId v) -> std::string {
      const auto at = std::find(loaded.begin(), loaded.end(), v);
      return at == loaded.end() ? "" : "e" + std::to_string(at - loaded.begin());
    };
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      epilogue_params += ", __global const " + cl_storage_type(ctx.graph().node(loaded[i]).dtype) +
                         "* restrict e" + std::to_string(i);
      epilogue_args.push_back(ctx.buffer_of.at(loaded[i]));
    }
    epilogue_params += ", __global float* restrict E";
    const Shape& out_shape = ctx.graph().node(epilogue->root).shape;
    for (const bool lanes : {true, false}) {
      ExprEmitter emit = phase_emitter(ctx, *epilogue, args, I);
      emit.set_lane_mode(VW);
      for (ValueId in : epilogue->inputs)
        if (ctx.buffer_of.at(in) == d_buffer) emit.bind(in, "d");
      emit.set_indent("      ");
      Index at{"at", {}, out_shape};
      at.lanes = lanes;
      const std::string v = emit.value(epilogue->root, at);
      (lanes ? lane_epilogue : scalar_epilogue) =
          emit.take_code() + "      " +
          (lanes ? "vstore" + std::to_string(VW) + "(" + v + ", 0, E + at);\n"
                 : "E[at] = " + v + ";\n");
    }
  }
  // Stores element block `value` (lanes or one) at C's linear offset `offset`.
  auto store = [&](const std::string& indent, bool lanes, const std::string& offset,
                   const std::string& value) {
    std::string out;
    if (store_c)
      out += indent +
             (lanes ? "vstore" + std::to_string(VW) + "(" + value + ", 0, cb + " + offset + ");\n"
                    : "cb[" + offset + "] = " + value + ";\n");
    if (epilogue)
      out += indent + "{\n" + indent + "  const " + I + " at = b * " + std::to_string(M * N) +
             " + (" + offset + ");\n" + indent + "  const " + (lanes ? TV : T) + " d = " + value +
             ";\n" + (lanes ? lane_epilogue : scalar_epilogue) + indent + "}\n";
    return out;
  };

  std::ostringstream& s = ctx.source;
  const std::int64_t packed_elements = pack_b ? B * NB * K * W : 0;
  const int packed =
      pack_b ? ctx.add_temp(static_cast<std::size_t>(packed_elements) * dtype_size(root.dtype))
             : -1;
  if (pack_b) {
    // One work-item per row k of a slab: W elements, those past N zero.
    const std::string PI = packed_elements < (std::int64_t{1} << 30) ? "int" : "long";
    s << "__kernel void " << name << "_pack(__global const " << T << "* restrict Bm, __global " << T
      << "* restrict P) {\n"
      << "  const " << PI << " id = (" << PI << ")get_global_id(0);\n"
      << "  if (id >= " << B * NB * K << ") return;\n"
      << "  const " << PI << " b = id / " << NB * K << ", slab = id / " << K << " % " << NB
      << ", k = id % " << K << ";\n"
      << "  const __global " << T << "* from = Bm + b * " << K * N << " + k * " << Ns
      << " + slab * " << W << ";\n"
      << "  __global " << T << "* to = P + id * " << W << ";\n";
    if (N % W == 0) {
      for (int v = 0; v < V; ++v)
        s << "  vstore" << VW << "(vload" << VW << "(" << v << ", from), " << v << ", to);\n";
    } else {
      s << "  const int left = (int)min((" << PI << ")" << W << ", (" << PI << ")" << Ns
        << " - slab * " << W << ");\n"
        << "  for (int j = 0; j < " << W << "; ++j) to[j] = j < left ? from[j] : (" << T << ")0;\n";
    }
    s << "}\n\n";
    LaunchPlan pack;
    pack.kernel = name + "_pack";
    pack.args = {ctx.buffer_of.at(root.inputs[1]), packed};
    pack.writes = {packed};
    size_blocked_launch(ctx, pack, B * NB * K);
    ctx.add_launch(std::move(pack));
  }
  const std::string kernel = splits > 1 ? name + "_partial" : name;
  const std::string k_first = splits > 1 ? "k_first" : "0", k_last = splits > 1 ? "k_last" : Ks;
  s << "__kernel void " << kernel << "(__global const " << T << "* restrict A, __global const " << T
    << "* restrict Bm, __global " << T << "* restrict C" << epilogue_params << ") {\n"
    << "  const " << I << " id = (" << I << ")get_global_id(0);\n"
    << "  if (id >= " << splits * total << ") return;\n"
    << "  const " << I << " split = id / " << total << ", gid = id % " << total << ";\n"
    << (splits > 1
            ? "  const " + I + " k_first = split * " + std::to_string(span) +
                  ", k_last = min(k_first + " + std::to_string(span) + ", (" + I + ")" + Ks + ");\n"
            : std::string())
    << "  const " << I << " b = gid / " << NB * MB << ", r = gid % " << NB * MB << ";\n"
    << "  const " << I << " g = r / " << G * NB << ", o = r % " << G * NB << ";\n"
    << "  const " << I << " rows = min((" << I << ")" << G << ", (" << I << ")" << MB << " - g * "
    << G << ");\n"
    << "  const " << I << " row8 = g * " << G << " + o % rows;\n"
    << "  const " << I << " col8 = o / rows;\n"
    << "  const __global " << T << "* a = A + b * " << M * K << " + row8 * " << (lhs_t ? R : R * K)
    << ";\n"
    << "  const __global " << T << "* bb = Bm + b * " << (pack_b ? NB * K * W : K * N)
    << " + col8 * " << (pack_b ? K * W : W) << ";\n"
    << (store_c ? "  __global " + T + "* cb = C + (split * " + std::to_string(B) + " + b) * " +
                      std::to_string(M * N) + ";\n"
                : std::string())
    << "  const " << I << " c = row8 * " << R * N << " + col8 * " << W << ";  // in C[b]\n"
    << "  if (row8 * " << R << " + " << R << " <= " << Ms << " && col8 * " << W << " + " << W
    << " <= " << Ns << ") {\n";
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) s << "    " << TV << " " << acc(i, v) << " = (" << TV << ")(0);\n";
  auto step = [&](const std::string& indent, int vectors) {
    for (int i = 0; i < R; ++i) {
      s << indent << "{ const " << TV << " av = (" << TV << ")(" << a_at(std::to_string(i), "k")
        << ");";
      for (int v = 0; v < vectors; ++v)
        s << " " << acc(i, v) << " = fma(av, b" << v << ", " << acc(i, v) << ");";
      s << " }\n";
    }
  };
  s << "    for (" << I << " k = " << k_first << "; k < "
    << (narrow ? std::to_string(k_safe) : k_last) << "; ++k) {\n";
  for (int v = 0; v < V; ++v)
    s << "      const " << TV << " b" << v << " = vload" << VW << "(" << v << ", bb + k * " << ldb
      << ");\n";
  step("      ", V);
  s << "    }\n";
  if (narrow) {
    s << "    for (" << I << " k = " << k_safe << "; k < " << Ks << "; ++k) {\n"
      << "      " << T << " row[" << VW << "];\n"
      << "      for (int j = 0; j < " << VW << "; ++j) row[j] = j < " << Ns << " ? bb[k * " << Ns
      << " + j] : (" << T << ")0;\n"
      << "      const " << TV << " b0 = vload" << VW << "(0, row);\n";
    step("      ", 1);
    s << "    }\n";
    for (int i = 0; i < R; ++i)
      s << "    {\n      " << T << " out[" << VW << "];\n      vstore" << VW << "(" << acc(i, 0)
        << ", 0, out);\n      for (int j = 0; j < " << Ns << "; ++j) {\n"
        << store("        ", false, "c + " + std::to_string(i * N) + " + j", "out[j]")
        << "      }\n    }\n";
  } else {
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < V; ++v)
        s << store("    ", true, "c + " + std::to_string(i * N + v * VW), acc(i, v));
  }
  // The last column block of two-vector blocks, where at least one vector of columns is left
  // (784 = 24 x 32 + 16): one vector, then any columns past it one by one, where the scalar
  // path would compute a whole row block's edge without vectors (a third of the time of a
  // [128,256] x [256,784] dot).
  const std::int64_t edge = N % W;
  if (!narrow && V == 2 && edge >= VW) {
    s << "  } else if (row8 * " << R << " + " << R << " <= " << Ms << " && col8 * " << W << " + "
      << VW << " <= " << Ns << ") {\n";
    for (int i = 0; i < R; ++i) s << "    " << TV << " " << acc(i, 0) << " = (" << TV << ")(0);\n";
    s << "    for (" << I << " k = " << k_first << "; k < " << k_last << "; ++k) {\n"
      << "      const " << TV << " b0 = vload" << VW << "(0, bb + k * " << ldb << ");\n";
    step("      ", 1);
    s << "    }\n";
    for (int i = 0; i < R; ++i) s << store("    ", true, "c + " + std::to_string(i * N), acc(i, 0));
    if (edge > VW)
      s << "    for (int i = 0; i < " << R << "; ++i)\n"
        << "      for (int j = " << VW << "; j < " << edge << "; ++j) {\n"
        << "        " << T << " sum = 0;\n"
        << "        for (" << I << " k = " << k_first << "; k < " << k_last << "; ++k) sum = fma("
        << a_at("i", "k") << ", bb[k * " << ldb << " + j], sum);\n"
        << store("        ", false, "c + i * " + Ns + " + j", "sum") << "      }\n";
  }
  s << "  } else {\n"
    << "    for (int i = 0; i < " << R << " && row8 * " << R << " + i < " << Ms << "; ++i)\n"
    << "      for (int j = 0; j < " << W << " && col8 * " << W << " + j < " << Ns << "; ++j) {\n"
    << "        " << T << " sum = 0;\n"
    << "        for (" << I << " k = " << k_first << "; k < " << k_last << "; ++k) sum = fma("
    << a_at("i", "k") << ", bb[k * " << ldb << " + j], sum);\n"
    << store("        ", false, "c + i * " + Ns + " + j", "sum") << "      }\n"
    << "  }\n"
    << "}\n\n";

  const int c_buffer = ctx.buffer_of.at(group.root);
  const int partials =
      splits > 1
          ? ctx.add_temp(static_cast<std::size_t>(splits * B * M * N) * dtype_size(root.dtype))
          : c_buffer;
  LaunchPlan launch;
  launch.kernel = kernel;
  // C is an argument even when nothing stores it: the runtime orders a pooled buffer's users
  // by the launches that name it, so a buffer no launch names would lose that order.
  launch.args = {ctx.buffer_of.at(root.inputs[0]),
                 pack_b ? packed : ctx.buffer_of.at(root.inputs[1]), partials};
  launch.writes = {partials};
  if (epilogue) {
    launch.args.insert(launch.args.end(), epilogue_args.begin(), epilogue_args.end());
    launch.args.push_back(ctx.buffer_of.at(epilogue->root));
    launch.writes.push_back(ctx.buffer_of.at(epilogue->root));
  }
  size_blocked_launch(ctx, launch, splits * total);
  ctx.add_launch(std::move(launch));
  if (splits == 1) return;

  // The partial Cs summed in split order, one work-item per element of C.
  s << "__kernel void " << name << "(__global const " << T << "* restrict P, __global " << T
    << "* restrict C) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << B * M * N << ") return;\n"
    << "  " << T << " sum = P[gid];\n"
    << "  for (int split = 1; split < " << splits << "; ++split) sum += P[split * " << B * M * N
    << " + gid];\n"
    << "  C[gid] = sum;\n"
    << "}\n\n";
  LaunchPlan sum;
  sum.kernel = name;
  sum.args = {partials, c_buffer};
  sum.writes = {c_buffer};
  sum.global_size = static_cast<std::size_t>(B * M * N);
  ctx.add_launch(std::move(sum));
}

// The rhs stored [B, N, K] (dY W^T) on CPUs: rows of A and rows of B^T both run along K, so
// each work-item holds a 4x4 block of C as vectors of partial sums over K (four rows of each
// read VW elements at a time, sixteen FMAs per eight loads), added up across lanes at the end;
// reading B through a transposed copy cost a pass over all of B per call (in a scan's
// backward body, each step). Blocks that cross the edge of C take a scalar path.
void emit_rhs_transposed_cpu(KernelContext& ctx, const FusionGroup& group,
                             const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2], K = ls[2];
  const int VW = root.dtype == DType::F32 && ctx.caps.native_float_vector_width >= 16 ? 16 : 8;
  const std::string T = cl_type(root.dtype), TV = T + std::to_string(VW);
  ctx.wide_vector_calls |= dtype_size(root.dtype) * VW == 64;
  constexpr int R = 4;
  const std::int64_t MB = (M + R - 1) / R, NB = (N + R - 1) / R, total = B * MB * NB;
  const std::int64_t KV = K / VW * VW;
  const std::int64_t largest = std::max({B * M * K, B * K * N, B * M * N, total});
  const std::string I = largest < (std::int64_t{1} << 30) ? "int" : "long";
  const std::string Ks = std::to_string(K), Ns = std::to_string(N), Ms = std::to_string(M);
  auto acc = [](int i, int j) { return "c" + std::to_string(i) + "_" + std::to_string(j); };
  // Neighbouring work-items share one operand's block (in cache) and stream the other's rows:
  // the smaller operand, which the cache then holds across passes (reading the larger one
  // once per block of the smaller, from memory, ran 3.6x slower at 64x256x1024).
  const bool a_streams = M <= N;

  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << T << "* restrict A, __global const " << T
    << "* restrict Bm, __global " << T << "* restrict C) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << total << ") return;\n"
    << "  const " << I << " b = gid / " << MB * NB << ", r = gid % " << MB * NB << ";\n"
    << (a_streams
            ? "  const " + I + " row0 = (r % " + std::to_string(MB) + ") * " + std::to_string(R) +
                  ", col0 = (r / " + std::to_string(MB) + ") * " + std::to_string(R) + ";\n"
            : "  const " + I + " row0 = (r / " + std::to_string(NB) + ") * " + std::to_string(R) +
                  ", col0 = (r % " + std::to_string(NB) + ") * " + std::to_string(R) + ";\n")
    << "  const __global " << T << "* a = A + b * " << M * K << " + row0 * " << Ks << ";\n"
    << "  const __global " << T << "* bt = Bm + b * " << N * K << " + col0 * " << Ks << ";\n"
    << "  __global " << T << "* c = C + b * " << M * N << " + row0 * " << Ns << " + col0;\n"
    << "  if (row0 + " << R << " <= " << Ms << " && col0 + " << R << " <= " << Ns << ") {\n";
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) s << "    " << TV << " " << acc(i, j) << " = (" << TV << ")(0);\n";
  s << "    for (" << I << " k = 0; k < " << KV << "; k += " << VW << ") {\n";
  for (int i = 0; i < R; ++i)
    s << "      const " << TV << " a" << i << " = vload" << VW << "(0, a + " << i * K << " + k);\n";
  for (int j = 0; j < R; ++j)
    s << "      const " << TV << " b" << j << " = vload" << VW << "(0, bt + " << j * K
      << " + k);\n";
  for (int i = 0; i < R; ++i) {
    s << "     ";
    for (int j = 0; j < R; ++j)
      s << " " << acc(i, j) << " = fma(a" << i << ", b" << j << ", " << acc(i, j) << ");";
    s << "\n";
  }
  s << "    }\n";
  // Lanes added pairwise (halves), then the K % VW elements past the last vector.
  const std::string T8 = T + "8", T4 = T + "4", T2 = T + "2";
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      const std::string v = acc(i, j);
      s << "    {\n";
      if (VW == 16)
        s << "      const " << T8 << " h8 = " << v << ".lo + " << v << ".hi;\n";
      else
        s << "      const " << T8 << " h8 = " << v << ";\n";
      s << "      const " << T4 << " h4 = h8.lo + h8.hi;\n"
        << "      const " << T2 << " h2 = h4.lo + h4.hi;\n"
        << "      " << T << " sum = h2.x + h2.y;\n";
      if (KV < K)
        s << "      for (" << I << " k = " << KV << "; k < " << Ks << "; ++k) sum = fma(a[" << i * K
          << " + k], bt[" << j * K << " + k], sum);\n";
      s << "      c[" << i * N + j << "] = sum;\n"
        << "    }\n";
    }
  s << "  } else {\n"
    << "    for (int i = 0; i < " << R << " && row0 + i < " << Ms << "; ++i)\n"
    << "      for (int j = 0; j < " << R << " && col0 + j < " << Ns << "; ++j) {\n"
    << "        " << T << " sum = 0;\n"
    << "        for (" << I << " k = 0; k < " << Ks << "; ++k) sum = fma(a[i * " << Ks
    << " + k], bt[j * " << Ks << " + k], sum);\n"
    << "        c[i * " << Ns << " + j] = sum;\n"
    << "      }\n"
    << "  }\n"
    << "}\n\n";

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  size_blocked_launch(ctx, launch, total);
  ctx.add_launch(std::move(launch));
}

// f16 and bf16 on CPUs: each work-item holds an R x 32 block of C as float8 accumulators (R up
// to 4 rows) and reads 32 contiguous elements of each row of B, widened to float (a whole cache
// line), so a matrix-vector product (a decoder's logits, M = 1) reads B once at memory speed
// where the GPU tiles computed 32 rows for the one there is. Sums run over k in order in float
// and round once, as the interpreter does; blocks that cross C's edge take a scalar path. A
// single column (N = 1) sums eight partial sums instead.
void emit_half_cpu(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2], K = ls[2];
  const DType t = root.dtype;
  const std::string S = cl_storage_type(t);
  constexpr int kVectors = 4, kWidth = 8 * kVectors;
  const std::int64_t R = std::clamp<std::int64_t>(M, 1, 4);
  const std::int64_t MB = (M + R - 1) / R, NB = (N + kWidth - 1) / kWidth, total = B * MB * NB;
  const std::int64_t largest = std::max({B * M * K, B * K * N, B * M * N, total});
  const std::string I = largest < (std::int64_t{1} << 30) ? "int" : "long";
  const std::string Ks = std::to_string(K), Ns = std::to_string(N), Ms = std::to_string(M);
  auto load8 = [&](const std::string& pointer) {
    return t == DType::F16 ? "vload_half8(0, " + pointer + ")"
                           : "as_float8(convert_uint8(vload8(0, " + pointer + ")) << 16)";
  };
  auto acc = [](std::int64_t i, int v) {
    return "c" + std::to_string(i) + "_" + std::to_string(v);
  };

  std::ostringstream& s = ctx.source;
  if (N == 1) {
    // A matrix times a vector (W x, also x @ W.T swapped): one row of A per work-item, read
    // eight contiguous elements at a time into float8 partial sums added up at the end.
    const std::int64_t K8 = K / 8 * 8;
    s << "__kernel void " << name << "(__global const " << S << "* restrict A, __global const " << S
      << "* restrict Bm, __global " << S << "* restrict C) {\n"
      << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
      << "  if (gid >= " << B * M << ") return;\n"
      << "  const __global " << S << "* a = A + gid * " << Ks << ";\n"
      << "  const __global " << S << "* x = Bm + (gid / " << Ms << ") * " << Ks << ";\n"
      << "  float8 part = (float8)(0);\n"
      << "  for (" << I << " k = 0; k < " << K8 << "; k += 8) part += " << load8("a + k") << " * "
      << load8("x + k") << ";\n"
      << "  float sum = ((part.s0 + part.s1) + (part.s2 + part.s3)) + ((part.s4 + part.s5) + "
         "(part.s6 + part.s7));\n"
      << "  for (" << I << " k = " << K8 << "; k < " << Ks
      << "; ++k) sum += " << cl_load(t, "a", "k") << " * " << cl_load(t, "x", "k") << ";\n"
      << "  " << cl_store(t, "C", "gid", "sum") << "\n"
      << "}\n\n";
    LaunchPlan launch;
    launch.kernel = name;
    launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                   ctx.buffer_of.at(group.root)};
    launch.writes = {ctx.buffer_of.at(group.root)};
    size_blocked_launch(ctx, launch, B * M);
    ctx.add_launch(std::move(launch));
    return;
  }
  s << "__kernel void " << name << "(__global const " << S << "* restrict A, __global const " << S
    << "* restrict Bm, __global " << S << "* restrict C) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << total << ") return;\n"
    << "  const " << I << " b = gid / " << MB * NB << ", r = gid % " << MB * NB << ";\n"
    << "  const " << I << " row0 = (r / " << NB << ") * " << R << ", col0 = (r % " << NB << ") * "
    << kWidth << ";\n"
    << "  const __global " << S << "* a = A + b * " << M * K << " + row0 * " << Ks << ";\n"
    << "  const __global " << S << "* bb = Bm + b * " << K * N << " + col0;\n"
    << "  const " << I << " c = b * " << M * N << " + row0 * " << Ns << " + col0;\n"
    << "  if (row0 + " << R << " <= " << Ms << " && col0 + " << kWidth << " <= " << Ns << ") {\n";
  for (std::int64_t i = 0; i < R; ++i)
    for (int v = 0; v < kVectors; ++v) s << "    float8 " << acc(i, v) << " = (float8)(0);\n";
  s << "    for (" << I << " k = 0; k < " << Ks << "; ++k) {\n";
  for (int v = 0; v < kVectors; ++v)
    s << "      const float8 b" << v << " = "
      << load8("bb + k * " + Ns + " + " + std::to_string(8 * v)) << ";\n";
  for (std::int64_t i = 0; i < R; ++i) {
    s << "      { const float8 av = (float8)(" << cl_load(t, "a", std::to_string(i * K) + " + k")
      << ");";
    for (int v = 0; v < kVectors; ++v) s << " " << acc(i, v) << " += av * b" << v << ";";
    s << " }\n";
  }
  s << "    }\n";
  for (std::int64_t i = 0; i < R; ++i)
    for (int v = 0; v < kVectors; ++v)
      s << "    { float out[8]; vstore8(" << acc(i, v) << ", 0, out); for (int j = 0; j < 8; ++j) "
        << cl_store(t, "C", "c + " + std::to_string(i * N + 8 * v) + " + j", "out[j]") << " }\n";
  s << "  } else {\n"
    << "    for (int i = 0; i < " << R << " && row0 + i < " << Ms << "; ++i)\n"
    << "      for (int j = 0; j < " << kWidth << " && col0 + j < " << Ns << "; ++j) {\n"
    << "        float sum = 0;\n"
    << "        for (" << I << " k = 0; k < " << Ks
    << "; ++k) sum += " << cl_load(t, "a", "i * " + Ks + " + k") << " * "
    << cl_load(t, "bb", "k * " + Ns + " + j") << ";\n"
    << "        " << cl_store(t, "C", "c + i * " + Ns + " + j", "sum") << "\n"
    << "      }\n"
    << "  }\n"
    << "}\n\n";

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  size_blocked_launch(ctx, launch, total);
  ctx.add_launch(std::move(launch));
}

}  // namespace

bool dot_epilogue_fits(const KernelContext& ctx, const FusionGroup& dot,
                       const FusionGroup& epilogue) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(dot.root);
  const Node& out = g.node(epilogue.root);
  if (ctx.caps.is_gpu || root.dtype != DType::F32 || canonical_dot_rhs_transposed(root) ||
      epilogue.kind != FusionGroup::Kind::Loop || !epilogue.side_outputs.empty() ||
      out.dtype != DType::F32 || out.shape.empty() || out.shape.back() != root.shape.back() ||
      num_elements(out.shape) != num_elements(root.shape))
    return false;
  if (k_splits(ctx, root) > 1) return false;  // the sum of the partials stores C
  const int d_buffer = ctx.buffer_of.at(dot.root);
  auto is_dot = [&](ValueId v) { return ctx.buffer_of.at(v) == d_buffer; };
  if (std::none_of(epilogue.inputs.begin(), epilogue.inputs.end(), is_dot)) return false;
  if (!lane_vectorizable(g, epilogue.root, epilogue.inputs)) return false;
  // Each element of the epilogue reads the dot's result at its own element only: through
  // elementwise ops and reshapes of the same size (the dot kernel holds just that element).
  const std::set<ValueId> reaching = values_reaching(g, epilogue, is_dot);
  for (ValueId m : epilogue.members) {
    if (!reaching.count(m)) continue;
    const Node& n = g.node(m);
    const OpClass c = op_info(n.op).op_class;
    const bool same_element =
        c == OpClass::Unary || c == OpClass::Binary || n.op == OpKind::Reshape;
    if (!same_element || num_elements(n.shape) != num_elements(root.shape)) return false;
  }
  return true;
}

void emit_dot_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                     const FusionGroup* epilogue) {
  const Node& root = ctx.graph().node(group.root);
  const bool rhs_t = canonical_dot_rhs_transposed(root);
  if (!ctx.caps.is_gpu && is_float(root.dtype) && !is_half_float(root.dtype)) {
    if (!rhs_t) {
      emit_register_blocked(ctx, group, name, epilogue);
    } else if (!epilogue) {
      emit_rhs_transposed_cpu(ctx, group, name);
    } else {
      throw weft::Error("codegen: a dot epilogue on a path without one (dot_epilogue_fits)");
    }
    return;
  }
  if (!ctx.caps.is_gpu && is_half_float(root.dtype) && !epilogue) {
    if (canonical_dot_lhs_transposed(root) || rhs_t)  // canonicalize_dots keeps f16/bf16 so
      throw weft::Error("codegen: an f16/bf16 dot with a transposed operand (canonicalize_dots)");
    emit_half_cpu(ctx, group, name);
    return;
  }
  // GPUs, integers: the tiled kernel, which loads and stores element by element.
  if (epilogue)
    throw weft::Error("codegen: a dot epilogue on a path without one (dot_epilogue_fits)");
  const Shape& ls = ctx.graph().node(root.inputs[0]).shape;
  const bool lhs_t = canonical_dot_lhs_transposed(root);
  const std::int64_t B = root.shape[0], M = root.shape[1], N = root.shape[2],
                     K = lhs_t ? ls[1] : ls[2];
  const DType t = root.dtype;
  // Integers accumulate unsigned so overflow wraps as the interpreter defines; f16 and bf16
  // accumulate in float and round once, as the interpreter does.
  const std::string T = cl_type(t), S = cl_storage_type(t);
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
    << "(__global const " << S << "* restrict A, __global const " << S << "* restrict Bm, __global "
    << S << "* restrict C) {\n"
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
    << "  const __global " << S << "* Ab = A + b * " << M * K << ";\n"
    << "  const __global " << S << "* Bb = Bm + b * " << K * N << ";\n"
    << "  for (" << idx_t << " k0 = 0; k0 < " << K << "; k0 += " << kStepK << ") {\n"
    << "    for (int e = lid; e < " << kTile * kStepK << "; e += " << kThreads << ") {\n"
    << "      const int r = e / " << kStepK << ", c = e % " << kStepK << ";\n"
    << "      const " << idx_t << " gr = tm * " << kTile << " + r, gc = k0 + c;\n"
    << "      As[c][r] = (gr < " << M << " && gc < " << K << ") ? (" << acc_t << ")"
    << cl_load(
           t, "Ab",
           lhs_t ? "gc * " + std::to_string(M) + " + gr" : "gr * " + std::to_string(K) + " + gc")
    << " : " << zero << ";\n"
    << "    }\n"
    << "    for (int e = lid; e < " << kTile * kStepK << "; e += " << kThreads << ") {\n"
    << "      const int r = e / " << kTile << ", c = e % " << kTile << ";\n"
    << "      const " << idx_t << " gr = k0 + r, gc = tn * " << kTile << " + c;\n"
    << "      Bs[r][c] = (gr < " << K << " && gc < " << N << ") ? (" << acc_t << ")"
    << cl_load(
           t, "Bb",
           rhs_t ? "gc * " + std::to_string(K) + " + gr" : "gr * " + std::to_string(N) + " + gc")
    << " : " << zero << ";\n"
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
    << "      if (col < " << N << ") "
    << cl_store(t, "C", "b * " + std::to_string(M * N) + " + row * " + std::to_string(N) + " + col",
                "(" + T + ")acc[i][j]")
    << "\n"
    << "    }\n"
    << "  }\n"
    << "}\n\n";

  launch.local_size = kThreads;
  launch.global_size = static_cast<std::size_t>(B * tiles_m * tiles_n) * kThreads;
  if (M * N == 0) launch.global_size = 0;
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

// A cumulative op along one axis as a work-efficient blocked parallel scan: the operand is
// [outer, n, inner] with n the scanned axis; each work-group scans one block of kBlock elements
// of one line (each work-item its kPerItem elements in turn, then the work-group its items'
// totals in local memory) and writes the block's total; the totals of each line are scanned
// the same way (recursively, while a line has more than one block), and a fix-up pass combines
// each block after the first with the scanned total of the blocks before it. 2^24 elements
// take three levels and five launches, never one launch per element. On CPUs, long contiguous
// lines stream through chunks instead (emit_stream_scan below).
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

constexpr int kPerItem = 8;
constexpr std::size_t kMaxItems = 256;

// One level of the scan: `n` elements per line of `lines`, strided by `inner` inside each of
// the `lines / inner` outer slabs; `reverse` walks each line last to first.
struct Level {
  std::int64_t lines, n, inner;
  bool reverse;
  std::int64_t blocks(std::int64_t block) const { return (n + block - 1) / block; }
};

std::string flat_index(const Level& l, const std::string& line, const std::string& p) {
  const std::string N = std::to_string(l.n), inner = std::to_string(l.inner);
  const std::string pos = l.reverse ? "(" + N + " - 1 - " + p + ")" : p;
  if (l.inner == 1) return "(" + line + " * " + N + " + " + pos + ")";
  return "((" + line + " / " + inner + ") * " + N + " * " + inner + " + (" + line + " % " + inner +
         ") + " + pos + " * " + inner + ")";
}

// How each level's buffers are stored. f16 and bf16 combine in float and, as the interpreter,
// round only the results: their block totals stay float, and so do the block scans of a line
// of several blocks until the fix-up adds the totals before them. `x` and `y` are the dtypes of
// the level's operand and block scans, `carry` that of the block totals.
struct Storage {
  DType x, y, carry;
};

// Scans each block of `level`, reading x and writing y (buffers of the block), and, where a
// line has several blocks, each block's total into `totals`.
void emit_block_scan(KernelContext& ctx, const std::string& kernel, DType t, Storage st,
                     const Level& level, std::size_t items, int x, int y, int totals,
                     ScanCombine combine) {
  const std::string T = cl_type(t), X = cl_storage_type(st.x), Y = cl_storage_type(st.y);
  const std::string C = cl_storage_type(st.carry);
  const std::int64_t block = static_cast<std::int64_t>(items) * kPerItem;
  const std::int64_t blocks = level.blocks(block);
  const std::string L = std::to_string(items), E = std::to_string(kPerItem);
  auto combined = [&](const std::string& a, const std::string& b) { return combine(t, a, b); };
  std::ostringstream& s = ctx.source;
  s << "__kernel __attribute__((reqd_work_group_size(" << L << ", 1, 1)))\nvoid " << kernel
    << "(__global const " << X << "* restrict x, __global " << Y << "* restrict y"
    << (totals >= 0 ? ", __global " + C + "* restrict totals" : "") << ") {\n"
    << "  __local " << T << " part[" << L << "];\n"
    << "  const long g = get_group_id(0);\n"
    << "  const long line = g / " << blocks << ", blk = g % " << blocks << ";\n"
    << "  const int lid = (int)get_local_id(0);\n"
    << "  const long first = blk * " << block << " + (long)lid * " << E << ";\n"
    << "  " << T << " v[" << E << "];\n"
    << "  " << T << " acc = (" << T << ")0;\n"
    << "  int count = 0;\n"
    << "  for (int e = 0; e < " << E << "; ++e) {\n"
    << "    const long p = first + e;\n"
    << "    if (p >= " << level.n << ") break;\n"
    << "    const " << T << " xe = " << cl_load(st.x, "x", flat_index(level, "line", "p")) << ";\n"
    << "    acc = count == 0 ? xe : " << combined("acc", "xe") << ";\n"
    << "    v[e] = acc;\n"
    << "    ++count;\n"
    << "  }\n"
    << "  part[lid] = acc;\n"
    << "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    // Inclusive scan of the items' totals (Hillis-Steele over at most kMaxItems values).
    << "  for (int off = 1; off < " << L << "; off <<= 1) {\n"
    << "    const " << T << " before = lid >= off ? part[lid - off] : part[lid];\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "    if (lid >= off) part[lid] = " << combined("before", "part[lid]") << ";\n"
    << "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    << "  }\n"
    << "  for (int e = 0; e < count; ++e) {\n"
    << "    const long p = first + e;\n"
    << "    "
    << cl_store(st.y, "y", flat_index(level, "line", "p"),
                "(lid > 0 ? " + combined("part[lid - 1]", "v[e]") + " : v[e])")
    << "\n"
    << "  }\n";
  if (totals >= 0)
    // The block's total is its last element's: items past the line's end hold no value.
    s << "  if (lid == 0) {\n"
      << "    const long valid = min((long)" << block << ", " << level.n << " - blk * " << block
      << ");\n"
      << "    " << cl_store(st.carry, "totals", "g", "part[(valid - 1) / " + E + "]") << "\n"
      << "  }\n";
  s << "}\n\n";
  LaunchPlan launch;
  launch.kernel = kernel;
  launch.args = {x, y};
  launch.writes = {y};
  if (totals >= 0) {
    launch.args.push_back(totals);
    launch.writes.push_back(totals);
  }
  launch.local_size = items;
  launch.global_size = static_cast<std::size_t>(level.lines * blocks) * items;
  ctx.add_launch(std::move(launch));
}

// Combines every element of `level` past its line's first block with the scanned total of the
// blocks before it (`sums`: one per block, scanned along each line): in place in y when
// `partial` is y, else reading the block scans from `partial` and writing every element of y.
void emit_fix_up(KernelContext& ctx, const std::string& kernel, DType t, Storage st,
                 const Level& level, std::int64_t block, int partial, int y, int sums,
                 ScanCombine combine) {
  const bool in_place = partial == y;
  const DType y_dtype = in_place ? st.y : st.x;  // written as the level's operand
  const std::string Y = cl_storage_type(y_dtype), P = cl_storage_type(st.y);
  const std::string C = cl_storage_type(st.carry);
  const std::int64_t blocks = level.blocks(block);
  const std::string sum =
      cl_load(st.carry, "sums",
              "line * " + std::to_string(blocks) + " + p / " + std::to_string(block) + " - 1");
  // Elements per line the kernel writes, and the first of them.
  const std::int64_t count = in_place ? level.n - block : level.n;
  const std::int64_t first = in_place ? block : 0;
  const std::string part = cl_load(st.y, in_place ? "y" : "partial", "at");
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << kernel << "(__global " << Y << "* restrict y, __global const " << C
    << "* restrict sums" << (in_place ? "" : ", __global const " + P + "* restrict partial")
    << ") {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << level.lines * count << ") return;\n"
    << "  const long line = gid / " << count << ", p = " << first << " + gid % " << count << ";\n"
    << "  const long at = " << flat_index(level, "line", "p") << ";\n"
    << "  "
    << cl_store(
           y_dtype, "y", "at",
           "(p < " + std::to_string(block) + " ? " + part + " : " + combine(t, sum, part) + ")")
    << "\n"
    << "}\n\n";
  LaunchPlan launch;
  launch.kernel = kernel;
  launch.args = {y, sums};
  if (!in_place) launch.args.push_back(partial);
  launch.writes = {y};
  launch.local_size = 0;
  launch.global_size = static_cast<std::size_t>(level.lines * count);
  ctx.add_launch(std::move(launch));
}

// Scans `level` from buffer x into y, recursing on the block totals.
void emit_level(KernelContext& ctx, const std::string& name, int depth, DType t, Storage st,
                const Level& level, std::size_t items, int x, int y, ScanCombine combine) {
  const std::int64_t block = static_cast<std::int64_t>(items) * kPerItem;
  const std::int64_t blocks = level.blocks(block);
  const std::string suffix = std::to_string(depth);
  if (blocks <= 1) {
    emit_block_scan(ctx, name + "_scan" + suffix, t, st, level, items, x, y, -1, combine);
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(level.lines * blocks) * dtype_size(st.carry);
  const int totals = ctx.add_temp(bytes);
  const int sums = ctx.add_temp(bytes);
  // Block scans kept at the totals' precision (f16 and bf16: float) until the fix-up.
  Storage blocks_st = st;
  int partial = y;
  if (st.y != st.carry) {
    blocks_st.y = st.carry;
    partial = ctx.add_temp(static_cast<std::size_t>(level.lines * level.n) * dtype_size(st.carry));
  }
  emit_block_scan(ctx, name + "_scan" + suffix, t, blocks_st, level, items, x, partial, totals,
                  combine);
  emit_level(ctx, name, depth + 1, t, Storage{st.carry, st.carry, st.carry},
             Level{level.lines, blocks, 1, false}, items, totals, sums, combine);
  emit_fix_up(ctx, name + "_fix" + suffix, t, blocks_st, level, block, partial, y, sums, combine);
}

// Long contiguous lines (inner == 1) stream instead: each line is cut into chunks of `chunk`
// elements, one single-item work-group per chunk walking it front to back (contiguous loads, the
// data read twice and written once, three launches):
//   1. each chunk's total, eight elements at a time combined as a tree before joining the
//      running total (one dependent combine per eight elements);
//   2. per line, each chunk's total replaced by the combination of the totals before it;
//   3. each chunk rescanned from that carry, eight elements at a time: their prefix (which does
//      not wait on the carry) and then the carry combined into each.
// Forward f32 and f64 sums do steps 1 and 3 in vectors (vector_sum_kernels). CPUs only (a GPU
// runs a lone work-item per group far too slowly). Beside those sums, only associativity is used; a
// float sum's rounding differs from a sequential one's within the usual bounds.
constexpr std::int64_t kStreamMinLine = 8192;
constexpr int kLanes = 8;

bool streams(const DeviceCaps& caps, const Level& level) {
  return !caps.is_gpu && level.inner == 1 && level.n >= kStreamMinLine;
}

// Elements per chunk: enough chunks for every compute unit several times over, each long
// enough that a work-group's start is negligible, a multiple of kLanes.
std::int64_t stream_chunk(const DeviceCaps& caps, const Level& level) {
  const std::int64_t wanted_chunks =
      std::max<std::int64_t>(1, 16 * std::max<std::int64_t>(1, caps.compute_units) / level.lines);
  std::int64_t chunk = (level.n + wanted_chunks - 1) / wanted_chunks;
  chunk = std::clamp<std::int64_t>(chunk, 4096, std::int64_t{1} << 18);
  return (chunk + kLanes - 1) / kLanes * kLanes;
}

// The chunk-total and rescan kernels of a forward f32 or f64 sum, in vectors of `width` lanes:
// totals as per-lane sums, rescans as a Hillis-Steele scan inside each vector (shifted copies
// filled with -0.0, which leaves every sum as it is) plus the carry. Sums only: they reorder
// commutatively, and the vector shifts need the sum's identity.
std::string vector_sum_kernels(const std::string& name, DType t, const Level& level,
                               std::int64_t chunk, std::int64_t chunks, int width) {
  const std::string T = cl_type(t), W = std::to_string(width), VT = T + W;
  const std::string zero = t == DType::F64 ? "(-0.0)" : "(-0.0f)";
  const char* const lanes = "0123456789abcdef";
  const std::string header =
      "  const long g = get_global_id(0);\n"
      "  const long line = g / " +
      std::to_string(chunks) + ", c = g % " + std::to_string(chunks) +
      ";\n"
      "  const long first = line * " +
      std::to_string(level.n) + " + c * " + std::to_string(chunk) +
      ";\n"
      "  const long len = min((long)" +
      std::to_string(chunk) + ", " + std::to_string(level.n) + " - c * " + std::to_string(chunk) +
      ");\n";
  std::string s = "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " + name +
                  "_totals(__global const " + T + "* restrict x, __global " + T +
                  "* restrict totals) {\n" + header + "  " + VT + " lanes = (" + VT + ")" + zero +
                  ";\n  long i = 0;\n  for (; i + " + W + " <= len; i += " + W +
                  ") lanes += vload" + W + "(0, x + first + i);\n  " + T + " acc = lanes.s0;\n";
  for (int j = 1; j < width; ++j) s += "  acc += lanes.s" + std::string(1, lanes[j]) + ";\n";
  s += "  for (; i < len; ++i) acc += x[first + i];\n  totals[g] = acc;\n}\n\n";
  s += "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " + name +
       "_rescan(__global const " + T + "* restrict x, __global const " + T +
       "* restrict totals, __global " + T + "* restrict y) {\n" + header + "  " + T +
       " carry = c == 0 ? " + zero + " : totals[g];\n  long i = 0;\n  for (; i + " + W +
       " <= len; i += " + W + ") {\n    " + VT + " v = vload" + W + "(0, x + first + i);\n";
  // Lane j of v plus lane j - shift (-0.0 where j < shift): shuffle2 picks lanes of its first
  // operand (the zeros) at mask values below `width`, of v at width + k.
  const std::string mask_type = std::string(t == DType::F64 ? "ulong" : "uint") + W;
  for (int shift = 1; shift < width; shift *= 2) {
    std::string mask;
    for (int j = 0; j < width; ++j)
      mask += (j ? ", " : "") + std::to_string(j < shift ? 0 : width + j - shift);
    s += "    v += shuffle2((" + VT + ")" + zero + ", v, (" + mask_type + ")(" + mask + "));\n";
  }
  s += "    vstore" + W + "(v + carry, 0, y + first + i);\n    carry += v.s" +
       std::string(1, lanes[width - 1]) +
       ";\n  }\n  for (; i < len; ++i) {\n"
       "    carry += x[first + i];\n    y[first + i] = carry;\n  }\n}\n\n";
  return s;
}

void emit_stream_scan(KernelContext& ctx, const std::string& name, DType t, Storage st,
                      const Level& level, int x, int y, ScanCombine combine, int vector_sum) {
  const std::int64_t chunk = stream_chunk(ctx.caps, level);
  const std::int64_t chunks = level.blocks(chunk);
  const std::string T = cl_type(t), X = cl_storage_type(st.x), Y = cl_storage_type(st.y);
  const std::string C = cl_storage_type(st.carry);
  const std::string N = std::to_string(level.n), K = std::to_string(chunk),
                    CH = std::to_string(chunks), E = std::to_string(kLanes);
  auto combined = [&](const std::string& a, const std::string& b) { return combine(t, a, b); };
  auto at = [&](const std::string& p) {
    return cl_load(st.x, "x", flat_index(level, "line", "(" + p + ")"));
  };
  const int totals =
      ctx.add_temp(static_cast<std::size_t>(level.lines * chunks) * dtype_size(st.carry));
  const std::string header =
      "  const long g = get_global_id(0);\n"
      "  const long line = g / " +
      CH + ", c = g % " + CH +
      ";\n"
      "  const long first = c * " +
      K +
      ";\n"
      "  const long len = min((long)" +
      K + ", " + N + " - first);\n";
  std::ostringstream& s = ctx.source;
  // 2. Carries: the combination of the totals before each chunk (the first chunk's unused).
  const std::string total = cl_load(st.carry, "totals", "line * " + CH + " + c");
  s << "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " << name
    << "_carries(__global " << C << "* restrict totals) {\n"
    << "  const long line = get_global_id(0);\n"
    << "  " << T << " carry = " << cl_load(st.carry, "totals", "line * " + CH) << ";\n"
    << "  for (long c = 1; c < " << CH << "; ++c) {\n"
    << "    const " << T << " here = " << total << ";\n"
    << "    " << cl_store(st.carry, "totals", "line * " + CH + " + c", "carry") << "\n"
    << "    carry = " << combined("carry", "here") << ";\n"
    << "  }\n"
    << "}\n\n";
  if (vector_sum > 0) {
    s << vector_sum_kernels(name, t, level, chunk, chunks, vector_sum);
  } else {
    // 1. Chunk totals: eight elements at a time combined as a tree (independent of the running
    // total), then into it; unrolled by hand, as arrays here go through the stack.
    const auto lane = [](int j) { return "q" + std::to_string(j); };
    // Lines loading the eight elements from position `i` on into q0 ... q7.
    std::string load_lanes;
    for (int j = 0; j < kLanes; ++j)
      load_lanes +=
          "    const " + T + " " + lane(j) + " = " + at("first + i + " + std::to_string(j)) + ";\n";
    // Lines combining them pairwise into t1 (each level named, as combines repeat their operands).
    std::string tree_lines;
    std::vector<std::string> level_names;
    for (int j = 0; j < kLanes; ++j) level_names.push_back(lane(j));
    for (int depth = 0; level_names.size() > 1; ++depth) {
      std::vector<std::string> next;
      for (std::size_t j = 0; j + 1 < level_names.size(); j += 2) {
        next.push_back("t" + std::to_string(depth) + "_" + std::to_string(j / 2));
        tree_lines += "    const " + T + " " + next.back() + " = " +
                      combined(level_names[j], level_names[j + 1]) + ";\n";
      }
      level_names = next;
    }
    s << "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " << name
      << "_totals(__global const " << X << "* restrict x, __global " << C
      << "* restrict totals) {\n"
      << header << "  " << T << " acc = " << at("first") << ";\n"
      << "  long i = 1;\n"
      << "  for (; i + " << E << " <= len; i += " << E << ") {\n"
      << load_lanes << tree_lines << "    acc = " << combined("acc", level_names[0]) << ";\n"
      << "  }\n"
      << "  for (; i < len; ++i) acc = " << combined("acc", at("first + i")) << ";\n"
      << "  " << cl_store(st.carry, "totals", "g", "acc") << "\n"
      << "}\n\n";
    // 3. Rescan from the carries.
    auto put = [&](const std::string& p, const std::string& v) {
      return cl_store(st.y, "y", flat_index(level, "line", "(" + p + ")"), v);
    };
    s << "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " << name
      << "_rescan(__global const " << X << "* restrict x, __global const " << C
      << "* restrict totals, __global " << Y << "* restrict y) {\n"
      << header << "  " << T << " carry;\n"
      << "  long i = 0;\n"
      << "  if (c == 0) {\n"
      << "    carry = " << at("first") << ";\n"
      << "    " << put("first", "carry") << "\n"
      << "    i = 1;\n"
      << "  } else {\n"
      << "    carry = " << cl_load(st.carry, "totals", "g") << ";\n"
      << "  }\n"
      << "  for (; i + " << E << " <= len; i += " << E << ") {\n";
    s << load_lanes;
    for (int j = 0; j < kLanes; ++j)
      s << "    const " << T << " p" << j << " = "
        << (j == 0 ? lane(0) : combined("p" + std::to_string(j - 1), lane(j))) << ";\n";
    for (int j = 0; j < kLanes; ++j)
      s << "    "
        << put("first + i + " + std::to_string(j), combined("carry", "p" + std::to_string(j)))
        << "\n";
    s << "    carry = " << combined("carry", "p" + std::to_string(kLanes - 1)) << ";\n"
      << "  }\n"
      << "  for (; i < len; ++i) {\n"
      << "    carry = " << combined("carry", at("first + i")) << ";\n"
      << "    " << put("first + i", "carry") << "\n"
      << "  }\n"
      << "}\n\n";
  }
  const auto groups = static_cast<std::size_t>(level.lines * chunks);
  LaunchPlan reduce{name + "_totals", {x, totals}, {totals}, groups, 1};
  LaunchPlan carries{
      name + "_carries", {totals}, {totals}, static_cast<std::size_t>(level.lines), 1};
  LaunchPlan rescan{name + "_rescan", {x, totals, y}, {y}, groups, 1};
  ctx.add_launch(std::move(reduce));
  ctx.add_launch(std::move(carries));
  ctx.add_launch(std::move(rescan));
}

}  // namespace

void emit_scan_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                      ScanCombine combine) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const CumulativeAttrs attrs = CumulativeAttrs::read(root.attrs);
  Level level{1, 1, 1, attrs.reverse};
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(root.shape.size()); ++d) {
    if (d == attrs.axis) level.n = root.shape[d];
    if (d > attrs.axis) level.inner *= root.shape[d];
  }
  if (num_elements(root.shape) == 0) return;
  level.lines = num_elements(root.shape) / level.n;
  // A power of two no larger than the device allows, and no larger than one line needs.
  std::size_t items = 1;
  const std::size_t cap = std::min<std::size_t>(kMaxItems, ctx.caps.max_work_group_size);
  while (items * 2 <= cap && static_cast<std::int64_t>(items) * kPerItem < level.n) items *= 2;
  const DType t = root.dtype;
  const Storage storage{t, t, is_half_float(t) ? DType::F32 : t};
  if (streams(ctx.caps, level)) {
    // Forward f32 and f64 sums in vectors (AVX-512 holds 16 floats).
    const bool sum = root.op == OpKind::Cumsum && !level.reverse;
    const int vector_sum = !sum ? 0 : t == DType::F32 ? 16 : t == DType::F64 ? 8 : 0;
    emit_stream_scan(ctx, name, t, storage, level, ctx.buffer_of.at(root.inputs[0]),
                     ctx.buffer_of.at(group.root), combine, vector_sum);
    return;
  }
  emit_level(ctx, name, 0, t, storage, level, items, ctx.buffer_of.at(root.inputs[0]),
             ctx.buffer_of.at(group.root), combine);
}

}  // namespace weft::opencl

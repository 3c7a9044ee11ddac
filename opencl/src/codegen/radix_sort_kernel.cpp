// Sorting lines of one key on CPUs: an LSD radix sort of the keys' order-preserving bits. Each
// key maps to an unsigned integer of its width whose order is sort's order (floats: NaNs of
// either sign last and tied, -0.0 tied with 0.0; descending: the complement, +NaN first and -NaN
// last). Each line splits into a few contiguous blocks, one work-group of one work-item each. A
// pass per digit (kDigitBits bits, least significant first) finds where each digit value of its
// block goes (after the smaller values of the whole line, then after the same value in the
// blocks before it) and moves the block's keys there in order, so the sort is stable. The first
// launch counts every digit of every block; a digit with one value across the line would leave
// the order as it is, so its pass does nothing and the next reads the last moved buffers. While
// moving, a pass counts the next pass's digit by destination block, so no pass reads the keys
// twice. Beside each key moves its payload: the operand's bits (a sort's values; floats cannot
// be rebuilt from keys that tie -0.0 with 0.0) or its position (argsort, top_k's indices). The
// last pass always runs and writes the result. Buffers are written once (the runtime's rule),
// so each pass writes fresh ones.
//
// Lines that fit one block (many lines, or short ones) sort in one launch instead, a work-item
// per line (emit_line_radix_sort).
//
// On PoCL's CPU device (2 cores) a line of 2^20 f32 sorts in 6-12 ms this way against ~280 ms by
// bitonic chunks and merges; lines shorter than kRadixMinLinePerDigit positions per digit keep
// the bitonic chunks.
#include <algorithm>
#include <cstdio>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/sort_lines.h"

namespace weft::opencl {
namespace {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Lines of at least this many positions per key digit (and kRadixMinLine) take the radix sort
// on CPU devices: each line costs a count of every digit value per pass, so short lines of many
// digits are cheaper as bitonic chunks. Measured on PoCL's CPU device (2 cores), thousands of
// lines sorted one line per work-item: f32 lines of 8 positions sort 2-3.7x faster by bitonic
// chunks, of 16 1.4x faster by radix, of 32 3-4x; f64 lines of 16 1.4-2x faster by bitonic
// chunks, of 32 1.2-1.5x by radix, of 64 3.5x; i8 lines of 8 about even, of 16 7x by radix.
constexpr std::int64_t kRadixMinLinePerDigit = 8;
constexpr std::int64_t kRadixMinLine = 16;
// Each block holds at least this many positions: fewer blocks per line cost less counting.
constexpr std::int64_t kMinBlock = 16384;
constexpr std::int64_t kMaxBlocks = 16;

// Passes of a key of dtype `t`.
int digits_of(DType t) {
  return static_cast<int>((8 * dtype_size(t) + kDigitBits - 1) / kDigitBits);
}

// The unsigned OpenCL C type of `bytes` bytes.
std::string bits_type(std::size_t bytes) {
  return bytes == 1 ? "uchar" : bytes == 2 ? "ushort" : bytes == 4 ? "uint" : "ulong";
}

std::string hex(std::uint64_t v, std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llX%s", static_cast<unsigned long long>(v),
                bytes == 8 ? "ul" : "u");
  return text;
}

// The bits of a float dtype's infinity.
std::uint64_t infinity_bits(DType t) {
  switch (t) {
    case DType::F16:
      return 0x7C00;
    case DType::BF16:
      return 0x7F80;
    case DType::F32:
      return 0x7F800000;
    case DType::F64:
      return 0x7FF0000000000000;
    default:
      return 0;
  }
}

// OpenCL C function `name`(U u) -> U: the order-preserving bits of a key stored as bits `u`.
std::string key_function(const std::string& name, DType t, bool descending) {
  const std::size_t bytes = dtype_size(t);
  const std::string U = bits_type(bytes);
  const std::uint64_t all = bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  const std::string ALL = hex(all, bytes), SIGN = hex(sign, bytes), MAG = hex(sign - 1, bytes);
  std::string body;
  if (is_float(t)) {
    // NaNs above +inf (descending: -NaN below -inf), zeros as +0, negatives reversed.
    const std::string nan = descending ? "(u & " + SIGN + ") ? 0 : " + ALL : ALL;
    body += "  " + U + " m;\n";
    body += "  if ((u & " + MAG + ") > " + hex(infinity_bits(t), bytes) + ") m = " + nan + ";\n";
    body += "  else if ((u & " + MAG + ") == 0) m = " + SIGN + ";\n";
    body += "  else m = (u & " + SIGN + ") ? (" + U + ")(~u) : (" + U + ")(u | " + SIGN + ");\n";
  } else if (is_signed_integer(t)) {
    body = "  const " + U + " m = (" + U + ")(u ^ " + SIGN + ");\n";
  } else {
    body = "  const " + U + " m = u;\n";
  }
  return "static " + U + " " + name + "(" + U + " u) {\n" + body +
         (descending ? "  return (" + U + ")(~m & " + ALL + ");\n" : "  return m;\n") + "}\n\n";
}

// "__global const T* restrict prefix0, ..., prefix<count-1>, "
std::string buffer_params(const std::string& T, const std::string& prefix, int count) {
  std::string params;
  for (int i = 0; i < count; ++i)
    params += "__global const " + T + "* restrict " + prefix + std::to_string(i) + ", ";
  return params;
}

// "const T* restrict var = src == first + 1 ? prefix1 : ... : prefix0;": buffer i of `prefix`
// when src is first + i.
std::string select_buffer(const std::string& T, const std::string& var, const std::string& prefix,
                          int count, int first = 0) {
  std::string chosen = prefix + "0";
  for (int i = 1; i < count; ++i)
    chosen =
        "src == " + std::to_string(first + i) + " ? " + prefix + std::to_string(i) + " : " + chosen;
  return "  __global const " + T + "* restrict " + var + " = " + chosen + ";\n";
}

// Lines that each fit one block sort in one launch, a work-group of one work-item per line: it
// counts every digit of its line, then moves the line digit by digit between two scratch
// buffers (a digit with one value along the line skipped), the last digit into the result. No
// counts leave the work-item, so many short lines cost no memory beyond the scratch buffers.
void emit_line_radix_sort(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                          const SortKernel& sort, const SortLines& l) {
  const Node& root = ctx.graph().node(group.root);
  const DType t = ctx.graph().node(root.inputs[0]).dtype;
  const std::size_t bytes = dtype_size(t);
  const std::string U = bits_type(bytes), P = sort.values ? U : "int";
  const int digits = digits_of(t);
  const std::int64_t count = sort.count > 0 ? sort.count : l.n;
  SortLines out = l;
  out.n = count;
  const std::string N = std::to_string(l.n), R = std::to_string(kBuckets),
                    MASK = std::to_string(kBuckets - 1), DR = std::to_string(digits * kBuckets),
                    bits = std::to_string(kDigitBits);
  const std::string key = name + "_radix_key";
  std::ostringstream& s = ctx.source;
  s << key_function(key, t, sort.descending);
  s << "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\nvoid " << name
    << "(__global const " << U << "* restrict x, __global " << U << "* restrict keys_a, __global "
    << U << "* restrict keys_b, __global " << P << "* restrict payload_a, __global " << P
    << "* restrict payload_b, __global " << P << "* restrict y) {\n"
    << "  const long line = get_group_id(0);\n"
    << "  __global " << U << "* from = keys_a + line * " << N << ";\n"
    << "  __global " << U << "* to = keys_b + line * " << N << ";\n"
    << "  __global " << P << "* carried = payload_a + line * " << N << ";\n"
    << "  __global " << P << "* moved = payload_b + line * " << N << ";\n"
    << "  int count[" << DR << "];\n"
    << "  for (int i = 0; i < " << DR << "; ++i) count[i] = 0;\n"
    << "  for (int p = 0; p < " << N << "; ++p) {\n"
    << "    const " << U << " u = x[" << position_of(l, "line", "(long)p") << "];\n"
    << "    const " << U << " k = " << key << "(u);\n"
    << "    from[p] = k;\n"
    << "    carried[p] = " << (sort.values ? "u" : "p") << ";\n"
    << "    for (int d = 0; d < " << digits << "; ++d)\n"
    << "      ++count[d * " << R << " + (int)((k >> (d * " << bits << ")) & " << MASK << ")];\n"
    << "  }\n"
    << "  int place[" << R << "];\n"
    << "  for (int d = 0; d < " << digits << "; ++d) {\n"
    << "    const int shift = d * " << bits << ";\n"
    << "    const bool last = d == " << digits - 1 << ";\n"
    << "    if (!last && count[d * " << R << " + (int)((from[0] >> shift) & " << MASK
    << ")] == " << N << ") continue;\n"
    << "    int start = 0;\n"
    << "    for (int k = 0; k < " << R << "; ++k) {\n"
    << "      place[k] = start;\n"
    << "      start += count[d * " << R << " + k];\n"
    << "    }\n"
    << "    if (last) {\n"
    << "      for (int p = 0; p < " << N << "; ++p) {\n"
    << "        const int at = place[(int)((from[p] >> shift) & " << MASK << ")]++;\n"
    << "        " << (count < l.n ? "if (at < " + std::to_string(count) + ") " : "") << "y["
    << position_of(out, "line", "(long)at") << "] = carried[p];\n"
    << "      }\n"
    << "      break;\n"
    << "    }\n"
    << "    for (int p = 0; p < " << N << "; ++p) {\n"
    << "      const " << U << " k = from[p];\n"
    << "      const int at = place[(int)((k >> shift) & " << MASK << ")]++;\n"
    << "      to[at] = k;\n"
    << "      moved[at] = carried[p];\n"
    << "    }\n"
    << "    __global " << U << "* const keys = from;\n"
    << "    from = to;\n"
    << "    to = keys;\n"
    << "    __global " << P << "* const payload = carried;\n"
    << "    carried = moved;\n"
    << "    moved = payload;\n"
    << "  }\n"
    << "}\n\n";
  const std::size_t positions = static_cast<std::size_t>(l.lines * l.n);
  const std::size_t payload_bytes = positions * (sort.values ? bytes : 4);
  const int keys_a = ctx.add_temp(positions * bytes), keys_b = ctx.add_temp(positions * bytes);
  const int payload_a = ctx.add_temp(payload_bytes), payload_b = ctx.add_temp(payload_bytes);
  const int result = ctx.buffer_of.at(group.root);
  LaunchPlan plan;
  plan.kernel = name;
  plan.args = {ctx.buffer_of.at(root.inputs[0]), keys_a, keys_b, payload_a, payload_b, result};
  plan.writes = {keys_a, keys_b, payload_a, payload_b, result};
  plan.global_size = static_cast<std::size_t>(l.lines);
  plan.local_size = 1;
  ctx.add_launch(std::move(plan));
}

}  // namespace

bool radix_sort_fits(const KernelContext& ctx, const FusionGroup& group, std::int64_t n) {
  // One work-item per block walks it in order: a CPU's shape of parallelism, not a GPU's.
  if (ctx.caps.is_gpu) return false;
  // Several keys compare in turn; their lexicographic order is not one key's bits.
  if (ctx.graph().node(group.root).inputs.size() != 1) return false;
  const DType t = ctx.graph().node(ctx.graph().node(group.root).inputs[0]).dtype;
  return n >= std::max(kRadixMinLine, kRadixMinLinePerDigit * digits_of(t));
}

void emit_radix_sort_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                            const SortKernel& sort) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& operand = g.node(root.inputs[0]);
  const DType t = operand.dtype;
  const SortLines l = sort_lines(operand.shape, sort.axis);
  const std::size_t bytes = dtype_size(t);
  const std::string U = bits_type(bytes);
  const std::string P = sort.values ? U : "int";  // the payload
  const int digits = digits_of(t);
  // Blocks per line: enough work-groups for every compute unit (a few each, so uneven blocks
  // even out), none under kMinBlock positions, at most kMaxBlocks (each pass counts the next
  // digit per destination block).
  const std::int64_t target_groups = 4 * static_cast<std::int64_t>(ctx.caps.compute_units);
  const std::int64_t blocks =
      std::clamp<std::int64_t>((target_groups + l.lines - 1) / l.lines, 1,
                               std::clamp<std::int64_t>(l.n / kMinBlock, 1, kMaxBlocks));
  const std::int64_t block_size = (l.n + blocks - 1) / blocks;
  const std::int64_t count = sort.count > 0 ? sort.count : l.n;
  const std::string N = std::to_string(l.n), B = std::to_string(blocks),
                    S = std::to_string(block_size), D = std::to_string(digits),
                    R = std::to_string(kBuckets), MASK = std::to_string(kBuckets - 1),
                    BR = std::to_string(blocks * kBuckets);
  if (blocks == 1) return emit_line_radix_sort(ctx, group, name, sort, l);
  const std::size_t groups = static_cast<std::size_t>(l.lines * blocks);
  std::ostringstream& s = ctx.source;

  const std::string key = name + "_radix_key", active = name + "_radix_active",
                    source = name + "_radix_source", next = name + "_radix_next";
  s << key_function(key, t, sort.descending);
  // Whether digit d takes more than one value along the line (the first launch's counts).
  s << "static bool " << active << "(__global const int* restrict counts, long line, int d) {\n"
    << "  for (int k = 0; k < " << R << "; ++k) {\n"
    << "    int total = 0;\n"
    << "    for (int b = 0; b < " << B << "; ++b) total += counts[((line * " << B << " + b) * " << D
    << " + d) * " << R << " + k];\n"
    << "    if (total != 0) return total != " << N << ";\n"
    << "  }\n"
    << "  return false;\n"
    << "}\n\n";
  // Which buffers hold the line before pass d: those of the last pass before it that moved
  // anything (0: the first launch's).
  s << "static int " << source << "(__global const int* restrict counts, long line, int d) {\n"
    << "  for (int j = d - 1; j >= 0; --j)\n"
    << "    if (" << active << "(counts, line, j)) return j + 1;\n"
    << "  return 0;\n"
    << "}\n\n";
  // The digit whose counts pass d leaves for the next pass that runs: the next that moves
  // anything, else the last (which always runs: it writes the result).
  s << "static int " << next << "(__global const int* restrict counts, long line, int d) {\n"
    << "  for (int e = d + 1; e < " << digits - 1 << "; ++e)\n"
    << "    if (" << active << "(counts, line, e)) return e;\n"
    << "  return " << digits - 1 << ";\n"
    << "}\n\n";
  const std::string prologue = "  const long line = get_group_id(0) / " + B + ";\n" +
                               "  const int block = (int)(get_group_id(0) % " + B + ");\n" +
                               "  const int first = block * " + S + ", last = min(first + " + S +
                               ", " + N + ");\n";
  const std::string attributes = "__kernel __attribute__((reqd_work_group_size(1, 1, 1)))\n";

  // The first launch: keys and payloads in line order, and each block's counts of every digit.
  s << attributes << "void " << name << "_radix_keys(__global const " << U
    << "* restrict x, __global " << U << "* restrict keys, __global " << P
    << "* restrict payload, __global int* restrict counts) {\n"
    << prologue << "  int count[" << digits * kBuckets << "];\n"
    << "  for (int i = 0; i < " << digits * kBuckets << "; ++i) count[i] = 0;\n"
    << "  for (int p = first; p < last; ++p) {\n"
    << "    const " << U << " u = x[" << position_of(l, "line", "(long)p") << "];\n"
    << "    const " << U << " k = " << key << "(u);\n"
    << "    keys[line * " << N << " + p] = k;\n"
    << "    payload[line * " << N << " + p] = " << (sort.values ? "u" : "p") << ";\n";
  for (int d = 0; d < digits; ++d)
    s << "    ++count[" << d * kBuckets << " + (int)((k >> " << d * kDigitBits << ") & " << MASK
      << ")];\n";
  s << "  }\n"
    << "  for (int i = 0; i < " << digits * kBuckets << "; ++i)\n"
    << "    counts[(line * " << B << " + block) * " << digits * kBuckets << " + i] = count[i];\n"
    << "}\n\n";
  const int operand_buffer = ctx.buffer_of.at(root.inputs[0]);
  const std::size_t positions = static_cast<std::size_t>(l.lines * l.n);
  std::vector<int> keys = {ctx.add_temp(positions * bytes)};
  std::vector<int> payloads = {ctx.add_temp(positions * (sort.values ? bytes : 4))};
  std::vector<int> moved;  // pass j's counts of the next digit, by source and destination block
  const int counts = ctx.add_temp(groups * static_cast<std::size_t>(digits * kBuckets) * 4);
  auto launch = [&](const std::string& kernel, std::vector<int> args, std::vector<int> writes) {
    LaunchPlan plan;
    plan.kernel = kernel;
    plan.args = std::move(args);
    plan.writes = std::move(writes);
    plan.global_size = groups;
    plan.local_size = 1;
    ctx.add_launch(std::move(plan));
  };
  launch(name + "_radix_keys", {operand_buffer, keys[0], payloads[0], counts},
         {keys[0], payloads[0], counts});

  // Pass d moves the line by digit d. The last pass always runs and writes the first `count`
  // positions of each line into the result, laid out as the operand with `count` positions
  // along the axis.
  SortLines out = l;
  out.n = count;
  for (int d = 0; d < digits; ++d) {
    const std::string shift = std::to_string(d * kDigitBits), ds = std::to_string(d);
    const bool last_pass = d + 1 == digits;
    const int sources = d + 1;  // pass d reads the buffers of launch 0 or of passes 0..d-1
    const std::string kernel = last_pass ? name : name + "_radix_pass" + ds;
    s << attributes << "void " << kernel << "(" << buffer_params(U, "keys", sources)
      << buffer_params(P, "payload", sources) << "__global const int* restrict counts, "
      << buffer_params("int", "moved", d);
    if (last_pass)
      s << "__global " << P << "* restrict y) {\n";  // values as their bits
    else
      s << "__global " << U << "* restrict keys_out, __global " << P
        << "* restrict payload_out, __global int* restrict moved_out) {\n";
    s << prologue;
    if (!last_pass) s << "  if (!" << active << "(counts, line, " << ds << ")) return;\n";
    s << "  const int src = " << source << "(counts, line, " << ds << ");\n"
      << select_buffer(U, "from", "keys", sources)
      << select_buffer(P, "carried", "payload", sources);
    // Each block's counts of digit d where the line is now: the first launch's, or the sums of
    // what the source pass moved into the block.
    std::string count_at =
        "counts[((line * " + B + " + b) * " + D + " + " + ds + ") * " + R + " + k]";
    if (d > 0) {
      // Pass j's counts when src is j + 1.
      s << select_buffer("int", "into", "moved", d, 1);
      s << "  int moved_into[" << BR << "];\n"
        << "  for (int i = 0; i < " << BR << "; ++i) moved_into[i] = 0;\n"
        << "  if (src > 0)\n"
        << "    for (int b0 = 0; b0 < " << B << "; ++b0)\n"
        << "      for (int i = 0; i < " << BR << "; ++i)\n"
        << "        moved_into[i] += into[(line * " << B << " + b0) * " << BR << " + i];\n";
      count_at = "(src > 0 ? moved_into[b * " + R + " + k] : " + count_at + ")";
    }
    s << "  int place[" << R << "];\n"
      << "  int start = 0;\n"
      << "  for (int k = 0; k < " << R << "; ++k) {\n"
      << "    int total = 0, before = 0;\n"
      << "    for (int b = 0; b < " << B << "; ++b) {\n"
      << "      const int c = " << count_at << ";\n"
      << "      total += c;\n"
      << "      if (b < block) before += c;\n"
      << "    }\n"
      << "    place[k] = start + before;\n"
      << "    start += total;\n"
      << "  }\n";
    if (!last_pass)
      s << "  const int e = " << next << "(counts, line, " << ds << ");\n"
        << "  int moving[" << BR << "];\n"
        << "  for (int i = 0; i < " << BR << "; ++i) moving[i] = 0;\n";
    s << "  for (int p = first; p < last; ++p) {\n"
      << "    const " << U << " k = from[line * " << N << " + p];\n"
      << "    const int to = place[(int)((k >> " << shift << ") & " << MASK << ")]++;\n";
    if (last_pass) {
      const std::string store =
          "y[" + position_of(out, "line", "(long)to") + "] = carried[line * " + N + " + p];";
      s << "    " << (count < l.n ? "if (to < " + std::to_string(count) + ") " : "") << store
        << "\n";
    } else {
      s << "    keys_out[line * " << N << " + to] = k;\n"
        << "    payload_out[line * " << N << " + to] = carried[line * " << N << " + p];\n"
        << "    ++moving[(to / " << S << ") * " << R << " + (int)((k >> (e * " << kDigitBits
        << ")) & " << MASK << ")];\n";
    }
    s << "  }\n";
    if (!last_pass)
      s << "  for (int i = 0; i < " << BR << "; ++i)\n"
        << "    moved_out[(line * " << B << " + block) * " << BR << " + i] = moving[i];\n";
    s << "}\n\n";
    std::vector<int> args(keys.begin(), keys.end());
    args.insert(args.end(), payloads.begin(), payloads.end());
    args.push_back(counts);
    args.insert(args.end(), moved.begin(), moved.end());
    std::vector<int> writes;
    if (last_pass) {
      writes.push_back(ctx.buffer_of.at(group.root));
    } else {
      keys.push_back(ctx.add_temp(positions * bytes));
      payloads.push_back(ctx.add_temp(positions * (sort.values ? bytes : 4)));
      moved.push_back(ctx.add_temp(groups * static_cast<std::size_t>(blocks * kBuckets) * 4));
      writes = {keys.back(), payloads.back(), moved.back()};
    }
    args.insert(args.end(), writes.begin(), writes.end());
    launch(kernel, args, writes);
  }
}

}  // namespace weft::opencl

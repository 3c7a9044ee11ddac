// Sorting long lines of one key on CPUs: an LSD radix sort of the keys' order-preserving bits.
// Each key maps to an unsigned integer of its width whose order is sort's order (floats: NaNs of
// either sign last and tied, -0.0 tied with 0.0; descending: the complement, +NaN first and -NaN
// last). Each line splits into a few contiguous blocks, one work-group of one work-item each;
// a pass per digit (kDigitBits bits, least significant first) counts the block's digits,
// finds where each of its digits goes (the digits before it in the whole line, then the same
// digit in the blocks before it) and moves its keys there in order, so the sort is stable. The
// first launch counts every digit of every block at once; a digit with one value across the
// line leaves the order as it is, so its pass does nothing and the next reads the last moved
// buffers. Beside each key moves its payload: the operand's bits (a sort's values; floats cannot
// be rebuilt from keys that tie -0.0 with 0.0) or its position (argsort, top_k's indices).
// Buffers are written once (the runtime's rule), so each pass writes fresh ones.
//
// On PoCL's CPU device (2 cores) a line of 2^20 f32 sorts in ~20 ms this way against ~280 ms by
// bitonic chunks and merges; below kRadixMinLine positions the bitonic chunks in local memory win.
#include <algorithm>
#include <cstdio>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/sort_lines.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Lines of at least this many positions take the radix sort (on CPU devices).
constexpr std::int64_t kRadixMinLine = 4096;
// Each block holds at least this many positions: fewer blocks per line cost less counting.
constexpr std::int64_t kMinBlock = 16384;

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
    body = "  " + U + " m;\n" + "  if ((u & " + MAG + ") > " + hex(infinity_bits(t), bytes) +
           ") m = " + (descending ? "(u & " + SIGN + ") ? 0 : " + ALL : ALL) + ";\n" +
           "  else if ((u & " + MAG + ") == 0) m = " + SIGN + ";\n" + "  else m = (u & " + SIGN +
           ") ? (" + U + ")(~u) : (" + U + ")(u | " + SIGN + ");\n";
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

// "const T* restrict var = src == 1 ? prefix1 : ... : prefix0;"
std::string select_buffer(const std::string& T, const std::string& var, const std::string& prefix,
                          int count) {
  std::string chosen = prefix + "0";
  for (int i = 1; i < count; ++i)
    chosen = "src == " + std::to_string(i) + " ? " + prefix + std::to_string(i) + " : " + chosen;
  return "  __global const " + T + "* restrict " + var + " = " + chosen + ";\n";
}

}  // namespace

bool radix_sort_fits(const KernelContext& ctx, const FusionGroup& group, std::int64_t /*lines*/,
                     std::int64_t n) {
  // One work-item per block walks it in order: a CPU's shape of parallelism, not a GPU's.
  if (ctx.caps.is_gpu) return false;
  // Several keys compare in turn; their lexicographic order is not one key's bits.
  if (ctx.graph().node(group.root).inputs.size() != 1) return false;
  return n >= kRadixMinLine;
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
  const int digits = static_cast<int>((8 * bytes + kDigitBits - 1) / kDigitBits);
  // Blocks per line: enough work-groups for every compute unit (a few each, so uneven blocks
  // even out), none under kMinBlock positions.
  const std::int64_t target_groups = 4 * static_cast<std::int64_t>(ctx.caps.compute_units);
  const std::int64_t blocks = std::clamp<std::int64_t>((target_groups + l.lines - 1) / l.lines, 1,
                                                       std::max<std::int64_t>(1, l.n / kMinBlock));
  const std::int64_t block_size = (l.n + blocks - 1) / blocks;
  const std::string N = std::to_string(l.n), B = std::to_string(blocks),
                    S = std::to_string(block_size), D = std::to_string(digits),
                    R = std::to_string(kBuckets), MASK = std::to_string(kBuckets - 1);
  const std::size_t groups = static_cast<std::size_t>(l.lines * blocks);
  std::ostringstream& s = ctx.source;

  const std::string key = name + "_radix_key", active = name + "_radix_active",
                    source = name + "_radix_source";
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

  for (int d = 0; d < digits; ++d) {
    const std::string shift = std::to_string(d * kDigitBits), ds = std::to_string(d);
    const bool last_pass = d + 1 == digits;
    const int sources = d + 1;  // pass d reads the buffers of launch 0 or of passes 0..d-1
    // Each block's counts of digit d: the first launch's for pass 0, where blocks still hold
    // the line's first positions; later passes count again.
    int pass_counts = -1;
    std::string count_at;
    if (d == 0) {
      count_at = "counts[((line * " + B + " + b) * " + D + ") * " + R + " + k]";
    } else {
      s << attributes << "void " << name << "_radix_count" << d << "("
        << buffer_params(U, "keys", sources)
        << "__global const int* restrict counts, __global int* restrict pass_counts) {\n"
        << prologue << "  if (!" << active << "(counts, line, " << ds << ")) return;\n"
        << "  const int src = " << source << "(counts, line, " << ds << ");\n"
        << select_buffer(U, "from", "keys", sources) << "  int count[" << R << "];\n"
        << "  for (int k = 0; k < " << R << "; ++k) count[k] = 0;\n"
        << "  for (int p = first; p < last; ++p)\n"
        << "    ++count[(int)((from[line * " << N << " + p] >> " << shift << ") & " << MASK
        << ")];\n"
        << "  for (int k = 0; k < " << R << "; ++k)\n"
        << "    pass_counts[(line * " << B << " + block) * " << R << " + k] = count[k];\n"
        << "}\n\n";
      pass_counts = ctx.add_temp(groups * kBuckets * 4);
      std::vector<int> args(keys.begin(), keys.end());
      args.push_back(counts);
      args.push_back(pass_counts);
      launch(name + "_radix_count" + ds, args, {pass_counts});
      count_at = "pass_counts[(line * " + B + " + b) * " + R + " + k]";
    }
    // The move: where each digit of this block starts, then the keys in order.
    s << attributes << "void " << name << "_radix_pass" << d << "("
      << buffer_params(U, "keys", sources) << buffer_params(P, "payload", sources)
      << "__global const int* restrict counts, "
      << (d > 0 ? "__global const int* restrict pass_counts, " : "");
    if (!last_pass) s << "__global " << U << "* restrict keys_out, ";
    s << "__global " << P << "* restrict payload_out) {\n"
      << prologue << "  if (!" << active << "(counts, line, " << ds << ")) return;\n"
      << "  const int src = " << source << "(counts, line, " << ds << ");\n"
      << select_buffer(U, "from", "keys", sources)
      << select_buffer(P, "carried", "payload", sources) << "  int next[" << R << "];\n"
      << "  int start = 0;\n"
      << "  for (int k = 0; k < " << R << "; ++k) {\n"
      << "    int total = 0, before = 0;\n"
      << "    for (int b = 0; b < " << B << "; ++b) {\n"
      << "      const int c = " << count_at << ";\n"
      << "      total += c;\n"
      << "      if (b < block) before += c;\n"
      << "    }\n"
      << "    next[k] = start + before;\n"
      << "    start += total;\n"
      << "  }\n"
      << "  for (int p = first; p < last; ++p) {\n"
      << "    const " << U << " k = from[line * " << N << " + p];\n"
      << "    const long to = line * " << N << " + next[(int)((k >> " << shift << ") & " << MASK
      << ")]++;\n";
    if (!last_pass) s << "    keys_out[to] = k;\n";
    s << "    payload_out[to] = carried[line * " << N << " + p];\n"
      << "  }\n"
      << "}\n\n";
    std::vector<int> args(keys.begin(), keys.end());
    args.insert(args.end(), payloads.begin(), payloads.end());
    args.push_back(counts);
    if (d > 0) args.push_back(pass_counts);
    std::vector<int> writes;
    if (!last_pass) {
      keys.push_back(ctx.add_temp(positions * bytes));
      args.push_back(keys.back());
      writes.push_back(keys.back());
    }
    payloads.push_back(ctx.add_temp(positions * (sort.values ? bytes : 4)));
    args.push_back(payloads.back());
    writes.push_back(payloads.back());
    launch(name + "_radix_pass" + ds, args, writes);
  }

  // The result: the first `count` payloads of each line, laid out as the operand with `count`
  // positions along the axis.
  const std::int64_t count = sort.count > 0 ? sort.count : l.n;
  SortLines out = l;
  out.n = count;
  const int sources = digits + 1;
  s << attributes << "void " << name << "(" << buffer_params(P, "payload", sources)
    << "__global const int* restrict counts, __global " << P << "* restrict y) {\n"
    << prologue << "  const int src = " << source << "(counts, line, " << D << ");\n"
    << select_buffer(P, "sorted", "payload", sources) << "  for (int p = first; p < min(last, "
    << count << "); ++p)\n"
    << "    y[" << position_of(out, "line", "(long)p") << "] = sorted[line * " << N << " + p];\n"
    << "}\n\n";
  std::vector<int> args(payloads.begin(), payloads.end());
  args.push_back(counts);
  args.push_back(ctx.buffer_of.at(group.root));
  launch(name, args, {ctx.buffer_of.at(group.root)});
}

}  // namespace weft::opencl

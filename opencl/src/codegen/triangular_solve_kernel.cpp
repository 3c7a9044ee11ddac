// triangular_solve: the solve as M X = B on vectors (b's columns on the left side, its rows on
// the right), M being op(a) (left side) or op(a)^T (right side): its elements read a directly
// or transposed, and it is lower triangular exactly when lower ^ transpose_a ^ !left_side (as
// the evaluator in core/src/primitives/linalg.cpp). Rows are visited in substitution order
// (ascending for a lower M, descending for an upper one), so that in that order M is lower.
//
// Each work-item solves a tile of neighbouring vectors of one batch entry, blocked in registers
// as the CPU dot kernel's blocks: R = 8 rows by V vectors of VW lanes (16 floats or 8 doubles,
// one AVX-512 register each; 2 x 16 vectors where there are 32 right-hand sides). Per block of 8
// rows it takes the solved rows before them off the right-hand side (a matrix product over
// everything solved so far: 8 broadcasts of M and V loads of X feed 8 x V FMAs), then
// substitutes through the 8 x 8 diagonal block in registers. The tile's solved rows, m x 32
// floats (128 KiB for m = 1024), stay in cache for the next blocks. Where fewer vectors are left
// than a tile holds, a narrower tile (VW lanes), then single vectors take them. On the right
// side the vectors are b's rows: each work-item gathers its right-hand sides, keeps the solved
// rows vector-contiguous in a scratch buffer for its products, and scatters the result. GPUs
// take single vectors (one work-item per right-hand side, 8 rows per step).
#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

constexpr int kRows = 8;  // rows of a register block

}  // namespace

void emit_triangular_solve_kernel(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(root.attrs);
  const std::size_t r = root.shape.size();
  const std::int64_t rows = root.shape[r - 2], cols = root.shape[r - 1];
  const std::int64_t m = g.node(root.inputs[0]).shape.back();
  if (num_elements(root.shape) == 0) return;
  const std::int64_t batch = num_elements(root.shape) / (rows * cols);
  const std::int64_t vectors = at.left_side ? cols : rows;
  const bool swap = at.transpose_a == at.left_side;
  const bool lower = (at.lower != at.transpose_a) != !at.left_side;
  const DType t = root.dtype;
  const int VW = ctx.caps.is_gpu                                               ? 1
                 : t == DType::F32 && ctx.caps.native_float_vector_width >= 16 ? 16
                                                                               : 8;
  const int V = VW > 1 && vectors >= 2 * VW ? 2 : 1;
  const std::int64_t W = V * VW;
  const std::int64_t wide_tiles = vectors / W;
  const bool narrow_tile = V == 2 && vectors % W >= VW;
  const std::int64_t singles = vectors - wide_tiles * W - (narrow_tile ? VW : 0);
  const std::int64_t tiles = wide_tiles + (narrow_tile ? 1 : 0) + singles;
  const std::int64_t full_rows = m - m % kRows;
  ctx.wide_vector_calls |= VW * dtype_size(t) == 64;
  const bool wide = std::max(batch * m * m, batch * rows * cols) >= (std::int64_t{1} << 30);
  const std::string I = wide ? "long" : "int", T = cl_type(t);
  auto S = [](std::int64_t v) { return std::to_string(v); };
  // Row of M at substitution step `p`.
  auto row = [&](const std::string& p) {
    return lower ? "(" + p + ")" : "(" + S(m - 1) + " - (" + p + "))";
  };
  auto M = [&](const std::string& i, const std::string& j) {
    return swap ? "A[" + j + " * " + S(m) + " + " + i + "]"
                : "A[" + i + " * " + S(m) + " + " + j + "]";
  };
  // Elements (i, c .. c + lanes) of the right-hand side and the solution in the left side's
  // layout (X: a vector's elements lie `vectors` apart).
  auto vector_type = [&](int lanes) { return lanes == 1 ? T : T + std::to_string(lanes); };
  auto load_b = [&](int lanes, const std::string& i, const std::string& c) {
    if (at.left_side)
      return lanes == 1 ? "B[" + i + " * " + S(cols) + " + " + c + "]"
                        : "vload" + std::to_string(lanes) + "(0, B + " + i + " * " + S(cols) +
                              " + " + c + ")";
    // Gathered through a private array in a loop: unrolled, the gathers of a block were most of
    // its code (and of its compile time).
    if (lanes == 1) return "B[(" + c + ") * " + S(cols) + " + " + i + "]";
    return name + "_gather" + std::to_string(lanes) + "(B, " + i + ", " + c + ")";
  };
  auto load_x = [&](int lanes, const std::string& i, const std::string& c) {
    return lanes == 1 ? "X[" + i + " * " + S(vectors) + " + " + c + "]"
                      : "vload" + std::to_string(lanes) + "(0, X + " + i + " * " + S(vectors) +
                            " + " + c + ")";
  };

  std::ostringstream& s = ctx.source;
  if (!at.left_side && VW > 1) {
    // Right side: element i of `lanes` vectors from c on, which are rows of b and y.
    const std::string TV = vector_type(VW), N = std::to_string(VW);
    s << "static inline " << TV << " " << name << "_gather" << N << "(__global const " << T
      << "* B, " << I << " i, " << I << " c) {\n"
      << "  " << T << " v[" << N << "];\n"
      << "  for (int l = 0; l < " << N << "; ++l) v[l] = B[(c + l) * " << S(cols) << " + i];\n"
      << "  return vload" << N << "(0, v);\n}\n"
      << "static inline void " << name << "_scatter" << N << "(__global " << T << "* Y, " << I
      << " i, " << I << " c, " << TV << " x) {\n"
      << "  " << T << " v[" << N << "];\n"
      << "  vstore" << N << "(x, 0, v);\n"
      << "  for (int l = 0; l < " << N << "; ++l) Y[(c + l) * " << S(cols) << " + i] = v[l];\n}\n";
  }
  s << "__kernel void " << name << "(__global const " << T << "* restrict a, __global const " << T
    << "* restrict b, __global " << T << "* restrict y"
    << (at.left_side ? "" : ", __global " + T + "* restrict xs") << ") {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << S(batch * tiles) << ") return;\n"
    << "  const " << I << " entry = gid / " << S(tiles) << ", tile = gid % " << S(tiles) << ";\n"
    << "  __global const " << T << "* A = a + entry * " << S(m * m) << ";\n"
    << "  __global const " << T << "* B = b + entry * " << S(rows * cols) << ";\n"
    << "  __global " << T << "* Y = y + entry * " << S(rows * cols) << ";\n"
    << "  __global " << T << "* X = " << (at.left_side ? "Y" : "xs + entry * " + S(m * vectors))
    << ";\n";
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };
  // The rows p0 .. p0 + R - 1 (in substitution order) of the tile at vector c0 with `vecs`
  // vectors of `lanes` lanes.
  auto row_block = [&](const std::string& indent, int R, int vecs, int lanes) {
    const std::string TV = vector_type(lanes);
    for (int i = 0; i < R; ++i)
      s << indent << "const " << I << " i" << i << " = " << row("p0 + " + S(i)) << ";\n";
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < vecs; ++v)
        s << indent << TV << " " << acc(i, v) << " = "
          << load_b(lanes, "i" + S(i), "c0 + " + S(v * lanes)) << ";\n";
    // The solved rows before the block, off the right-hand side.
    s << indent << "for (" << I << " q = 0; q < p0; ++q) {\n"
      << indent << "  const " << I << " iq = " << row("q") << ";\n";
    for (int v = 0; v < vecs; ++v)
      s << indent << "  const " << TV << " x" << v << " = "
        << load_x(lanes, "iq", "c0 + " + S(v * lanes)) << ";\n";
    for (int i = 0; i < R; ++i) {
      s << indent << "  { const " << TV << " m = (" << TV << ")(-" << M("i" + S(i), "iq") << ");";
      for (int v = 0; v < vecs; ++v)
        s << " " << acc(i, v) << " = fma(m, x" << v << ", " << acc(i, v) << ");";
      s << " }\n";
    }
    s << indent << "}\n";
    // Substitution through the diagonal block.
    for (int i = 0; i < R; ++i) {
      for (int k = 0; k < i; ++k) {
        s << indent << "{ const " << TV << " m = (" << TV << ")(-" << M("i" + S(i), "i" + S(k))
          << ");";
        for (int v = 0; v < vecs; ++v)
          s << " " << acc(i, v) << " = fma(m, " << acc(k, v) << ", " << acc(i, v) << ");";
        s << " }\n";
      }
      if (!at.unit_diagonal) {
        s << indent << "{ const " << TV << " d = (" << TV << ")(" << M("i" + S(i), "i" + S(i))
          << ");";
        for (int v = 0; v < vecs; ++v) s << " " << acc(i, v) << " /= d;";
        s << " }\n";
      }
    }
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < vecs; ++v) {
        const std::string c = "c0 + " + S(v * lanes), x_at = "i" + S(i) + " * " + S(vectors);
        s << indent
          << (lanes == 1 ? "X[" + x_at + " + " + c + "] = " + acc(i, v) + ";\n"
                         : "vstore" + std::to_string(lanes) + "(" + acc(i, v) + ", 0, X + " + x_at +
                               " + " + c + ");\n");
        if (!at.left_side)
          s << indent
            << (lanes == 1 ? "Y[(" + c + ") * " + S(cols) + " + i" + S(i) + "] = " + acc(i, v)
                           : name + "_scatter" + std::to_string(lanes) + "(Y, i" + S(i) + ", " + c +
                                 ", " + acc(i, v) + ")")
            << ";\n";
      }
  };
  auto tile_solve = [&](int vecs, int lanes) {
    if (full_rows > 0) {
      s << "    for (" << I << " p0 = 0; p0 < " << S(full_rows) << "; p0 += " << kRows << ") {\n";
      row_block("      ", kRows, vecs, lanes);
      s << "    }\n";
    }
    if (m % kRows != 0) {
      s << "    {\n      const " << I << " p0 = " << S(full_rows) << ";\n";
      row_block("      ", static_cast<int>(m % kRows), vecs, lanes);
      s << "    }\n";
    }
  };
  const char* branch = "  ";
  if (wide_tiles > 0) {
    s << branch << "if (tile < " << S(wide_tiles) << ") {\n"
      << "    const " << I << " c0 = tile * " << S(W) << ";\n";
    tile_solve(V, VW);
    s << "  }";
    branch = " else ";
  }
  if (narrow_tile) {
    s << branch << "if (tile == " << S(wide_tiles) << ") {\n"
      << "    const " << I << " c0 = " << S(wide_tiles * W) << ";\n";
    tile_solve(1, VW);
    s << "  }";
    branch = " else ";
  }
  if (singles > 0) {
    s << branch << "{\n"
      << "    const " << I << " c0 = " << S(vectors - singles) << " + tile - " << S(tiles - singles)
      << ";\n";
    tile_solve(1, 1);
    s << "  }";
  }
  s << "\n}\n\n";

  const int out = ctx.buffer_of.at(group.root);
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]), out};
  launch.writes = {out};
  if (!at.left_side) {
    const int scratch = ctx.add_temp(static_cast<std::size_t>(batch * m * vectors) * dtype_size(t));
    launch.args.push_back(scratch);
    launch.writes.push_back(scratch);
  }
  size_blocked_launch(ctx, launch, batch * tiles);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl

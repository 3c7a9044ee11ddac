// What the CPU convolution kernels (conv_blocked_kernel.cpp, conv_long_window_kernel.cpp) share:
// they apply to f32 convolutions without feature or batch groups and without lhs dilation, with a
// non-empty result, and keep W = V x VW output features of each output row in registers (two
// vectors where the features fill pairs of them). Where the features do not fill whole vectors
// (an RGB output's 3), VW is the narrowest of 4, 8 and the register width that holds them, or
// the register width with the last block partly padding; `whole_vectors` says which. Each kernel
// then checks which axes must be innermost for its own loops.
#pragma once

#include <optional>
#include <vector>

#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"
#include "weft/shape.h"

namespace weft::opencl {

struct CpuConvBlocking {
  ConvAttrs attrs;
  std::size_t spatial = 0;               // spatial axes
  std::vector<std::int64_t> ls, rs, os;  // row-major strides of lhs, rhs and the result
  int VW = 8;                            // floats per vector
  int V = 1;                             // vectors per block row
  std::int64_t O = 0;                    // output features
  std::int64_t W = 0;                    // features per block: V x VW
  bool whole_vectors = true;             // O is a multiple of W
};

inline std::optional<CpuConvBlocking> cpu_conv_blocking(const KernelContext& ctx,
                                                        const Node& root) {
  const Graph& g = ctx.graph();
  CpuConvBlocking b;
  b.attrs = ConvAttrs::read(root.attrs);
  const ConvAttrs& a = b.attrs;
  b.spatial = a.spatial_rank();
  if (ctx.caps.is_gpu || root.dtype != DType::F32 || b.spatial == 0) return std::nullopt;
  if (a.feature_group_count != 1 || a.batch_group_count != 1) return std::nullopt;
  for (std::int64_t d : a.lhs_dilation)
    if (d != 1) return std::nullopt;
  b.ls = row_major_strides(g.node(root.inputs[0]).shape);
  b.rs = row_major_strides(g.node(root.inputs[1]).shape);
  b.os = row_major_strides(root.shape);
  b.VW = ctx.caps.native_float_vector_width >= 16 ? 16 : 8;
  b.O = root.shape[a.out_spec[1]];
  if (b.O == 0 || num_elements(root.shape) == 0) return std::nullopt;
  if (b.O < b.VW) b.VW = b.O <= 4 ? 4 : 8;
  b.V = b.O % (2 * b.VW) == 0 ? 2 : 1;
  b.W = b.V * b.VW;
  b.whole_vectors = b.O % b.W == 0;
  return b;
}

}  // namespace weft::opencl

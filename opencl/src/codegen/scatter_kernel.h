// The kernels of the scatters (OpInfo::own_kernel). scatter_add/mul/min/max on CPUs, where the
// updates outnumber the result's elements several times over (a segment sum): a few work-groups
// each fold a contiguous share of the updates into a private copy of the result, which one pass
// then merges with the operand (fixed order: the same sums on every run on one device; integers
// exactly the interpreter's). Otherwise, for f32, i32 and u32, the operand is copied into the
// result and one work-item per update element combines it into its target with an atomic
// operation (compare-and-swap loops on the bits for floats, OpenCL 1.2 having no float atomics).
// Otherwise, deterministically, one work-item per result element folds every update that lands
// on it in update order: always for scatter (replace: the last update wins, as the interpreter
// and the jvp rule assume), bool, f16 and bf16 (which round after each combine, as the
// interpreter does, so that only its order gives its sums), and for every scatter when
// DeviceCaps::deterministic_scatter (WEFT_DETERMINISTIC_SCATTER=1).
#pragma once

#include <string>

#include "codegen/kernel_context.h"

namespace weft::opencl {

void emit_scatter_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);

// `acc` combined with update `u` as scatter op `op` does, in dtype `t` (scatter replaces).
std::string scatter_combined(OpKind op, DType t, const std::string& acc, const std::string& u);

}  // namespace weft::opencl

// Row phases: the code a CPU work-item runs for one row `row` of f32[..., C] on behalf of one
// fusion group: a row reduction (16 lanes at a time), a row loop (16 lanes at a time) or a
// per-row value (one element). A kernel of its own runs one phase; a row-chain kernel runs the
// phases of several consecutive groups one after another for the same row, so a softmax or a
// layer norm is one launch whose later phases read what the earlier ones wrote while it is in
// L1 (row_chain_kernel.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel_context.h"

namespace weft::opencl {

// 16 lanes: transcendentals are compute-bound on CPUs and 16 beats PoCL's preferred 8 there.
inline constexpr int kRowLanes = 16;

// What a phase's buffers are called in the kernel that holds it.
struct PhaseArgs {
  std::function<std::string(ValueId)> input;  // a group input's argument
  std::vector<std::string> side;              // per side output of the group
  std::string out;                            // the group root's buffer
};

// a0, a1, ... for the inputs, side0, ... and out: a kernel of one group.
PhaseArgs positional_args(const FusionGroup& group);

// An f32 sum, max or min over the innermost axis alone, of at least 4 vectors, whose operand
// lane mode computes.
bool row_reduce_phase_fits(const KernelContext& ctx, const FusionGroup& group);
// Folds row `row` of the reduction's operand and stores the result at out[row].
std::string row_reduce_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                             const std::string& index_type);

// An f32 loop group of rank >= 2 with rows at least two vectors long that lane mode computes.
bool row_loop_phase_fits(const KernelContext& ctx, const FusionGroup& group);
// Computes and stores row `row` of the group's root: whole vectors, then the remainder.
std::string row_loop_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                           const std::string& index_type);

// Computes and stores element `row` of an f32 loop group with one element per row.
std::string per_row_phase(KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                          const std::string& index_type);

// An emitter that names the group's inputs and side outputs as `args` says.
ExprEmitter phase_emitter(const KernelContext& ctx, const FusionGroup& group, const PhaseArgs& args,
                          const std::string& index_type);

}  // namespace weft::opencl

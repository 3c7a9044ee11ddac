// Shared state while turning one block of a schedule into a BlockPlan: which buffer holds
// each node, the program source being written (shared by all blocks), and the steps so far.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "codegen/expr_emitter.h"
#include "weft/compile/fusion.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl {

// What all blocks of one program share.
struct ProgramContext {
  explicit ProgramContext(const DeviceCaps& device_caps) : caps(device_caps) {}
  const DeviceCaps& caps;
  std::ostringstream source;  // the kernels; plan_program writes the header above them
  // Set by kernels that pass vectors wider than 256 bits (float16, double8, long8) to builtin
  // functions, which clang reports under -Wpsabi on CPUs without AVX-512.
  bool wide_vector_calls = false;
  MathFunctions math;  // weft's f32 functions the kernels call (unless caps.builtin_math)
  std::vector<KernelSummary> kernels;  // one per fused kernel, in launch order
};

struct KernelContext {
  const FusionPlan& fusion;
  const DeviceCaps& caps;
  BlockPlan& block;
  ProgramContext& program;
  std::ostringstream& source;
  bool& wide_vector_calls;
  std::map<ValueId, int> buffer_of;  // node -> BufferPlan index
  int summary = -1;                  // the kernel being emitted (index into program.kernels)

  KernelContext(const FusionPlan& f, BlockPlan& b, ProgramContext& p)
      : fusion(f),
        caps(p.caps),
        block(b),
        program(p),
        source(p.source),
        wide_vector_calls(p.wide_vector_calls) {}

  const Graph& graph() const { return fusion.graph; }
  int add_temp(std::size_t bytes) {
    block.buffers.push_back({BufferPlan::Role::Temp, 0, bytes});
    return static_cast<int>(block.buffers.size()) - 1;
  }
  void add_launch(LaunchPlan launch) {
    launch.summary = summary;
    block.steps.push_back(StepPlan::of(std::move(launch)));
  }
};

// "int" when every index of the group fits in 31 bits, else "long".
std::string index_type_for(const KernelContext& ctx, const FusionGroup& group);
// "__global const float* restrict a0, ..." for the group's input buffers; fills `args`.
std::string input_params(const KernelContext& ctx, const FusionGroup& group,
                         std::vector<int>& args);
std::size_t round_up(std::size_t n, std::size_t multiple);
// The local and global sizes of a CPU register-blocked kernel's `work_items` (dots,
// convolutions): work-groups of up to 16, fewer where that leaves a CPU thread without two groups
// to run (an MLP's last dot has 8 blocks; in one group of 16 one core did all of them).
void size_blocked_launch(const KernelContext& ctx, LaunchPlan& launch, std::int64_t work_items);
// The sizes of one launch of a kernel that a blocked factorization launches once per step,
// with heavy work-items (a tile, a group of rows): on CPUs `cpu_local` work-items per group
// whatever the step (PoCL builds a kernel's code per local size, and small groups keep both
// cores busy as the steps' launches shrink); elsewhere the driver's choice.
void size_step_launch(const KernelContext& ctx, LaunchPlan& launch, std::int64_t work_items,
                      std::size_t cpu_local);
// An emitter that reads the group's input buffers as kernel arguments a0, a1, ... (and
// stores its side outputs into side0, ...): phase_emitter with positional_args.
ExprEmitter group_emitter(const KernelContext& ctx, const FusionGroup& group,
                          const std::string& index_type);

// The members and inputs of `group` whose values depend on an input that `is_source` accepts
// (members are in node order, so one pass finds them).
std::set<ValueId> values_reaching(const Graph& g, const FusionGroup& group,
                                  const std::function<bool(ValueId)>& is_source);

// How many copies of the fused producers' code a reduction kernel holds on this device (an
// upper bound: unrolled loops and their remainder loop), for the planner's size limit.
int reduction_body_copies(const DeviceCaps& caps);

void emit_loop_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
void emit_reduce_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
// The loop group `epilogue` (the kernel step right after `dot`'s) runs inside the dot kernel,
// on each block of the dot's result before it is stored: an MLP layer's bias and activation
// (dot_kernel.cpp; CPU devices, f32).
bool dot_epilogue_fits(const KernelContext& ctx, const FusionGroup& dot,
                       const FusionGroup& epilogue);
void emit_dot_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                     const FusionGroup* epilogue = nullptr);
// How many consecutive kernel steps of a block, from the one whose group is group_at(0) on,
// one row-chain kernel runs (row_chain_kernel.cpp); below 2, none. group_at(i) is the group of
// the i-th kernel step from there, null past the last consecutive one.
std::size_t row_chain_length(const KernelContext& ctx,
                             const std::function<const FusionGroup*(std::size_t)>& group_at);
void emit_row_chain_kernel(KernelContext& ctx, const std::vector<const FusionGroup*>& groups,
                           const std::string& name);
// Own kernels (lowering.h, OwnKernelEmitter).
// `a` combined with `b` as an expression of dtype `t`: an associative operation (a scan's).
using ScanCombine = std::string (*)(DType t, const std::string& a, const std::string& b);
// The cumulative op at `group`'s root as a parallel scan along its axis (scan_kernel.cpp).
void emit_scan_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                      ScanCombine combine);
// What a sort kernel computes along `axis` of its operands (the keys, compared in turn): the
// first `count` (0: all) sorted positions of each line, ascending (NaN last) or descending
// (NaN first, -NaN last), as the first key's values or as i32 positions (sort_kernel.cpp).
struct SortKernel {
  std::int64_t axis = 0;
  bool descending = false;
  bool values = true;
  std::int64_t count = 0;
};
void emit_sort_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                      const SortKernel& sort);
// Whether the sort at `group`'s root (lines of `n` positions) runs as the LSD radix sort below
// rather than as bitonic chunks and merges: one key, a CPU device, lines long enough
// (radix_sort_kernel.cpp).
bool radix_sort_fits(const KernelContext& ctx, const FusionGroup& group, std::int64_t n);
// The same result as emit_sort_kernel, by an LSD radix sort of order-preserving key bits.
void emit_radix_sort_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                            const SortKernel& sort);
// The OpenCL C condition "`x` comes before `y`" in sort's order (ascending: NaN last, -0.0 tied
// with 0.0; descending: NaN first, -NaN last) for values of type cl_type(t).
std::string sort_before(DType t, bool descending, const std::string& x, const std::string& y);
// top_k of one key along the last axis without a full sort: the largest `k` of each line, for
// k <= kTopKPrivateMax (top_k_kernel.cpp). `values` false writes their positions.
inline constexpr std::int64_t kTopKPrivateMax = 128;
void emit_top_k_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name,
                       std::int64_t k, bool values);
// conv_general_dilated at `group`'s root as a direct convolution (conv_kernel.cpp).
void emit_conv_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
// The same on CPUs as an implicit matrix product blocked in registers, where it applies (f32,
// no groups or lhs dilation, features innermost); false, emitting nothing, where it does not
// (conv_blocked_kernel.cpp).
bool emit_conv_blocked_kernel(KernelContext& ctx, const FusionGroup& group,
                              const std::string& name);
// The same for long windows and small outputs (filter gradients): blocks of batch entries by
// features, the window split into cache-sized ranges (conv_long_window_kernel.cpp).
bool emit_conv_long_window_kernel(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name);
// The windowed reduction or select_and_gather_add at `group`'s root, one work-item per result
// element (window_kernel.cpp); select_and_scatter_add, each window's choice, then one work-item
// per operand element gathering from the windows that chose it, no atomics
// (select_scatter_kernel.cpp).
void emit_window_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
void emit_select_scatter_kernel(KernelContext& ctx, const FusionGroup& group,
                                const std::string& name);
// Linear algebra, each blocked and right-looking in launches per block column whose step lives
// on the device. The cholesky at `group`'s root: diagonal block, panel solve, register-blocked
// SYRK of the trailing triangle (cholesky_kernel.cpp).
void emit_cholesky_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
// The triangular_solve at `group`'s root: each work-item substitutes a tile of right-hand sides
// through the triangle in register blocks of 8 rows (triangular_solve_kernel.cpp).
void emit_triangular_solve_kernel(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name);
// lu, lu_pivots or lu_permutation at `group`'s root: panel with partial pivoting, row swaps and
// the unit-lower solve, register-blocked GEMM of the trailing matrix (lu_kernel.cpp).
void emit_lu_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
// eigh_vectors or eigh_values at `group`'s root: one work-group per matrix, parallel cyclic
// Jacobi (eigh_kernel.cpp).
void emit_eigh_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name);
// A LoopKernel step: the scan node `scan` of the block's graph, its carries' Result nodes
// already holding buffers (loop_in_kernel.cpp).
void emit_loop_in_kernel(KernelContext& ctx, ValueId scan, const std::string& name);

}  // namespace weft::opencl

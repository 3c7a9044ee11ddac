// Fusion planning: partitions a graph into kernels. Elementwise ops, broadcasts, iota,
// select, converts and layout ops fuse into their consumer (each kernel computes its output
// element by element and pulls operands through index arithmetic); reductions fuse their
// producers; dot_general is its own kernel. Buffers exist only at group boundaries.
#pragma once

#include <string>
#include <vector>

#include "weft/ir/graph.h"

namespace weft {

// The largest fused group, in kernel_size_weight units; a larger one is cut and the cut point
// materialised into an intermediate buffer. On PoCL (3.1, LLVM 15, bench_large_program) the
// time to compile a loop kernel grows linearly up to about 3,000 cheap elementwise ops (0.2 ms
// per op at its first run) and superlinearly past that (a 4,000-op kernel takes 2.5x as long
// as a 3,000-op one); 16-wide vector kernels with ~500 math-library calls overflow the
// 8 MiB stack of PoCL's worker threads (each call's vector argument is a 16 KiB work-group
// context array); scalar math calls cost ~50 ms each and turn superlinear past ~400. Every
// kernel also costs ~0.1 s of fixed work-group compilation, so the limit is as large as
// stays clear of both: 1,024 cheap ops, or 128 math-library calls.
inline constexpr int kMaxKernelOps = 1024;
// A producer read at several different indices in one kernel (through slices, pads, ...) is
// emitted once per index: the code a kernel emits, so counted, stays within this many times
// kMaxKernelOps.
inline constexpr int kMaxInlinedFactor = 4;
// The weight of a call into the device's math library (exp, sin, pow, ...).
inline constexpr int kMathCallWeight = 8;

// What a node adds to a kernel's size: 0 for constants and broadcasts of scalars (literals
// in the code), kMathCallWeight for math-library calls, 1 for everything else.
int kernel_size_weight(const Graph& graph, const Node& node);

struct FusionGroup {
  // Own: an op whose definition says it runs in a kernel of its own (OpInfo::own_kernel), its
  // operands in buffers; its members are the op alone.
  enum class Kind { Loop, Reduce, Dot, Own };
  static const char* kind_name(Kind kind);  // "loop", "reduce", "dot", "own"
  Kind kind = Kind::Loop;
  ValueId root = -1;             // the node the kernel writes to its buffer
  std::vector<ValueId> members;  // nodes computed inside the kernel, topological, root last
  std::vector<ValueId> inputs;   // buffers read: parameters or roots of earlier groups
  // Members the kernel also writes to buffers of their own, for later kernels to read instead
  // of computing them again (multi-output fusion: a reduction's costly producer, such as
  // softmax's exp, shared with the elementwise kernel after it). Reduce groups, and Own groups
  // whose root shares its kernel with ops of its own_kernel_family (OpInfo) on the same
  // operands (lu's pivots and permutation); those follow the root in `members`.
  std::vector<ValueId> side_outputs;
  // kernel_size_weight summed over the members (times reduction_body_copies for reductions)
  int size = 0;
  // Why the root has a buffer of its own instead of fusing into its users, e.g. "it is a
  // graph output" or "fusing it into ... would make a kernel larger than 1024 (the kernel
  // size limit, kMaxKernelOps)".
  std::string why_buffer;
};

struct FusionPlan {
  Graph graph;                      // the optimised graph the groups refer to
  std::vector<FusionGroup> groups;  // in dependency order
  std::vector<bool> has_buffer;     // per node: a parameter, a group root or side output, an alias
  // Per node: the node whose buffer it shares (a row-major reshape of a buffer is a view, not
  // a copy), or -1.
  std::vector<ValueId> alias_of;
};

// Removes nodes that no output depends on; effects (and control ops whose regions have them)
// are never removed, a pure host_call whose results are unused is.
Graph eliminate_dead_code(const Graph& graph);

// Rewrites every dot_general into the canonical batched form [B,M,K] x [B,K,N] -> [B,M,N]
// (lhs_batch=rhs_batch=[0], lhs_contracting=[2], rhs_contracting=[1]) surrounded by
// transposes and reshapes, so codegen needs only one dot kernel. An f32/f64/integer lhs
// stored [B,K,M] (X^T dY, a weight's gradient) stays so (lhs_contracting=[1]), or else an rhs
// stored [B,N,K] (dY W^T; rhs_contracting=[2]): the kernels read it transposed rather than
// after a transposed copy.
Graph canonicalize_dots(const Graph& graph);
bool is_canonical_dot(const Node& node);
// Whether a canonical dot reads its lhs stored [B,K,M], its rhs stored [B,N,K].
bool canonical_dot_lhs_transposed(const Node& node);
bool canonical_dot_rhs_transposed(const Node& node);

// Moves work a while or scan body repeats in every iteration on values the loop never changes
// (closed-over values, carries returned unchanged) before the loop, as closed-over operands
// (compile/loop_invariant_motion.cpp says what moves).
Graph hoist_loop_invariants(const Graph& graph);

struct FusionOptions {
  // A fused group weighing more than this is cut (see kMaxKernelOps); 0 lifts the limit,
  // which benchmarks use to measure one large kernel.
  int max_kernel_ops = kMaxKernelOps;
  // How many copies of its fused producers' code a reduction kernel holds (code generators
  // unroll reduction loops); a reduction group's weight is multiplied by it. Set by the code
  // generator for its device.
  int reduction_body_copies = 1;
  // A static loop whose every carry element evolves on its own (see
  // ScheduleStep::Kind::LoopKernel) becomes one kernel that iterates inside; false keeps
  // one launch per iteration (benchmarks and tests compare the two).
  bool loops_in_one_kernel = true;
};

// The lowering pipeline (weft/compile/pipeline.h) from DCE to fusion, for inspecting the
// function's groups: DCE, dot canonicalisation, then grouping. Control nodes are steps of
// their own: their operands are buffers and their results are read like parameters.
FusionPlan plan_fusion(const Graph& graph, const FusionOptions& options = {});
// Grouping alone, for a graph that has been through DCE and dot canonicalisation: the
// pipeline's fusion pass runs it on the function's graph and on every region.
FusionPlan plan_fusion_of_optimized(Graph graph, const FusionOptions& options = {});

}  // namespace weft

// Lowering a graph to a device-neutral schedule: the passes (dead-code elimination, dot
// canonicalisation, fusion of each graph and region, then ordering the steps) run in the
// sequence weft/compile/pipeline.h lists, and yield steps. A kernel step runs one fusion group; a
// control step runs the blocks of its regions (a loop with a trip count known when compiling, a
// while loop whose predicate is computed on the device, a conditional); a host step sends buffers
// to the host and runs a print or a callback there; a join step waits for tokens. Effects stay in
// program order because thread_effect_tokens (tokens.h) made their order a data dependency: steps
// are ordered by data only, and pure work that does not depend on a host step may run beside it.
// Code generators turn each block into kernels and runtimes walk the steps.
#pragma once

#include <vector>

#include "weft/compile/fusion.h"
#include "weft/ir/graph.h"

namespace weft {

struct ScheduleBlock;

struct ScheduleStep {
  enum class Kind {
    Kernel,  // runs fusion.groups[group]
    Loop,    // a scan: runs regions[0] `length` times, no host round trip per iteration
    // A scan without xs or ys whose body is elementwise on its carries' shape (scalars
    // broadcast): one kernel in which each work-item runs the body `length` times on its
    // element, the carries in registers. regions[0] is still lowered, for inspection.
    LoopKernel,
    While,  // runs regions[0] (the predicate), then regions[1] while it holds
    Cond,   // runs the region its index selects
    Host,   // a debug_print or host_call node: its operands go to the host, its results back
    Join,   // an after_all node: a token ready once its operand tokens are
  };
  Kind kind = Kind::Kernel;
  int group = -1;     // Kernel
  ValueId node = -1;  // control, host and join steps: the node in the block's graph
  std::vector<ScheduleBlock> regions;
};

// One graph (the function, or a region) with its kernels and steps.
struct ScheduleBlock {
  FusionPlan fusion;  // the optimised graph, its fusion groups and which values have buffers
  std::vector<ScheduleStep> steps;  // in an order that respects data dependencies
};

// The passes from dead-code elimination to the schedule (lower() in weft/compile/pipeline.h,
// from Pass::DeadCode to Pass::Schedule). Throws InvalidGraphError when the graph does not
// verify, or has effects whose tokens are not threaded (effects_are_threaded).
ScheduleBlock lower_to_schedule(const Graph& graph, const FusionOptions& options = {});

// The fusion pass: plan_fusion_of_optimized for `graph` (after DCE and dot canonicalisation)
// and every region, each region's block in the control step of its node; the block's other
// steps are left to order_steps.
ScheduleBlock fuse_blocks(Graph graph, const FusionOptions& options);
// The schedule pass: adds each block's kernel, host and join steps and puts all its steps in
// node order, which data dependencies allow.
void order_steps(ScheduleBlock& block);

// Whether a scan node runs as a LoopKernel step: no xs, no ys, every carry of one shape,
// captured values of that shape or scalar, and a body of at most `max_body_ops` ops (0: no
// limit), each elementwise, a constant, an iota or a broadcast of a scalar.
bool is_elementwise_loop(const Node& scan, int max_body_ops);

// Number of kernel steps in the block and all its regions (a LoopKernel step counts once).
int count_kernel_steps(const ScheduleBlock& block);

// "kernel", "loop", "loop-kernel", "while", "cond", "host", "join"
const char* step_kind_name(ScheduleStep::Kind kind);

}  // namespace weft

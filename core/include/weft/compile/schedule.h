// Lowering a graph to a device-neutral schedule: the passes run in one visible sequence
// (dead-code elimination, dot canonicalisation, then fusion of each graph and region) and
// yield steps. A kernel step runs one fusion group; a control step runs the blocks of its
// regions (a loop with a trip count known when compiling, a while loop whose predicate is
// computed on the device, a conditional). Code generators turn each block into kernels and
// runtimes walk the steps. Host steps and token edges (ordered effects) will be further kinds.
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
    While,   // runs regions[0] (the predicate), then regions[1] while it holds
    Cond,    // runs the region its index selects
  };
  Kind kind = Kind::Kernel;
  int group = -1;     // Kernel
  ValueId node = -1;  // control steps: the control node in the block's graph
  std::vector<ScheduleBlock> regions;
};

// One graph (the function, or a region) with its kernels and steps.
struct ScheduleBlock {
  FusionPlan fusion;  // the optimised graph, its fusion groups and which values have buffers
  std::vector<ScheduleStep> steps;  // in an order that respects data dependencies
};

// The passes, in order: eliminate_dead_code, canonicalize_dots (both recurse into regions),
// then plan_fusion_of_optimized for the graph and for every region. Throws
// InvalidGraphError when the graph does not verify.
ScheduleBlock lower_to_schedule(const Graph& graph, const FusionOptions& options = {});

// Number of kernel steps in the block and all its regions.
int count_kernel_steps(const ScheduleBlock& block);

const char* step_kind_name(ScheduleStep::Kind kind);  // "kernel", "loop", "while", "cond"

}  // namespace weft

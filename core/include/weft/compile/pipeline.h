// The lowering pipeline: every pass from a traced graph to a device's program, in the order
// they run, in one function (lower). jit, eager ops, `weft run` and Lowered run its first passes
// (up to effect tokens: the graph a device compiles and its executable cache is keyed by); a
// device's compile runs the rest, ending in its code generator. Each pass runs once.
//
// WEFT_DUMP_IR=DIR writes the IR after each pass into DIR/<function>-<n>/, one numbered file per
// pass (01-traced.txt ... 06-schedule.txt, then the program source, e.g. 07-opencl.cl); see
// docs/ir-text.md#the-lowering-pipeline-and-weft_dump_ir.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "weft/compile/fusion.h"
#include "weft/compile/schedule.h"
#include "weft/compile/tokens.h"
#include "weft/ir/graph.h"

namespace weft {

namespace detail {
class IrDumpDirectory;
}

// The passes, in the order they run; a dump file is numbered by its pass's place here.
enum class Pass {
  Traced,          // no work: the graph as traced or read, dumped as it arrives
  EffectTokens,    // thread_effect_tokens: effect order becomes a data dependency
  DeadCode,        // eliminate_dead_code (the function and every region)
  CanonicalDots,   // canonicalize_dots: every dot_general in the one form codegen knows
  LoopInvariants,  // hoist_loop_invariants: loop bodies' invariant work moves before the loop
  Fusion,          // plan_fusion_of_optimized for the function's graph and every region
  Schedule,        // the steps of each block, in an order data dependencies allow
  CodeGeneration,  // the device's code generator turns the schedule into its program
};

// "traced", "effect-tokens", "dce", "canonical-dots", "loop-invariants", "fusion", "schedule",
// "codegen"
const char* pass_name(Pass pass);
// 1-based place of the pass in the pipeline: the number of its dump file.
int pass_number(Pass pass);

// The last pass, a device's: turns the schedule into its program (kept by the caller) and
// returns the program's source text, dumped as NN-<name>.<extension>.
struct CodeGenerator {
  std::string name;       // "opencl"
  std::string extension;  // "cl"
  std::function<std::string(const ScheduleBlock&)> generate;
};

struct PipelineOptions {
  Pass first = Pass::Traced;
  Pass last = Pass::CodeGeneration;
  FusionOptions fusion = {};
  // Required when the pipeline runs up to CodeGeneration; stops after Schedule otherwise.
  const CodeGenerator* code_generator = nullptr;
  // IR text a program reads (`weft run`) may already be the lowered form: a graph without
  // effects, or whose effects are threaded, then keeps its form. Traced graphs never have
  // tokens and are always threaded.
  bool may_be_threaded = false;
};

struct Lowering {
  // The graph after the last graph-rewriting pass that ran (traced, threaded or optimised).
  Graph graph;
  TokenSignature tokens;   // from EffectTokens: the runtime and output tokens it added
  ScheduleBlock schedule;  // from Fusion and Schedule
  // Where this function's IR is dumped (null without WEFT_DUMP_IR). A lower() that stops after
  // EffectTokens leaves it to the next lower() on this thread of a graph of the same name that
  // starts after EffectTokens (the device's compile of what jit, an eager op or `weft run` just
  // lowered), so one function's files stay in one directory.
  std::shared_ptr<detail::IrDumpDirectory> dump;
};

// Runs the passes from options.first to options.last on `graph`. Throws InvalidGraphError when
// the graph does not verify, or when a pass from DeadCode on meets effects whose tokens are not
// threaded (effects_are_threaded).
Lowering lower(const Graph& graph, const PipelineOptions& options);

}  // namespace weft

#include "weft/compile/pipeline.h"

#include <utility>

#include "compile/ir_dump.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/text.h"

namespace weft {
namespace {

// The dump directory of the last lower() on this thread that stopped after EffectTokens, for
// the device's compile that follows it.
thread_local std::shared_ptr<detail::IrDumpDirectory> t_continued_dump;

std::shared_ptr<detail::IrDumpDirectory> dump_for(const Graph& graph, Pass first) {
  if (first > Pass::EffectTokens && t_continued_dump && t_continued_dump->function() == graph.name)
    return std::exchange(t_continued_dump, nullptr);
  return detail::IrDumpDirectory::open(graph.name);
}

// What the passes from DeadCode on require of their input.
void check_lowerable(const Graph& graph) {
  verify(graph);
  if (!effects_are_threaded(graph))
    throw InvalidGraphError("graph '" + graph.name + "' has effects (" +
                            describe_effects(graph_effects(graph)) +
                            ") whose tokens are not threaded; compile the graph that "
                            "thread_effect_tokens returns (jit does)");
}

}  // namespace

const char* pass_name(Pass pass) {
  switch (pass) {
    case Pass::Traced:
      return "traced";
    case Pass::EffectTokens:
      return "effect-tokens";
    case Pass::DeadCode:
      return "dce";
    case Pass::CanonicalDots:
      return "canonical-dots";
    case Pass::LoopInvariants:
      return "loop-invariants";
    case Pass::Fusion:
      return "fusion";
    case Pass::Schedule:
      return "schedule";
    case Pass::CodeGeneration:
      return "codegen";
  }
  return "?";
}

int pass_number(Pass pass) {
  return static_cast<int>(pass) + 1;
}

Lowering lower(const Graph& graph, const PipelineOptions& options) {
  const auto runs = [&](Pass pass) { return options.first <= pass && pass <= options.last; };
  Lowering out;
  out.dump = dump_for(graph, options.first);
  // The text after a pass, into its numbered file; nothing is printed without a dump.
  const auto dump = [&](Pass pass, const auto& text_of) {
    if (out.dump) out.dump->write(pass_number(pass), pass_name(pass), "txt", text_of());
  };
  const Graph* current = &graph;
  const auto dump_graph = [&](Pass pass) { dump(pass, [&] { return print_graph(*current); }); };

  if (runs(Pass::Traced)) dump_graph(Pass::Traced);

  if (runs(Pass::EffectTokens)) {
    if (options.may_be_threaded && (graph_effects(graph).empty() || effects_are_threaded(graph))) {
      out.graph = graph;
    } else {
      ThreadedGraph threaded = thread_effect_tokens(graph);
      out.graph = std::move(threaded.graph);
      out.tokens = std::move(threaded.tokens);
    }
    current = &out.graph;
    dump_graph(Pass::EffectTokens);
  }
  if (options.last <= Pass::EffectTokens) {
    if (current != &out.graph) out.graph = graph;
    t_continued_dump = out.dump;
    return out;
  }

  check_lowerable(*current);
  if (runs(Pass::DeadCode)) {
    out.graph = eliminate_dead_code(*current);
    current = &out.graph;
    dump_graph(Pass::DeadCode);
  }
  if (runs(Pass::CanonicalDots)) {
    out.graph = canonicalize_dots(*current);
    current = &out.graph;
    dump_graph(Pass::CanonicalDots);
  }
  // After dot canonicalisation, so that the transposes it puts before a dot's operands (a
  // backward scan's transposed weights) move too.
  if (runs(Pass::LoopInvariants)) {
    out.graph = hoist_loop_invariants(*current);
    current = &out.graph;
    dump_graph(Pass::LoopInvariants);
  }
  if (!runs(Pass::Fusion)) {
    if (current != &out.graph) out.graph = graph;
    return out;
  }

  Graph optimized = current == &out.graph ? std::move(out.graph) : *current;
  out.graph = Graph{};  // the schedule holds the optimised graph from here on
  out.schedule = fuse_blocks(std::move(optimized), options.fusion);
  dump(Pass::Fusion, [&] { return detail::fusion_text(out.schedule); });
  if (!runs(Pass::Schedule)) return out;

  order_steps(out.schedule);
  dump(Pass::Schedule, [&] { return detail::schedule_text(out.schedule); });
  if (!runs(Pass::CodeGeneration) || !options.code_generator) return out;

  const CodeGenerator& generator = *options.code_generator;
  const std::string source = generator.generate(out.schedule);
  if (out.dump)
    out.dump->write(pass_number(Pass::CodeGeneration), generator.name, generator.extension, source);
  return out;
}

ScheduleBlock lower_to_schedule(const Graph& graph, const FusionOptions& options) {
  return lower(graph, {.first = Pass::DeadCode, .last = Pass::Schedule, .fusion = options})
      .schedule;
}

FusionPlan plan_fusion(const Graph& graph, const FusionOptions& options) {
  return lower(graph, {.first = Pass::DeadCode, .last = Pass::Fusion, .fusion = options})
      .schedule.fusion;
}

}  // namespace weft

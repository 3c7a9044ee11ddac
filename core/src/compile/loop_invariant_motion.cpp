// Loop-invariant code motion, as XLA's while-loop invariant code motion: work in a while or
// scan body that depends only on values the loop never changes (closed-over values, carries
// the body returns unchanged) is computed once before the loop and passed in as a closed-over
// value. Typical gains: the transposed weights a backward scan's dots read, a reduction of a
// closed-over matrix.
//
// What moves: pure ops (no host ops, tokens, regions or collectives) whose inputs are all
// invariant, and only where the moved value's cone holds real work (a dot, a reduction, a
// transpose, arithmetic) on a loop input: constants alone stay (they fuse for free), and
// free layout ops (broadcasts, reshapes, slices, converts) at the edge of the cone stay in the
// body, which then reads their smaller operand, so a hoisted value never becomes a large
// broadcast buffer. A moved value is also never larger than the loop's largest operand.
// weft's ops cannot fail at run time, so a scan of length 0 or a while whose condition is false
// at once may compute a moved value it never uses: a cost bounded by one iteration.
#include <algorithm>

#include "compile/loop_invariants.h"
#include "weft/compile/fusion.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/walk.h"

namespace weft {
namespace {

// Which body parameters hold a loop-invariant value, and the loop operand each one holds.
struct LoopShape {
  std::size_t body_region = 0;
  std::vector<ValueId> operand_of_param;  // per body parameter; -1 where it varies
};

LoopShape invariant_params(const Node& loop) {
  LoopShape shape;
  std::size_t carries = 0, first_param = 0, first_const = 0;
  if (loop.op == OpKind::While) {
    carries = static_cast<std::size_t>(WhileAttrs::read(loop.attrs).carries);
    shape.body_region = 1;
    first_const = carries;
  } else {
    const ScanAttrs attrs = ScanAttrs::read(loop.attrs);
    carries = static_cast<std::size_t>(attrs.carries);
    first_param = 1;  // the iteration
    first_const = carries + static_cast<std::size_t>(attrs.xs);
  }
  const Graph& body = loop.regions[shape.body_region];
  shape.operand_of_param.assign(body.params.size(), -1);
  // A carry the body returns unchanged keeps its initial value.
  for (std::size_t c = 0; c < carries; ++c)
    if (body.outputs[c] == body.params[first_param + c])
      shape.operand_of_param[first_param + c] = loop.inputs[c];
  for (std::size_t k = first_const; k < loop.inputs.size(); ++k)
    shape.operand_of_param[first_param + k] = loop.inputs[k];
  return shape;
}

bool may_move(const Node& n) {
  const OpClass c = op_info(n.op).op_class;
  return n.op != OpKind::Parameter && c != OpClass::Result && c != OpClass::Control &&
         c != OpClass::Host && c != OpClass::Token && n.regions.empty() && !is_collective(n.op) &&
         !is_transformation_only(n.op);
}

// Free to recompute in every iteration: fusion inlines it into its readers.
bool is_free(const Node& n) {
  return op_info(n.op).fusion_cost == 0 && n.op != OpKind::Transpose &&
         op_info(n.op).op_class != OpClass::Dot;
}

}  // namespace

std::vector<bool> loop_body_invariants(const Node& loop, std::size_t region) {
  if ((loop.op != OpKind::While && loop.op != OpKind::Scan) ||
      region != invariant_params(loop).body_region)
    return {};
  const LoopShape shape = invariant_params(loop);
  const Graph& body = loop.regions[shape.body_region];
  std::vector<bool> invariant(body.nodes.size(), false);
  for (std::size_t p = 0; p < body.params.size(); ++p)
    invariant[body.params[p]] = shape.operand_of_param[p] >= 0;
  for (std::size_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    if (n.op == OpKind::Parameter || !may_move(n)) continue;
    invariant[i] =
        std::all_of(n.inputs.begin(), n.inputs.end(), [&](ValueId in) { return invariant[in]; });
  }
  return invariant;
}

namespace {

// Moves invariant work out of `loop` (a node about to be appended to `out`, its inputs already
// ids of `out`): appends the moved nodes to `out` and the values they compute to the loop's
// closed-over operands and its regions' parameters.
void hoist(Graph& out, Node& loop) {
  const LoopShape shape = invariant_params(loop);
  const std::vector<bool> invariant = loop_body_invariants(loop, shape.body_region);
  Graph& body = loop.regions[shape.body_region];
  const std::size_t count = body.nodes.size();
  std::vector<ValueId> param_index(count, -1);
  for (std::size_t p = 0; p < body.params.size(); ++p)
    param_index[body.params[p]] = static_cast<ValueId>(p);

  // reads_input: the value's cone reads a loop input; work: it does more than lay out values.
  std::vector<bool> reads_input(count, false), work(count, false);
  for (std::size_t i = 0; i < count; ++i) {
    if (!invariant[i]) continue;
    const Node& n = body.nodes[i];
    if (n.op == OpKind::Parameter) {
      reads_input[i] = true;
      continue;
    }
    work[i] = !is_free(n);
    for (ValueId in : n.inputs) {
      reads_input[i] = reads_input[i] || reads_input[in];
      work[i] = work[i] || work[in];
    }
  }

  // The invariant values the varying part reads (or the body returns), then, past free ops,
  // the values those read: the candidates to move.
  std::vector<bool> needed(count, false);
  auto mark_reads = [&](const Node& n) {
    for (ValueId in : n.inputs)
      if (invariant[in] && body.nodes[in].op != OpKind::Parameter) needed[in] = true;
  };
  for (std::size_t i = 0; i < count; ++i)
    if (!invariant[i]) mark_reads(body.nodes[i]);
  for (ValueId o : body.outputs)
    if (invariant[o] && body.nodes[o].op != OpKind::Parameter) needed[o] = true;
  std::int64_t largest_operand = 0;
  for (ValueId in : loop.inputs)
    largest_operand = std::max(largest_operand, num_elements(out.node(in).shape));
  std::vector<ValueId> moved;  // body ids, in order
  for (std::size_t i = count; i-- > 0;) {
    if (!needed[i]) continue;
    const Node& n = body.nodes[i];
    if (!work[i] || !reads_input[i]) continue;  // constants and their layouts stay
    if (is_free(n) || num_elements(n.shape) > largest_operand) {
      mark_reads(n);  // stays in the body; what it reads may move
      continue;
    }
    moved.push_back(static_cast<ValueId>(i));
  }
  if (moved.empty()) return;
  std::reverse(moved.begin(), moved.end());

  // Copy each moved value's cone into `out`, in body order.
  std::vector<bool> in_cone(count, false);
  for (ValueId m : moved) in_cone[m] = true;
  for (std::size_t i = count; i-- > 0;)
    if (in_cone[i])
      for (ValueId in : body.nodes[i].inputs) in_cone[in] = true;
  std::vector<ValueId> outer(count, -1);
  for (std::size_t i = 0; i < count; ++i) {
    if (!in_cone[i]) continue;
    const Node& n = body.nodes[i];
    if (n.op == OpKind::Parameter) {
      outer[i] = shape.operand_of_param[static_cast<std::size_t>(param_index[i])];
      continue;
    }
    Node copy = n;
    for (ValueId& in : copy.inputs) in = outer[in];
    outer[i] = out.add(std::move(copy));
  }

  // The loop reads the moved values as closed-over operands (the last operands, so the last
  // parameters of every region); the body reads them from its new parameters.
  std::vector<ValueId> replaced(count, -1);
  for (ValueId m : moved) {
    loop.inputs.push_back(outer[m]);
    for (Graph& region : loop.regions) {
      Node param;
      param.op = OpKind::Parameter;
      param.dtype = body.nodes[m].dtype;
      param.shape = body.nodes[m].shape;
      param.attrs = IndexAttrs{static_cast<std::int64_t>(region.params.size())}.write();
      param.origin = body.nodes[m].origin;
      const ValueId id = region.add(std::move(param));
      region.params.push_back(id);
      if (&region == &body) replaced[m] = id;
    }
  }
  // Rebuild the body in topological order: parameters, then the rest, reading the moved values
  // through their parameters; what only the moved values read goes with dead-code elimination.
  Graph rebuilt;
  rebuilt.name = body.name;
  std::vector<ValueId> remap(body.nodes.size(), -1);
  for (ValueId p : body.params) {
    remap[p] = rebuilt.add(std::move(body.nodes[p]));
    rebuilt.params.push_back(remap[p]);
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (param_index[i] >= 0) continue;
    if (replaced[i] >= 0) {
      remap[i] = remap[replaced[i]];
      continue;
    }
    Node n = std::move(body.nodes[i]);
    for (ValueId& in : n.inputs) in = remap[in];
    remap[i] = rebuilt.add(std::move(n));
  }
  for (ValueId o : body.outputs) rebuilt.outputs.push_back(remap[o]);
  body = eliminate_dead_code(rebuilt);
}

Graph hoist_flat(Graph graph) {
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> remap(graph.nodes.size(), -1);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    Node n = std::move(graph.nodes[i]);
    for (ValueId& in : n.inputs) in = remap[in];
    if (n.op == OpKind::While || n.op == OpKind::Scan) hoist(out, n);
    remap[i] = out.add(std::move(n));
  }
  for (ValueId p : graph.params) out.params.push_back(remap[p]);
  for (ValueId o : graph.outputs) out.outputs.push_back(remap[o]);
  return out;
}

}  // namespace

Graph hoist_loop_invariants(const Graph& graph) {
  return rewrite_graphs(graph, hoist_flat);
}

}  // namespace weft

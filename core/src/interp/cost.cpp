#include "weft/interp/cost.h"

#include <algorithm>
#include <cmath>

#include "weft/ir/op_attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/shape.h"

namespace weft {

namespace {

// Measured on the interpreter (2-core AMD EPYC): an elementwise op takes about 12 ns per element
// in a program's graph (the examples' steps: 6-15 ns an element op, allocation included; the
// tier policy's kSecondsPerElementOp) and any node about 0.3 us more; a dot's multiply-add
// 0.15-0.35 ns (blocked in registers and cache tiles, rows over the cores), so it counts a
// sixtieth of an element op. Integer and bool element ops skip the float rounding:
// graph_network's draw (threefry's bit mixing, a third of its ops float) took 3.6 s where
// counting them whole said 12.9 s, so they count a fifth.
constexpr double kNodeOps = 25;
constexpr double kDotMacOps = 0.016;
constexpr double kIntegerOps = 0.2;
// A copy of an operand the op only passes through (dynamic_update_slice and scatter copy their
// operand, then write the update): a block copy, far cheaper than an op per element.
constexpr double kCopyOps = 0.1;
constexpr double kConvMacOps = 0.1;

double elements(const Shape& shape) {
  return static_cast<double>(num_elements(shape));
}

double operand_elements(const Graph& graph, const Node& node, std::size_t k) {
  return k < node.inputs.size() ? elements(graph.node(node.inputs[k]).shape) : 0;
}

// The cost of one node that is not a control op, in element operations.
double node_cost(const Graph& graph, const Node& node) {
  const double out = elements(node.shape);
  switch (node.op) {
    case OpKind::Parameter:
    case OpKind::Constant:
    case OpKind::Result:
    case OpKind::AfterAll:
    case OpKind::Reshape:
      return 0;
    case OpKind::ReduceSum:
    case OpKind::ReduceProd:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return operand_elements(graph, node, 0);
    case OpKind::DotGeneral: {
      const DotGeneralAttrs attrs = DotGeneralAttrs::read(node.attrs);
      const Shape& lhs = graph.node(node.inputs[0]).shape;
      double contracted = 1;
      for (std::int64_t d : attrs.lhs_contracting)
        if (d >= 0 && static_cast<std::size_t>(d) < lhs.size())
          contracted *= static_cast<double>(lhs[static_cast<std::size_t>(d)]);
      // Plus arranging the operands as rows (a copy where their layout needs one).
      return out * contracted * kDotMacOps +
             (elements(lhs) + elements(graph.node(node.inputs[1]).shape)) * kCopyOps;
    }
    case OpKind::ConvGeneralDilated: {
      const ConvAttrs attrs = ConvAttrs::read(node.attrs);
      const Shape& rhs = graph.node(node.inputs[1]).shape;
      double out_features = 1;
      if (!attrs.rhs_spec.empty() && attrs.rhs_spec[0] >= 0 &&
          static_cast<std::size_t>(attrs.rhs_spec[0]) < rhs.size())
        out_features = std::max<double>(1, rhs[static_cast<std::size_t>(attrs.rhs_spec[0])]);
      return out * elements(rhs) / out_features * kConvMacOps;
    }
    case OpKind::ReduceWindowSum:
    case OpKind::ReduceWindowMax:
    case OpKind::ReduceWindowMin: {
      double window = 1;
      for (std::int64_t w : WindowAttrs::read(node.attrs).window_dimensions)
        window *= static_cast<double>(std::max<std::int64_t>(w, 1));
      return out * window;
    }
    case OpKind::SelectAndGatherAdd:
    case OpKind::SelectAndScatterAdd:
      return 4 * (out + operand_elements(graph, node, 0));
    case OpKind::Sort:
    case OpKind::Argsort:
    case OpKind::TopK:
    case OpKind::TopKIndices: {
      const double n = std::max(operand_elements(graph, node, 0), out);
      return n * std::max(1.0, std::log2(std::max(n, 2.0)));
    }
    case OpKind::Cholesky:
    case OpKind::Lu:
    case OpKind::LuPivots:
    case OpKind::LuPermutation:
    case OpKind::TriangularSolve: {
      const Shape& a = graph.node(node.inputs[0]).shape;
      const double n = a.empty() ? 1 : static_cast<double>(a.back());
      return std::max(out, elements(a)) * n;
    }
    case OpKind::EighVectors:
    case OpKind::EighValues: {
      const Shape& a = graph.node(node.inputs[0]).shape;
      const double n = a.empty() ? 1 : static_cast<double>(a.back());
      return 20 * elements(a) * n;  // sweeps of Jacobi rotations
    }
    case OpKind::Slice:
    case OpKind::DynamicSlice:
    case OpKind::Gather:
      // Only the elements written are read.
      return out;
    case OpKind::DynamicUpdateSlice:
    case OpKind::Scatter:
    case OpKind::ScatterAdd:
    case OpKind::ScatterMul:
    case OpKind::ScatterMin:
    case OpKind::ScatterMax: {
      // The operand copied, then each update written.
      const double updates =
          operand_elements(graph, node, node.op == OpKind::DynamicUpdateSlice ? 1 : 2);
      return out * kCopyOps + updates;
    }
    default:
      // Elementwise, layout, scans along an axis: about one step per element written (or
      // read, when more are read).
      return std::max(out, node.inputs.empty() ? 0.0 : operand_elements(graph, node, 0)) *
             (is_float(node.dtype) ? 1.0 : kIntegerOps);
  }
}

void add_graph(const Graph& graph, double times, InterpretationEstimate& estimate);

void add_control(const Node& node, double times, InterpretationEstimate& estimate) {
  switch (node.op) {
    case OpKind::Scan: {
      const double length =
          static_cast<double>(std::max<std::int64_t>(ScanAttrs::read(node.attrs).length, 0));
      for (const Graph& region : node.regions) add_graph(region, times * length, estimate);
      return;
    }
    case OpKind::While:
      estimate.has_while = true;
      for (const Graph& region : node.regions)
        add_graph(region, times * kAssumedWhileTrips, estimate);
      return;
    case OpKind::Cond: {
      // The dearest branch.
      double dearest = 0;
      for (const Graph& region : node.regions) {
        InterpretationEstimate branch;
        add_graph(region, times, branch);
        dearest = std::max(dearest, branch.element_ops);
        estimate.has_while |= branch.has_while;
        if (!branch.possible && estimate.possible) {
          estimate.possible = false;
          estimate.why_not = branch.why_not;
        }
      }
      estimate.element_ops += dearest;
      return;
    }
    default:
      // Custom ops and checkpoints run their regions once.
      for (const Graph& region : node.regions) add_graph(region, times, estimate);
      return;
  }
}

void add_graph(const Graph& graph, double times, InterpretationEstimate& estimate) {
  for (const Node& node : graph.nodes) {
    const bool collective = node.op == OpKind::Psum || node.op == OpKind::Pmean ||
                            node.op == OpKind::Pmax || node.op == OpKind::AllGather ||
                            node.op == OpKind::AxisIndex;
    if (node.op == OpKind::HostCall || collective) {
      if (estimate.possible) {
        estimate.possible = false;
        estimate.why_not = std::string(op_name(node.op)) + " at " + node.origin.describe();
      }
      continue;
    }
    if (!node.regions.empty()) {
      estimate.element_ops += times * kNodeOps;
      add_control(node, times, estimate);
      continue;
    }
    estimate.element_ops += times * (kNodeOps + node_cost(graph, node));
  }
}

}  // namespace

InterpretationEstimate estimate_interpretation(const Graph& graph) {
  InterpretationEstimate estimate;
  add_graph(graph, 1, estimate);
  return estimate;
}

}  // namespace weft

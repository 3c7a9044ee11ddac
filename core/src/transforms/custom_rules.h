// The rules a custom_jvp, custom_vjp, checkpoint or custom_lin node carries (Node::custom), and
// staging one: kept as a node while a transformation traces the function, inlined (its body
// evaluated) otherwise.
#pragma once

#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/transforms/custom.h"

namespace weft {

struct CustomRules {
  std::string describe;       // "custom_jvp at demo.cpp:12 (main)", for messages
  CustomJvpRule jvp;          // custom_jvp
  CustomVjpForwardRule fwd;   // custom_vjp
  CustomVjpBackwardRule bwd;  // custom_vjp, custom_lin
  // custom_lin: the function's argument and output types, and which of them carry tangents
  // (the node's tangent operands and results are those).
  std::vector<TensorType> inputs;
  std::vector<TensorType> outputs;
};

namespace detail {

// Stages an op that exists only while a transformation traces (is_transformation_only) while one
// does; else evaluates its body (regions[0]) here, and refuses a collective or custom_lin.
std::vector<Array> stage_custom_op(OpKind op, std::span<const Array> operands, const Attrs& attrs,
                                   std::vector<Graph> regions, std::vector<TensorType> results,
                                   std::shared_ptr<const CustomRules> rules, const std::string& api,
                                   const std::source_location& loc);

// Stages a pmap collective: psum, pmean, pmax, all_gather on `operands` (one array), axis_index
// on none (pmap.cpp).
Array stage_collective(OpKind which, std::vector<Array> operands, const TensorType& result,
                       const std::string& axis_name, const std::source_location& loc);

}  // namespace detail
}  // namespace weft

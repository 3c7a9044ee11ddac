// The regions of control nodes: what each one is called and which parameter and result
// types it must have, derived from the node's operands, attributes and results. verify, the
// tracer, the interpreter and the compiler all read the rules from here; each control op's
// definition (core/src/primitives/) states them.
//
//   while[carries=n](c..., k...)            cond(c..., k...) -> (bool[])
//                                           body(c..., k...) -> (c...)
//                                           results: c...
//   cond(index, x...)                       branch0 .. branchN-1 (x...) -> (r...)
//                                           results: r...; a bool index picks branch1 when
//                                           true (so exactly two branches); an integer index
//                                           is clamped to [0, N-1]
//   scan[carries=n, xs=m, length=L, reverse=0|1](c..., xs..., k...)
//                                           body(i32[] iteration, c..., x..., k...) -> (c..., y...)
//                                           results: c..., ys... (each y with L in front)
//                                           x is one row of xs (leading axis L dropped); the
//                                           iteration runs 0..L-1, or L-1..0 with reverse
//
// c: carries (same types in and out), k: values the functions close over, passed unchanged.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/ir/shape_rules.h"

namespace weft {

struct RegionSignature {
  std::string name;  // "cond", "body", "branch0", ... (the text form prints it)
  std::vector<TensorType> params;
  std::vector<TensorType> results;
};

// The signatures the regions of a control node must have, in region order. Checks the
// node's operands, attributes, results and region count against the op's rules first and
// throws ShapeError, DTypeError or InvalidGraphError saying what is wrong (callers add
// where).
std::vector<RegionSignature> region_signatures(OpKind op, std::span<const TensorType> operands,
                                               const Attrs& attrs,
                                               std::span<const TensorType> results,
                                               std::size_t num_regions);

// The name of region `index` of a control op ("cond"/"body" for while, "branchK" for cond,
// "body" for scan).
std::string region_name(OpKind op, std::size_t index);

}  // namespace weft

// What users can ask about every primitive: its names (weft's and JAX's), what dtypes it
// accepts and which transformation rules it has, all read from its one definition
// (core/src/primitives/). `weft ops` prints it and docs/primitives.md is generated from it.
#pragma once

#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/op_kind.h"

namespace weft {

// One transformation rule of a primitive: a rule, an explicit refusal (with the message
// users get), or handled by the transformation's graph walker (host ops and result
// projections, which the walkers treat themselves).
struct RuleSummary {
  enum class State { defined, refused, by_walker };
  State state = State::defined;
  std::string refusal;  // when refused
};

struct PrimitiveSummary {
  OpKind kind;
  std::string name;                    // as in the IR text
  std::vector<std::string> jax_names;  // the jax.lax (or jax) names users know it by; may be empty
  std::string op_class;                // "unary", "layout", "control", ...
  int arity;                           // -1: variadic
  // The dtypes of the operands that carry its data (not indices or predicates), found by asking
  // its type rule; every array dtype for the ops whose type rule does not depend on it.
  std::vector<DType> dtypes;
  RuleSummary jvp, transpose, batching;
  bool transformation_only;  // exists only while a transformation traces
};

std::string_view op_class_name(OpClass c);

// Every primitive, in enum order.
std::vector<PrimitiveSummary> primitive_catalog();

}  // namespace weft

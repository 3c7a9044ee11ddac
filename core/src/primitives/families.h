// Defaults shared by whole families of primitives, as JAX's unop/naryop give them: a family
// helper returns a definition with the family's row, type rule, evaluator and rules filled in,
// and a primitive's definition changes only what is its own.
#pragma once

#include <string_view>

#include "primitives/primitive.h"

namespace weft::prim {

// A definition with the table row only; every rule still to be given.
inline Primitive row(OpKind kind, std::string_view name, OpClass op_class, int arity) {
  Primitive p;
  p.info = OpInfo{kind, name, op_class, arity};
  return p;
}

// The families' properties (fusion cost, math call, lane work; see OpInfo).
inline Primitive free_op(Primitive p) {
  p.info.fusion_cost = 0;
  return p;
}
inline Primitive expensive(Primitive p) {
  p.info.fusion_cost = 4;
  p.info.lane_work = true;
  return p;
}
// Division and remainder: expensive to recompute, but no faster as 16-lane vectors.
inline Primitive division(Primitive p) {
  p.info.fusion_cost = 4;
  return p;
}
inline Primitive math_call(Primitive p) {
  p = expensive(std::move(p));
  p.info.math_call = true;
  return p;
}

// The names JAX users know the op by, when they are not its own (OpInfo::jax_names).
inline Primitive jax_names(Primitive p, std::string_view names) {
  p.info.jax_names = names;
  return p;
}

// Ops that exist only while a transformation traces (OpInfo::transformation_only).
inline Primitive transformation_only(Primitive p) {
  p.info.transformation_only = true;
  return p;
}

// The transpose of a primitive that is not linear in any operand.
inline Rule<TransposeRule> no_transpose() {
  return none<TransposeRule>("has no transpose rule, so reverse mode cannot pass through it");
}

// Each family file adds its primitives (registry.cpp calls them all).
void define_leaf_primitives(Definitions& defs);
void define_unary_primitives(Definitions& defs);
void define_binary_primitives(Definitions& defs);
void define_compare_primitives(Definitions& defs);
void define_select_convert_primitives(Definitions& defs);
void define_layout_primitives(Definitions& defs);
void define_reduce_primitives(Definitions& defs);
void define_dot_primitives(Definitions& defs);
void define_result_primitive(Definitions& defs);
void define_while_primitive(Definitions& defs);
void define_cond_primitive(Definitions& defs);
void define_scan_primitive(Definitions& defs);
void define_host_primitives(Definitions& defs);
void define_custom_jvp_primitive(Definitions& defs);
void define_custom_vjp_primitive(Definitions& defs);
void define_checkpoint_primitive(Definitions& defs);
void define_custom_lin_primitive(Definitions& defs);
void define_collective_primitives(Definitions& defs);
// Bit operations and the remaining elementwise ops.
void define_bit_primitives(Definitions& defs);
void define_bitcast_primitive(Definitions& defs);
void define_float_bits_primitives(Definitions& defs);
void define_choice_primitives(Definitions& defs);
void define_integer_pow_primitive(Definitions& defs);
void define_erf_inv_primitive(Definitions& defs);
// Cumulative ops, rev and sorting.
void define_cumulative_primitives(Definitions& defs);
void define_rev_primitive(Definitions& defs);
void define_sort_primitives(Definitions& defs);
// Windowed reductions and their select_and_* derivatives.
void define_window_primitives(Definitions& defs);
void define_select_window_primitives(Definitions& defs);
// Gather and scatter.
void define_gather_scatter_primitives(Definitions& defs);
// Convolution.
void define_conv_primitive(Definitions& defs);
// Linear algebra (cholesky, triangular_solve; lu).
void define_linalg_primitives(Definitions& defs);
void define_lu_primitives(Definitions& defs);
// The symmetric eigendecomposition (eigh_vectors, eigh_values).
void define_eigh_primitives(Definitions& defs);

}  // namespace weft::prim

// The table of every primitive's definition, built once from the family files.
#include <array>
#include <stdexcept>
#include <string>

#include "primitives/families.h"
#include "weft/error.h"

namespace weft::prim {

void Definitions::add(Primitive primitive) {
  defined_.push_back(std::move(primitive));
}

namespace {

using Table = std::array<Primitive, kNumOpKinds>;

// A missing or doubled definition is a bug in weft itself, found by any test at its first op.
Table build_table() {
  Definitions defs;
  define_leaf_primitives(defs);
  define_unary_primitives(defs);
  define_binary_primitives(defs);
  define_compare_primitives(defs);
  define_select_convert_primitives(defs);
  define_layout_primitives(defs);
  define_reduce_primitives(defs);
  define_dot_primitives(defs);
  define_result_primitive(defs);
  define_while_primitive(defs);
  define_cond_primitive(defs);
  define_scan_primitive(defs);
  define_host_primitives(defs);
  define_custom_jvp_primitive(defs);
  define_custom_vjp_primitive(defs);
  define_checkpoint_primitive(defs);
  define_custom_lin_primitive(defs);
  define_collective_primitives(defs);
  // Bit operations and the remaining elementwise ops.
  define_bit_primitives(defs);
  define_bitcast_primitive(defs);
  define_float_bits_primitives(defs);
  define_choice_primitives(defs);
  define_integer_pow_primitive(defs);
  define_erf_inv_primitive(defs);
  // Cumulative ops, rev and sorting.
  define_cumulative_primitives(defs);
  define_rev_primitive(defs);
  define_sort_primitives(defs);
  // Gather and scatter.
  define_gather_scatter_primitives(defs);
  // Convolution.
  define_conv_primitive(defs);
  // Windowed reductions and their select_and_* derivatives.
  define_window_primitives(defs);
  define_select_window_primitives(defs);
  // Linear algebra.
  define_linalg_primitives(defs);
  define_lu_primitives(defs);
  define_eigh_primitives(defs);
  Table table;
  std::array<bool, kNumOpKinds> seen{};
  for (Primitive& p : std::move(defs).take()) {
    const auto k = static_cast<std::size_t>(p.info.kind);
    if (k >= table.size() || seen[k])
      throw std::logic_error("weft: primitive '" + std::string(p.info.name) +
                             "' is defined twice or has no OpKind");
    seen[k] = true;
    table[k] = std::move(p);
  }
  for (std::size_t k = 0; k < table.size(); ++k)
    if (!seen[k])
      throw std::logic_error("weft: OpKind " + std::to_string(k) +
                             " has no definition under core/src/primitives/");
  return table;
}

}  // namespace

void refuse_value_rule(std::string_view refusal, const Node& n, const std::string& api,
                       const char* what) {
  const std::string where = api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe();
  if (!refusal.empty()) throw TransformError(where + " " + std::string(refusal));
  throw TransformError(where + " has no " + what + " rule; this is a bug in weft");
}

const Primitive& primitive(OpKind kind) {
  static const Table table = build_table();
  return table[static_cast<std::size_t>(kind)];
}

}  // namespace weft::prim

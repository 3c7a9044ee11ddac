// The lowering table, built once from the family files and checked: every OpKind has exactly
// one entry, and each entry is exactly one kind of lowering.
#include <array>
#include <stdexcept>
#include <string>

#include "codegen/lowerings/families.h"
#include "weft/opencl/lowering_status.h"

namespace weft::opencl {
namespace {

using Table = std::array<Lowering, kNumOpKinds>;

// A missing, doubled or ambiguous entry is a bug in weft itself, found by any test that
// generates code.
void check_entry(const Lowering& l) {
  const int forms = (l.unary != nullptr) + (l.binary != nullptr) + (l.element != nullptr) +
                    !l.kernel.empty() + !l.never.empty();
  const std::string op(op_name(l.op));
  if (forms != 1)
    throw std::logic_error("weft: the lowering of '" + op + "' must be exactly one of an " +
                           "emitter, a kernel kind or a reason it never reaches codegen");
  if (l.math && !l.unary)
    throw std::logic_error("weft: '" + op + "' has a math function but no unary emitter");
  if ((l.own_kernel != nullptr) != op_info(l.op).own_kernel)
    throw std::logic_error("weft: '" + op + "' needs an own-kernel emitter exactly when its " +
                           "definition says it runs in a kernel of its own");
  if ((l.reduction != nullptr) != (l.kernel == "reduce"))
    throw std::logic_error("weft: '" + op + "' needs a reduction exactly when a reduce kernel " +
                           "runs it");
}

Table build_table() {
  lowerings::Lowerings entries;
  lowerings::define_leaf_lowerings(entries);
  lowerings::define_unary_lowerings(entries);
  lowerings::define_binary_lowerings(entries);
  lowerings::define_compare_lowerings(entries);
  lowerings::define_select_convert_lowerings(entries);
  lowerings::define_layout_lowerings(entries);
  lowerings::define_reduce_lowerings(entries);
  lowerings::define_dot_lowerings(entries);
  lowerings::define_structure_lowerings(entries);
  lowerings::define_host_lowerings(entries);
  lowerings::define_custom_lowerings(entries);
  // Bit operations and the remaining elementwise ops.
  lowerings::define_bit_lowerings(entries);
  lowerings::define_remaining_elementwise_lowerings(entries);
  lowerings::define_erf_inv_lowering(entries);
  // Cumulative ops, rev and sorting.
  lowerings::define_cumulative_lowerings(entries);
  lowerings::define_sort_lowerings(entries);
  // Gather and scatter.
  lowerings::define_gather_scatter_lowerings(entries);
  // Convolution.
  lowerings::define_conv_lowerings(entries);
  // Windowed reductions and their select_and_* derivatives.
  lowerings::define_window_lowerings(entries);
  // Linear algebra.
  lowerings::define_linalg_lowerings(entries);
  lowerings::define_eigh_lowerings(entries);
  Table table{};
  std::array<bool, kNumOpKinds> seen{};
  for (const Lowering& l : std::move(entries).take()) {
    const auto k = static_cast<std::size_t>(l.op);
    if (k >= table.size() || seen[k])
      throw std::logic_error("weft: OpKind " + std::to_string(k) + " has two lowerings");
    check_entry(l);
    seen[k] = true;
    table[k] = l;
  }
  for (std::size_t k = 0; k < table.size(); ++k)
    if (!seen[k])
      throw std::logic_error("weft: primitive '" + std::string(op_name(static_cast<OpKind>(k))) +
                             "' has no lowering under opencl/src/codegen/lowerings/");
  return table;
}

}  // namespace

const Lowering& lowering(OpKind op) {
  static const Table table = build_table();
  return table[static_cast<std::size_t>(op)];
}

std::string lowering_status(OpKind op) {
  const Lowering& l = lowering(op);
  if (!l.kernel.empty()) return "kernel:" + std::string(l.kernel);
  if (!l.never.empty()) return "none: " + std::string(l.never);
  return "emitter";
}

}  // namespace weft::opencl

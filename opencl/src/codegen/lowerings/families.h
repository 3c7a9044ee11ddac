// Shared by the family files of the lowering table (lowering.h): how an entry is written, and
// one define_* function per family file (registry.cpp calls them all).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/lowering.h"

namespace weft::opencl::lowerings {

class Lowerings {
 public:
  void add(Lowering lowering) { added_.push_back(lowering); }
  std::vector<Lowering> take() && { return std::move(added_); }

 private:
  std::vector<Lowering> added_;
};

inline Lowering unary(OpKind op, UnaryExpr expr, const MathFunction* math = nullptr) {
  return Lowering{.op = op, .unary = expr, .math = math};
}
inline Lowering binary(OpKind op, BinaryExpr expr) {
  return Lowering{.op = op, .binary = expr};
}
inline Lowering element(OpKind op, ElementTask task) {
  return Lowering{.op = op, .element = task};
}
// Run by a kernel kind of its own (`kind` names its file: codegen/<kind>_kernel.cpp).
inline Lowering kernel(OpKind op, std::string_view kind) {
  return Lowering{.op = op, .kernel = kind};
}
inline Lowering reduce(OpKind op, const Reduction& reduction) {
  return Lowering{.op = op, .kernel = "reduce", .reduction = &reduction};
}
// An op with a kernel of its own (OpInfo::own_kernel): `emit` writes and launches it; `kind`
// names the kernel kind's file (codegen/<kind>_kernel.cpp).
inline Lowering own_kernel(OpKind op, std::string_view kind, OwnKernelEmitter emit) {
  return Lowering{.op = op, .kernel = kind, .own_kernel = emit};
}
inline Lowering never(OpKind op, std::string_view why) {
  return Lowering{.op = op, .never = why};
}

// A string literal as a template argument: builtin<"floor">, compare<"==">.
template <std::size_t N>
struct Spelling {
  constexpr Spelling(const char (&s)[N]) {  // NOLINT: implicit, so that the literal converts
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  char text[N];
};
// A call of the OpenCL builtin `Name` on the operand.
template <Spelling Name>
std::string builtin(const ElementOp&, const std::string& a) {
  return std::string(Name.text) + "(" + a + ")";
}

// The unsigned type of an integer dtype's width: signed arithmetic wraps through it.
inline std::string unsigned_of(DType t) {
  switch (t) {
    case DType::I8:
    case DType::U8:
      return "uchar";
    case DType::I16:
    case DType::U16:
      return "ushort";
    case DType::I64:
    case DType::U64:
      return "ulong";
    default:
      return "uint";
  }
}

void define_leaf_lowerings(Lowerings& table);
void define_unary_lowerings(Lowerings& table);
void define_binary_lowerings(Lowerings& table);
void define_compare_lowerings(Lowerings& table);
void define_select_convert_lowerings(Lowerings& table);
void define_layout_lowerings(Lowerings& table);
void define_reduce_lowerings(Lowerings& table);
void define_dot_lowerings(Lowerings& table);
void define_structure_lowerings(Lowerings& table);
void define_host_lowerings(Lowerings& table);
void define_custom_lowerings(Lowerings& table);
// Bit operations and the remaining elementwise ops.
void define_bit_lowerings(Lowerings& table);
void define_remaining_elementwise_lowerings(Lowerings& table);
void define_erf_inv_lowering(Lowerings& table);
// Cumulative ops, rev and sorting.
void define_cumulative_lowerings(Lowerings& table);
void define_sort_lowerings(Lowerings& table);
// Windowed reductions and their select_and_* derivatives.
void define_window_lowerings(Lowerings& table);
// Gather and scatter.
void define_gather_scatter_lowerings(Lowerings& table);
// Convolution.
void define_conv_lowerings(Lowerings& table);
// Linear algebra.
void define_linalg_lowerings(Lowerings& table);
void define_eigh_lowerings(Lowerings& table);

}  // namespace weft::opencl::lowerings

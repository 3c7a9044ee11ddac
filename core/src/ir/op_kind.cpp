#include "weft/ir/op_kind.h"

#include <array>
#include <string>

namespace weft {
namespace {

using C = OpClass;
using K = OpKind;

constexpr std::array<OpInfo, kNumOpKinds> kOps = {{
    {K::Parameter, "param", C::Leaf, 0},
    {K::Constant, "constant", C::Leaf, 0},
    {K::Iota, "iota", C::Leaf, 0},
    {K::Neg, "neg", C::Unary, 1},
    {K::Abs, "abs", C::Unary, 1},
    {K::Sign, "sign", C::Unary, 1},
    {K::Floor, "floor", C::Unary, 1},
    {K::Ceil, "ceil", C::Unary, 1},
    {K::Round, "round", C::Unary, 1},
    {K::Exp, "exp", C::Unary, 1},
    {K::Exp2, "exp2", C::Unary, 1},
    {K::Log, "log", C::Unary, 1},
    {K::Log1p, "log1p", C::Unary, 1},
    {K::Expm1, "expm1", C::Unary, 1},
    {K::Sqrt, "sqrt", C::Unary, 1},
    {K::Rsqrt, "rsqrt", C::Unary, 1},
    {K::Sin, "sin", C::Unary, 1},
    {K::Cos, "cos", C::Unary, 1},
    {K::Tan, "tan", C::Unary, 1},
    {K::Tanh, "tanh", C::Unary, 1},
    {K::Logistic, "logistic", C::Unary, 1},
    {K::Erf, "erf", C::Unary, 1},
    {K::Not, "not", C::Unary, 1},
    {K::Add, "add", C::Binary, 2},
    {K::Sub, "sub", C::Binary, 2},
    {K::Mul, "mul", C::Binary, 2},
    {K::Div, "div", C::Binary, 2},
    {K::Rem, "rem", C::Binary, 2},
    {K::Pow, "pow", C::Binary, 2},
    {K::Max, "max", C::Binary, 2},
    {K::Min, "min", C::Binary, 2},
    {K::Atan2, "atan2", C::Binary, 2},
    {K::And, "and", C::Binary, 2},
    {K::Or, "or", C::Binary, 2},
    {K::Xor, "xor", C::Binary, 2},
    {K::Eq, "eq", C::Compare, 2},
    {K::Ne, "ne", C::Compare, 2},
    {K::Lt, "lt", C::Compare, 2},
    {K::Le, "le", C::Compare, 2},
    {K::Gt, "gt", C::Compare, 2},
    {K::Ge, "ge", C::Compare, 2},
    {K::Select, "select", C::Select, 3},
    {K::Convert, "convert", C::Convert, 1},
    {K::BroadcastInDim, "broadcast_in_dim", C::Layout, 1},
    {K::Reshape, "reshape", C::Layout, 1},
    {K::Transpose, "transpose", C::Layout, 1},
    {K::Slice, "slice", C::Layout, 1},
    {K::DynamicSlice, "dynamic_slice", C::Layout, -1},
    {K::DynamicUpdateSlice, "dynamic_update_slice", C::Layout, -1},
    {K::Concatenate, "concatenate", C::Layout, -1},
    {K::Pad, "pad", C::Layout, 2},
    {K::ReduceSum, "reduce_sum", C::Reduce, 1},
    {K::ReduceProd, "reduce_prod", C::Reduce, 1},
    {K::ReduceMax, "reduce_max", C::Reduce, 1},
    {K::ReduceMin, "reduce_min", C::Reduce, 1},
    {K::ArgMax, "argmax", C::Reduce, 1},
    {K::ArgMin, "argmin", C::Reduce, 1},
    {K::DotGeneral, "dot_general", C::Dot, 2},
    {K::Result, "result", C::Result, 1},
    {K::While, "while", C::Control, -1},
    {K::Cond, "cond", C::Control, -1},
    {K::Scan, "scan", C::Control, -1},
    {K::DebugPrint, "debug_print", C::Host, -1},
    {K::HostCall, "host_call", C::Host, -1},
    {K::AfterAll, "after_all", C::Token, -1},
    {K::CustomCall, "custom_call", C::Control, -1},
}};

constexpr bool table_in_enum_order() {
  for (int i = 0; i < kNumOpKinds; ++i)
    if (static_cast<int>(kOps[i].kind) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kOps must list every OpKind in enum order");

}  // namespace

const OpInfo& op_info(OpKind kind) {
  return kOps[static_cast<std::size_t>(kind)];
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const auto& info : kOps)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

std::string_view all_op_names_csv() {
  static const std::string csv = [] {
    std::string s;
    for (const auto& info : kOps) {
      if (!s.empty()) s += ",";
      s += info.name;
    }
    return s;
  }();
  return csv;
}

}  // namespace weft

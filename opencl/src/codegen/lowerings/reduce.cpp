// Reductions run in reduce kernels (codegen/reduce_kernel.cpp), their producers fused in; each
// says how the kernel folds its elements.
#include <string>

#include "codegen/cl_types.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {
namespace {

std::string zero(DType t) {
  return cl_int_literal(0, t);
}
std::string one(DType t) {
  return cl_int_literal(1, t);
}

// Signed integers wrap around through their unsigned type.
std::string wrapping(DType t, const std::string& acc, const char* sym, const std::string& v) {
  if (!is_signed_integer(t)) return "(" + acc + " " + sym + " " + v + ")";
  const std::string U = unsigned_of(t);
  return "((" + cl_type(t) + ")((" + U + ")" + acc + " " + sym + " (" + U + ")" + v + "))";
}
std::string sum(DType t, const std::string& acc, const std::string& v) {
  return wrapping(t, acc, "+", v);
}
std::string product(DType t, const std::string& acc, const std::string& v) {
  return wrapping(t, acc, "*", v);
}

// Floats: NaN wins, once met it stays.
std::string extreme(DType t, const char* cmp, const char* integer_fn, const std::string& acc,
                    const std::string& v) {
  if (!is_float(t)) return std::string(integer_fn) + "(" + acc + ", " + v + ")";
  return "(isnan(" + acc + ") ? " + acc + " : ((isnan(" + v + ") || " + v + " " + cmp + " " + acc +
         ") ? " + v + " : " + acc + "))";
}
std::string maximum(DType t, const std::string& acc, const std::string& v) {
  return extreme(t, ">", "max", acc, v);
}
std::string minimum(DType t, const std::string& acc, const std::string& v) {
  return extreme(t, "<", "min", acc, v);
}

// The first index of the best value; a NaN is the best value, as the interpreter has it.
std::string takes(DType t, const char* cmp, const std::string& bv, const std::string& bi,
                  const std::string& v, const std::string& i) {
  std::string better =
      "(" + v + " " + cmp + " " + bv + " || (" + v + " == " + bv + " && " + i + " < " + bi + "))";
  if (!is_float(t)) return better;
  return "(isnan(" + v + ") ? (!isnan(" + bv + ") || " + i + " < " + bi + ") : (!isnan(" + bv +
         ") && " + better + "))";
}
std::string takes_max(DType t, const std::string& bv, const std::string& bi, const std::string& v,
                      const std::string& i) {
  return takes(t, ">", bv, bi, v, i);
}
std::string takes_min(DType t, const std::string& bv, const std::string& bi, const std::string& v,
                      const std::string& i) {
  return takes(t, "<", bv, bi, v, i);
}

const Reduction kSum{.identity = zero, .combine = sum, .folds_lanes = true};
const Reduction kProd{.identity = one, .combine = product};
const Reduction kMax{.identity = cl_lowest, .combine = maximum, .folds_lanes = true};
const Reduction kMin{.identity = cl_highest, .combine = minimum, .folds_lanes = true};
const Reduction kArgMax{.identity = cl_lowest, .takes = takes_max};
const Reduction kArgMin{.identity = cl_highest, .takes = takes_min};

}  // namespace

void define_reduce_lowerings(Lowerings& table) {
  table.add(reduce(OpKind::ReduceSum, kSum));
  table.add(reduce(OpKind::ReduceProd, kProd));
  table.add(reduce(OpKind::ReduceMax, kMax));
  table.add(reduce(OpKind::ReduceMin, kMin));
  table.add(reduce(OpKind::ArgMax, kArgMax));
  table.add(reduce(OpKind::ArgMin, kArgMin));
}

}  // namespace weft::opencl::lowerings

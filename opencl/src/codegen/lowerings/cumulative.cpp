// Cumulative ops run as parallel scans in kernels of their own (codegen/scan_kernel.cpp); each
// says how two partial results combine.
#include <string>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {
namespace {

// Signed integers wrap around through their unsigned type.
std::string add(DType t, const std::string& a, const std::string& b) {
  if (!is_signed_integer(t)) return "(" + a + " + " + b + ")";
  const std::string U = unsigned_of(t);
  return "((" + cl_type(t) + ")((" + U + ")" + a + " + (" + U + ")" + b + "))";
}

template <ScanCombine combine>
void emit_cumulative(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  emit_scan_kernel(ctx, group, name, combine);
}

}  // namespace

void define_cumulative_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::Cumsum, "scan", emit_cumulative<add>));
}

}  // namespace weft::opencl::lowerings

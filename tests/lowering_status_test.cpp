// Every primitive has exactly one lowering in the OpenCL code generator: an expression emitter,
// the kernel kind that runs it, or the reason it never reaches code generation
// (opencl/src/codegen/lowering.h). No device needed.
#include <gtest/gtest.h>

#include <string>

#include "weft/ir/op_kind.h"
#include "weft/opencl/lowering_status.h"

namespace weft {
namespace {

bool is_never(const std::string& status) {
  return status.rfind("none: ", 0) == 0 && status.size() > 6;
}

TEST(LoweringStatus, EveryPrimitiveHasOneByItsClass) {
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto op = static_cast<OpKind>(k);
    const std::string status = opencl::lowering_status(op);
    SCOPED_TRACE(std::string(op_name(op)) + ": " + status);
    switch (op_info(op).op_class) {
      case OpClass::Leaf:
        if (op == OpKind::Parameter)
          EXPECT_TRUE(is_never(status));
        else
          EXPECT_EQ(status, "emitter");
        break;
      case OpClass::Unary:
      case OpClass::Binary:
      case OpClass::Compare:
      case OpClass::Select:
      case OpClass::Convert:
        EXPECT_EQ(status, "emitter");
        break;
      case OpClass::Layout:
        // The scatters: a kernel of their own (gather and scatter).
        EXPECT_EQ(status, op_info(op).own_kernel ? "kernel:scatter" : "emitter");
        break;
      case OpClass::Reduce:
        EXPECT_EQ(status, "kernel:reduce");
        break;
      case OpClass::Dot:
        EXPECT_EQ(status, "kernel:dot");
        break;
      case OpClass::Control:
        if (op == OpKind::Scan)
          EXPECT_EQ(status, "kernel:loop_in");
        else
          EXPECT_TRUE(is_never(status));
        break;
      case OpClass::Result:
      case OpClass::Host:
      case OpClass::Token:
        EXPECT_TRUE(is_never(status));
        break;
      // Cumulative ops, rev and sorting.
      case OpClass::Cumulative:
        EXPECT_EQ(status, "kernel:scan");
        break;
      case OpClass::Sort:
        EXPECT_EQ(status, "kernel:sort");
        break;
      case OpClass::Convolution:
        EXPECT_EQ(status, "kernel:conv");
        break;
      case OpClass::Window:
        EXPECT_EQ(status,
                  op == OpKind::SelectAndScatterAdd ? "kernel:select_scatter" : "kernel:window");
        break;
      case OpClass::Linalg:
        EXPECT_EQ(status, op == OpKind::Cholesky          ? "kernel:cholesky"
                          : op == OpKind::TriangularSolve ? "kernel:triangular_solve"
                          : op == OpKind::EighVectors || op == OpKind::EighValues ? "kernel:eigh"
                                                                                  : "kernel:lu");
        break;
    }
  }
}

TEST(LoweringStatus, NamesTheReason) {
  EXPECT_EQ(opencl::lowering_status(OpKind::Erf), "emitter");
  EXPECT_EQ(opencl::lowering_status(OpKind::ArgMax), "kernel:reduce");
  EXPECT_EQ(opencl::lowering_status(OpKind::HostCall),
            "none: a host callback runs on the host (a host step)");
}

}  // namespace
}  // namespace weft

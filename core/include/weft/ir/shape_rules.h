// Result types of every primitive: one function shared by the tracer, the verifier and the
// parser, so all three agree on what a well-formed op is.
#pragma once

#include <span>
#include <string>

#include "weft/dtype.h"
#include "weft/ir/attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/shape.h"

namespace weft {

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};
std::string type_to_string(const TensorType& t);  // "f32[3,4]"

// Computes the result type of `op` on `operands`. `declared` supplies what operands and
// attributes cannot: the shape of iota, broadcast_in_dim and reshape, the dtype of constant,
// iota, convert and argmax/argmin, and the whole type of parameter and constant. Throws
// ShapeError or DTypeError with a message naming the op and the shapes (callers add where).
TensorType infer_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                      const TensorType& declared);

}  // namespace weft

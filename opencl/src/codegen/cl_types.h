// OpenCL C spellings of weft dtypes and literals.
#pragma once

#include <cstdint>
#include <string>

#include "weft/dtype.h"

namespace weft::opencl {

// Private-memory type: bool, uchar, char, ushort, short, int, uint, long, ulong, float, double;
// f16 and bf16 compute in float.
std::string cl_type(DType t);
// Buffer element type: bool is stored as uchar, f16 as half (read with vload_half, written with
// vstore_half_rte, NaNs by their bits: weft_load_f16, weft_store_f16), bf16 as ushort (its bits;
// converted by weft_bf16_to_float / weft_float_to_bf16, kHalfFloatHelpers).
std::string cl_storage_type(DType t);
// The value of element `index` of buffer `buffer` as cl_type(t), and the statement that
// writes `value` (a cl_type(t) expression) there. Scalar accesses only.
std::string cl_load(DType t, const std::string& buffer, const std::string& index);
std::string cl_store(DType t, const std::string& buffer, const std::string& index,
                     const std::string& value);
// `value` (a float expression) rounded to f16 / bf16 and back: every op on those dtypes ends
// with it, so fused chains round after each op as the interpreter and XLA's CPU backend do.
// Other dtypes: `value` unchanged.
std::string cl_round_to_dtype(DType t, const std::string& value);
// The OpenCL C helper functions the three above use; programs include them once.
extern const char* const kHalfFloatHelpers;
std::string cl_float_literal(double v, DType t);  // exact (hex) literal of v in dtype t
std::string cl_int_literal(std::int64_t v, DType t);
std::string cl_lowest(DType t);   // -INFINITY, INT_MIN, ...
std::string cl_highest(DType t);  // INFINITY, INT_MAX, ...

}  // namespace weft::opencl

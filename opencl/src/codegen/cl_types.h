// OpenCL C spellings of weft dtypes and literals.
#pragma once

#include <cstdint>
#include <string>

#include "weft/dtype.h"

namespace weft::opencl {

std::string cl_type(DType t);          // private-memory type: bool, int, long, uint, float, double
std::string cl_storage_type(DType t);  // buffer element type: bool is stored as uchar
std::string cl_float_literal(double v, DType t);  // exact (hex) literal of v in dtype t
std::string cl_int_literal(std::int64_t v, DType t);
std::string cl_lowest(DType t);   // -INFINITY, INT_MIN, ...
std::string cl_highest(DType t);  // INFINITY, INT_MAX, ...

}  // namespace weft::opencl

// Shapes are row-major extents; rank 0 is a scalar with one element.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

using Shape = std::vector<std::int64_t>;

std::int64_t num_elements(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[3,4]", "[]" for scalars
std::vector<std::int64_t> row_major_strides(const Shape& shape);

}  // namespace weft

// How debug_print and hcb::id_print show array values: as numpy's array2string does (JAX's
// prints go through numpy), so a line printed by weft reads like the same line from JAX:
// "3.", "[0.5 1. ]", "[[1 2]\n [3 4]]", "[ True False]". HostArray::to_string is weft's own,
// comma-separated form for messages and the CLI.
#pragma once

#include <string>

#include "weft/host_array.h"

namespace weft {

// numpy's array2string with its default options: floats in positional notation with the
// fewest digits that read back to the same value (scientific when numpy would switch: values
// of 1e8 and above or below 1e-4, or a ratio of 1000 between the largest and smallest), a
// trailing "." on integral floats, elements padded to a common width, and arrays of more than
// 1000 elements elided to their first and last three per axis.
std::string format_for_print(const HostArray& array);

}  // namespace weft

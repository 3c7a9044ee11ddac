// jax.lax.associative_scan: every prefix of `elems` along `axis` combined by an associative
// function, in O(log n) rounds of element-wise work (the even/odd recursion JAX uses), so the
// whole scan fuses into a few kernels instead of a loop of n steps. Each element is a tuple of
// arrays (a pytree's leaves in JAX) sharing the scanned axis.
#pragma once

#include <cstdint>
#include <functional>
#include <source_location>
#include <vector>

#include "weft/array.h"

namespace weft::lax {

// fn(a, b) combines two tuples of equal shapes element-wise, a before b; it must be
// associative (fn(fn(a, b), c) == fn(a, fn(b, c))) and keep each array's shape and dtype.
using AssociativeCombine =
    std::function<std::vector<Array>(const std::vector<Array>& a, const std::vector<Array>& b)>;

// Element k of the result combines elements 0..k along `axis` (k..n-1 when `reverse`, which
// scans the reversed sequence, as JAX's reverse=True). Throws ShapeError when the arrays do
// not share the axis's length or `axis` is out of range.
std::vector<Array> associative_scan(const AssociativeCombine& fn, const std::vector<Array>& elems,
                                    bool reverse = false, std::int64_t axis = 0,
                                    std::source_location loc = std::source_location::current());

}  // namespace weft::lax

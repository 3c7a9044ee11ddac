// ProgramPlan <-> JSON: the launch plan stored beside a cached binary (buffers, launches,
// outputs, kernel summaries and source). A hit never runs a stored plan: it regenerates the
// plan from the graph (tens of microseconds) and uses the binary only when the stored plan is
// the same, so no stored byte decides a buffer size or a launch.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "weft/opencl/program_plan.h"

namespace weft::opencl::detail {

std::string serialize_plan(const ProgramPlan& plan);
// Nullopt (with `error` set) for text that is not a plan of the current format.
std::optional<ProgramPlan> parse_plan(std::string_view text, std::string* error);

// Empty when `stored` launches the same kernels over the same buffers as `expected` and was
// generated from the same source with the same options; else the first difference, in words.
std::string plan_difference(const ProgramPlan& stored, const ProgramPlan& expected);

}  // namespace weft::opencl::detail

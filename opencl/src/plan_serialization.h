// ProgramPlan <-> JSON: the metadata a persistent-cache hit needs to run a stored binary
// without generating code again (buffers, launches, outputs and the kernel summaries).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "weft/opencl/program_plan.h"

namespace weft::opencl::detail {

std::string serialize_plan(const ProgramPlan& plan);
// Nullopt (with `error` set) for text that is not a plan of the current format.
std::optional<ProgramPlan> parse_plan(std::string_view text, std::string* error);

}  // namespace weft::opencl::detail

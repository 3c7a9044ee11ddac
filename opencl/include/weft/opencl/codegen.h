// Codegen: turns a graph into an OpenCL C program plus the launches that run it, using the
// device-neutral fusion plan from core/compile.
#pragma once

#include "weft/ir/graph.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl {

// The clBuildProgram options of every generated program.
inline constexpr const char* kProgramBuildOptions = "-cl-std=CL1.2";

// Throws DTypeError when the graph needs f64 and the device lacks cl_khr_fp64.
ProgramPlan plan_program(const Graph& graph, const DeviceCaps& caps);

}  // namespace weft::opencl

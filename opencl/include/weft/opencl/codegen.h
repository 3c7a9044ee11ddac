// Codegen: turns a graph into an OpenCL C program plus the launches that run it, using the
// device-neutral fusion plan from core/compile.
#pragma once

#include "weft/compile/fusion.h"
#include "weft/ir/graph.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl {

// The clBuildProgram options of every generated program.
inline constexpr const char* kProgramBuildOptions = "-cl-std=CL1.2";

// Throws DTypeError when the graph needs f64 and the device lacks cl_khr_fp64.
// `fusion` is for benchmarks and tests that study the planner (its reduction_body_copies is
// this code generator's own); the defaults are what weft uses.
ProgramPlan plan_program(const Graph& graph, const DeviceCaps& caps,
                         const FusionOptions& fusion = {});

}  // namespace weft::opencl

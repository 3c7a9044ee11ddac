// What codegen hands the runtime: one OpenCL C program and the steps that run it, block by
// block (the function, and each region of its control steps). Device-specific, graph-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "weft/backend.h"
#include "weft/dtype.h"

namespace weft::opencl {

struct BufferPlan {
  enum class Role {
    Input,   // parameter `index` of the block: the caller's buffer, or what its step passes
    Output,  // function output `index` (main block only): allocated by the run
    Temp,    // allocated by each run of its block
    Result,  // result `index` of the control, host or join step that produces it: bound when
             // it runs
  };
  Role role = Role::Temp;
  int index = 0;  // parameter, output or result index
  // May be 0 (empty arrays, tokens); the runtime allocates at least 1 byte for an array, and
  // a token is a buffer only for its ready event (it shares one never-written allocation).
  std::size_t bytes = 0;
  bool token = false;  // a token: only host, join and control steps pass it
};

struct LaunchPlan {
  std::string kernel;           // kernel function name in the program
  std::vector<int> args;        // BufferPlan indices of the block, in kernel argument order
  std::vector<int> writes;      // which of those the kernel writes
  std::size_t global_size = 0;  // 1-D; a multiple of local_size (0 launches are skipped)
  std::size_t local_size = 0;   // 0 lets the driver choose
  int summary = -1;             // the CompiledInfo::kernels entry this launch belongs to
  // The program's function that runs it when not `kernel` itself: codegen keeps one copy of
  // kernels whose code is the same (telemetry and errors still say `kernel`).
  std::string function = {};  // (an initializer: aggregate inits may leave it out)

  const std::string& function_name() const { return function.empty() ? kernel : function; }
};

struct BlockPlan;

// A host step: what it sends to the host and runs there (see weft/ir/effects.h).
struct HostPlan {
  bool is_print = false;            // debug_print; otherwise host_call
  std::string format;               // debug_print
  int callback = -1;                // host_call: slot in the executable's callback table
  std::string effect;               // empty: a pure callback
  bool ordered = false;             // it waits for operands[0], the effect's token
  bool token_in = false;            // operands[0] is a token
  bool token_out = false;           // results[0] is a token, ready once the host has run it
  std::vector<TensorType> args;     // the arrays sent, after the token operand
  std::vector<TensorType> returns;  // the arrays the host returns, after the token result
  bool operator==(const HostPlan&) const = default;
};

struct StepPlan {
  enum class Kind {
    Launch,  // one kernel launch
    Loop,    // regions[0] run `length` times, enqueued without a host round trip
    While,   // regions[0] computes the predicate (read on the host), regions[1] the body
    Cond,    // the region that operands[0] selects (read on the host)
    Host,    // `host`: operands go to the host, which prints or calls back and binds results
    Join,    // results[0]: a token ready once every operand (a token) is
  };
  Kind kind = Kind::Launch;
  LaunchPlan launch;  // Launch

  // Control steps. Operands and results are buffers of the enclosing block, laid out as the
  // control op's are (see weft/ir/regions.h): a loop's body takes the iteration number (an i32
  // buffer the runtime fills), the carries, one row of each xs (copied out) and the captured
  // values, and returns the carries and one row of each stacked result (copied in).
  std::vector<int> operands;
  std::vector<int> results;
  std::vector<BlockPlan> regions;
  int carries = 0;                  // Loop, While
  int xs = 0;                       // Loop
  std::int64_t length = 0;          // Loop
  bool reverse = false;             // Loop
  DType index_dtype = DType::Bool;  // Cond: bool picks regions[1] when true; integers clamp
  HostPlan host;                    // Host

  // Defined after BlockPlan: constructing a StepPlan needs its regions' type complete.
  static StepPlan of(LaunchPlan launch);
};

struct BlockPlan {
  std::vector<BufferPlan> buffers;
  std::vector<StepPlan> steps;  // in an order that respects data dependencies
  std::vector<int> outputs;     // buffer per output (an Input buffer when passed through)
  int num_params = 0;           // parameters of the block (not all need a buffer)
};

inline StepPlan StepPlan::of(LaunchPlan launch) {
  StepPlan step;
  step.launch = std::move(launch);
  return step;
}

struct ProgramPlan : BlockPlan {
  std::string source;         // OpenCL C 1.2, every block's kernels
  std::string build_options;  // passed to clBuildProgram
  CompiledInfo info;
};

// Every launch of a block and of its regions, in step order.
std::vector<const LaunchPlan*> all_launches(const BlockPlan& block);

// What codegen needs to know about a device.
struct DeviceCaps {
  bool fp64 = false;
  std::size_t max_work_group_size = 256;
  std::size_t local_mem_bytes = 32768;
  std::uint32_t compute_units = 1;
  bool is_gpu = false;
  std::uint32_t native_float_vector_width = 1;  // floats per native vector register
  // f32 exp, log, tanh, ... by the driver's builtins instead of weft's vectorisable ones
  // (WEFT_MATH; the default on GPUs, whose builtins already run on vector hardware).
  bool builtin_math = false;
  // Scatters fold their updates in a fixed order, one work-item per result element, instead of
  // combining them atomically in whatever order work-items run (WEFT_DETERMINISTIC_SCATTER=1).
  bool deterministic_scatter = false;
  // 64-bit compare-and-swap (cl_khr_int64_base_atomics): f64 and 64-bit integer scatters combine
  // atomically where they would otherwise take the ordered kernel.
  bool int64_atomics = false;
};

}  // namespace weft::opencl

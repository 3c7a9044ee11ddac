// Tiered execution: a program's first calls may run on the reference interpreter while its
// kernels build in the background, as JavaScript engines run a function in their interpreter
// before its optimised code is ready (docs/runtime.md, "Tiered execution").
//
//   WEFT_TIERED=1 (default)      automatic: a call the interpreter finishes sooner than the
//                                build runs there; a program called often builds in the
//                                background and switches to its kernels once built
//   WEFT_TIERED=0                never: every program builds before its first call runs
//   WEFT_TIERED=interpreter      every call of a program not in the persistent cache runs on
//                                the interpreter, and nothing builds (debugging, tests)
//
// The interpreter rounds every result to its dtype as the kernels do, but its transcendental
// functions and summation order are its own: results agree within the documented accuracy,
// not bit for bit. WEFT_TIERED=0 gives the same bits on every run.
#pragma once

#include <optional>
#include <string_view>

namespace weft::opencl {

enum class Tiering { off, automatic, interpreter };

// set_tiering() wins, then WEFT_TIERED (read at each compile), then automatic.
Tiering tiering();
void set_tiering(std::optional<Tiering> tiering);  // nullopt: back to WEFT_TIERED
std::string_view to_string(Tiering tiering);

}  // namespace weft::opencl

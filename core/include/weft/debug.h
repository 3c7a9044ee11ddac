// Where debug_print and id_print write. Each print is written whole, with its newline, under
// one lock and flushed, so prints from several devices and threads never interleave mid-line.
#pragma once

#include <ostream>
#include <string_view>

namespace weft {

// nullptr (the default) writes to std::cout. The stream must outlive every print that may still
// run (effects_barrier() waits for them).
void set_debug_print_stream(std::ostream* stream);

// Writes `text` and a newline to the debug print stream (used by the interpreter and devices).
void write_debug_print(std::string_view text);

}  // namespace weft

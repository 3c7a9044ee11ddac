#include <iostream>
#include <mutex>

#include "weft/debug.h"

namespace weft {

namespace {

struct DebugOutput {
  std::mutex mutex;
  std::ostream* stream = nullptr;
};

DebugOutput& output() {
  // Never destroyed: prints may run from exit handlers that drain pending callbacks.
  static DebugOutput* instance = new DebugOutput();
  return *instance;
}

}  // namespace

void set_debug_print_stream(std::ostream* stream) {
  DebugOutput& out = output();
  std::lock_guard lock(out.mutex);
  out.stream = stream;
}

void write_debug_print(std::string_view text) {
  DebugOutput& out = output();
  std::lock_guard lock(out.mutex);
  std::ostream& stream = out.stream ? *out.stream : std::cout;
  stream << text << '\n';
  stream.flush();
}

}  // namespace weft

#include "weft/opencl/tiering.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "weft/log.h"

namespace weft::opencl {

namespace {

// -1: unset; else a Tiering.
std::atomic<int> chosen{-1};

Tiering from_environment() {
  const char* value = std::getenv("WEFT_TIERED");
  if (!value || !*value) return Tiering::automatic;
  const std::string_view text(value);
  if (text == "1" || text == "auto") return Tiering::automatic;
  if (text == "0") return Tiering::off;
  if (text == "interpreter") return Tiering::interpreter;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    log::warning("runtime", "WEFT_TIERED=\"" + std::string(text) +
                                "\" is none of 1, 0, interpreter; using 1 (automatic)");
  });
  return Tiering::automatic;
}

}  // namespace

Tiering tiering() {
  const int value = chosen.load(std::memory_order_relaxed);
  return value < 0 ? from_environment() : static_cast<Tiering>(value);
}

void set_tiering(std::optional<Tiering> tiering) {
  chosen.store(tiering ? static_cast<int>(*tiering) : -1, std::memory_order_relaxed);
}

std::string_view to_string(Tiering tiering) {
  switch (tiering) {
    case Tiering::off:
      return "off";
    case Tiering::automatic:
      return "automatic";
    case Tiering::interpreter:
      return "interpreter";
  }
  return "automatic";
}

}  // namespace weft::opencl

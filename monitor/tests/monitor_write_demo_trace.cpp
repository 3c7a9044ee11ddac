// monitor_write_demo_trace PATH: writes the tests' demo trace (two threads printing, one pair
// out of order; compiles, kernels, cache lookups) to PATH, to open in weft-monitor by hand.
#include <cstdio>
#include <exception>

#include "support/synthetic_trace.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: monitor_write_demo_trace PATH\n");
    return 2;
  }
  try {
    weft::monitor::testing::demo_trace().write(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "monitor_write_demo_trace: %s\n", e.what());
    return 1;
  }
  return 0;
}

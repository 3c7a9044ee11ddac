// What every example shares: its command line (--size small|full, --check ORACLE.json,
// --device NAME), the oracle data its JAX twin wrote (examples/README.md), the comparison of a
// result with the twin's, and the timing of a step at the full size.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::examples {

struct Options {
  std::string size = "small";  // "small" (CTest) or "full" (by hand; JAX twin beside it)
  std::string check;           // the twin's oracle file; empty: no check
  int repeats = 10;            // timed calls at the full size
};
// Parses argv; prints usage and exits 2 on a bad command line.
Options parse_options(int argc, char** argv, const char* what);

// Named arrays from the oracle file's "inputs", "params" or "expected" section.
using Named = std::map<std::string, HostArray>;
struct Oracle {
  nlohmann::json sizes;
  Named inputs, params, expected;
};
// Reads and validates the file (a clear weft::Error when it is missing or malformed).
Oracle load_oracle(const std::string& path);

// Device arrays of the entries whose names start with `prefix` + "." (the prefix removed), or
// of every entry when `prefix` is empty: a parameter tree flattened by name.
std::map<std::string, Array> device_arrays(const Named& named, const std::string& prefix = "");

// Compares one result with the twin's: exact for integers and bool, else within
// rtol * (|want| + max |want|) + atol. Prints a line per check and counts failures.
class Checker {
 public:
  void expect(const std::string& name, const HostArray& got, const HostArray& want,
              double rtol = 1e-4, double atol = 1e-6);
  void expect(const std::string& name, const Array& got, const HostArray& want, double rtol = 1e-4,
              double atol = 1e-6) {
    expect(name, got.to_host(), want, rtol, atol);
  }
  // The process exit code: 0 when every check passed, 3 otherwise (as `weft run --check`).
  int exit_code() const;

 private:
  int checks_ = 0, failures_ = 0;
};

// Key i of a key array u32[n, 2] (JAX's keys[i]).
Array key_at(const Array& keys, std::int64_t i);

// Seconds of the first call of `step` and the median of `repeats` more (each waits for its
// results), printed as "NAME full: first call X ms, step median Y ms". The clock starts once
// `inputs` are computed: their programs run asynchronously and are not the step's cost (the JAX
// twins wait for theirs too).
void time_step(const std::string& name, const std::vector<Array>& inputs,
               const std::function<void()>& step, int repeats);

}  // namespace weft::examples

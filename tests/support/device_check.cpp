#include "support/device_check.h"

#include "support/test_support.h"
#include "weft/interp/interpreter.h"

namespace weft::testing {

std::string check_against_interpreter(const MultiFn& fn, const std::vector<HostArray>& inputs,
                                      double rtol, double atol) {
  auto f = jit([&fn](const std::vector<Array>& xs) { return fn(xs); }, {.name = "checked"});
  std::vector<Array> args;
  for (const auto& h : inputs) args.push_back(Array::from_host(h));
  std::vector<Array> got = f(args);
  Lowered lowered = f.lower(args);
  std::vector<HostArray> expected = interpret(lowered.graph(), inputs);
  if (got.size() != expected.size()) return "output count differs";
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::string diff = compare_arrays(got[i].to_host(), expected[i], rtol, atol);
    if (!diff.empty())
      return "output " + std::to_string(i) + ": " + diff + "\n" + lowered.as_text();
  }
  return {};
}

HostArray random_array(DType dtype, const Shape& shape, double lo, double hi, std::mt19937& rng) {
  HostArray a(dtype, shape);
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<std::int64_t> integer(static_cast<std::int64_t>(lo),
                                                      static_cast<std::int64_t>(hi));
  for (std::int64_t i = 0; i < a.size(); ++i) {
    if (is_float(dtype)) {
      a.set_f64(i, real(rng));
    } else if (dtype == DType::Bool) {
      a.set_i64(i, static_cast<std::int64_t>(rng() & 1));
    } else {
      a.set_i64(i, integer(rng));
    }
  }
  return a;
}

}  // namespace weft::testing

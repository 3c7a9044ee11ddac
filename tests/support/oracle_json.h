// Shared by the tests that compare weft with JAX results committed as JSON (written by
// tools/oracles/*.py): arrays as {"dtype", "shape", "values"}, and the comparison with a
// relative tolerance scaled by the array's largest value.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft::testing {

inline HostArray host_array(const nlohmann::json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const nlohmann::json& values = spec.at("values");
  if (values.size() != static_cast<std::size_t>(h.size()))
    throw std::runtime_error("wrong number of values in " + spec.dump());
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const nlohmann::json& v = values.at(static_cast<std::size_t>(i));
    if (v.is_string()) {  // non-finite floats: "nan", "inf", "-inf"
      const std::string text = v.get<std::string>();
      if (text != "nan" && text != "inf" && text != "-inf")
        throw std::runtime_error("unknown value \"" + text + "\" in " + spec.dump());
      h.set_f64(i, text == "nan" ? std::nan("") : text == "inf" ? INFINITY : -INFINITY);
    } else if (is_float(*dtype)) {
      h.set_f64(i, v.get<double>());
    } else {
      h.set_i64(i, v.get<std::int64_t>());
    }
  }
  return h;
}

inline std::vector<HostArray> host_arrays(const nlohmann::json& specs) {
  std::vector<HostArray> out;
  for (const nlohmann::json& s : specs) out.push_back(host_array(s));
  return out;
}

inline std::vector<Array> device_arrays(const std::vector<HostArray>& hosts) {
  std::vector<Array> out;
  for (const HostArray& h : hosts) out.push_back(Array::from_host(h));
  return out;
}

// "f32[2,3] [1, 2, ...]", for failure messages.
inline std::string describe_values(const HostArray& h) {
  std::ostringstream out;
  out << dtype_name(h.dtype()) << shape_to_string(h.shape()) << " [";
  for (std::int64_t i = 0; i < h.size(); ++i) out << (i ? ", " : "") << h.get_f64(i);
  out << "]";
  return out.str();
}

// Empty when `got` has want's dtype and shape, and each float element is within
// rtol * (|want| + the array's largest |value|) + 1e-7 (integers exactly). The values are
// O(1): 1e-7 (about an f32 epsilon) lets an all-zero array be off by rounding noise.
inline std::string compare_values(const HostArray& got, const HostArray& want, double rtol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + describe_values(got) + ", want " + describe_values(want);
  double scale = 0;
  for (std::int64_t i = 0; i < want.size(); ++i) scale = std::max(scale, std::abs(want.get_f64(i)));
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const double g = got.get_f64(i), w = want.get_f64(i);
    const double allowed = is_float(want.dtype()) ? rtol * (std::abs(w) + scale) + 1e-7 : 0;
    if (!(std::abs(g - w) <= allowed)) {
      std::ostringstream out;
      out.precision(9);
      out << "element " << i << ": got " << g << ", want " << w << " (allowed " << allowed
          << ")\n  got  " << describe_values(got) << "\n  want " << describe_values(want);
      return out.str();
    }
  }
  return {};
}

// compare_values, with NaN matching NaN and an infinity the same infinity.
inline std::string compare_values_nonfinite(const HostArray& got, const HostArray& want,
                                            double rtol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape() || !is_float(want.dtype()))
    return compare_values(got, want, rtol);
  HostArray g = got, w = want;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want.get_f64(i)) != std::isnan(got.get_f64(i)))
      return "element " + std::to_string(i) + ": NaN on one side only\n  got  " +
             describe_values(got) + "\n  want " + describe_values(want);
    if (std::isnan(want.get_f64(i)) ||
        (std::isinf(want.get_f64(i)) && got.get_f64(i) == want.get_f64(i))) {
      g.set_f64(i, 0);
      w.set_f64(i, 0);
    }
  }
  return compare_values(g, w, rtol);
}

// The message of the `E` that `f` throws, or "no error".
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

// A case file loaded once: a file that fails to load leaves no cases and the reason, which a
// table test reports (the list of parameterised tests is built before any test runs).
template <typename Case>
struct LoadedCases {
  std::vector<Case> cases;
  std::string error;
};
template <typename Case>
LoadedCases<Case> load_or_explain(std::vector<Case> (*load)()) {
  LoadedCases<Case> loaded;
  try {
    loaded.cases = load();
  } catch (const std::exception& e) {
    loaded.error = e.what();
  }
  return loaded;
}

}  // namespace weft::testing

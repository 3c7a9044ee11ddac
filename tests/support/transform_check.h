// Shared by the transformation tests: the widest float dtype the default device has (f64 for
// finite differences where it can), random arrays of it, checks against central finite
// differences, and JAX host_callback documentation's power3.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "weft/hcb.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/weft.h"

namespace weft::testing {

inline DType widest_float() {
  return default_device().supports(DType::F64) ? DType::F64 : DType::F32;
}

inline Array random_float(const Shape& shape, double lo, double hi, std::mt19937& rng) {
  return Array::from_host(random_array(widest_float(), shape, lo, hi, rng));
}

inline std::vector<double> values(const Array& a) {
  const HostArray h = a.to_host();
  std::vector<double> out(static_cast<std::size_t>(h.size()));
  for (std::int64_t i = 0; i < h.size(); ++i) out[static_cast<std::size_t>(i)] = h.get_f64(i);
  return out;
}

// Central differences of f along `tangents`, elementwise against jvp's tangent.
inline void expect_tangent_matches_differences(const ArrayFunction& f,
                                               const std::vector<Array>& primals,
                                               const std::vector<Array>& tangents,
                                               const std::string& what) {
  const double h = widest_float() == DType::F64 ? 1e-6 : 1e-2;
  const double tolerance = widest_float() == DType::F64 ? 1e-6 : 2e-2;
  const JvpResult r = jvp(f, primals, tangents);
  std::vector<Array> plus, minus;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    plus.push_back(primals[i] + tangents[i] * h);
    minus.push_back(primals[i] - tangents[i] * h);
  }
  const std::vector<Array> f_plus = f(plus), f_minus = f(minus), f_at = f(primals);
  ASSERT_EQ(r.tangents_out.size(), f_at.size()) << what;
  for (std::size_t k = 0; k < f_at.size(); ++k) {
    const std::vector<double> got = values(r.tangents_out[k]);
    const std::vector<double> primal = values(r.primals_out[k]);
    const std::vector<double> expected_primal = values(f_at[k]);
    const std::vector<double> up = values(f_plus[k]), down = values(f_minus[k]);
    ASSERT_EQ(got.size(), up.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double fd = (up[i] - down[i]) / (2 * h);
      EXPECT_NEAR(got[i], fd, tolerance * (1 + std::abs(fd)))
          << what << ": output " << k << " element " << i;
      EXPECT_NEAR(primal[i], expected_primal[i], 1e-12 * (1 + std::abs(expected_primal[i])))
          << what << ": primal output " << k << " element " << i;
    }
  }
}

// grad against central differences: for each argument, <grad, d> along a random direction d.
// `f`'s first output is the float scalar grad differentiates.
inline void expect_grad_matches_differences(const ArrayFunction& f,
                                            const std::vector<Array>& primals, std::mt19937& rng,
                                            const std::string& what) {
  const bool f64 = widest_float() == DType::F64;
  const double h = f64 ? 1e-6 : 1e-2;
  const double tolerance = f64 ? 1e-6 : 2e-2;
  std::vector<int> argnums;
  for (std::size_t i = 0; i < primals.size(); ++i) argnums.push_back(static_cast<int>(i));
  const std::vector<Array> grads = grad(f, {.argnums = argnums})(primals);
  ASSERT_EQ(grads.size(), primals.size()) << what;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    const Array d = random_float(primals[i].shape(), -1, 1, rng);
    std::vector<Array> plus = primals, minus = primals;
    plus[i] = primals[i] + d * h;
    minus[i] = primals[i] - d * h;
    const double fd = (values(f(plus).at(0))[0] - values(f(minus).at(0))[0]) / (2 * h);
    const std::vector<double> g = values(grads[i]), dv = values(d);
    double directional = 0;
    for (std::size_t j = 0; j < g.size(); ++j) directional += g[j] * dv[j];
    EXPECT_NEAR(directional, fd, tolerance * (1 + std::abs(fd))) << what << ": argument " << i;
  }
}

// JAX host_callback documentation's example: prints "what: x,x² : (x, x²)" and returns x³.
inline Array power3(const Array& x) {
  const Array y = x * x;
  hcb::id_print({x, y}, {.what = "x,x²"});
  return y * x;
}

}  // namespace weft::testing

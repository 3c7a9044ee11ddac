// Cumulative ops, rev and sorting against JAX (tools/oracles/scans_sort.py writes the cases): each
// case runs under jit on the default device (the cases of one op as one program) and in the
// reference interpreter, plain, under grad, or under vmap. Long device scans are also checked
// against a loop computed here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/op_attrs.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

// testing::compare_values, where equal infinities and NaN against NaN also agree.
std::string compare_values(const HostArray& got, const HostArray& want, double rtol) {
  if (got.dtype() == want.dtype() && got.shape() == want.shape() && is_float(want.dtype())) {
    HostArray got_finite = got, want_finite = want;
    for (std::int64_t i = 0; i < want.size(); ++i) {
      const double g = got.get_f64(i), w = want.get_f64(i);
      const bool same = (std::isnan(g) && std::isnan(w)) || (std::isinf(w) && g == w);
      if (same) got_finite.set_f64(i, 0), want_finite.set_f64(i, 0);
    }
    return testing::compare_values(got_finite, want_finite, rtol);
  }
  return testing::compare_values(got, want, rtol);
}

struct Case {
  std::string name, op, transform;
  nlohmann::json attrs;
  double rtol = 1e-5;
  std::vector<HostArray> inputs;
  HostArray expected;
};

// Like testing::host_array, with non-finite floats written as strings ("nan", "inf", "-inf").
HostArray read_array(const nlohmann::json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const nlohmann::json& values = spec.at("values");
  if (values.size() != static_cast<std::size_t>(h.size()))
    throw std::runtime_error("wrong number of values in " + spec.dump());
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const nlohmann::json& v = values.at(static_cast<std::size_t>(i));
    if (v.is_string())
      h.set_f64(i, std::stod(v.get<std::string>()));
    else if (is_float(*dtype))
      h.set_f64(i, v.get<double>());
    else
      h.set_i64(i, v.get<std::int64_t>());
  }
  return h;
}

std::vector<Case> load_cases() {
  const std::string path = std::string(WEFT_SCANS_SORT_ORACLE_DIR) + "/cases.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<Case> cases;
  for (const nlohmann::json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name").get<std::string>();
    k.op = c.at("op").get<std::string>();
    k.transform = c.at("transform").get<std::string>();
    k.attrs = c.at("attrs");
    k.rtol = c.at("rtol").get<double>();
    for (const nlohmann::json& a : c.at("inputs")) k.inputs.push_back(read_array(a));
    k.expected = read_array(c.at("expected"));
    cases.push_back(std::move(k));
  }
  return cases;
}

const testing::LoadedCases<Case>& loaded() {
  static const testing::LoadedCases<Case> cases = testing::load_or_explain(load_cases);
  return cases;
}

// The op a case names, as weft::lax spells it.
std::function<Array(const Array&)> op_of(const Case& c) {
  const nlohmann::json& a = c.attrs;
  using Cumulative = Array (*)(const Array&, std::int64_t, bool, std::source_location);
  const std::map<std::string, Cumulative> cumulative = {{"cumsum", lax::cumsum},
                                                        {"cumprod", lax::cumprod},
                                                        {"cummax", lax::cummax},
                                                        {"cummin", lax::cummin},
                                                        {"cumlogsumexp", lax::cumlogsumexp}};
  if (const auto it = cumulative.find(c.op); it != cumulative.end())
    return [a, fn = it->second](const Array& x) {
      return fn(x, a.at("axis").get<std::int64_t>(), a.at("reverse").get<int>() != 0,
                std::source_location::current());
    };
  if (c.op == "sort")
    return [a](const Array& x) { return lax::sort(x, a.at("dimension").get<std::int64_t>()); };
  if (c.op == "argsort")
    return [a](const Array& x) { return lax::argsort({x}, a.at("dimension").get<std::int64_t>()); };
  if (c.op == "top_k_values")
    return [a](const Array& x) { return lax::top_k(x, a.at("k").get<std::int64_t>()).first; };
  if (c.op == "top_k_indices")
    return [a](const Array& x) { return lax::top_k(x, a.at("k").get<std::int64_t>()).second; };
  if (c.op == "np_cumsum" || c.op == "np_cumprod") {
    const bool sum = c.op == "np_cumsum";
    return [a, sum](const Array& x) {
      const std::optional<std::int64_t> axis =
          a.at("axis").is_null() ? std::nullopt
                                 : std::optional<std::int64_t>(a.at("axis").get<std::int64_t>());
      return sum ? np::cumsum(x, axis) : np::cumprod(x, axis);
    };
  }
  if (c.op == "np_flip")
    return [a](const Array& x) { return np::flip(x, a.at("axes").get<lax::Axes>()); };
  if (c.op == "np_sort" || c.op == "np_argsort") {
    const bool values = c.op == "np_sort";
    return [a, values](const Array& x) {
      const std::optional<std::int64_t> axis =
          a.at("axis").is_null() ? std::nullopt
                                 : std::optional<std::int64_t>(a.at("axis").get<std::int64_t>());
      return values ? np::sort(x, axis) : np::argsort(x, axis);
    };
  }
  if (c.op == "assoc_affine")
    return [a](const Array& x) {
      const lax::AssociativeCombine compose = [](const std::vector<Array>& first,
                                                 const std::vector<Array>& second) {
        return std::vector<Array>{lax::mul(first[0], second[0]),
                                  lax::add(lax::mul(second[0], first[1]), second[1])};
      };
      const Array scale = lax::mul(
          lax::tanh(x), lax::broadcast_in_dim(lax::constant(0.5, x.dtype()), x.shape(), {}));
      return lax::associative_scan(compose, {scale, x}, a.at("reverse").get<int>() != 0,
                                   a.at("axis").get<std::int64_t>())[1];
    };
  if (c.op == "rev")
    return [a](const Array& x) { return lax::rev(x, a.at("dimensions").get<lax::Axes>()); };
  throw std::runtime_error("scans_sort_test: no weft twin for op " + c.op);
}

// What the case computes, as a function of its inputs.
ArrayFunction function_of(const Case& c) {
  if (c.op == "argsort_keys")
    return [d = c.attrs.at("dimension").get<std::int64_t>()](const std::vector<Array>& keys) {
      return std::vector<Array>{lax::argsort(keys, d)};
    };
  if (c.op == "sort_key_val")
    return [d = c.attrs.at("dimension").get<std::int64_t>()](const std::vector<Array>& kv) {
      return std::vector<Array>{lax::sort_key_val(kv[0], kv[1], d).second};
    };
  const auto op = op_of(c);
  if (c.transform == "none")
    return [op](const std::vector<Array>& xs) { return std::vector<Array>{op(xs[0])}; };
  if (c.transform == "grad")
    return [op](const std::vector<Array>& xs) {
      const Array& w = xs[1];
      auto loss = [op, w](const std::vector<Array>& args) {
        const Array y = lax::mul(op(args[0]), w);
        lax::Axes all(static_cast<std::size_t>(y.shape().size()));
        for (std::size_t d = 0; d < all.size(); ++d) all[d] = static_cast<std::int64_t>(d);
        return std::vector<Array>{lax::reduce_sum(y, all)};
      };
      return grad(loss)({xs[0]});
    };
  if (c.transform == "vmap")
    return [op](const std::vector<Array>& xs) { return std::vector<Array>{vmap(op)(xs[0])}; };
  throw std::runtime_error("scans_sort_test: unknown transform " + c.transform);
}

// The cases whose names start with `prefix`, as one jit program on the device and in the
// interpreter (a program per case cost a PoCL build each).
void run_cases_with_prefix(const std::string& prefix) {
  ASSERT_EQ(loaded().error, "");
  std::vector<testing::OracleCase> table;
  for (const Case& c : loaded().cases)
    if (c.name.rfind(prefix, 0) == 0)
      table.push_back({.name = c.name,
                       .eager_group = "",
                       .args = c.inputs,
                       .expected = {c.expected},
                       .fn = function_of(c),
                       .compare = [rtol = c.rtol](const HostArray& got, const HostArray& want) {
                         return compare_values(got, want, rtol);
                       }});
  ASSERT_FALSE(table.empty()) << "no case named " << prefix << "...";
  testing::expect_oracle_cases(table, "scans_sort_" + prefix + "_cases");
}

TEST(ScansSort, CumsumFollowsJax) {
  run_cases_with_prefix("cumsum");
}
TEST(ScansSort, CumprodFollowsJax) {
  run_cases_with_prefix("cumprod");
}
TEST(ScansSort, CummaxFollowsJax) {
  run_cases_with_prefix("cummax");
}
TEST(ScansSort, CumminFollowsJax) {
  run_cases_with_prefix("cummin");
}
TEST(ScansSort, RevFollowsJax) {
  run_cases_with_prefix("rev");
}
TEST(ScansSort, NumpyLayerFollowsJax) {
  run_cases_with_prefix("np_");
}
TEST(ScansSort, SortFollowsJax) {
  run_cases_with_prefix("sort");
}
TEST(ScansSort, ArgsortFollowsJax) {
  run_cases_with_prefix("argsort");
}
TEST(ScansSort, TopKFollowsJax) {
  run_cases_with_prefix("top_k");
}
TEST(ScansSort, CumlogsumexpFollowsJax) {
  run_cases_with_prefix("cumlogsumexp");
}
TEST(ScansSort, AssociativeScanFollowsJax) {
  run_cases_with_prefix("assoc_affine");
}

TEST(ScansSort, AssociativeScanNamesMismatchedArrays) {
  const Array a = Array::from_vector<float>({3}, {1, 2, 3});
  const Array b = Array::from_vector<float>({4}, {1, 2, 3, 4});
  const lax::AssociativeCombine first = [](const std::vector<Array>& x, const std::vector<Array>&) {
    return x;
  };
  try {
    lax::associative_scan(first, {a, b});
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("lax::associative_scan"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[4]"), std::string::npos) << e.what();
  }
  const lax::AssociativeCombine dropping = [](const std::vector<Array>& x,
                                              const std::vector<Array>&) {
    return std::vector<Array>{x[0]};
  };
  EXPECT_THROW(lax::associative_scan(dropping, {a, a}), ShapeError);
  EXPECT_THROW(lax::associative_scan(first, {a}, false, 1), ShapeError);
}

// The number of launches in a plan (no control steps here).
int launches_of(const opencl::BlockPlan& block) {
  int launches = 0;
  for (const opencl::StepPlan& step : block.steps)
    launches += step.kind == opencl::StepPlan::Kind::Launch;
  return launches;
}

// A long i32 cumsum (three levels of block totals) wraps as a loop computed here does, and runs
// in a handful of launches, not one per element or block.
TEST(ScansSort, LongIntegerCumsumIsAParallelScan) {
  const std::int64_t n = 4'300'001;
  HostArray x(DType::I32, {n});
  for (std::int64_t i = 0; i < n; ++i)
    x.set_i64(i, (i * 7919) % 2001 - 1000 + (i % 3 == 0 ? 1 << 20 : 0));
  for (const bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    auto traced = jit([reverse](const Array& v) { return lax::cumsum(v, 0, reverse); });
    const Array arg = Array::from_host(x);
    const HostArray got = traced(arg).to_host();
    std::uint32_t acc = 0;
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = reverse ? n - 1 - k : k;
      acc += static_cast<std::uint32_t>(x.get_i64(i));
      if (got.get_i64(i) != static_cast<std::int32_t>(acc)) {
        if (first_wrong < 0) first_wrong = i;
        ++wrong;
      }
    }
    EXPECT_EQ(wrong, 0) << "first wrong element " << first_wrong;
    auto exe = std::dynamic_pointer_cast<opencl::OpenCLExecutable>(traced.lower(arg).compile());
    ASSERT_NE(exe, nullptr);
    EXPECT_LE(launches_of(exe->plan()), 5);
    ASSERT_EQ(exe->info().kernels.size(), 1u);
    EXPECT_EQ(exe->info().kernels[0].kind, "own");
  }
}

// Lines of 8192 elements and more stream in chunks (scan_kernel.cpp): several lines, a line
// that ends inside a chunk and inside a group of eight or sixteen, both directions, every
// combine, forward f32/f64 sums (vectors), and the dtypes whose storage or arithmetic differs
// (halves combine in float; small integers wrap).
TEST(ScansSort, LongLinesStreamForEveryScanAndDtype) {
  const Shape shape{3, 20001};
  std::mt19937 rng(31);
  const std::vector<HostArray> wide = {
      testing::random_array(DType::F32, shape, -1, 1, rng),
      testing::random_array(DType::F32, shape, 0.9999, 1.0001, rng),
      testing::random_array(DType::F64, shape, -2, 2, rng),
      testing::random_array(DType::I8, shape, -100, 100, rng),
      testing::random_array(DType::U64, shape, 0, 1e6, rng),
      testing::random_array(DType::I32, shape, -1000, 1000, rng)};
  EXPECT_EQ(testing::check_against_interpreter(
                [](const std::vector<Array>& xs) {
                  std::vector<Array> r;
                  r.push_back(lax::cumsum(xs[0], 1));
                  r.push_back(lax::cumsum(xs[0], 1, true));
                  r.push_back(lax::cumprod(xs[1], 1, true));
                  r.push_back(lax::cummax(xs[0], 1));
                  r.push_back(lax::cummin(xs[0], 1, true));
                  r.push_back(lax::cumlogsumexp(xs[2], 1, true));
                  r.push_back(lax::cumsum(xs[2], 1));  // f64 in vectors, as forward f32
                  r.push_back(lax::cumsum(xs[3], 1));
                  r.push_back(lax::cumprod(xs[3], 1, true));
                  r.push_back(lax::cumsum(xs[4], 1, true));
                  r.push_back(lax::cummax(xs[5], 1, true));
                  return r;
                },
                wide, 1e-4, 1e-3),
            "");
  // Halves: results rounded once, from float sums whose order differs.
  const std::vector<HostArray> halves = {testing::random_array(DType::F16, shape, -1, 1, rng),
                                         testing::random_array(DType::BF16, shape, -1, 1, rng)};
  EXPECT_EQ(testing::check_against_interpreter(
                [](const std::vector<Array>& xs) {
                  return std::vector<Array>{lax::cumsum(xs[0], 1), lax::cumsum(xs[1], 1, true)};
                },
                halves, 1e-2, 2),
            "");
}

}  // namespace
}  // namespace weft

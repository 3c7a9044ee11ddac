// Functions built on sorting and on masks with static sizes against JAX
// (tools/oracles/sort_family.py writes the cases): each case runs under jit on the default
// device and in the reference interpreter, and every output is compared with JAX's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "support/oracle_json.h"
#include "weft/interp/interpreter.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/weft.h"

namespace weft {
namespace {

// testing::compare_values, where equal infinities and NaN against NaN also agree.
std::string compare_values(const HostArray& got, const HostArray& want) {
  if (got.dtype() == want.dtype() && got.shape() == want.shape() && is_float(want.dtype())) {
    HostArray got_finite = got, want_finite = want;
    for (std::int64_t i = 0; i < want.size(); ++i) {
      const double g = got.get_f64(i), w = want.get_f64(i);
      const bool same = (std::isnan(g) && std::isnan(w)) || (std::isinf(w) && g == w);
      if (same) got_finite.set_f64(i, 0), want_finite.set_f64(i, 0);
    }
    return testing::compare_values(got_finite, want_finite, 0);
  }
  return testing::compare_values(got, want, 0);
}

struct Case {
  std::string name, op;
  nlohmann::json attrs;
  std::vector<HostArray> inputs, expected;
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
  const std::string path = std::string(WEFT_SORT_FAMILY_ORACLE_DIR) + "/cases.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<Case> cases;
  for (const nlohmann::json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name").get<std::string>();
    k.op = c.at("op").get<std::string>();
    k.attrs = c.at("attrs");
    for (const nlohmann::json& a : c.at("inputs")) k.inputs.push_back(read_array(a));
    for (const nlohmann::json& a : c.at("expected")) k.expected.push_back(read_array(a));
    cases.push_back(std::move(k));
  }
  return cases;
}

const testing::LoadedCases<Case>& loaded() {
  static const testing::LoadedCases<Case> cases = testing::load_or_explain(load_cases);
  return cases;
}

// What the case computes, as weft spells it.
ArrayFunction function_of(const Case& c) {
  const nlohmann::json& a = c.attrs;
  if (c.op == "searchsorted") {
    const np::Side side = a.at("side") == "left" ? np::Side::left : np::Side::right;
    return [side](const std::vector<Array>& xs) {
      return std::vector<Array>{np::searchsorted(xs[0], xs[1], side)};
    };
  }
  if (c.op == "searchsorted_sorter") {
    const np::Side side = a.at("side") == "left" ? np::Side::left : np::Side::right;
    return [side](const std::vector<Array>& xs) {
      return std::vector<Array>{np::searchsorted(xs[0], xs[1], side, xs[2])};
    };
  }
  if (c.op == "lax_sort")
    return [d = a.at("dimension").get<std::int64_t>(), k = a.at("num_keys").get<std::int64_t>()](
               const std::vector<Array>& xs) { return lax::sort(xs, d, k); };
  if (c.op == "sort_key_val")
    return [d = a.at("dimension").get<std::int64_t>()](const std::vector<Array>& xs) {
      const auto [k, v] = lax::sort_key_val(xs[0], xs[1], d);
      return std::vector<Array>{k, v};
    };
  if (c.op == "nonzero")
    return [size = a.at("size").get<std::int64_t>(), fill = a.at("fill_value").get<std::int64_t>()](
               const std::vector<Array>& xs) { return np::nonzero(xs[0], size, fill); };
  if (c.op == "argwhere" || c.op == "flatnonzero") {
    const bool rows = c.op == "argwhere";
    return [rows, size = a.at("size").get<std::int64_t>(),
            fill = a.at("fill_value").get<std::int64_t>()](const std::vector<Array>& xs) {
      return std::vector<Array>{rows ? np::argwhere(xs[0], size, fill)
                                     : np::flatnonzero(xs[0], size, fill)};
    };
  }
  if (c.op == "unique") {
    std::optional<WeakScalar> fill;
    if (!a.at("fill_value").is_null()) fill = a.at("fill_value").get<double>();
    return [size = a.at("size").get<std::int64_t>(), fill](const std::vector<Array>& xs) {
      return std::vector<Array>{np::unique(xs[0], size, fill)};
    };
  }
  if (c.op == "unique_all") {
    std::optional<WeakScalar> fill;
    if (!a.at("fill_value").is_null()) fill = a.at("fill_value").get<double>();
    return [size = a.at("size").get<std::int64_t>(), fill](const std::vector<Array>& xs) {
      const np::Unique u = np::unique_all(xs[0], size, fill);
      return std::vector<Array>{u.values, u.indices, u.inverse, u.counts};
    };
  }
  if (c.op == "compress") {
    std::optional<std::int64_t> axis;
    if (!a.at("axis").is_null()) axis = a.at("axis").get<std::int64_t>();
    return [axis, size = a.at("size").get<std::int64_t>(),
            fill = a.at("fill_value").get<double>()](const std::vector<Array>& xs) {
      return std::vector<Array>{np::compress(xs[0], xs[1], axis, size, fill)};
    };
  }
  throw std::runtime_error("sort_family_test: no weft twin for op " + c.op);
}

// Runs every case whose name starts with `prefix` as one program (one device build, not one
// per case): its inputs are all the cases' inputs in order, its outputs all their outputs.
void run_cases_with_prefix(const std::string& prefix) {
  ASSERT_EQ(loaded().error, "");
  std::vector<const Case*> cases;
  for (const Case& c : loaded().cases)
    if (c.name.rfind(prefix, 0) == 0) cases.push_back(&c);
  ASSERT_GT(cases.size(), 0u) << "no case named " << prefix << "...";
  std::vector<ArrayFunction> fns;
  std::vector<HostArray> inputs;
  for (const Case* c : cases) {
    fns.push_back(function_of(*c));
    inputs.insert(inputs.end(), c->inputs.begin(), c->inputs.end());
  }
  auto all = [&cases, &fns](const std::vector<Array>& xs) {
    std::vector<Array> outs;
    std::size_t next = 0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const std::size_t n = cases[k]->inputs.size();
      const std::vector<Array> args(xs.begin() + static_cast<std::ptrdiff_t>(next),
                                    xs.begin() + static_cast<std::ptrdiff_t>(next + n));
      next += n;
      for (const Array& y : fns[k](args)) outs.push_back(y);
    }
    return outs;
  };
  auto traced = jit(ArrayFunction(all), {.name = "sort_family_cases"});
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  const std::vector<Array> on_device = traced(args);
  const Lowered lowered = traced.lower(args);
  const std::vector<HostArray> interpreted = interpret(lowered.graph(), inputs);
  std::size_t out = 0;
  for (const Case* c : cases)
    for (std::size_t i = 0; i < c->expected.size(); ++i, ++out) {
      SCOPED_TRACE("case " + c->name + " output " + std::to_string(i));
      ASSERT_LT(out, on_device.size());
      ASSERT_LT(out, interpreted.size());
      EXPECT_EQ(compare_values(on_device[out].to_host(), c->expected[i]), "") << "device";
      EXPECT_EQ(compare_values(interpreted[out], c->expected[i]), "") << "interpreter";
    }
  EXPECT_EQ(out, on_device.size());
}

TEST(SortFamily, SearchsortedFollowsJax) {
  run_cases_with_prefix("searchsorted");
}

TEST(SortFamily, LaxSortOfSeveralOperandsFollowsJax) {
  run_cases_with_prefix("lax_sort");
}

TEST(SortFamily, SortKeyValFollowsJax) {
  run_cases_with_prefix("sort_key_val");
}

TEST(SortFamily, LaxSortChecksItsOperands) {
  const Array x = Array::from_host(HostArray(DType::F32, {2, 3}));
  const Array y = Array::from_host(HostArray(DType::F32, {3, 2}));
  EXPECT_THROW(lax::sort(std::vector<Array>{x, x}, 0, 3), InvalidArgumentError);
  EXPECT_THROW(lax::sort(std::vector<Array>{x, y}, 0, 1), ShapeError);
  EXPECT_THROW(lax::sort(std::vector<Array>{x, x}, 2, 1), ShapeError);
}

TEST(SortFamily, NonzeroWithASizeFollowsJax) {
  run_cases_with_prefix("nonzero");
}

TEST(SortFamily, ArgwhereAndFlatnonzeroWithASizeFollowJax) {
  run_cases_with_prefix("argwhere");
  run_cases_with_prefix("flatnonzero");
}

TEST(SortFamily, UniqueWithASizeFollowsJax) {
  run_cases_with_prefix("unique_f32");
  run_cases_with_prefix("unique_i32");
}

TEST(SortFamily, UniqueAllWithASizeFollowsJax) {
  run_cases_with_prefix("unique_all");
}

TEST(SortFamily, CompressWithASizeFollowsJax) {
  run_cases_with_prefix("compress");
}

TEST(SortFamily, MaskFunctionsCheckTheirArguments) {
  const Array scalar = Array::from_host(HostArray(DType::F32, {}));
  const Array empty = Array::from_host(HostArray(DType::F32, {0}));
  const Array m = Array::from_host(HostArray(DType::F32, {2, 3}));
  const Array c = Array::from_host(HostArray(DType::Bool, {2}));
  EXPECT_THROW(np::nonzero(scalar, 2), ShapeError);
  EXPECT_THROW(np::unique(empty, 2), InvalidArgumentError);
  EXPECT_THROW(np::compress(c, m, 0, 3), InvalidArgumentError);
  EXPECT_THROW(np::compress(m, m, 0, 1), ShapeError);
}

// The tangent of a sort moves with its element by a gather: a line of 100003 elements (whose
// one-hot selection would hold 10^10) differentiates, and x_i = (i * 7919) mod n sorts to
// position x_i, so the gradient of sum(sort(x) * w) is w[x_i].
TEST(SortFamily, SortGradientOfALongLineIsAGather) {
  const std::int64_t n = 100003;
  HostArray x(DType::F32, {n}), w(DType::F32, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    x.set_f64(i, static_cast<double>((i * 7919) % n));
    w.set_f64(i, static_cast<double>(i));
  }
  const Array weights = Array::from_host(w);
  auto loss = [&weights](const std::vector<Array>& xs) {
    return std::vector<Array>{lax::reduce_sum(lax::mul(lax::sort(xs[0], 0), weights), {0})};
  };
  auto traced = jit(grad(loss));
  const HostArray got = traced(std::vector<Array>{Array::from_host(x)})[0].to_host();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < n; ++i) wrong += got.get_f64(i) != x.get_f64(i);
  EXPECT_EQ(wrong, 0);
}

TEST(SortFamily, SearchsortedNeedsOneDimensionalA) {
  const Array a = Array::from_host(HostArray(DType::F32, {2, 2}));
  const Array v = Array::from_host(HostArray(DType::F32, {3}));
  EXPECT_THROW(np::searchsorted(a, v), ShapeError);
}

TEST(SortFamily, SearchsortedSorterMustIndexA) {
  const Array a = Array::from_host(HostArray(DType::F32, {4}));
  const Array v = Array::from_host(HostArray(DType::F32, {3}));
  const Array short_sorter = Array::from_host(HostArray(DType::I32, {3}));
  const Array float_sorter = Array::from_host(HostArray(DType::F32, {4}));
  EXPECT_THROW(np::searchsorted(a, v, np::Side::left, short_sorter), ShapeError);
  EXPECT_THROW(np::searchsorted(a, v, np::Side::left, float_sorter), DTypeError);
}

}  // namespace
}  // namespace weft

// conv_general_dilated against JAX (tools/oracles/conv.py writes the cases): every case runs under
// jit on the default device (all cases as one program), and in the reference interpreter on the
// graph jit traced; the first forward case of each dtype also runs eagerly. Cases cover 1-D, 2-D
// and 3-D convolutions in NCHW, NHWC and mixed layouts, strides, SAME/SAME_LOWER/VALID/explicit and
// negative padding, lhs and rhs dilation, depthwise and grouped convolutions, batch groups, f64 and
// i32; the gradients of each (both transposes, as JAX derives them) and vmap over either operand or
// both.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "support/test_devices.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/device.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

struct Case {
  std::string name, transform;
  json call, specs, padding_pairs;
  std::vector<HostArray> args, expected;
  std::vector<int> argnums;
  std::vector<std::optional<int>> in_axes;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_CONV_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the convolution oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k{c.at("name"),
           c.at("transform"),
           c.at("call"),
           c.at("specs"),
           c.at("padding_pairs"),
           testing::host_arrays(c.at("args")),
           testing::host_arrays(c.at("expected")),
           {},
           {}};
    if (c.contains("argnums")) k.argnums = c.at("argnums").get<std::vector<int>>();
    if (c.contains("in_axes"))
      for (const json& axis : c.at("in_axes"))
        k.in_axes.push_back(axis.is_null() ? std::nullopt : std::optional<int>(axis.get<int>()));
    cases.push_back(std::move(k));
  }
  return cases;
}

const testing::LoadedCases<Case>& loaded() {
  static const auto cases = testing::load_or_explain(load_cases);
  return cases;
}

// The case's convolution through the API users call: layout strings and a padding mode or
// pairs, as in JAX.
Array convolve(const json& call, const Array& lhs, const Array& rhs) {
  const auto layouts = call.at("layouts").get<std::vector<std::string>>();
  const json& padding = call.at("padding");
  lax::ConvPadding pad =
      padding.is_string() ? lax::ConvPadding(padding.get<std::string>())
                          : lax::ConvPadding(std::vector<std::pair<std::int64_t, std::int64_t>>{});
  if (!padding.is_string())
    for (const json& p : padding) pad.pairs.emplace_back(p.at(0), p.at(1));
  return lax::conv_general_dilated(lhs, rhs, call.at("window_strides").get<lax::Axes>(), pad,
                                   call.at("lhs_dilation").get<lax::Axes>(),
                                   call.at("rhs_dilation").get<lax::Axes>(),
                                   lax::conv_dimension_numbers(layouts[0], layouts[1], layouts[2]),
                                   call.at("feature_group_count").get<std::int64_t>(),
                                   call.at("batch_group_count").get<std::int64_t>());
}

std::vector<Array> run_case_fn(const Case& c, const std::vector<Array>& xs) {
  if (c.transform == "none") return {convolve(c.call, xs[0], xs[1])};
  if (c.transform == "grad") {
    auto loss = [&c](const std::vector<Array>& a) {
      const Array y = convolve(c.call, a[0], a[1]);
      lax::Axes all;
      for (std::size_t d = 0; d < y.shape().size(); ++d)
        all.push_back(static_cast<std::int64_t>(d));
      return std::vector<Array>{lax::reduce_sum(lax::mul(y, a[2]), all)};
    };
    return grad(loss, GradOptions{c.argnums})(xs);
  }
  auto op = [&c](const std::vector<Array>& a) {
    return std::vector<Array>{convolve(c.call, a[0], a[1])};
  };
  return vmap(op, VmapOptions{c.in_axes, {}})(xs);
}

// Sums of up to a few hundred products: f32 results carry rounding of that order.
double tolerance(const HostArray& want) {
  return want.dtype() == DType::F64 ? 1e-12 : 2e-5;
}

class ConvOracle : public ::testing::TestWithParam<Case> {};

// Every case in one jit program (the first check builds it), on the device and in the
// interpreter; eagerly, only the first untransformed case of each dtype.
testing::OracleTable& oracle_table() {
  static testing::OracleTable table = [] {
    std::vector<testing::OracleCase> cases;
    for (const Case& c : loaded().cases)
      cases.push_back({.name = c.name,
                       .eager_group = c.transform == "none"
                                          ? "conv " + std::string(dtype_name(c.expected[0].dtype()))
                                          : "",
                       .args = c.args,
                       .expected = c.expected,
                       .fn = [&c](const std::vector<Array>& xs) { return run_case_fn(c, xs); },
                       .compare =
                           [](const HostArray& got, const HostArray& want) {
                             return testing::compare_values(got, want, tolerance(want));
                           }});
    return testing::OracleTable(std::move(cases), "conv_cases");
  }();
  return table;
}

TEST_P(ConvOracle, MatchesJaxOnDeviceAndInterpreter) {
  oracle_table().expect_case(GetParam().name);
}

TEST(ConvOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

// Layout strings and padding modes resolve to JAX's dimension numbers and padding (on the
// forward cases: the others convolve transposed forms of them).
TEST(ConvOracleFile, LayoutsAndPaddingResolveAsJax) {
  int checked = 0;
  for (const Case& c : loaded().cases) {
    if (c.transform != "none") continue;
    const std::vector<Array> device_args = testing::device_arrays(c.args);
    std::function<std::vector<Array>(const std::vector<Array>&)> fn =
        [&c](const std::vector<Array>& xs) { return run_case_fn(c, xs); };
    const Lowered lowered = jit(fn, {.name = "conv_attrs"}).lower(device_args);
    int convs = 0;
    for (const Node& node : lowered.graph().nodes) {
      if (node.op != OpKind::ConvGeneralDilated) continue;
      ++convs;
      const ConvAttrs a = ConvAttrs::read(node.attrs);
      EXPECT_EQ(a.lhs_spec, c.specs.at("lhs_spec").get<lax::Axes>()) << c.name;
      EXPECT_EQ(a.rhs_spec, c.specs.at("rhs_spec").get<lax::Axes>()) << c.name;
      EXPECT_EQ(a.out_spec, c.specs.at("out_spec").get<lax::Axes>()) << c.name;
      lax::Axes low, high;
      for (const json& p : c.padding_pairs) {
        low.push_back(p.at(0));
        high.push_back(p.at(1));
      }
      EXPECT_EQ(a.padding_low, low) << c.name;
      EXPECT_EQ(a.padding_high, high) << c.name;
    }
    EXPECT_EQ(convs, 1) << c.name;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

INSTANTIATE_TEST_SUITE_P(Jax, ConvOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Random f32 values in [-1, 1) from a fixed seed.
HostArray random_f32(const Shape& shape, std::uint32_t seed) {
  HostArray h(DType::F32, shape);
  std::uint32_t state = seed;
  for (std::int64_t i = 0; i < h.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    h.set_f64(i, static_cast<double>(state >> 8) / double(1 << 23) - 1.0);
  }
  return h;
}

// A filter gradient whose window (the image) is long enough that the CPU kernel splits it
// into ranges and adds their partial sums: the device against the interpreter.
TEST(ConvKernels, FilterGradientOverWindowRanges) {
  const HostArray x = random_f32({2, 4096, 16}, 1), w = random_f32({3, 16, 32}, 2),
                  ct = random_f32({2, 4096, 32}, 3);
  const lax::ConvDimensionNumbers nwc = lax::conv_dimension_numbers("NWC", "WIO", "NWC");
  auto filter_grad = jit(grad(
      [&nwc](const std::vector<Array>& a) {
        const Array y = lax::conv_general_dilated(a[0], a[1], {1}, "SAME", {}, {}, nwc);
        return std::vector<Array>{lax::reduce_sum(lax::mul(y, a[2]), {0, 1, 2})};
      },
      GradOptions{{1}}));
  const std::vector<Array> args = testing::device_arrays({x, w, ct});
  const HostArray got = filter_grad(args).at(0).to_host();
  const HostArray want =
      interpret(filter_grad.lower(args).graph(), std::vector<HostArray>{x, w, ct}).at(0);
  EXPECT_EQ(testing::compare_values(got, want, 1e-5), "");
  const std::string source = filter_grad.lower(args).compile()->info().source;
  // On CPU devices the range kernel ran (GPUs take the direct kernel).
  if (!dynamic_cast<opencl::OpenCLDevice&>(testing::test_device()).caps().is_gpu) {
    EXPECT_NE(source.find("_partial"), std::string::npos) << source;
  }
}

// Errors name the op, the shapes and what to fix.
Array zeros(DType t, const Shape& shape) {
  return Array::from_host(HostArray(t, shape));
}

TEST(ConvErrors, FeaturesMustMatchTheFilter) {
  const std::string what = testing::error_of<ShapeError>([] {
    lax::conv(zeros(DType::F32, {1, 3, 5, 5}), zeros(DType::F32, {2, 4, 3, 3}), {1, 1}, "SAME");
  });
  EXPECT_NE(what.find("conv_general_dilated"), std::string::npos) << what;
  EXPECT_NE(what.find("feature_group_count"), std::string::npos) << what;
  EXPECT_NE(what.find("f32[1,3,5,5]"), std::string::npos) << what;
}

TEST(ConvErrors, BoolOperandsAndMixedDtypes) {
  EXPECT_NE(testing::error_of<DTypeError>([] {
              lax::conv(zeros(DType::Bool, {1, 1, 3}), zeros(DType::Bool, {1, 1, 2}), {1}, "VALID");
            }).find("bool"),
            std::string::npos);
  EXPECT_NE(testing::error_of<DTypeError>([] {
              lax::conv(zeros(DType::F32, {1, 1, 3}), zeros(DType::F64, {1, 1, 2}), {1}, "VALID");
            }).find("same dtype"),
            std::string::npos);
}

TEST(ConvErrors, StridesAndPaddingPerSpatialAxis) {
  EXPECT_NE(
      testing::error_of<ShapeError>([] {
        lax::conv(zeros(DType::F32, {1, 1, 4, 4}), zeros(DType::F32, {1, 1, 2, 2}), {1}, "VALID");
      }).find("window_strides"),
      std::string::npos);
  EXPECT_NE(testing::error_of<ShapeError>([] {
              lax::conv(zeros(DType::F32, {1, 1, 4}), zeros(DType::F32, {1, 1, 2}), {1}, "FULL");
            }).find("\"FULL\" is not a padding mode"),
            std::string::npos);
  EXPECT_NE(testing::error_of<ShapeError>([] {
              lax::conv(zeros(DType::F32, {1, 1, 4}), zeros(DType::F32, {1, 1, 2}), {1},
                        std::vector<std::pair<std::int64_t, std::int64_t>>{{-3, -3}});
            }).find("crop less"),
            std::string::npos);
}

TEST(ConvErrors, LayoutStrings) {
  EXPECT_NE(testing::error_of<ShapeError>([] {
              lax::conv_dimension_numbers("NHWC", "HWIO", "NHW");
            }).find("one length"),
            std::string::npos);
  EXPECT_NE(testing::error_of<ShapeError>([] {
              lax::conv_dimension_numbers("NHWC", "HWXO", "NHWC");
            }).find("lacks 'I'"),
            std::string::npos);
  EXPECT_NE(testing::error_of<ShapeError>([] {
              lax::conv_dimension_numbers("NHHC", "HWIO", "NHWC");
            }).find("repeats"),
            std::string::npos);
}

}  // namespace
}  // namespace weft

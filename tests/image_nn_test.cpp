// weft::image::resize and weft::nn::group_norm against JAX (tools/oracles/image_nn.py writes the
// cases): each runs under jit (all cases as one program; the first forward case of each function
// eagerly too) on the default device, and in the reference interpreter on the graph jit traced.
// Resizes up, down (with and without antialias), by odd factors, of integer images, and their
// gradients; group norms of one, some and every feature per group, and their gradients.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "weft/interp/interpreter.h"
#include "weft/transforms/grad.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

struct Case {
  std::string name, fn, transform;
  json params;
  std::vector<HostArray> args, expected;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_IMAGE_NN_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the image/nn oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases"))
    cases.push_back({c.at("name"), c.at("fn"), c.at("transform"), c.at("params"),
                     testing::host_arrays(c.at("args")), testing::host_arrays(c.at("expected"))});
  return cases;
}

const testing::LoadedCases<Case>& loaded() {
  static const auto cases = testing::load_or_explain(load_cases);
  return cases;
}

Array apply_fn(const Case& c, const std::vector<Array>& a) {
  if (c.fn == "resize") {
    const std::string method = c.params.at("method");
    return image::resize(
        a[0], c.params.at("shape").get<Shape>(),
        method == "nearest" ? image::ResizeMethod::Nearest : image::ResizeMethod::Linear,
        c.params.at("antialias").get<bool>());
  }
  return nn::group_norm(a[0], c.params.at("num_groups").get<std::int64_t>(), a[1], a[2],
                        c.params.at("epsilon").get<double>());
}

std::vector<Array> run_case_fn(const Case& c, const std::vector<Array>& xs) {
  if (c.transform == "none") return {apply_fn(c, xs)};
  std::vector<int> argnums;
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) argnums.push_back(static_cast<int>(i));
  auto loss = [&c](const std::vector<Array>& a) {
    const Array y = apply_fn(c, std::vector<Array>(a.begin(), a.end() - 1));
    lax::Axes all;
    for (std::size_t d = 0; d < y.shape().size(); ++d) all.push_back(static_cast<std::int64_t>(d));
    return std::vector<Array>{lax::reduce_sum(lax::mul(y, a.back()), all)};
  };
  return grad(loss, GradOptions{argnums})(xs);
}

class ImageNnOracle : public ::testing::TestWithParam<Case> {};

// Every case in one jit program (the first check builds it), on the device and in the
// interpreter; eagerly, only the first untransformed case of each function.
testing::OracleTable& oracle_table() {
  static testing::OracleTable table = [] {
    std::vector<testing::OracleCase> cases;
    for (const Case& c : loaded().cases)
      cases.push_back({.name = c.name,
                       .eager_group = c.transform == "none" ? c.fn : "",
                       .args = c.args,
                       .expected = c.expected,
                       .fn = [&c](const std::vector<Array>& xs) { return run_case_fn(c, xs); },
                       .compare =
                           [](const HostArray& got, const HostArray& want) {
                             return testing::compare_values(got, want, 2e-5);
                           }});
    return testing::OracleTable(std::move(cases), "image_nn_cases");
  }();
  return table;
}

TEST_P(ImageNnOracle, MatchesJaxOnDeviceAndInterpreter) {
  oracle_table().expect_case(GetParam().name);
}

TEST(ImageNnOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

INSTANTIATE_TEST_SUITE_P(Jax, ImageNnOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(ImageNnErrors, ResizeShapes) {
  const Array x = Array::from_host(HostArray(DType::F32, {1, 4, 4, 3}));
  const std::string rank = testing::error_of<ShapeError>([&] {
    image::resize(x, {8, 8}, image::ResizeMethod::Linear);
  });
  EXPECT_NE(rank.find("image::resize"), std::string::npos) << rank;
  EXPECT_NE(rank.find("[1,4,4,3]"), std::string::npos) << rank;
  EXPECT_NE(rank.find("rank"), std::string::npos) << rank;
  const Array empty = Array::from_host(HostArray(DType::F32, {1, 0, 4, 3}));
  EXPECT_NE(testing::error_of<ShapeError>([&] {
              image::resize(empty, {1, 2, 4, 3}, image::ResizeMethod::Nearest);
            }).find("nothing to interpolate"),
            std::string::npos);
}

TEST(ImageNnErrors, GroupNormShapes) {
  const Array x = Array::from_host(HostArray(DType::F32, {2, 3, 6}));
  EXPECT_NE(testing::error_of<ShapeError>([&] { nn::group_norm(x, 4); }).find("must divide the 6"),
            std::string::npos);
  EXPECT_NE(testing::error_of<ShapeError>([&] {
              nn::group_norm(x, 2, Array::from_host(HostArray(DType::F32, {3})));
            }).find("scale and bias"),
            std::string::npos);
  EXPECT_NE(testing::error_of<DTypeError>([&] {
              nn::group_norm(Array::from_host(HostArray(DType::I32, {2, 6})), 2);
            }).find("float"),
            std::string::npos);
}

}  // namespace
}  // namespace weft

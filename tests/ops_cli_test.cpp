// `weft ops` as users run it: the catalog lists every primitive with what its definition
// states, finds a primitive by its JAX name, refuses an unknown name clearly, and the committed
// docs/primitives.md is exactly what `weft ops --markdown` prints.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.h"
#include "support/temp_dir.h"
#include "weft/dtype.h"
#include "weft/ir/op_kind.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using testing::ProcessResult;

class OpsCliTest : public ::testing::Test {
 protected:
  ProcessResult weft(const std::vector<std::string>& args) const {
    return testing::run_process(WEFT_CLI_PATH, args, dir_.path(), "", 60);
  }
  test::TempDir dir_{"weft-ops-cli"};
};

std::vector<std::string> all_names() {
  std::vector<std::string> names;
  std::stringstream csv{std::string(all_op_names_csv())};
  for (std::string name; std::getline(csv, name, ',');) names.push_back(name);
  return names;
}

TEST_F(OpsCliTest, JsonListsEveryPrimitiveWithItsRules) {
  const ProcessResult r = weft({"ops", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json ops = nlohmann::json::parse(r.out);
  ASSERT_TRUE(ops.is_array());
  std::vector<std::string> listed;
  for (const auto& op : ops) {
    listed.push_back(op.at("name").get<std::string>());
    EXPECT_FALSE(op.at("dtypes").empty()) << op.dump();
    for (const char* rule : {"jvp", "transpose", "batching"}) {
      const nlohmann::json& v = op.at(rule);
      EXPECT_TRUE(v == true || v == "walker" || (v.is_object() && !v.at("none").empty()))
          << op.at("name") << " " << rule << ": " << v.dump();
    }
    EXPECT_FALSE(op.at("opencl").get<std::string>().empty());
  }
  EXPECT_EQ(listed, all_names());

  auto find = [&](const std::string& name) {
    for (const auto& op : ops)
      if (op.at("name") == name) return op;
    ADD_FAILURE() << name << " is not listed";
    return nlohmann::json{};
  };
  // What the definitions state: add is linear, abs is not; exp is defined on floats only (its
  // type rule refuses the others), and comparisons for equality take every dtype.
  const nlohmann::json add = find("add"), abs = find("abs"), exp = find("exp"), eq = find("eq");
  EXPECT_EQ(add.at("transpose"), true);
  EXPECT_THAT(abs.at("transpose").at("none").get<std::string>(), HasSubstr("transpose"));
  std::vector<std::string> floats, every;
  for (DType d : kAllDTypes) {
    every.emplace_back(dtype_name(d));
    if (is_float(d)) floats.emplace_back(dtype_name(d));
  }
  EXPECT_EQ(exp.at("dtypes").get<std::vector<std::string>>(), floats);
  EXPECT_EQ(eq.at("dtypes").get<std::vector<std::string>>(), every);
  EXPECT_EQ(find("convert").at("jax"), nlohmann::json({"convert_element_type"}));
  EXPECT_EQ(find("reduce_sum").at("opencl"), "kernel:reduce");
}

TEST_F(OpsCliTest, FindsAPrimitiveByItsJaxName) {
  const ProcessResult r = weft({"ops", "convert_element_type"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("convert\n"));
  EXPECT_THAT(r.out, HasSubstr("convert_element_type"));
}

TEST_F(OpsCliTest, RefusesAnUnknownName) {
  const ProcessResult r = weft({"ops", "no_such_op"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("no primitive is called 'no_such_op'"));
  EXPECT_THAT(r.err, HasSubstr("weft ops"));
}

TEST_F(OpsCliTest, DocsPageIsWhatTheCatalogPrints) {
  const ProcessResult r = weft({"ops", "--markdown"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, testing::slurp(WEFT_PRIMITIVES_DOC))
      << "docs/primitives.md is out of date: regenerate it with `weft ops --markdown > "
         "docs/primitives.md`";
}

}  // namespace
}  // namespace weft

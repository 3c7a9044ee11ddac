// Walks every primitive and fails on any part of it that is missing, naming the primitive and
// the part: its definition's rules and evaluator (core/src/primitives/), its OpenCL lowering
// (opencl/src/codegen/lowerings/), its IR text round trip, and its fuzzer-dictionary entry.
// docs/architecture.md, "Adding a primitive", lists what a new one needs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/primitive_samples.h"
#include "weft/ir/primitive_coverage.h"
#include "weft/ir/text.h"
#include "weft/opencl/lowering_status.h"

namespace weft {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string fuzz_dictionary() {
  std::ifstream in(WEFT_FUZZ_DICTIONARY);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PrimitiveWalk, EveryPrimitiveIsDefinedLoweredPrintedAndFuzzed) {
  const std::string dictionary = fuzz_dictionary();
  ASSERT_FALSE(dictionary.empty()) << "cannot read " << WEFT_FUZZ_DICTIONARY;
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    const std::string name(op_name(kind));
    SCOPED_TRACE("primitive " + name);

    const std::vector<std::string> missing = missing_definition_parts(kind);
    EXPECT_TRUE(missing.empty()) << name << ": its definition lacks " << join(missing);

    const std::string lowering = opencl::lowering_status(kind);
    EXPECT_TRUE(lowering == "emitter" || lowering.rfind("kernel:", 0) == 0 ||
                (lowering.rfind("none: ", 0) == 0 && lowering.size() > 6))
        << name << ": no OpenCL lowering (" << lowering << ")";

    EXPECT_EQ(op_from_name(name), kind) << name << ": its name does not read back";
    const Graph sample = samples::graph_using(kind);
    const std::string text = print_graph(sample);
    Graph parsed;
    EXPECT_NO_THROW(parsed = parse_graph(text)) << name << ": its text does not parse:\n" << text;
    EXPECT_TRUE(parsed == sample) << name << ": its text round trip differs:\n" << text;

    // The parse fuzzer reaches an op only through its name in the dictionary.
    EXPECT_NE(dictionary.find("\"" + name + "\""), std::string::npos)
        << name << ": no entry in tests/fuzz/weft.dict";
  }
}

}  // namespace
}  // namespace weft

// The canonical IR text form: printing, parsing, round trips over every primitive, error
// reporting and the example programs under resources/examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/primitive_samples.h"
#include "weft/compile/tokens.h"
#include "weft/debug.h"
#include "weft/error.h"
#include "weft/host_array.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/graph.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/regions.h"
#include "weft/ir/text.h"

namespace weft {
namespace {

using namespace samples;

void expect_round_trip(const Graph& g) {
  const std::string text = print_graph(g);
  Graph parsed;
  ASSERT_NO_THROW(parsed = parse_graph(text)) << text;
  EXPECT_TRUE(parsed == g) << text;
  EXPECT_EQ(print_graph(parsed), text);
}

template <typename E>
E expect_throws(const std::string& text) {
  try {
    parse_graph(text);
  } catch (const E& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what() << "\nfor:\n" << text;
    throw;
  }
  ADD_FAILURE() << "no exception for:\n" << text;
  throw std::runtime_error("expected an exception");
}

// ---------------------------------------------------------------------------------------------

TEST(IrText, EveryPrimitiveRoundTrips) {
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    SCOPED_TRACE(std::string(op_name(kind)));
    const Graph g = graph_using(kind);
    ASSERT_NO_THROW(verify(g));
    const std::string text = print_graph(g);
    if (kind == OpKind::Result) {
      // Results are named on the left of their control op; `result` is never written.
      EXPECT_EQ(text.find("= result"), std::string::npos) << text;
      EXPECT_NE(text.find("  %3, %4 = cond %0, %1, %2 : f32[2], i32[] {\n"), std::string::npos)
          << text;
    } else if (kind != OpKind::Parameter) {
      EXPECT_NE(text.find(" = " + std::string(op_name(kind))), std::string::npos) << text;
    }
    expect_round_trip(g);
  }
}

// The ops that exist only while a transformation traces read back from text, but nothing
// compiles them, and the interpreter runs only the custom functions' bodies; each error names
// the op.
TEST(IrText, TransformationOnlyOpsNeitherCompileNorRunOutsideTheirTransformation) {
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (!is_transformation_only(kind)) continue;
    SCOPED_TRACE(std::string(op_name(kind)));
    const Graph g = parse_graph(print_graph(graph_using(kind)));
    try {
      thread_effect_tokens(g);
      ADD_FAILURE() << "compiled";
    } catch (const InvalidGraphError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(op_name(kind)) + " at "), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("cannot be compiled"), std::string::npos) << e.what();
    }
  }
  const HostArray x = HostArray::from<float>({3}, {1, 2, 3});
  for (OpKind kind : {OpKind::CustomJvp, OpKind::CustomVjp, OpKind::Checkpoint}) {
    const std::vector<HostArray> out = interpret(graph_using(kind), std::vector<HostArray>{x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  }
  const auto interpret_error = [&](OpKind kind, std::size_t args) {
    try {
      interpret(graph_using(kind), std::vector<HostArray>(args, x));
    } catch (const InvalidGraphError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(interpret_error(OpKind::CustomLin, 2).find("custom_lin has no body"),
            std::string::npos);
  EXPECT_NE(interpret_error(OpKind::Psum, 1).find("psum combines the values of the devices"),
            std::string::npos);
  // A collective's statement holds no region.
  const Graph psum = parse_graph(
      "func @f(%x: f32[3]) -> (f32[3]) {\n"
      "  %y = psum[axis_name=\"i\"] %x : f32[3] {\n"
      "  }\n"
      "  return %y\n"
      "}\n");
  EXPECT_EQ(psum.node(1).op, OpKind::Psum);
  const ParseError e = expect_throws<ParseError>(
      "func @f(%x: f32[3]) -> (f32[3]) {\n"
      "  %y = psum[axis_name=\"i\"] %x : f32[3] {\n"
      "    body(%a: f32[3]) -> (f32[3]) {\n"
      "      return %a\n"
      "    }\n"
      "  }\n"
      "  return %y\n"
      "}\n");
  EXPECT_NE(std::string(e.what()).find("psum has no regions; expected '}' to close it"),
            std::string::npos)
      << e.what();
}

TEST(IrText, GoldenSelectTril) {
  Builder b;
  b.g.name = "select_tril";
  ValueId x = b.param(DType::I32, {3, 4});
  ValueId row = b.op(OpKind::Iota, {}, DType::I32, {3, 4}, {{"dimension", std::int64_t{0}}});
  ValueId col = b.op(OpKind::Iota, {}, DType::I32, {3, 4}, {{"dimension", std::int64_t{1}}});
  ValueId keep = b.op(OpKind::Gt, {row, col}, DType::Bool, {3, 4});
  ValueId zero = b.constant(DType::I32, std::int64_t{0});
  ValueId zeros = b.op(OpKind::BroadcastInDim, {zero}, DType::I32, {3, 4}, {{"dims", Ints{}}});
  b.g.outputs = {b.op(OpKind::Select, {keep, x, zeros}, DType::I32, {3, 4})};
  const std::string golden =
      "func @select_tril(%0: i32[3,4]) -> (i32[3,4]) {\n"
      "  %1 = iota[dimension=0] : i32[3,4]\n"
      "  %2 = iota[dimension=1] : i32[3,4]\n"
      "  %3 = gt %1, %2 : bool[3,4]\n"
      "  %4 = constant[value=0] : i32[]\n"
      "  %5 = broadcast_in_dim[dims=[]] %4 : i32[3,4]\n"
      "  %6 = select %3, %0, %5 : i32[3,4]\n"
      "  return %6\n"
      "}\n";
  EXPECT_EQ(print_graph(b.g), golden);
  EXPECT_TRUE(parse_graph(golden) == b.g);
}

TEST(IrText, GoldenCanonicalizesParamsAndOutputs) {
  // A param added after other nodes still prints first; outputs may repeat and name params.
  Builder b;
  b.g.name = "multi";
  ValueId two = b.constant(DType::F32, 2.0);
  ValueId x = b.param(DType::F32, {});
  ValueId y = b.param(DType::F32, {});
  ValueId sum = b.op(OpKind::Add, {x, two}, DType::F32, {});
  ValueId dot = b.op(OpKind::DotGeneral, {sum, y}, DType::F32, {},
                     {{"rhs_contracting", Ints{}},
                      {"lhs_contracting", Ints{}},
                      {"rhs_batch", Ints{}},
                      {"lhs_batch", Ints{}}});
  b.g.outputs = {dot, y, dot, x};
  const std::string golden =
      "func @multi(%0: f32[], %1: f32[]) -> (f32[], f32[], f32[], f32[]) {\n"
      "  %2 = constant[value=2.0] : f32[]\n"
      "  %3 = add %0, %2 : f32[]\n"
      "  %4 = dot_general[lhs_batch=[], lhs_contracting=[], rhs_batch=[], rhs_contracting=[]] "
      "%3, %1 : f32[]\n"
      "  return %4, %1, %4, %0\n"
      "}\n";
  EXPECT_EQ(print_graph(b.g), golden);
  expect_round_trip(b.g);
}

TEST(IrText, EmptyFunction) {
  Graph g;
  g.name = "nothing";
  const std::string golden = "func @nothing() -> () {\n  return\n}\n";
  EXPECT_EQ(print_graph(g), golden);
  expect_round_trip(g);
}

TEST(IrText, WithOriginsAddsCommentsThatStillParse) {
  const std::string text =
      "func @f(%x: f32[3]) -> (f32[3]) {\n"
      "\n"
      "  %y = neg %x : f32[3]\n"
      "  return %y\n"
      "}\n";
  const Graph g = parse_graph(text);
  EXPECT_EQ(g.node(1).origin.text_line, 3);
  EXPECT_EQ(g.node(0).origin.text_line, 1);
  const std::string annotated = print_graph(g, {.with_origins = true});
  EXPECT_NE(annotated.find("  %1 = neg %0 : f32[3]  # line 3\n"), std::string::npos) << annotated;
  EXPECT_TRUE(parse_graph(annotated) == g);
  EXPECT_EQ(print_graph(g).find('#'), std::string::npos);
}

TEST(IrText, ParserAcceptsFlexibleForms) {
  const std::string loose =
      "# leading comment\n"
      "\n"
      "func   @flex ( %input.a :f32[2 , 3],%b_1: f32[3] )->( f32[2,3] ){  # trailing\n"
      "  %bb   =   broadcast_in_dim [ dims = [ 1 ] ]   %b_1 :f32[2,3]\n"
      "\n"
      "  # a comment line\n"
      "  %r.0 = slice[stride=[1,1], start=[0,0], limit=[2,3]] %input.a : f32[2,3]\n"
      "  %s=add %r.0,%bb:f32[2,3]\n"
      "  return %s }\n"
      "# trailing comment";
  const std::string canonical =
      "func @flex(%0: f32[2,3], %1: f32[3]) -> (f32[2,3]) {\n"
      "  %2 = broadcast_in_dim[dims=[1]] %1 : f32[2,3]\n"
      "  %3 = slice[limit=[2,3], start=[0,0], stride=[1,1]] %0 : f32[2,3]\n"
      "  %4 = add %3, %2 : f32[2,3]\n"
      "  return %4\n"
      "}\n";
  const Graph g = parse_graph(loose);
  EXPECT_EQ(print_graph(g), canonical);
  EXPECT_TRUE(parse_graph(canonical) == g);
  EXPECT_EQ(g.node(0).attrs.get_int("index"), 0);
  EXPECT_EQ(g.node(1).attrs.get_int("index"), 1);
  EXPECT_EQ(g.node(3).origin.text_line, 7);
}

// The typed attributes read what the text form writes, under the same names, and a missing or
// mistyped attribute is refused as Attrs' getters refuse it.
TEST(IrText, TypedAttributesUseTheTextFormsNames) {
  const Graph g = parse_graph(
      "func @f(%0: f32[2,3]) -> (f32[2,3]) {\n"
      "  %1 = slice[limit=[2,3], start=[0,0], stride=[1,1]] %0 : f32[2,3]\n"
      "  return %1\n"
      "}\n");
  const SliceAttrs slice = SliceAttrs::read(g.node(1).attrs);
  EXPECT_EQ(slice.start, (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(slice.limit, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(slice.stride, (std::vector<std::int64_t>{1, 1}));
  EXPECT_TRUE(slice.write() == g.node(1).attrs);
  EXPECT_EQ(IndexAttrs::read(g.node(0).attrs).index, 0);

  const Attrs scan = ScanAttrs{.carries = 1, .xs = 2, .length = 5, .reverse = true}.write();
  EXPECT_EQ(scan.get_int("carries"), 1);
  EXPECT_EQ(scan.get_int("xs"), 2);
  EXPECT_EQ(scan.get_int("length"), 5);
  EXPECT_EQ(scan.get_int("reverse"), 1);

  try {
    PadAttrs::read(Attrs{{"low", std::vector<std::int64_t>{0}}, {"high", std::int64_t{1}}});
    FAIL() << "a mistyped attribute was read";
  } catch (const InvalidGraphError& e) {
    EXPECT_STREQ(e.what(),
                 "attribute 'high' is missing or is not an integer list; check the op's "
                 "attributes");
  }
  EXPECT_THROW(DotGeneralAttrs::read(Attrs{}), InvalidGraphError);
  EXPECT_FALSE(HostEffectAttrs::ordered(Attrs{}));
  EXPECT_TRUE(HostEffectAttrs::ordered(DebugPrintAttrs{"{}", true}.write()));
  EXPECT_EQ(HostCallAttrs::effect(Attrs{}), nullptr);
}

TEST(IrText, RoundingMethodOfRound) {
  const auto graph_with = [](const std::string& attrs) {
    return parse_graph("func @f(%0: f64[4]) -> (f64[4]) {\n  %1 = round" + attrs +
                       " %0 : f64[4]\n  return %1\n}\n");
  };
  const HostArray x = HostArray::from<double>({4}, {0.5, 1.5, 2.5, -2.5});
  // Without the attribute (graphs written before it existed) halves go away from zero.
  EXPECT_EQ(interpret(graph_with(""), std::vector<HostArray>{x})[0].to_vector<double>(),
            (std::vector<double>{1, 2, 3, -3}));
  const Graph even = graph_with("[rounding_method=1]");
  EXPECT_EQ(RoundAttrs::read(even.node(1).attrs).rounding_method, RoundAttrs::kToNearestEven);
  EXPECT_EQ(interpret(even, std::vector<HostArray>{x})[0].to_vector<double>(),
            (std::vector<double>{0, 2, 2, -2}));
  EXPECT_NE(print_graph(even).find("round[rounding_method=1]"), std::string::npos)
      << print_graph(even);
  try {
    interpret(graph_with("[rounding_method=2]"), std::vector<HostArray>{x});
    FAIL() << "rounding_method=2 was accepted";
  } catch (const InvalidGraphError& e) {
    EXPECT_NE(std::string(e.what()).find("rounding_method is 2"), std::string::npos) << e.what();
  }
}

TEST(IrText, FloatConstantsRoundTripBitExactly) {
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           -3.0,
                           0.1,
                           1e21,
                           1e300,
                           -2.5e-8,
                           5e-324,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           static_cast<double>(3.14159274f)};
  Builder b;
  for (double v : values) b.g.outputs.push_back(b.constant(DType::F64, v));
  b.g.outputs.push_back(b.constant(DType::F32, 100.0));
  const std::string text = print_graph(b.g);
  for (const char* s : {"[value=nan]", "[value=inf]", "[value=-inf]", "[value=-0.0]",
                        "[value=1e+21]", "[value=100.0]", "[value=5e-324]", "[value=0.1]"})
    EXPECT_NE(text.find(s), std::string::npos) << s << " in\n" << text;
  expect_round_trip(b.g);
}

TEST(IrText, FloatConstantWrittenAsIntegerIsStoredAsDouble) {
  const Graph g = parse_graph(
      "func @c() -> (f32[], i64[], bool[]) {\n"
      "  %a = constant[value=3] : f32[]\n"
      "  %b = constant[value=-9223372036854775808] : i64[]\n"
      "  %c = constant[value=1] : bool[]\n"
      "  return %a, %b, %c\n"
      "}\n");
  EXPECT_TRUE(std::holds_alternative<double>(*g.node(0).attrs.find("value")));
  EXPECT_EQ(g.node(0).attrs.get_float("value"), 3.0);
  EXPECT_EQ(g.node(1).attrs.get_int("value"), std::numeric_limits<std::int64_t>::min());
  EXPECT_NE(print_graph(g).find("constant[value=3.0] : f32[]"), std::string::npos);
  expect_round_trip(g);
}

TEST(IrText, QuotedFunctionNamesRoundTrip) {
  for (const std::string name : {"my func", "a\"b\\c", "", "1starts_with_digit", "line\nbreak",
                                 "x-y", "caf\xc3\xa9", "ok.name_2"}) {
    SCOPED_TRACE(name);
    Graph g;
    g.name = name;
    const std::string text = print_graph(g);
    expect_round_trip(g);
    EXPECT_EQ(parse_graph(text).name, name);
  }
  Graph g;
  g.name = "a\"b\\c";
  EXPECT_EQ(print_graph(g), "func @\"a\\\"b\\\\c\"() -> () {\n  return\n}\n");
  g.name = "ok.name_2";
  EXPECT_EQ(print_graph(g).rfind("func @ok.name_2()", 0), 0u);
}

TEST(IrText, ExtraAttributesAndFloatAttributesAreKept) {
  const std::string text =
      "func @f(%0: f32[2]) -> (f32[2]) {\n"
      "  %1 = neg[alpha=0.5, beta=-3, gamma=[-1,0,7]] %0 : f32[2]\n"
      "  return %1\n"
      "}\n";
  const Graph g = parse_graph(text);
  EXPECT_EQ(print_graph(g), text);
  EXPECT_TRUE(std::holds_alternative<double>(*g.node(1).attrs.find("alpha")));
}

// ---------------------------------------------------------------------------------------------
// Errors.

struct BadInput {
  const char* text;
  int line;
  int column;
  const char* message_part;
};

TEST(IrText, ParseErrorsNameLineColumnAndWhatWasExpected) {
  const BadInput cases[] = {
      {"", 1, 1, "expected 'func' to start the function, found end of input"},
      {"  # only a comment\n\n", 3, 1, "found end of input"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg %0 : f32[3]\n  %2 = add %1, %0 foo\n", 3, 19,
       "expected ',' or ':' after operand, found 'foo'"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = ad %0, %0 : f32[3]\n  return %1\n}\n", 2, 8,
       "unknown op 'ad'; did you mean 'add'?"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = reduce_summ[axes=[0]] %0 : f32[]\n}\n", 2, 8,
       "did you mean 'reduce_sum'?"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg %7 : f32[3]\n  return %1\n}\n", 2, 12,
       "undefined value %7"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg %0 : f32[3]\n  %1 = neg %0 : f32[3]\n}\n", 3,
       3, "value %1 is already defined on line 2"},
      {"func @f(%x: f32[3], %x: f32[3]) -> () {\n  return\n}\n", 1, 21,
       "value %x is already defined on line 1"},
      {"func @f(%0: c64[3]) -> () {\n  return\n}\n", 1, 13, "unknown dtype 'c64'"},
      {"func @f() -> () {\n  return\n}\nfunc", 4, 1,
       "expected end of input after the closing '}', found 'func'"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  return %0\n", 3, 1,
       "expected ',' or '}' after return value, found end of input"},
      {"func @f() -> () {\n  %1 = constant[value=99999999999999999999] : i64[]\n}\n", 2, 23,
       "integer 99999999999999999999 does not fit in 64 bits"},
      {"func @f() -> () {\n  %1 = iota[dimension=0] : i32[5000000000]\n}\n", 2, 32,
       "dimension size 5000000000 exceeds the limit"},
      {"func @f(%0: f32[2147483647,2147483647,2147483647]) -> () {\n  return\n}\n", 1, 13,
       "the shape has too many elements to count in 64 bits"},
      {"func @f() -> () {\n  %1 = iota[dimension=0] : i32[-2]\n}\n", 2, 32,
       "dimension sizes must be non-negative"},
      {"func @f() -> () {\n  %1 = constant[value=1.5] : i32[]\n  return\n}\n", 2, 23,
       "a constant of dtype i32 needs an integer value, found 1.5"},
      {"func @f() -> () {\n  %1 = constant[value=1e999] : f32[]\n  return\n}\n", 2, 23,
       "out of the range of a 64-bit float"},
      {"func @f(%0: f32[3]) -> () {\n  %1 = neg[a=1, a=2] %0 : f32[3]\n  return\n}\n", 2, 17,
       "attribute 'a' is given twice"},
      {"func @f() -> () {\n  %1 = param[index=0] : f32[3]\n  return\n}\n", 2, 8,
       "'param' cannot appear in the body"},
      {"func @f() (f32[3]) {\n  return\n}\n", 1, 11,
       "expected '->' and the result types after the parameter list, found '('"},
      {"func @f() -> () {\n  %1 = neg $ : f32[3]\n}\n", 2, 12, "found unexpected character '$'"},
      {"func @\"unterminated() -> () {\n  return\n}\n", 1, 7, "an unterminated string"},
      {"func @f() -> () {\n  %1 = iota[dimension=0x1] : i32[3]\n}\n", 2, 23,
       "malformed number '0x1'"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg %0 f32[3]\n}\n", 2, 15,
       "expected ',' or ':' after operand, found 'f32'"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg %0 : f32[3]\n  %2 = add %1, : f32[3]\n}\n", 3,
       16, "expected an operand after ','"},
      {"func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = broadcast_in_dim[dims=[0, 1.5]] %0 : f32[3]\n}\n",
       2, 34, "expected an integer list entry, found '1.5'"},
      {"func @f() -> () {\n  %1 = iota[dimension=0] : i32[3\n}\n", 3, 1,
       "expected ',' or ']' after dimension size, found '}'"},
      {"func @f() -> () {\n  %1 = slice[start=[3000000000]] : i32[3]\n}\n", 2, 21,
       "list entry 3000000000 is outside the supported range"},
      {"func @f() -> () {\n  x = neg\n}\n", 2, 3,
       "expected a statement ('%name = op ...') or 'return'"},
      {"func @f() -> () {\n  %1 = \x01 : i32[3]\n}\n", 2, 8, "unexpected byte 0x01"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const ParseError e = expect_throws<ParseError>(c.text);
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), c.line) << msg;
    EXPECT_EQ(e.column(), c.column) << msg;
    const std::string prefix =
        "line " + std::to_string(c.line) + ", column " + std::to_string(c.column) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(c.message_part), std::string::npos) << msg;
  }
}

// Integer attributes that their users keep in an int (callback slots, operand counts, axes)
// are range-checked where they are written, never wrapped: callback=999999999999 was slot
// -727379969 by the time it was reported.
TEST(IrText, CountAndSlotAttributesOutOfRangeAreParseErrorsNamingTheAttribute) {
  const struct {
    std::string text;
    int column;
    std::string message_part;
  } cases[] = {
      {"func @f(%x: f32[4]) -> () {\n  host_call[callback=999999999999] %x : ()\n  return\n}\n", 22,
       "attribute 'callback' of host_call is 999999999999, outside its range 0 to 2147483647 "
       "(a slot in the callback table)"},
      {"func @f(%x: f32[4]) -> () {\n  host_call[callback=2147483648] %x : ()\n  return\n}\n", 22,
       "attribute 'callback' of host_call is 2147483648, outside its range 0 to 2147483647"},
      {"func @f(%x: f32[4]) -> () {\n  host_call[callback=99999999999999999999] %x : ()\n  "
       "return\n}\n",
       22, "attribute 'callback' of host_call is 99999999999999999999, outside its range"},
      {"func @f(%x: f32[4]) -> () {\n  host_call[callback=-1] %x : ()\n  return\n}\n", 22,
       "attribute 'callback' of host_call is -1, outside its range 0 to 2147483647"},
      {"func @f(%x: i32[]) -> (i32[]) {\n  %y = while[carries=4294967297] %x : i32[] {\n", 22,
       "attribute 'carries' of while is 4294967297, outside its range 0 to 2147483647"},
      {"func @f(%x: i32[]) -> (i32[]) {\n  %y = scan[carries=1, xs=4294967296, length=1, "
       "reverse=0] %x : i32[] {\n",
       27, "attribute 'xs' of scan is 4294967296"},
      {"func @f(%x: i32[]) -> (i32[]) {\n  %y = scan[carries=1, xs=0, length=8589934592, "
       "reverse=0] %x : i32[] {\n",
       37, "attribute 'length' of scan is 8589934592"},
      {"func @f() -> () {\n  %1 = iota[dimension=4294967296] : i32[3]\n  return\n}\n", 23,
       "attribute 'dimension' of iota is 4294967296, outside its range 0 to 2147483647 (an "
       "axis)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const ParseError e = expect_throws<ParseError>(c.text);
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), 2) << msg;
    EXPECT_EQ(e.column(), c.column) << msg;
    EXPECT_NE(msg.find(c.message_part), std::string::npos) << msg;
  }
  // The largest slot parses and is kept exactly.
  const Graph g = parse_graph(
      "func @f(%x: f32[4]) -> () {\n  host_call[callback=2147483647, effect=\"io_callback\"] %x : "
      "()\n  return\n}\n");
  bool found = false;
  for (const Node& n : g.nodes)
    if (n.op == OpKind::HostCall) {
      EXPECT_EQ(n.attrs.get_int("callback"), 2147483647);
      found = true;
    }
  EXPECT_TRUE(found);
  // Attributes no op reads keep the full 64-bit range.
  EXPECT_NO_THROW(
      parse_graph("func @f(%0: f32[3]) -> (f32[3]) {\n  %1 = neg[alpha=999999999999] %0 : "
                  "f32[3]\n  return %1\n}\n"));
}

TEST(IrText, ShapeInvalidTextThrowsInvalidGraphErrorWithLine) {
  {
    const InvalidGraphError e = expect_throws<InvalidGraphError>(
        "func @f(%a: f32[3], %b: f32[4]) -> (f32[3]) {\n"
        "  %n = neg %a : f32[3]\n"
        "  %s = add %n, %b : f32[3]\n"
        "  return %s\n"
        "}\n");
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("line 3: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[4]"), std::string::npos) << msg;
  }
  {
    // Declared type disagrees with the rule.
    const InvalidGraphError e = expect_throws<InvalidGraphError>(
        "func @f(%a: f32[2,3]) -> (f32[2]) {\n"
        "  # comment\n"
        "  %r = reduce_sum[axes=[1]] %a : f32[3]\n"
        "  return %r\n"
        "}\n");
    EXPECT_EQ(std::string(e.what()).rfind("line 3: ", 0), 0u) << e.what();
  }
  {
    // A missing attribute.
    const InvalidGraphError e = expect_throws<InvalidGraphError>(
        "func @f() -> (i32[3]) {\n  %r = iota : i32[3]\n  return %r\n}\n");
    EXPECT_EQ(std::string(e.what()).rfind("line 2: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("dimension"), std::string::npos) << e.what();
  }
  {
    // The signature's result types must match what 'return' names.
    const InvalidGraphError e = expect_throws<InvalidGraphError>(
        "func @f(%a: f32[3]) -> (f32[4]) {\n  return\n    %a\n}\n");
    EXPECT_EQ(std::string(e.what()).rfind("line 3: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[4]"), std::string::npos) << e.what();
  }
  {
    const InvalidGraphError e =
        expect_throws<InvalidGraphError>("func @f(%a: f32[3]) -> () {\n  return %a\n}\n");
    EXPECT_NE(std::string(e.what()).find("declares 0 result(s)"), std::string::npos) << e.what();
  }
  {
    // A bool constant with an integer value is fine; an f32 constant with a list is not.
    const InvalidGraphError e = expect_throws<InvalidGraphError>(
        "func @f() -> () {\n  %c = constant[value=[1]] : f32[]\n  return\n}\n");
    EXPECT_EQ(std::string(e.what()).rfind("line 2: ", 0), 0u) << e.what();
  }
}

// Every prefix and many single-byte corruptions of a valid program either parse or throw a
// weft::Error; nothing else escapes.
TEST(IrText, TruncatedAndCorruptedInputsOnlyThrowWeftErrors) {
  const std::string text = print_graph(graph_using(OpKind::Pad));
  const std::string replacements = "%@[](){},:=->#\"\\0-9aZ. \n\x01\xff";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    const std::string prefix = text.substr(0, cut);
    try {
      parse_graph(prefix);
    } catch (const Error&) {
    }
    for (char r : replacements) {
      std::string mutated = text;
      if (cut < mutated.size()) mutated[cut] = r;
      try {
        const Graph g = parse_graph(mutated);
        EXPECT_EQ(print_graph(parse_graph(print_graph(g))), print_graph(g));
      } catch (const Error&) {
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Example programs.

std::filesystem::path resources_dir() {
  if (const char* env = std::getenv("WEFT_RESOURCES"); env && *env) return env;
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "resources";
}

TEST(IrText, ExamplesParseAndRoundTrip) {
  const std::filesystem::path dir = resources_dir() / "examples";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".weft") continue;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    Graph g;
    ASSERT_NO_THROW(g = parse_graph(buffer.str()));
    expect_round_trip(g);
    seen.push_back(entry.path().stem().string());
  }
  for (const char* name : {"select_tril", "softmax", "mlp"})
    EXPECT_NE(std::find(seen.begin(), seen.end(), name), seen.end()) << name;
  EXPECT_GE(seen.size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// Control flow: results on the left, regions in a block after the result types.

// The canonical text of a while loop: the results %3, %4 are numbered first, then the regions'
// parameters and statements, then the statements after the loop.
const char* const kWhileGolden =
    "func @loop(%0: f32[4], %1: f32[]) -> (f32[], i32[]) {\n"
    "  %2 = constant[value=0] : i32[]\n"
    "  %3, %4 = while[carries=2] %1, %2, %0 : f32[], i32[] {\n"
    "    cond(%5: f32[], %6: i32[], %7: f32[4]) -> (bool[]) {\n"
    "      %8 = constant[value=10] : i32[]\n"
    "      %9 = lt %6, %8 : bool[]\n"
    "      return %9\n"
    "    }\n"
    "    body(%10: f32[], %11: i32[], %12: f32[4]) -> (f32[], i32[]) {\n"
    "      %13 = reduce_sum[axes=[0]] %12 : f32[]\n"
    "      %14 = add %10, %13 : f32[]\n"
    "      %15 = constant[value=1] : i32[]\n"
    "      %16 = add %11, %15 : i32[]\n"
    "      return %14, %16\n"
    "    }\n"
    "  }\n"
    "  %17 = neg %3 : f32[]\n"
    "  return %17, %4\n"
    "}\n";

// A while whose body holds a scan whose body holds a cond: three levels of regions.
const char* const kThreeDeepGolden =
    "func @deep(%0: f32[], %1: f32[3]) -> (f32[]) {\n"
    "  %2 = constant[value=0] : i32[]\n"
    "  %3, %4 = while[carries=2] %0, %2, %1 : f32[], i32[] {\n"
    "    cond(%5: f32[], %6: i32[], %7: f32[3]) -> (bool[]) {\n"
    "      %8 = constant[value=2] : i32[]\n"
    "      %9 = lt %6, %8 : bool[]\n"
    "      return %9\n"
    "    }\n"
    "    body(%10: f32[], %11: i32[], %12: f32[3]) -> (f32[], i32[]) {\n"
    "      %13 = scan[carries=1, length=3, reverse=0, xs=1] %10, %12 : f32[] {\n"
    "        body(%14: i32[], %15: f32[], %16: f32[]) -> (f32[]) {\n"
    "          %17 = constant[value=0.0] : f32[]\n"
    "          %18 = gt %16, %17 : bool[]\n"
    "          %19 = cond %18, %15, %16 : f32[] {\n"
    "            branch0(%20: f32[], %21: f32[]) -> (f32[]) {\n"
    "              return %20\n"
    "            }\n"
    "            branch1(%22: f32[], %23: f32[]) -> (f32[]) {\n"
    "              %24 = add %22, %23 : f32[]\n"
    "              return %24\n"
    "            }\n"
    "          }\n"
    "          return %19\n"
    "        }\n"
    "      }\n"
    "      %25 = constant[value=1] : i32[]\n"
    "      %26 = add %11, %25 : i32[]\n"
    "      return %13, %26\n"
    "    }\n"
    "  }\n"
    "  return %3\n"
    "}\n";

TEST(IrText, GoldenWhileNumbersResultsThenRegionsThenTheRest) {
  const Graph g = parse_graph(kWhileGolden);
  EXPECT_EQ(print_graph(g), kWhileGolden);
  expect_round_trip(g);
  // Node ids count within each graph: the while is node 3, its results nodes 4 and 5.
  ASSERT_EQ(g.nodes.size(), 7u);
  const Node& loop = g.node(3);
  EXPECT_EQ(loop.op, OpKind::While);
  ASSERT_EQ(loop.regions.size(), 2u);
  EXPECT_EQ(loop.regions[0].name, "cond");
  EXPECT_EQ(loop.regions[1].name, "body");
  EXPECT_EQ(loop.regions[1].params.size(), 3u);
  EXPECT_EQ(g.node(4).op, OpKind::Result);
  EXPECT_EQ(g.node(5).attrs.get_int("index"), 1);
  EXPECT_EQ(g.outputs, (std::vector<ValueId>{6, 5}));
  EXPECT_EQ(g.node(6).inputs, std::vector<ValueId>{4});
}

TEST(IrText, NestingThreeDeepRoundTripsAndRuns) {
  const Graph g = parse_graph(kThreeDeepGolden);
  EXPECT_EQ(print_graph(g), kThreeDeepGolden);
  expect_round_trip(g);
  const Graph& scan_body = g.node(3).regions[1].node(3).regions[0];
  EXPECT_EQ(scan_body.node(5).op, OpKind::Cond);
  EXPECT_EQ(scan_body.node(5).regions.size(), 2u);
  // Two trips of the while, each adding the positive elements of %1 (1 + 3).
  const HostArray x = HostArray::from<float>({}, {0.5f});
  const HostArray xs = HostArray::from<float>({3}, {1.0f, -2.0f, 3.0f});
  const std::vector<HostArray> out = interpret(g, std::vector<HostArray>{x, xs});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>{8.5f});
}

TEST(IrText, LooseControlTextPrintsCanonically) {
  // Any names, any layout; region names may repeat names of other scopes.
  const Graph g = parse_graph(
      "func @f(%x: f32[4], %acc: f32[]) -> (f32[], i32[]) {\n"
      "  %i0 = constant[value=0] : i32[]\n"
      "  %acc_out,%n = while [carries=2] %acc , %i0, %x:f32[],i32[]{cond(%acc: f32[],\n"
      "  %i: i32[], %x: f32[4])->(bool[]){ %ten = constant[value=10] : i32[]\n"
      "  %more = lt %i, %ten : bool[]  return %more }\n"
      "  # the body\n"
      "  body(%acc: f32[], %i: i32[], %x: f32[4]) -> (f32[], i32[]) {\n"
      "      %s = reduce_sum[axes=[0]] %x : f32[]\n"
      "      %a = add %acc, %s : f32[]\n"
      "      %one = constant[value=1] : i32[]\n"
      "      %i1 = add %i, %one : i32[]\n"
      "      return %a, %i1 } }\n"
      "  %r = neg %acc_out : f32[]\n"
      "  return %r, %n\n"
      "}\n");
  EXPECT_EQ(print_graph(g), std::string(kWhileGolden).replace(6, 4, "f"));
  EXPECT_EQ(g.node(3).origin.text_line, 3);
  EXPECT_EQ(g.node(3).regions[0].node(3).origin.text_line, 4);
  EXPECT_EQ(g.node(3).regions[1].node(5).origin.text_line, 10);
}

TEST(IrText, ZeroResultControlOpsRoundTrip) {
  const std::string text =
      "func @effectless(%0: bool[], %1: f32[]) -> (f32[]) {\n"
      "  cond %0, %1 : {\n"
      "    branch0(%2: f32[]) -> () {\n"
      "      return\n"
      "    }\n"
      "    branch1(%3: f32[]) -> () {\n"
      "      %4 = neg %3 : f32[]\n"
      "      return\n"
      "    }\n"
      "  }\n"
      "  scan[carries=0, length=2, reverse=0, xs=0] : {\n"
      "    body(%5: i32[]) -> () {\n"
      "      return\n"
      "    }\n"
      "  }\n"
      "  while[carries=0] %0 : {\n"
      "    cond(%6: bool[]) -> (bool[]) {\n"
      "      return %6\n"
      "    }\n"
      "    body(%7: bool[]) -> () {\n"
      "      return\n"
      "    }\n"
      "  }\n"
      "  return %1\n"
      "}\n";
  const Graph g = parse_graph(text);
  ASSERT_EQ(g.nodes.size(), 5u);  // two params and three control nodes, no result nodes
  EXPECT_TRUE(g.node(2).results.empty());
  EXPECT_EQ(g.node(3).op, OpKind::Scan);
  EXPECT_EQ(g.node(4).op, OpKind::While);
  EXPECT_EQ(print_graph(g), text);
  expect_round_trip(g);

  // Built in code rather than parsed, the same cond prints the same way.
  Builder b;
  b.g.name = "effectless";
  ValueId p = b.param(DType::Bool, {});
  ValueId x = b.param(DType::F32, {});
  std::vector<Graph> branches;
  for (std::size_t k = 0; k < 2; ++k)
    branches.push_back(
        make_region(OpKind::Cond, k, {tt(DType::F32)},
                    [](Builder&, std::vector<ValueId>) { return std::vector<ValueId>{}; }));
  EXPECT_EQ(b.control(OpKind::Cond, {p, x}, {}, {}, std::move(branches)), 3);
  b.g.outputs = {x};
  ASSERT_NO_THROW(verify(b.g));
  EXPECT_NE(print_graph(b.g).find("\n  cond %0, %1 : {\n    branch0(%2: f32[]) -> () {\n"),
            std::string::npos)
      << print_graph(b.g);
  expect_round_trip(b.g);
}

TEST(IrText, ControlOpsWithOriginsAddCommentsThatStillParse) {
  const std::string text =
      "func @f(%x: f32[], %p: bool[]) -> (f32[]) {\n"
      "  %y = cond %p, %x : f32[] {\n"
      "    branch0(%a: f32[]) -> (f32[]) {\n"
      "      %b = neg %a : f32[]\n"
      "      return %b\n"
      "    }\n"
      "    branch1(%c: f32[]) -> (f32[]) {\n"
      "      return %c\n"
      "    }\n"
      "  }\n"
      "  return %y\n"
      "}\n";
  const Graph g = parse_graph(text);
  EXPECT_EQ(g.node(2).origin.text_line, 2);
  EXPECT_EQ(g.node(3).origin.text_line, 2);  // the result node
  EXPECT_EQ(g.node(2).regions[0].node(1).origin.text_line, 4);
  EXPECT_EQ(g.node(2).regions[1].node(0).origin.text_line, 7);
  const std::string annotated = print_graph(g, {.with_origins = true});
  EXPECT_NE(annotated.find("  %2 = cond %1, %0 : f32[] {  # line 2\n"), std::string::npos)
      << annotated;
  EXPECT_NE(annotated.find("      %4 = neg %3 : f32[]  # line 4\n"), std::string::npos)
      << annotated;
  EXPECT_TRUE(parse_graph(annotated) == g);
  EXPECT_EQ(print_graph(parse_graph(annotated)), print_graph(g));
  EXPECT_EQ(print_graph(g).find('#'), std::string::npos);
}

// `depth` conds nested in each other's only branch, each without results.
std::string nested_conds(int depth) {
  std::string text = "func @deep(%i: i32[]) -> () {\n";
  for (int d = 0; d < depth; ++d) text += "cond %i, %i : {\nbranch0(%i: i32[]) -> () {\n";
  text += "return\n";
  for (int d = 0; d < depth; ++d) text += "}\n}\nreturn\n";
  return text + "}\n";
}

TEST(IrText, RegionNestingIsBoundedAt64Levels) {
  Graph g;
  ASSERT_NO_THROW(g = parse_graph(nested_conds(64)));
  int depth = 0;
  for (const Graph* at = &g; !at->nodes.empty() && at->nodes.size() > 1; ++depth)
    at = &at->nodes[1].regions.at(0);
  EXPECT_EQ(depth, 64);
  expect_round_trip(g);

  for (int too_deep : {65, 100000}) {
    const ParseError e = expect_throws<ParseError>(nested_conds(too_deep));
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), 2 + 2 * 64) << msg;
    EXPECT_NE(msg.find("regions nest deeper than the limit of 64 levels"), std::string::npos)
        << msg;
  }
}

TEST(IrText, ControlParseErrorsNameLineColumnAndTheRule) {
  const BadInput cases[] = {
      // A region sees only its parameters.
      {"func @f(%x: f32[], %n: i32[]) -> (f32[]) {\n"
       "  %y = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[]) {\n"
       "      %b = add %a, %x : f32[]\n"
       "      return %b\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       4, 20,
       "value %x is defined outside the region (on line 1); a region sees only its parameters: "
       "pass the value to the control op as an operand and take it as a region parameter"},
      {"func @f(%x: f32[], %n: i32[]) -> (f32[]) {\n"
       "  %y = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[]) {\n"
       "      return %x\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       4, 14, "value %x is defined outside the region"},
      // ... and its values are not visible after it.
      {"func @f(%x: f32[], %n: i32[]) -> (f32[]) {\n"
       "  %y = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[]) {\n"
       "      %b = neg %a : f32[]\n"
       "      return %b\n"
       "    }\n"
       "  }\n"
       "  return %b\n"
       "}\n",
       8, 10, "undefined value %b"},
      // Region names and counts.
      {"func @f(%n: i32[]) -> () {\n"
       "  %m = while[carries=1] %n : i32[] {\n"
       "    cnd(%a: i32[]) -> (bool[]) {\n",
       3, 5,
       "expected region 'cond' (region 0 of while, whose regions are cond, body), found 'cnd'"},
      {"func @f(%n: i32[]) -> () {\n"
       "  %m = while[carries=1] %n : i32[] {\n"
       "    body(%a: i32[]) -> (i32[]) {\n",
       3, 5, "expected region 'cond' (region 0 of while"},
      {"func @f(%n: i32[]) -> () {\n  %m = cond %n, %n : i32[] {\n    (%a: i32[]) -> (i32[]) {\n",
       3, 5,
       "expected region 'branch0' (region 0 of cond, whose regions are branch0, branch1, ...)"},
      {"func @f(%n: i32[]) -> () {\n"
       "  %m = cond %n, %n : i32[] {\n"
       "    branch0(%a: i32[]) -> (i32[]) {\n"
       "      return %a\n"
       "    }\n"
       "    branch2(%a: i32[]) -> (i32[]) {\n",
       6, 5, "expected region 'branch1' (region 1 of cond"},
      {"func @f(%n: i32[]) -> (i32[]) {\n"
       "  %m = while[carries=1] %n : i32[] {\n"
       "    cond(%a: i32[]) -> (bool[]) {\n"
       "      %t = constant[value=1] : bool[]\n"
       "      return %t\n"
       "    }\n"
       "  }\n"
       "  return %m\n"
       "}\n",
       7, 3, "while needs 2 regions (cond, body) but has 1; expected region 'body', found '}'"},
      {"func @f(%n: i32[]) -> () {\n  cond %n : {\n  }\n  return\n}\n", 3, 3,
       "cond needs at least 1 region (branch0, branch1, ...) but has 0; expected region "
       "'branch0', found '}'"},
      {"func @f(%n: i32[]) -> () {\n"
       "  scan[carries=0, length=1, reverse=0, xs=0] : {\n"
       "    body(%i: i32[]) -> () {\n"
       "      return\n"
       "    }\n"
       "    body(%i: i32[]) -> () {\n",
       6, 5, "scan has 1 region(s) (body); expected '}' to close it, found 'body'"},
      {"func @f(%n: i32[]) -> () {\n"
       "  while[carries=0] %n : {\n"
       "    cond(%a: i32[]) -> (bool[]) {\n"
       "      %t = constant[value=1] : bool[]\n"
       "      return %t\n"
       "    }\n"
       "    body(%a: i32[]) -> () {\n"
       "      return\n"
       "    }\n"
       "    body(%a: i32[]) -> () {\n",
       10, 5, "while has 2 region(s) (cond, body); expected '}' to close it"},
      {"func @f(%n: i32[]) -> () {\n  cond %n : {\n    branch0 %a\n", 3, 13,
       "expected '(' after region name 'branch0', found '%a'"},
      {"func @f(%n: i32[]) -> () {\n  cond %n : {\n    branch0() () {\n", 3, 15,
       "expected '->' and the result types after the parameter list, found '('"},
      {"func @f(%n: i32[]) -> () {\n  cond %n : {\n    branch0() -> () }\n", 3, 21,
       "expected '{' to open the body of region branch0, found '}'"},
      // Results.
      {"func @f(%n: bool[], %x: f32[]) -> (f32[]) {\n"
       "  %c = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[]) {\n"
       "      return %a\n"
       "    }\n"
       "    branch1(%a: f32[]) -> (f32[]) {\n"
       "      return %a\n"
       "    }\n"
       "  }\n"
       "  %r = result[index=0] %c : f32[]\n",
       10, 8,
       "'result' cannot be written as a statement; the results of a control op are named on "
       "the left of it"},
      {"func @f(%n: i32[], %x: f32[]) -> () {\n  %y, %z = cond %n, %x : f32[] {\n", 2, 32,
       "2 value(s) named on the left of 'cond' but 1 result type(s) after ':'"},
      {"func @f(%n: i32[], %x: f32[]) -> () {\n  cond %n, %x : f32[] {\n", 2, 23,
       "0 value(s) named on the left of 'cond' but 1 result type(s) after ':'"},
      {"func @f(%n: i32[], %x: f32[]) -> () {\n  %y, %y = cond %n, %x : f32[], f32[] {\n", 2, 7,
       "value %y is named twice on the left of '='"},
      {"func @f(%x: f32[]) -> () {\n  %y, %x = cond %n, %x : f32[], f32[] {\n", 2, 7,
       "value %x is already defined on line 1"},
      {"func @f(%x: f32[]) -> () {\n  %a, %b = add %x, %x : f32[]\n", 2, 7,
       "only a control op (while, cond, scan) or a host op (debug_print, host_call) defines "
       "several values; 'add' defines one"},
      {"func @f(%x: f32[]) -> () {\n  add %x, %x : f32[]\n", 2, 3,
       "only a control op (while, cond, scan) or a host op (debug_print, host_call) without "
       "results is written without '%name ='"},
      {"func @f(%x: f32[]) -> () {\n  %y, = cond %x : {\n", 2, 7,
       "expected a value name after ','"},
      {"func @f(%x: i32[]) -> () {\n  %y = cond %x : f32[] f32[] {\n", 2, 24,
       "expected ',' or '{' after result type, found 'f32'"},
      {"func @f(%x: i32[]) -> () {\n  cond %x {\n", 2, 11, "expected ',' or ':' after operand"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const ParseError e = expect_throws<ParseError>(c.text);
    const std::string msg = e.what();
    EXPECT_EQ(e.line(), c.line) << msg;
    EXPECT_EQ(e.column(), c.column) << msg;
    const std::string prefix =
        "line " + std::to_string(c.line) + ", column " + std::to_string(c.column) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(c.message_part), std::string::npos) << msg;
  }
}

struct BadGraph {
  const char* text;
  int line;
  std::vector<const char*> message_parts;
};

TEST(IrText, InvalidRegionsThrowInvalidGraphErrorWithTheNestedLine) {
  const BadGraph cases[] = {
      // The body must return the carries: reported at the body's 'return'.
      {"func @f(%n: i32[], %x: f32[]) -> (i32[]) {\n"
       "  %m = while[carries=1] %n, %x : i32[] {\n"
       "    cond(%a: i32[], %b: f32[]) -> (bool[]) {\n"
       "      %t = constant[value=1] : bool[]\n"
       "      return %t\n"
       "    }\n"
       "    body(%a: i32[], %b: f32[]) -> (f32[]) {\n"
       "      %c = neg %b : f32[]\n"
       "      return %c\n"
       "    }\n"
       "  }\n"
       "  return %m\n"
       "}\n",
       9,
       {"node %2 (while, at line 2), region body: returns (f32[]) but must return (i32[])"}},
      // Region parameters that differ from the signature: reported at the region's header.
      {"func @f(%n: i32[], %x: f32[]) -> (i32[]) {\n"
       "  %m = while[carries=1] %n, %x : i32[] {\n"
       "    cond(%a: i32[], %b: f32[]) -> (bool[]) {\n"
       "      %t = constant[value=1] : bool[]\n"
       "      return %t\n"
       "    }\n"
       "    body(%a: i32[]) -> (i32[]) {\n"
       "      return %a\n"
       "    }\n"
       "  }\n"
       "  return %m\n"
       "}\n",
       7,
       {"region body: takes (i32[]) but must take (i32[], f32[])"}},
      // A bad statement two regions deep: reported at that statement.
      {"func @f(%n: i32[], %x: f32[3]) -> (f32[3]) {\n"
       "  %y = cond %n, %x : f32[3] {\n"
       "    branch0(%a: f32[3]) -> (f32[3]) {\n"
       "      %s = scan[carries=1, length=2, reverse=0, xs=0] %a : f32[3] {\n"
       "        body(%i: i32[], %c: f32[3]) -> (f32[3]) {\n"
       "          %z = constant[value=0.0] : f32[]\n"
       "          %w = add %c, %z : f32[3]\n"
       "          return %w\n"
       "        }\n"
       "      }\n"
       "      return %s\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       7,
       {"in region branch0 of node %2 (cond, at line 2): in region body of node %1 (scan, at "
        "line 4): node %3 (add, at line 7): add"}},
      // A bool index picks between exactly two branches.
      {"func @f(%p: bool[], %x: f32[]) -> (f32[]) {\n"
       "  %y = cond %p, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[]) {\n"
       "      return %a\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       2,
       {"cond", "exactly 2 branches, got 1"}},
      // Attributes the signature needs.
      {"func @f(%n: i32[]) -> () {\n"
       "  while %n : {\n"
       "    cond(%a: i32[]) -> (bool[]) {\n"
       "      %t = constant[value=1] : bool[]\n"
       "      return %t\n"
       "    }\n"
       "    body(%a: i32[]) -> () {\n"
       "      return\n"
       "    }\n"
       "  }\n"
       "  return\n"
       "}\n",
       2,
       {"while", "carries"}},
      {"func @f(%xs: f32[4]) -> (f32[3]) {\n"
       "  %c, %ys = scan[carries=0, length=4, reverse=0, xs=1] %xs : f32[3], f32[4] {\n"
       "    body(%i: i32[], %x: f32[]) -> (f32[]) {\n"
       "      return %x\n"
       "    }\n"
       "  }\n"
       "  return %c\n"
       "}\n",
       2,
       {"scan", "stacked result"}},
      // A region's declared result types must match what it returns.
      {"func @f(%n: i32[], %x: f32[]) -> (f32[]) {\n"
       "  %y = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (i32[]) {\n"
       "      return\n"
       "        %a\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       5,
       {"result 0 is declared i32[] in region branch0 of the cond on line 2 but the returned "
        "value is f32[]"}},
      {"func @f(%n: i32[], %x: f32[]) -> (f32[]) {\n"
       "  %y = cond %n, %x : f32[] {\n"
       "    branch0(%a: f32[]) -> (f32[], f32[]) {\n"
       "      return %a\n"
       "    }\n"
       "  }\n"
       "  return %y\n"
       "}\n",
       4,
       {"region branch0 of the cond on line 2 declares 2 result(s) but 'return' lists 1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const InvalidGraphError e = expect_throws<InvalidGraphError>(c.text);
    const std::string msg = e.what();
    const std::string prefix = "line " + std::to_string(c.line) + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    for (const char* part : c.message_parts) EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(IrText, TruncatedAndCorruptedControlTextOnlyThrowsWeftErrors) {
  const std::string text = kThreeDeepGolden;
  const std::string replacements = "%@[](){},:=->#\\0aZ \n\xff";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    try {
      parse_graph(text.substr(0, cut));
    } catch (const Error&) {
    }
    for (char r : replacements) {
      std::string mutated = text;
      if (cut < mutated.size()) mutated[cut] = r;
      try {
        const Graph g = parse_graph(mutated);
        EXPECT_EQ(print_graph(parse_graph(print_graph(g))), print_graph(g));
      } catch (const Error&) {
      }
    }
  }
}

Graph read_example(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_graph(buffer.str());
}

// The control-flow examples (the CLI and device tests run every example on OpenCL devices):
// they parse, round-trip and run on the reference interpreter against hand-computed results.
TEST(IrText, ControlExamplesParseRoundTripAndRun) {
  const std::filesystem::path dir = resources_dir() / "examples";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".weft") continue;
    SCOPED_TRACE(entry.path().string());
    Graph g;
    ASSERT_NO_THROW(g = read_example(entry.path()));
    bool has_control = false;
    for (const Node& n : g.nodes) has_control = has_control || is_control(n.op);
    if (!has_control) continue;
    expect_round_trip(g);
    seen.push_back(entry.path().stem().string());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"collatz", "collatz_print", "cumsum", "fori_sum",
                                            "scan_cond", "switch3"}));

  auto run = [&](const char* name, std::vector<HostArray> inputs) {
    SCOPED_TRACE(name);
    return interpret(read_example(dir / (std::string(name) + ".weft")), inputs);
  };
  auto i32 = [](std::int32_t v) { return HostArray::from<std::int32_t>({}, {v}); };
  auto f32 = [](Shape shape, std::vector<float> v) { return HostArray::from<float>(shape, v); };

  // Collatz: 6 3 10 5 16 8 4 2 1 is 8 steps; 27 takes 111; 1 takes none. The printing
  // variant computes the same (its prints are checked by cli_test).
  for (const char* name : {"collatz", "collatz_print"}) {
    for (const auto& [n, steps] : std::vector<std::pair<int, int>>{{6, 8}, {27, 111}, {1, 0}}) {
      std::ostringstream prints;
      set_debug_print_stream(&prints);
      const auto out = run(name, {i32(n)});
      set_debug_print_stream(nullptr);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].to_vector<std::int32_t>(), std::vector<std::int32_t>{steps}) << n;
    }
  }
  {
    // 0.5 * (0 + 1 + 4 + ... + 81) = 0.5 * 285.
    const auto out = run("fori_sum", {f32({}, {0.5f})});
    EXPECT_EQ(out.at(0).to_vector<float>(), std::vector<float>{142.5f});
  }
  {
    const auto out = run("cumsum", {f32({6}, {1, 2, 3, 4, 5, 6})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 3, 6, 10, 15, 21}));
    EXPECT_EQ(out[1].to_vector<float>(), std::vector<float>{21});
  }
  {
    const HostArray x = f32({4}, {1.0f, -2.0f, 3.0f, 0.5f});
    const std::vector<float> negated = {-1.0f, 2.0f, -3.0f, -0.5f};
    const std::vector<float> squared = {1.0f, 4.0f, 9.0f, 0.25f};
    const std::vector<float> plus_ten = {11.0f, 8.0f, 13.0f, 10.5f};
    const std::pair<int, std::vector<float>> cases[] = {
        {0, negated}, {1, squared}, {2, plus_ten}, {-5, negated}, {7, plus_ten}};
    for (const auto& [index, want] : cases)
      EXPECT_EQ(run("switch3", {i32(index), x}).at(0).to_vector<float>(), want) << index;
  }
  {
    const auto out = run("scan_cond", {f32({5}, {3, -1, 2, 0, -5})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>{2});
    EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{3, -1, 2, -1, -1}));
  }
}

}  // namespace
}  // namespace weft

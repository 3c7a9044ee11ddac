// The canonical IR text form: printing, parsing, round trips over every primitive, error
// reporting and the example programs under resources/examples.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/ir/graph.h"
#include "weft/ir/text.h"

namespace weft {
namespace {

// Small graph builder for the tests.
struct Builder {
  Graph g;

  ValueId param(DType dtype, Shape shape) {
    Node n;
    n.op = OpKind::Parameter;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.attrs.set("index", static_cast<std::int64_t>(g.params.size()));
    ValueId id = g.add(std::move(n));
    g.params.push_back(id);
    return id;
  }

  ValueId op(OpKind kind, std::vector<ValueId> inputs, DType dtype, Shape shape, Attrs attrs = {}) {
    Node n;
    n.op = kind;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    return g.add(std::move(n));
  }

  ValueId constant(DType dtype, AttrValue value) {
    return op(OpKind::Constant, {}, dtype, {}, Attrs{{"value", std::move(value)}});
  }
};

using Ints = std::vector<std::int64_t>;

bool needs_float(OpKind k) {
  switch (k) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Sign:
      return false;
    default:
      return true;
  }
}

// A small valid graph that uses `kind`, with sensible attributes.
Graph graph_using(OpKind kind) {
  Builder b;
  b.g.name = "uses_" + std::string(op_name(kind));
  const OpInfo& info = op_info(kind);
  const DType f = DType::F32;
  ValueId out = -1;
  switch (info.op_class) {
    case OpClass::Leaf:
      if (kind == OpKind::Parameter) {
        out = b.param(f, {2, 3});
      } else if (kind == OpKind::Constant) {
        out = b.constant(f, 1.5);
        b.g.outputs.push_back(b.constant(DType::I32, std::int64_t{-7}));
        b.g.outputs.push_back(b.constant(DType::Bool, std::int64_t{1}));
      } else {
        out = b.op(kind, {}, DType::I32, {2, 3}, {{"dimension", std::int64_t{1}}});
      }
      break;
    case OpClass::Unary: {
      const DType t = kind == OpKind::Not ? DType::Bool : needs_float(kind) ? f : DType::I32;
      ValueId x = b.param(t, {2, 3});
      out = b.op(kind, {x}, t, {2, 3});
      break;
    }
    case OpClass::Binary: {
      const bool logical = kind == OpKind::And || kind == OpKind::Or || kind == OpKind::Xor;
      const DType t = logical ? DType::I32 : f;
      ValueId x = b.param(t, {4});
      ValueId y = b.param(t, {4});
      out = b.op(kind, {x, y}, t, {4});
      break;
    }
    case OpClass::Compare: {
      ValueId x = b.param(f, {4});
      ValueId y = b.param(f, {4});
      out = b.op(kind, {x, y}, DType::Bool, {4});
      break;
    }
    case OpClass::Select: {
      ValueId p = b.param(DType::Bool, {2, 2});
      ValueId x = b.param(f, {2, 2});
      ValueId y = b.param(f, {2, 2});
      out = b.op(kind, {p, x, y}, f, {2, 2});
      break;
    }
    case OpClass::Convert: {
      ValueId x = b.param(f, {3});
      out = b.op(kind, {x}, DType::I64, {3});
      break;
    }
    case OpClass::Reduce: {
      ValueId x = b.param(f, {2, 3, 4});
      const bool arg = kind == OpKind::ArgMax || kind == OpKind::ArgMin;
      out = b.op(kind, {x}, arg ? DType::I32 : f, {2}, {{"axes", Ints{1, 2}}});
      break;
    }
    case OpClass::Dot: {
      ValueId x = b.param(f, {5, 2, 3});
      ValueId y = b.param(f, {5, 3, 4});
      out = b.op(kind, {x, y}, f, {5, 2, 4},
                 {{"lhs_contracting", Ints{2}},
                  {"rhs_contracting", Ints{1}},
                  {"lhs_batch", Ints{0}},
                  {"rhs_batch", Ints{0}}});
      break;
    }
    case OpClass::Layout:
      switch (kind) {
        case OpKind::BroadcastInDim: {
          ValueId x = b.param(f, {3});
          out = b.op(kind, {x}, f, {2, 3}, {{"dims", Ints{1}}});
          break;
        }
        case OpKind::Reshape: {
          ValueId x = b.param(f, {2, 3});
          out = b.op(kind, {x}, f, {3, 2});
          break;
        }
        case OpKind::Transpose: {
          ValueId x = b.param(f, {2, 3, 4});
          out = b.op(kind, {x}, f, {4, 2, 3}, {{"permutation", Ints{2, 0, 1}}});
          break;
        }
        case OpKind::Slice: {
          ValueId x = b.param(f, {4, 6});
          out = b.op(kind, {x}, f, {2, 3},
                     {{"start", Ints{1, 0}}, {"limit", Ints{3, 6}}, {"stride", Ints{1, 2}}});
          break;
        }
        case OpKind::DynamicSlice: {
          ValueId x = b.param(f, {4, 6});
          ValueId i = b.param(DType::I32, {});
          ValueId j = b.param(DType::I32, {});
          out = b.op(kind, {x, i, j}, f, {2, 3}, {{"sizes", Ints{2, 3}}});
          break;
        }
        case OpKind::DynamicUpdateSlice: {
          ValueId x = b.param(f, {4, 6});
          ValueId u = b.param(f, {2, 3});
          ValueId i = b.param(DType::I32, {});
          ValueId j = b.constant(DType::I32, std::int64_t{1});
          out = b.op(kind, {x, u, i, j}, f, {4, 6});
          break;
        }
        case OpKind::Concatenate: {
          ValueId x = b.param(f, {2, 3});
          ValueId y = b.param(f, {4, 3});
          out = b.op(kind, {x, y, x}, f, {8, 3}, {{"dimension", std::int64_t{0}}});
          break;
        }
        case OpKind::Pad: {
          ValueId x = b.param(f, {2, 3});
          ValueId v = b.constant(f, -1.0);
          // Axis 0: 1 + 2 + 1 interior = 4; axis 1: 0 + 3 + 2 - 1 (negative low) = 4.
          out = b.op(kind, {x, v}, f, {4, 4},
                     {{"low", Ints{1, -1}}, {"high", Ints{0, 2}}, {"interior", Ints{1, 0}}});
          break;
        }
        default:
          ADD_FAILURE() << "no test graph for layout op " << op_name(kind);
      }
      break;
  }
  b.g.outputs.insert(b.g.outputs.begin(), out);
  return b.g;
}

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
    if (kind != OpKind::Parameter) {
      EXPECT_NE(text.find(" = " + std::string(op_name(kind))), std::string::npos) << text;
    }
    expect_round_trip(g);
  }
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
      {"func @f(%0: f16[3]) -> () {\n  return\n}\n", 1, 13, "unknown dtype 'f16'"},
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

}  // namespace
}  // namespace weft

// Errors are part of the product: these tests pin down what each message says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "weft/opencl/codegen.h"
#include "weft/opencl/device.h"
#include "weft/weft.h"

namespace weft {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string here(int line) {
  return std::string("errors_test.cpp:") + std::to_string(line);
}

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

TEST(Errors, ConcretizationNamesPrimitiveLineAndFunction) {
  int reduce_line = 0, item_line = 0;
  auto ex1 = jit(
      [&](const Array& x) {
        reduce_line = __LINE__ + 1;
        Array size = np::sum(np::ones_like(x));
        item_line = __LINE__ + 1;
        return x.reshape({size.item<std::int64_t>()});
      },
      {.name = "ex1"});
  Array x = Array::from_vector<float>({3, 4}, std::vector<float>(12, 1.0f));
  std::string msg = message_of<ConcretizationError>([&] { ex1(x); });
  EXPECT_THAT(msg,
              HasSubstr("Abstract tracer value encountered where a concrete value is expected"));
  EXPECT_THAT(msg, HasSubstr("item()"));
  EXPECT_THAT(msg, HasSubstr(here(item_line)));
  EXPECT_THAT(msg, HasSubstr("reduce_sum"));
  EXPECT_THAT(msg, HasSubstr(here(reduce_line)));
  EXPECT_THAT(msg, HasSubstr("'ex1'"));
  EXPECT_THAT(msg, HasSubstr("static"));
}

TEST(Errors, ConcretizationOfABranchNamesTheChainAndTheBranchLine) {
  int branch_line = 0;
  auto f = jit(
      [&](const Array& shape) {
        branch_line = __LINE__ + 1;
        if (np::prod(shape) > 100) return shape + 1;
        return shape;
      },
      {.name = "branchy"});
  std::string msg = message_of<ConcretizationError>([&] {
    f(Array::from_vector<int>({2}, {10, 20}));
  });
  EXPECT_THAT(msg, HasSubstr("explicit operator bool"));
  EXPECT_THAT(msg, HasSubstr("'branchy'"));
  EXPECT_THAT(msg, HasSubstr("argument 0 of the traced function (i32[2])"));
  EXPECT_THAT(msg, HasSubstr("static"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("unknown location")));
  // The chain, argument first: reduce_prod then gt, each at the branch's line.
  const std::size_t argument = msg.find("argument 0"), prod = msg.find("reduce_prod"),
                    gt = msg.find("= gt(");
  ASSERT_NE(prod, std::string::npos) << msg;
  ASSERT_NE(gt, std::string::npos) << msg;
  EXPECT_LT(argument, prod) << msg;
  EXPECT_LT(prod, gt) << msg;
  EXPECT_THAT(msg.substr(prod, gt - prod), HasSubstr(here(branch_line)));
  EXPECT_THAT(msg.substr(gt), HasSubstr(here(branch_line)));
  // The concretization's own line: operator bool names the line of the tested value.
  EXPECT_THAT(msg.substr(0, msg.find('\n')), HasSubstr(here(branch_line)));
}

TEST(Errors, ConcretizationOfANegatedBranchNamesTheLastKnownLine) {
  int compare_line = 0;
  auto f = jit([&](const Array& x) {
    compare_line = __LINE__ + 1;
    if (!(np::sum(x) > 0)) return -x;  // `!` records no line of its own
    return x;
  });
  std::string msg = message_of<ConcretizationError>([&] {
    f(Array::from_vector<int>({2}, {1, 2}));
  });
  EXPECT_THAT(msg.substr(0, msg.find('\n')), HasSubstr(here(compare_line)));
  EXPECT_THAT(msg, HasSubstr("= not("));
}

TEST(Errors, ConcretizationAtItemNamesItsLineAndAChainThroughSeveralLines) {
  int scale_line = 0, sum_line = 0, item_line = 0;
  auto f = jit(
      [&](const Array& x) {
        scale_line = __LINE__ + 1;
        Array scaled = x * 2;
        sum_line = __LINE__ + 1;
        Array total = np::sum(scaled);
        item_line = __LINE__ + 1;
        return x.reshape({total.item<std::int64_t>()});
      },
      {.name = "lines"});
  std::string msg = message_of<ConcretizationError>([&] {
    f(Array::from_vector<int>({2}, {1, 1}));
  });
  const std::string first_line = msg.substr(0, msg.find('\n'));
  EXPECT_THAT(first_line, HasSubstr("item() at "));
  EXPECT_THAT(first_line, HasSubstr(here(item_line)));
  const std::size_t mul = msg.find("= mul("), sum = msg.find("= reduce_sum(");
  ASSERT_NE(mul, std::string::npos) << msg;
  ASSERT_NE(sum, std::string::npos) << msg;
  EXPECT_LT(mul, sum) << msg;
  EXPECT_THAT(msg.substr(mul, sum - mul), HasSubstr(here(scale_line)));
  EXPECT_THAT(msg.substr(sum), HasSubstr(here(sum_line)));
}

TEST(Errors, LongConcretizationChainsAreElided) {
  auto f = jit(
      [](const Array& x) {
        Array y = x;
        for (int i = 0; i < 20; ++i) y = np::exp(y);
        if (np::sum(y) > 0) return x;
        return -x;
      },
      {.name = "long_chain"});
  std::string msg = message_of<ConcretizationError>([&] {
    f(Array::from_vector<float>({2}, {1, 2}));
  });
  EXPECT_THAT(msg, HasSubstr("argument 0 of the traced function"));
  EXPECT_THAT(msg, HasSubstr("... (16 more operations)"));
  EXPECT_THAT(msg, HasSubstr("= gt("));
  std::size_t entries = 0;
  for (std::size_t at = msg.find("\n    from "); at != std::string::npos;
       at = msg.find("\n    from ", at + 1))
    ++entries;
  EXPECT_EQ(entries, 6u) << msg;  // 8 entries: the argument, 6 operations, the elision
}

TEST(Errors, ConcretizationOfAConstantOnlyValueBlamesOmnistaging) {
  auto f = jit([](const Array& x) { return x.reshape({np::sum(np::arange(3)).item<int>()}); },
               {.name = "omni"});
  std::string msg = message_of<ConcretizationError>([&] {
    f(Array::from_vector<float>({3}, {1, 2, 3}));
  });
  EXPECT_THAT(msg, HasSubstr("iota"));
  EXPECT_THAT(msg, HasSubstr("reduce_sum"));
  EXPECT_THAT(msg, HasSubstr("staged, even on constants"));
}

TEST(Errors, ConcretizationOfAnArgumentSaysSo) {
  auto f = jit([](const Array& x) {
    if (x) return x;  // data-dependent control flow on a tracer
    return -x;
  });
  std::string msg = message_of<ConcretizationError>([&] { f(Array::from_vector<int>({}, {1})); });
  EXPECT_THAT(msg, HasSubstr("operator bool"));
  EXPECT_THAT(msg, HasSubstr("argument 0"));
}

TEST(Errors, ConcretizationFromToHostAndShapeUse) {
  auto g = jit([](const Array& x) { return np::reshape(x, np::arange(2) + 2); });
  std::string msg = message_of<ConcretizationError>([&] {
    g(Array::from_vector<float>({4}, {1, 2, 3, 4}));
  });
  EXPECT_THAT(msg, HasSubstr("to_host()"));
  EXPECT_THAT(msg, HasSubstr("add"));
  auto h = jit([](const Array& x) {
    auto host = x.to_host();
    return x;
  });
  msg = message_of<ConcretizationError>([&] { h(Array::from_vector<float>({1}, {1})); });
  EXPECT_THAT(msg, HasSubstr("to_host()"));
}

TEST(Errors, EscapedTracerNamesWhereItWasCreated) {
  Array leaked;
  int line = 0;
  auto f = jit([&](const Array& x) {
    line = __LINE__ + 1;
    leaked = np::exp(x);
    return x;
  });
  f(Array::from_vector<float>({2}, {1, 2}));
  std::string msg = message_of<EscapedTracerError>([&] { (void)(leaked + 1.0); });
  EXPECT_THAT(msg, HasSubstr("after its trace ended"));
  EXPECT_THAT(msg, HasSubstr("exp"));
  EXPECT_THAT(msg, HasSubstr(here(line)));
  msg = message_of<EscapedTracerError>([&] { leaked.to_host(); });
  EXPECT_THAT(msg, HasSubstr(here(line)));
}

TEST(Errors, EscapedTracerPassedToAJittedFunctionNamesTheCallersLine) {
  Array leaked;
  auto f = jit([&](const Array& x) {
    leaked = np::exp(x);
    return x;
  });
  const Array x = Array::from_vector<float>({2}, {1, 2});
  f(x);
  auto g = jit([](const Array& a, const Array& b) { return a + b; });
  int line = __LINE__ + 1;
  std::string msg = message_of<EscapedTracerError>([&] { g(x, leaked); });
  EXPECT_THAT(msg, HasSubstr(here(line) + " ("));
  EXPECT_THAT(msg, Not(HasSubstr("jit.cpp")));
  line = __LINE__ + 1;
  msg = message_of<EscapedTracerError>([&] { f(leaked); });
  EXPECT_THAT(msg, HasSubstr(here(line) + " ("));
}

TEST(Errors, ShapeErrorsNameOpShapesAndLine) {
  Array a = Array::from_vector<float>({3}, {1, 2, 3});
  Array b = Array::from_vector<float>({4}, {1, 2, 3, 4});
  int line = __LINE__ + 1;
  std::string msg = message_of<ShapeError>([&] { lax::add(a, b); });
  EXPECT_THAT(msg, HasSubstr("add"));
  EXPECT_THAT(msg, HasSubstr("f32[3]"));
  EXPECT_THAT(msg, HasSubstr("f32[4]"));
  EXPECT_THAT(msg, HasSubstr(here(line)));

  auto f = jit([](const Array& x, const Array& y) { return np::matmul(x, y); }, {.name = "mm"});
  Array m = Array::from_vector<float>({2, 3}, std::vector<float>(6, 1));
  msg = message_of<ShapeError>([&] { f(m, m); });
  EXPECT_THAT(msg, HasSubstr("matmul"));
  EXPECT_THAT(msg, HasSubstr("[2,3]"));

  msg = message_of<ShapeError>([&] { a + b; });
  EXPECT_THAT(msg, HasSubstr("[3]"));
  EXPECT_THAT(msg, HasSubstr("[4]"));
  EXPECT_THAT(msg, HasSubstr("errors_test.cpp"));
}

TEST(Errors, DTypeErrorsNameOpAndType) {
  Array i = Array::from_vector<int>({2}, {1, 2});
  std::string msg = message_of<DTypeError>([&] { lax::exp(i); });
  EXPECT_THAT(msg, HasSubstr("exp"));
  EXPECT_THAT(msg, HasSubstr("i32"));
  msg = message_of<DTypeError>([&] { lax::add(i, Array::from_vector<float>({2}, {1, 2})); });
  EXPECT_THAT(msg, HasSubstr("dtypes differ"));
}

TEST(Errors, Fp64OnADeviceWithoutItIsAClearError) {
  Graph g;
  Node p;
  p.op = OpKind::Parameter;
  p.dtype = DType::F64;
  p.shape = {4};
  p.attrs.set("index", std::int64_t{0});
  g.params.push_back(g.add(p));
  Node e;
  e.op = OpKind::Exp;
  e.dtype = DType::F64;
  e.shape = {4};
  e.inputs = {0};
  g.outputs.push_back(g.add(e));
  opencl::DeviceCaps caps;
  caps.fp64 = false;
  std::string msg = message_of<DTypeError>([&] { opencl::plan_program(g, caps); });
  EXPECT_THAT(msg, HasSubstr("f64"));
  EXPECT_THAT(msg, HasSubstr("cl_khr_fp64"));
}

TEST(Errors, EmptyArrayAndScalarTruth) {
  Array empty;
  std::string msg = message_of<InvalidArgumentError>([&] { empty.shape(); });
  EXPECT_THAT(msg, HasSubstr("empty"));
  Array v = Array::from_vector<float>({2}, {1, 2});
  msg = message_of<InvalidArgumentError>([&] { (void)static_cast<bool>(v); });
  EXPECT_THAT(msg, HasSubstr("one-element"));
}

TEST(Errors, DeviceOutOfMemoryIsAnError) {
  // More than any PoCL device allows in one allocation; must be an error, never an abort.
  EXPECT_THROW(np::zeros({std::int64_t{1} << 40}).block_until_ready(), OutOfMemoryError);
}

// A while loop runs on the device's runtime thread, after the call has returned its outputs.
// An error there (here a body temporary larger than any allocation the device allows) reaches
// the caller typed and with its message when the outputs are waited for, and the device keeps
// working.
TEST(Errors, OutOfMemoryInsideAWhileLoopReachesTheCaller) {
  auto* device = dynamic_cast<opencl::OpenCLDevice*>(&default_device());
  ASSERT_NE(device, nullptr);
  const auto max_elements = static_cast<double>(device->info().max_alloc_bytes / 4);
  const auto n = static_cast<std::int64_t>(std::sqrt(max_elements)) + 1024;  // n*n f32 > max
  Array v = np::ones({n});
  auto f = jit([n, v](const Array& start) {
    return lax::while_loop([](const std::pair<Array, Array>& s) { return s.first < 1; },
                           [n, v](const std::pair<Array, Array>& s) {
                             // An outer product is a dot kernel writing an n x n buffer.
                             Array outer = np::matmul(v.reshape({n, 1}), v.reshape({1, n}));
                             return std::pair{s.first + 1, s.second + np::sum(outer)};
                           },
                           std::pair{start, Array::scalar(0.0f)});
  });
  auto [count, total] = f(Array::scalar_int(0));
  // Work on the outputs fails with the loop's error, whether it is issued before the loop has
  // failed (it then runs after the loop) or after (the call raises it).
  EXPECT_THROW((total * 2.0f).to_host(), OutOfMemoryError);
  const std::string msg =
      message_of<OutOfMemoryError>([&total = total] { total.block_until_ready(); });
  EXPECT_THAT(msg, HasSubstr("cannot allocate"));
  EXPECT_THROW(count.to_host(), OutOfMemoryError);
  EXPECT_THROW((count + 1).block_until_ready(), OutOfMemoryError);
  // Nothing else is lost: the device runs the next program.
  EXPECT_EQ((np::ones({4}) + 1.0f).to_vector<float>(), std::vector<float>(4, 2.0f));
}

TEST(Errors, UnknownDeviceListsTheKnownOnes) {
  std::string msg = message_of<InvalidArgumentError>([&] { device("gpu:42"); });
  EXPECT_THAT(msg, HasSubstr("gpu:42"));
  EXPECT_THAT(msg, HasSubstr(devices().front()->name()));
}

}  // namespace
}  // namespace weft

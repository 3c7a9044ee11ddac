// jit: tracing once per signature, omnistaging, containers, static arguments, captures.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <thread>

#include "weft/trace/trace.h"
#include "weft/weft.h"

namespace weft {
namespace {

std::vector<int> iota_values(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

auto select_tril_fn = [](const Array& x) {
  auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
  return np::where(mask, x, np::zeros_like(x));
};

TEST(Jit, SelectTrilMatchesIndependentComputation) {
  auto select_tril = jit(select_tril_fn, {.name = "select_tril"});
  const int rows = 37, cols = 300;  // not multiples of any work-group size
  Array x = Array::from_vector<int>({rows, cols}, iota_values(rows * cols));
  std::vector<int> got = select_tril(x).to_vector<int>();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(rows * cols));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      ASSERT_EQ(got[r * cols + c], r > c ? r * cols + c : 0) << "at " << r << "," << c;
}

TEST(Jit, SelectTrilIsOneKernelWithoutIntermediateBuffers) {
  auto select_tril = jit(select_tril_fn, {.name = "select_tril"});
  Array x = Array::from_vector<int>({3, 4}, iota_values(12));
  auto exe = select_tril.lower(x).compile();
  ASSERT_EQ(exe->info().kernels.size(), 1u);
  EXPECT_EQ(exe->info().intermediate_buffers, 0);
  const auto& ops = exe->info().kernels[0].fused_ops;
  for (const char* op : {"iota", "gt", "select", "broadcast_in_dim"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op << " not fused";
}

TEST(Jit, OmnistagingStagesOpsOnConstants) {
  // The omnistaging example: under jit, 1 + 1 is staged, not folded at trace time.
  auto f = jit([](const Array& x) { return x * (Array::scalar_int(1) + Array::scalar_int(1)); },
               {.name = "f"});
  Array x = Array::from_vector<int>({}, {3});
  const std::int64_t eager_before = detail::eager_op_count();
  std::string text = f.lower(x).as_text();
  EXPECT_EQ(detail::eager_op_count(), eager_before) << "tracing must not run ops eagerly";
  EXPECT_NE(text.find("%1 = constant[value=1] : i32[]"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = constant[value=1] : i32[]"), std::string::npos) << text;
  EXPECT_NE(text.find("%3 = add %1, %2 : i32[]"), std::string::npos) << text;
  EXPECT_NE(text.find("%4 = mul %0, %3 : i32[]"), std::string::npos) << text;
  EXPECT_EQ(f(x).item<int>(), 6);
}

TEST(Jit, SelectTrilMaskIsStagedNotAConstant) {
  auto select_tril = jit(select_tril_fn, {.name = "select_tril"});
  Array x = Array::from_vector<int>({3, 4}, iota_values(12));
  std::string text = select_tril.lower(x).as_text();
  EXPECT_NE(text.find("iota[dimension=0] : i32[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("iota[dimension=0] : i32[4]"), std::string::npos) << text;
  EXPECT_NE(text.find(" = gt "), std::string::npos) << text;
  EXPECT_EQ(text.find("param"), std::string::npos) << "no hoisted constant mask: " << text;
}

TEST(Jit, TracesOncePerSignature) {
  auto f = jit([](const Array& x) { return np::exp(x) + 1.0; });
  Array a = Array::from_vector<float>({4}, {0, 1, 2, 3});
  Array b = Array::from_vector<float>({4}, {4, 5, 6, 7});
  Array c = Array::from_vector<float>({5}, {0, 1, 2, 3, 4});
  f(a);
  f(b);
  EXPECT_EQ(f.trace_count(), 1);
  EXPECT_EQ(f.compile_count(), 1);
  f(c);
  EXPECT_EQ(f.trace_count(), 2);
  Array d = Array::from_vector<double>({4}, {0, 1, 2, 3});
  auto r = f(d);
  EXPECT_EQ(f.trace_count(), 3);
  EXPECT_EQ(r.dtype(), DType::F64);
  EXPECT_NEAR(r.to_vector<double>()[1], std::exp(1.0) + 1.0, 1e-12);
}

TEST(Jit, StaticArgumentsArePartOfTheSignature) {
  int calls = 0;
  auto scale = jit([&calls](const Array& x, int k, const std::string& mode) {
    ++calls;
    return mode == "neg" ? -(x * static_cast<double>(k)) : x * static_cast<double>(k);
  });
  Array x = Array::from_vector<float>({3}, {1, 2, 3});
  EXPECT_EQ(scale(x, 2, std::string("pos")).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(scale(x, 2, std::string("pos")).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(scale(x, 3, std::string("pos")).to_vector<float>(), (std::vector<float>{3, 6, 9}));
  EXPECT_EQ(scale(x, 3, std::string("neg")).to_vector<float>(), (std::vector<float>{-3, -6, -9}));
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(scale.trace_count(), 3);
}

TEST(Jit, ContainersInAndOut) {
  auto f = jit([](const std::tuple<Array, Array>& xy, const std::vector<Array>& zs,
                  const std::map<std::string, Array>& named) {
    auto [x, y] = xy;
    Array total = x + y;
    for (const auto& z : zs) total = total + z;
    std::map<std::string, Array> out;
    out["sum"] = total + named.at("bias");
    out["diff"] = x - y;
    return std::make_pair(out, std::vector<Array>{total, x * 2.0});
  });
  Array x = Array::from_vector<float>({2}, {1, 2});
  Array y = Array::from_vector<float>({2}, {10, 20});
  std::vector<Array> zs{Array::from_vector<float>({2}, {100, 200}),
                        Array::from_vector<float>({2}, {1000, 2000})};
  std::map<std::string, Array> named{{"bias", Array::from_vector<float>({2}, {0.5f, 0.5f})}};
  auto [out, list] = f(std::make_tuple(x, y), zs, named);
  EXPECT_EQ(out.at("sum").to_vector<float>(), (std::vector<float>{1111.5f, 2222.5f}));
  EXPECT_EQ(out.at("diff").to_vector<float>(), (std::vector<float>{-9, -18}));
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].to_vector<float>(), (std::vector<float>{1111, 2222}));
  EXPECT_EQ(list[1].to_vector<float>(), (std::vector<float>{2, 4}));
  // A vector of a different length is a different signature.
  zs.pop_back();
  f(std::make_tuple(x, y), zs, named);
  EXPECT_EQ(f.trace_count(), 2);
}

TEST(Jit, CapturedArraysBecomeParameters) {
  Array w = Array::from_vector<float>({3}, {1, 10, 100});
  auto f = jit([&w](const Array& x) { return x * w; }, {.name = "captures"});
  Array x = Array::from_vector<float>({3}, {1, 2, 3});
  std::string text = f.lower(x).as_text();
  EXPECT_NE(text.find("func @captures(%0: f32[3], %1: f32[3])"), std::string::npos) << text;
  EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{1, 20, 300}));
}

TEST(Jit, NestedJitIsInlined) {
  auto inner = jit([](const Array& x) { return np::exp(x); });
  auto outer = jit([&inner](const Array& x) { return inner(x) + inner(x * 2.0); });
  Array x = Array::from_vector<float>({2}, {0, 1});
  auto r = outer(x).to_vector<float>();
  EXPECT_NEAR(r[0], 2.0f, 1e-6);
  EXPECT_NEAR(r[1], std::exp(1.0f) + std::exp(2.0f), 1e-4);
  EXPECT_EQ(inner.trace_count(), 0) << "inner runs inside the outer trace";
  EXPECT_EQ(outer.compile_count(), 1);
}

TEST(Jit, ResultsAreAsynchronousAndConcrete) {
  auto f = jit([](const Array& x) { return np::sum(np::sin(x) * np::cos(x)); });
  std::vector<float> data(1 << 16);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 1e-4f;
  Array x = Array::from_vector<float>({static_cast<std::int64_t>(data.size())}, data);
  std::vector<Array> results;
  for (int i = 0; i < 8; ++i) results.push_back(f(x));  // all enqueued before any wait
  double expected = 0;
  for (float v : data)
    expected += std::sin(static_cast<double>(v)) * std::cos(static_cast<double>(v));
  for (const auto& r : results) {
    EXPECT_TRUE(r.is_concrete());
    r.block_until_ready();
    EXPECT_NEAR(r.item<double>(), expected, 1e-3 * std::abs(expected));
  }
}

TEST(Jit, EagerOpsRunOneKernelEach) {
  Array a = Array::from_vector<float>({3}, {1, 2, 3});
  const std::int64_t before = detail::eager_op_count();
  Array b = np::exp(a) * 2.0;
  EXPECT_EQ(detail::eager_op_count() - before, 2);  // exp, then mul (the scalar is a constant)
  auto v = b.to_vector<float>();
  EXPECT_NEAR(v[2], 2 * std::exp(3.0f), 1e-4);
}

// An eager broadcast of a scalar literal fills a buffer (no program): the same bytes as the
// constant kernel of a jit program, for every dtype, NaN and -0 included.
TEST(Jit, EagerBroadcastOfALiteralFillsTheSameBytesAsJit) {
  const Shape shape{3, 5};
  std::vector<Array> literals = {Array::scalar(-2.75),
                                 Array::scalar(-0.0),
                                 Array::scalar(std::nan("")),
                                 Array::scalar(1.0 / 3.0, DType::F64),
                                 Array::scalar(65504.0, DType::F16),
                                 Array::scalar(-1.5, DType::BF16),
                                 Array::scalar_int(1, DType::Bool),
                                 Array::scalar_int(-7, DType::I8),
                                 Array::scalar_int(250, DType::U8),
                                 Array::scalar_int(-30000, DType::I16),
                                 Array::scalar_int(-123456, DType::I32),
                                 Array::scalar_int(4000000000, DType::U32),
                                 Array::scalar_int(-(std::int64_t{1} << 40), DType::I64),
                                 Array::scalar_int(-1, DType::U64)};
  for (const Array& literal : literals) {
    const DType dtype = literal.dtype();
    if (!default_device().supports(dtype)) continue;
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const std::int64_t before = detail::eager_op_count();
    const HostArray eager = lax::broadcast_in_dim(literal, shape, {}).to_host();
    EXPECT_EQ(detail::eager_op_count() - before, 1);
    // The jit program ignores its argument and broadcasts the literal in a kernel.
    auto staged = jit([&](const Array&) { return lax::broadcast_in_dim(literal, shape, {}); });
    const HostArray jitted = staged(Array::from_vector<float>({1}, {0})).to_host();
    ASSERT_EQ(eager.dtype(), dtype);
    ASSERT_EQ(eager.shape(), shape);
    ASSERT_EQ(eager.nbytes(), jitted.nbytes());
    EXPECT_EQ(std::memcmp(eager.raw(), jitted.raw(), eager.nbytes()), 0)
        << "eager " << eager.get_f64(0) << ", jit " << jitted.get_f64(0);
    const HostArray one = literal.to_host();
    for (std::int64_t i = 0; i < num_elements(shape); ++i)
      EXPECT_EQ(std::memcmp(eager.raw() + i * dtype_size(dtype), one.raw(), dtype_size(dtype)), 0)
          << "element " << i;
  }
  // No elements: an empty buffer.
  EXPECT_EQ(lax::broadcast_in_dim(Array::scalar(1.0), {0, 4}, {}).to_host().nbytes(), 0u);
}

TEST(Jit, OutputMayBeAnInputOrAConstant) {
  auto f = jit(
      [](const Array& x) { return std::make_tuple(x, np::full({2}, 7.0), Array::scalar(1.5)); });
  Array x = Array::from_vector<float>({2}, {4, 5});
  auto [same, sevens, scalar] = f(x);
  EXPECT_EQ(same.to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_EQ(sevens.to_vector<float>(), (std::vector<float>{7, 7}));
  EXPECT_EQ(scalar.item<float>(), 1.5f);
}

TEST(Jit, ThreadsTraceIndependently) {
  auto f = jit([](const Array& x) { return x + 1.0; });
  std::vector<std::thread> threads;
  std::vector<float> results(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Array x = Array::from_vector<float>({1}, {static_cast<float>(t)});
      results[t] = f(x).item<float>();
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(results[t], t + 1.0f);
  EXPECT_EQ(f.trace_count(), 1);
}

}  // namespace
}  // namespace weft

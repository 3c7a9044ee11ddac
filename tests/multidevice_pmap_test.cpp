// pmap over two devices (two PoCL devices: CTest runs this with POCL_DEVICES="pthread pthread"): a
// map split across the devices, every collective against the same computation done on the host,
// data-parallel gradients equal to the full-batch gradient, callbacks once per device with
// that device's slice (tap_with_device names it, hcb::call answers each device with its own
// slice), ordered effects in program order on each device, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "support/test_devices.h"
#include "weft/hcb.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/pmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using Strings = std::vector<std::string>;

class Pmap : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().size() < 2) GTEST_SKIP() << testing::no_two_devices_reason();
  }
  // pmap's devices when none are given: the first two of weft::devices().
  static Device& d0() { return *devices().at(0); }
  static Device& d1() { return *devices().at(1); }
};

ArrayFunction one(std::function<Array(const std::vector<Array>&)> f) {
  return [f](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; };
}

std::vector<float> iota_values(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i) - 3.0f;
  return v;
}

TEST_F(Pmap, SplitsTheLeadingAxisAcrossDevicesAndStacksTheResults) {
  const std::vector<float> v = iota_values(2 * 1000, 0.01f);
  const Array x = Array::from_vector<float>({2, 1000}, v);
  std::vector<std::string> ran_on;
  std::mutex mutex;
  const ArrayFunction f = one([&](const std::vector<Array>& a) {
    const Array y = lax::sin(a[0]) * 2.0 + 1.0;
    hcb::id_tap(
        [&](const HostArray& slice, const std::string& device) {
          std::lock_guard lock(mutex);
          ran_on.push_back(device + " " + std::to_string(slice.shape()[0]));
        },
        y, {.tap_with_device = true});
    return y;
  });
  const Array out = pmap(f)({x}).at(0);
  hcb::barrier_wait();
  EXPECT_EQ(out.shape(), (Shape{2, 1000}));
  EXPECT_EQ(&out.device(), &d0());
  const std::vector<float> got = out.to_vector<float>();
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(got[i], std::sin(v[i]) * 2 + 1, 1e-5) << i;
  std::sort(ran_on.begin(), ran_on.end());
  Strings expected{d0().name() + " 1000", d1().name() + " 1000"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ran_on, expected);
}

TEST_F(Pmap, CollectivesCombineTheDevicesValues) {
  const Array x = Array::from_vector<float>({2, 3}, {1, -2, 3, 4, 5, -6});
  const ArrayFunction f = [](const std::vector<Array>& a) {
    const Array& v = a[0];
    const Array i = lax::convert_element_type(axis_index("i"), DType::F32);
    return std::vector<Array>{psum(v, "i"), pmean(v, "i"), pmax(v, "i"), all_gather(v, "i"),
                              psum(v * v, "i") + i};
  };
  const std::vector<Array> out = pmap(f)({x});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{5, 3, -3, 5, 3, -3}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2.5f, 1.5f, -1.5f, 2.5f, 1.5f, -1.5f}));
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{4, 5, 3, 4, 5, 3}));
  EXPECT_EQ(out[3].shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(out[3].to_vector<float>(),
            (std::vector<float>{1, -2, 3, 4, 5, -6, 1, -2, 3, 4, 5, -6}));
  // Each device adds its own index after the reduction: two segments per device.
  EXPECT_EQ(out[4].to_vector<float>(), (std::vector<float>{17, 29, 45, 18, 30, 46}));
}

TEST_F(Pmap, DataParallelGradientsEqualTheFullBatchGradient) {
  // Loss of a linear model over a batch of 8 rows, split 4 + 4 across the devices; the weights
  // are given whole to both (in_axes nullopt) and the per-device gradients averaged with pmean.
  std::vector<float> xs(8 * 3), ys(8), w{0.5f, -1, 2};
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<float>(i));
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = std::cos(static_cast<float>(i));
  const ArrayFunction loss = one([](const std::vector<Array>& a) {
    const Array pred = lax::dot_general(
        a[1], a[0],
        {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
    const Array err = pred - a[2];
    return lax::reduce_sum(err * err, {0}) / static_cast<double>(a[2].shape()[0]);
  });
  const Array weights = Array::from_vector<float>({3}, w);
  const std::vector<float> full = grad(loss)({weights, Array::from_vector<float>({8, 3}, xs),
                                              Array::from_vector<float>({8}, ys)})
                                      .at(0)
                                      .to_vector<float>();
  const ArrayFunction step = pmap(
      [&](const std::vector<Array>& a) {
        return std::vector<Array>{pmean(grad(loss)({a[0], a[1], a[2]}).at(0), "i")};
      },
      {.in_axes = {std::nullopt, 0, 0}});
  const Array g = step({weights, Array::from_vector<float>({2, 4, 3}, xs),
                        Array::from_vector<float>({2, 4}, ys)})
                      .at(0);
  EXPECT_EQ(g.shape(), (Shape{2, 3}));
  const std::vector<float> got = g.to_vector<float>();
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(got[d * 3 + j], full[j], 1e-5) << d << j;
}

// Cross-device batch normalisation: the batch statistics are pmeans across the devices inside
// the loss, and grad goes through them (their transposes are pmeans of the cotangents, as in
// JAX). The gradients equal those of the same loss over the whole batch on one device.
TEST_F(Pmap, GradThroughCrossDeviceBatchNorm) {
  std::vector<float> xs(8 * 3), w{0.5f, -1, 2};
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(1.7f * static_cast<float>(i));
  // The normalised batch's weighted sum of squares; `mean_of` averages over the batch (pmean of
  // the per-device means when the batch is split).
  const auto loss_with = [](std::function<Array(const Array&)> mean_of) {
    return one([mean_of](const std::vector<Array>& a) {
      const Array& x = a[1];
      const Array mean = mean_of(lax::reduce_sum(x, {0}) / static_cast<double>(x.shape()[0]));
      const Array centred = x - lax::broadcast_in_dim(mean, x.shape(), {1});
      const Array var =
          mean_of(lax::reduce_sum(centred * centred, {0}) / static_cast<double>(x.shape()[0]));
      const Array normed = centred / lax::broadcast_in_dim(lax::sqrt(var + 1e-5), x.shape(), {1});
      const Array y = normed * lax::broadcast_in_dim(a[0], x.shape(), {1});
      return mean_of(lax::reduce_sum(y * y * (x + 2.0), {0, 1}) /
                     static_cast<double>(x.shape()[0]));
    });
  };
  const ArrayFunction full_loss = loss_with([](const Array& v) { return v; });
  const ArrayFunction split_loss = loss_with([](const Array& v) { return pmean(v, "i"); });
  const Array weights = Array::from_vector<float>({3}, w);
  const std::vector<Array> full =
      grad(full_loss, GradOptions{{0, 1}})({weights, Array::from_vector<float>({8, 3}, xs)});
  // As in JAX, grad inside pmap differentiates the sum of the devices' losses (psum and pmean
  // transpose to themselves), so the weights' gradients are averaged with pmean, as data-parallel
  // training does.
  const std::vector<Array> split = pmap(
      [&](const std::vector<Array>& a) {
        std::vector<Array> g = grad(split_loss, GradOptions{{0, 1}})(a);
        g[0] = pmean(g[0], "i");
        return g;
      },
      {.in_axes = {std::nullopt, 0}})({weights, Array::from_vector<float>({2, 4, 3}, xs)});
  // The same step with value_and_grad under jit inside the pmapped function, as a training
  // loop writes it: the loss is the full batch's on both devices.
  const std::vector<Array> step = pmap(
      [&](const std::vector<Array>& a) {
        return jit(value_and_grad(split_loss, {.argnums = {0}}))(a);
      },
      {.in_axes = {std::nullopt, 0}})({weights, Array::from_vector<float>({2, 4, 3}, xs)});
  const float full_value =
      full_loss({weights, Array::from_vector<float>({8, 3}, xs)}).at(0).to_vector<float>()[0];
  for (float v : step.at(0).to_vector<float>())
    EXPECT_NEAR(v, full_value, 1e-4 * (1 + std::abs(full_value)));
  const std::vector<float> gw = full[0].to_vector<float>(), gx = full[1].to_vector<float>();
  const std::vector<float> sw = split.at(0).to_vector<float>(), sx = split.at(1).to_vector<float>();
  ASSERT_EQ(sw.size(), 6u);
  ASSERT_EQ(sx.size(), 24u);
  // The averaged weights' gradient is the full batch's on both devices; each device's x
  // gradient is its rows of the full batch's times 2 (the sum of two devices' equal losses).
  for (std::size_t d = 0; d < 2; ++d)
    for (std::size_t j = 0; j < 3; ++j)
      EXPECT_NEAR(sw[d * 3 + j], gw[j], 1e-4 * (1 + std::abs(gw[j]))) << d << " " << j;
  for (std::size_t i = 0; i < 24; ++i)
    EXPECT_NEAR(sx[i], 2 * gx[i], 1e-4 * (1 + std::abs(gx[i]))) << i;
}

HostArray plus_device_number(const HostArray& x, const std::string& device) {
  HostArray y = x;
  const double k = device == devices().at(1)->name() ? 100 : 0;
  for (std::int64_t i = 0; i < x.size(); ++i) y.set_f64(i, x.get_f64(i) + k);
  return y;
}

TEST_F(Pmap, CallbacksRunPerDeviceWithTheirSliceInProgramOrder) {
  PrintCapture capture;
  const Array x = Array::from_vector<float>({2, 2}, {1, 2, 3, 4});
  const ArrayFunction f = one([](const std::vector<Array>& a) {
    hcb::id_print(a[0], {.what = "first", .tap_with_device = true});
    const Array y = hcb::call(plus_device_number, a[0], ShapeDtype{DType::F32, {2}},
                              {.call_with_device = true});
    hcb::id_print(y, {.what = "second", .tap_with_device = true});
    return y;
  });
  const Array out = pmap(f)({x}).at(0);
  // hcb::call answered each device with its own slice.
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1, 2, 103, 104}));
  hcb::barrier_wait();
  const Strings lines = capture.lines();
  ASSERT_EQ(lines.size(), 4u);
  const std::string first = "device: " + d0().name() + " ", second = "device: " + d1().name() + " ";
  Strings on0, on1;
  for (const std::string& l : lines) (l.starts_with(first) ? on0 : on1).push_back(l);
  EXPECT_EQ(on0, (Strings{first + "what: first : [1. 2.]", first + "what: second : [1. 2.]"}));
  EXPECT_EQ(on1,
            (Strings{second + "what: first : [3. 4.]", second + "what: second : [103. 104.]"}));
}

// Inside the pmapped function, grad and jvp go through psum, pmean and all_gather, as in JAX:
// each is linear, psum and pmean are their own transposes across the devices.
TEST_F(Pmap, CollectivesAreDifferentiable) {
  const Array x = Array::from_vector<float>({2, 3}, {1, -2, 3, 4, 5, -6});
  const auto grad_of = [&](std::function<Array(const Array&)> loss) {
    return pmap(one(
        [loss](const std::vector<Array>& a) {
          return grad(one([loss](const std::vector<Array>& b) { return loss(b[0]); }))({a[0]}).at(
              0);
        }))({x})
        .at(0)
        .to_vector<float>();
  };
  const std::vector<float> xv = x.to_vector<float>();
  // Each device's loss sums every device's x²: d/dx = 2 devices · 2x.
  const std::vector<float> g_sum =
      grad_of([](const Array& v) { return lax::reduce_sum(psum(v * v, "i"), {0}); });
  const std::vector<float> g_mean =
      grad_of([](const Array& v) { return lax::reduce_sum(pmean(v * v, "i"), {0}); });
  // all_gather weighted by the device's row number + 1: d/dx on device d = 2 · (d + 1).
  const std::vector<float> g_gather = grad_of([](const Array& v) {
    const Array all = all_gather(v, "i");
    const Array weights =
        lax::convert_element_type(lax::iota(DType::I32, all.shape(), 0), DType::F32) + 1.0;
    return lax::reduce_sum(all * weights, {0, 1});
  });
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(g_sum[i], 4 * xv[i]) << i;
    EXPECT_FLOAT_EQ(g_mean[i], 2 * xv[i]) << i;
    EXPECT_FLOAT_EQ(g_gather[i], 2.0f * static_cast<float>(i / 3 + 1)) << i;
  }
  // jvp of psum: the psum of the tangents.
  const std::vector<Array> t = pmap([](const std::vector<Array>& a) {
    return jvp(one([](const std::vector<Array>& b) { return psum(b[0] * 3.0, "i"); }), {a[0]},
               {a[0]})
        .tangents_out;
  })({x});
  EXPECT_EQ(t.at(0).to_vector<float>(), (std::vector<float>{15, 9, -9, 15, 9, -9}));
}

TEST_F(Pmap, ClearErrors) {
  const ArrayFunction id = [](const std::vector<Array>& a) { return a; };
  const auto expect_error = [](auto&& fn, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "no error; expected one containing: " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  // A leading axis larger than the number of devices.
  expect_error(
      [&] {
        pmap(id)({Array::from_vector<float>({3, 2}, {1, 2, 3, 4, 5, 6})});
      },
      "the leading axis is 3 but there are only 2 devices");
  // Split arguments that disagree.
  expect_error(
      [&] {
        pmap(id)({Array::from_vector<float>({2, 2}, {1, 2, 3, 4}),
                  Array::from_vector<float>({1, 2}, {1, 2})});
      },
      "every split argument needs one slice per device");
  // A collective outside pmap, or naming another axis.
  expect_error(
      [&] {
        psum(Array::from_vector<float>({2}, {1, 2}), "i");
      },
      "the axis name 'i' is not bound");
  expect_error(
      [&] {
        pmap(one([](const std::vector<Array>& a) { return psum(a[0], "j"); }))(
            {Array::from_vector<float>({2, 2}, {1, 2, 3, 4})});
      },
      "the axis name 'j' is not bound");
  // pmap inside jit.
  expect_error(
      [&] {
        jit([&](const Array& x) { return pmap(id)({x}).at(0); })(
            Array::from_vector<float>({2, 2}, {1, 2, 3, 4}));
      },
      "called inside a traced function");
  // A collective inside a loop.
  expect_error(
      [&] {
        pmap(one([](const std::vector<Array>& a) {
          return lax::fori_loop(
              0, 2, [](const Array&, const Array& c) { return psum(c, "i"); }, a[0]);
        }))({Array::from_vector<float>({2, 2}, {1, 2, 3, 4})});
      },
      "collectives must be at the top level");
  // pmax has no derivative rule.
  expect_error(
      [&] {
        pmap(one([](const std::vector<Array>& a) {
          return grad(one([](const std::vector<Array>& b) {
                   return lax::reduce_sum(pmax(b[0], "i"), {0});
                 }))({a[0]})
              .at(0);
        }))({Array::from_vector<float>({2, 2}, {1, 2, 3, 4})});
      },
      "pmax at");
}

}  // namespace
}  // namespace weft

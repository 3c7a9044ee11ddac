// The kernels weft generates for GPUs (local-memory tiled dot, one work-group per row,
// strided two-stage reductions), run on the CPU device CI has, against the interpreter. CPU
// devices get other kernels, so without this nothing would exercise these paths.
#include <gtest/gtest.h>

#include <random>

#include "support/device_check.h"
#include "support/test_support.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/weft.h"

namespace weft {
namespace {

using V = std::vector<Array>;

// Traces `fn`, plans it as for a GPU, runs it on the default device, compares every output.
std::string check_gpu_plan(const std::function<V(const V&)>& fn,
                           const std::vector<HostArray>& inputs, double rtol, double atol) {
  auto& device = dynamic_cast<opencl::OpenCLDevice&>(default_device());
  auto f = jit([&fn](const V& xs) { return fn(xs); }, {.name = "gpu_paths"});
  V args;
  for (const auto& h : inputs) args.push_back(Array::from_host(h));
  Graph graph = f.lower(args).graph();
  opencl::DeviceCaps caps = device.caps();
  caps.is_gpu = true;
  auto exe = std::make_shared<opencl::OpenCLExecutable>(device, opencl::plan_program(graph, caps));
  std::vector<std::shared_ptr<Buffer>> buffers;
  for (const auto& h : inputs) buffers.push_back(device.upload(h.raw(), h.nbytes()));
  auto outputs = exe->run(buffers);
  std::vector<HostArray> expected = interpret(graph, inputs);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    HostArray got(expected[i].dtype(), expected[i].shape());
    device.download(*outputs[i], got.raw(), got.nbytes());
    std::string diff = testing::compare_arrays(got, expected[i], rtol, atol);
    if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
  }
  return {};
}

TEST(GpuCodegenPaths, ReductionsDotsAndLoops) {
  std::mt19937 rng(7);
  std::vector<HostArray> inputs{
      testing::random_array(DType::F32, {100, 1000}, -1, 1, rng),
      testing::random_array(DType::F32, {(1 << 19) + 3}, -1, 1, rng),
      testing::random_array(DType::F32, {45, 70}, -1, 1, rng),
      testing::random_array(DType::F32, {70, 33}, -1, 1, rng),
      testing::random_array(DType::I32, {20, 30}, -9, 9, rng),
      testing::random_array(DType::I32, {30, 19}, -9, 9, rng),
  };
  auto fn = [](const V& x) {
    return V{lax::reduce_sum(x[0], {1}), lax::argmax(x[0], {1}), lax::reduce_max(x[0], {0}),
             lax::reduce_sum(x[1], {0}), lax::argmin(x[1], {0}),
             lax::dot_general(x[2], x[3], {{1}, {0}, {}, {}}),
             lax::dot_general(x[4], x[5], {{1}, {0}, {}, {}}), np::tanh(x[0]) * 2.0,
             // Operands read transposed: an lhs stored [K, M], an rhs stored [N, K].
             lax::dot_general(x[3], x[3], {{0}, {0}, {}, {}}),
             lax::dot_general(x[2], x[2], {{1}, {1}, {}, {}}),
             // Softmax: cooperative rows and two-stage (few long rows), each writing its exp
             // as a side output for the normalising kernel.
             np::softmax(x[0], 1), np::softmax(np::reshape(x[1], {1, (1 << 19) + 3}), 1)};
  };
  EXPECT_EQ(check_gpu_plan(fn, inputs, 1e-4, 1e-2), "");
}

// The linear algebra kernels' GPU paths (cholesky's diagonal block in one work-group's local
// memory, single lanes elsewhere, lu's scalar panel), at sizes that take several blocks with
// remainders, and batches.
TEST(GpuCodegenPaths, BlockedLinearAlgebra) {
  std::mt19937 rng(8);
  std::vector<HostArray> inputs{
      testing::random_array(DType::F32, {100, 100}, -1, 1, rng),
      testing::random_array(DType::F64, {2, 70, 70}, -1, 1, rng),
      testing::random_array(DType::F32, {75, 75}, -1, 1, rng),
      testing::random_array(DType::F64, {2, 40, 70}, -1, 1, rng),
      testing::random_array(DType::F32, {75, 40}, -1, 1, rng),
  };
  auto fn = [](const V& x) {
    // Symmetric positive definite: x x^T + n I.
    const Array a = np::matmul(x[0], np::transpose(x[0])) + np::eye(100) * 100.0;
    const Array b =
        np::matmul(x[1], np::transpose(x[1], {0, 2, 1})) + np::eye(70, DType::F64) * 70.0;
    const Array l = lax::cholesky(a);
    auto [factors, pivots, permutation] = lax::lu(x[2]);
    auto [wide, wide_pivots, wide_permutation] = lax::lu(x[3]);
    const Array triangle = np::tril(x[2]) + np::eye(75) * 3.0;
    return V{l,
             lax::cholesky(b),
             factors,
             pivots,
             permutation,
             wide,
             wide_permutation,
             lax::triangular_solve(triangle, x[4], {.left_side = true, .lower = true}),
             lax::triangular_solve(triangle, np::transpose(x[4]),
                                   {.left_side = false, .lower = true, .transpose_a = true})};
  };
  EXPECT_EQ(check_gpu_plan(fn, inputs, 1e-4, 1e-3), "");
}

}  // namespace
}  // namespace weft

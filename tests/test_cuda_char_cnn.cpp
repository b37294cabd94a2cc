// The character feature (models/char_cnn.h) on the GPU against the CPU in
// float64: forward, and every parameter's gradient, for words of several
// lengths, a padding word and an unknown character. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/models/char_cnn.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"

namespace attn {
namespace {

struct DeviceRun {
  std::vector<double> out;
  std::vector<std::vector<double>> grads;
};

DeviceRun run(CharCnn& cnn, const Tensor& chars, const Tensor& weights, Device device) {
  cnn.to(device);
  for (const Tensor& p : cnn.parameters()) p.zero_grad();
  Tensor y = cnn.forward(chars.to(device));
  sum(y * weights.to(device)).backward();
  DeviceRun r{y.to(Device::CPU).to_vector(), {}};
  for (const Tensor& p : cnn.parameters()) r.grads.push_back(p.grad().to(Device::CPU).to_vector());
  return r;
}

// float64 on both devices, sums in another order: a few ulps of the largest
// term each result adds up (at most 3 x 8 x 3 products here).
void expect_close(const std::vector<double>& got, const std::vector<double>& ref, const char* what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-12 * (1 + scale)) << what << "[" << i << "]";
}

TEST(CudaCharCnn, MatchesTheCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped";
  Generator init(3), noise(4), g(5);
  CharCnnOptions o;
  o.alphabet = 9;
  o.char_dim = 8;
  o.filters = 6;
  CharCnn cnn(o, init, noise, DType::F64);
  cnn.set_training(false);
  // [2, 3, 5]: words of 5, 1 and 3 characters; a padding word; the unknown character 1.
  const Tensor chars = from_indices({2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 8, 2, 1, 0, 0,  //
                                     1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3},
                                    {2, 3, 5});
  const Tensor weights = rand_uniform({2, 3, 6}, -1, 1, g, DType::F64);
  const DeviceRun cpu = run(cnn, chars, weights, Device::CPU);
  const DeviceRun gpu = run(cnn, chars, weights, Device::CUDA);
  expect_close(gpu.out, cpu.out, "feature");
  ASSERT_EQ(gpu.grads.size(), cpu.grads.size());
  for (size_t k = 0; k < cpu.grads.size(); ++k) expect_close(gpu.grads[k], cpu.grads[k], "gradient");
}

}  // namespace
}  // namespace attn

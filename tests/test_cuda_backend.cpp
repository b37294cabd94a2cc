// The CUDA backend's plumbing. Most of these run on every machine: the kernel
// tables' completeness, the allocator's rounding rule, the device checks and
// the errors a build without a GPU (or without the backend) gives. Those that
// need a GPU skip with one message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>

#include "attn/engine/allocator.h"
#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/kernel_table.h"
#include "attn/engine/random.h"
#include "attn/nn/linear.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/model_commands.h"

namespace attn {
namespace {

#define ATTN_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU visible: CUDA tests skipped"

// A CUDA build has a CUDA kernel in every table: no op silently falls back to
// the CPU or throws NotImplemented on the GPU. A CPU-only build has none.
TEST(CudaKernelTables, EveryTableHasACudaKernelExactlyInACudaBuild) {
  ASSERT_FALSE(kernel_tables().empty());
  std::string missing, present;
  for (const KernelTableInfo& t : kernel_tables()) {
    if (!t.has_cuda) missing += std::string(missing.empty() ? "" : ", ") + t.op;
    if (t.has_cuda) present += std::string(present.empty() ? "" : ", ") + t.op;
  }
  if (built_with_cuda()) {
    EXPECT_TRUE(missing.empty()) << "ops without a CUDA kernel: " << missing;
  } else {
    EXPECT_TRUE(present.empty()) << "a CPU-only build has CUDA kernels for: " << present;
  }
}

TEST(CudaAllocator, RoundsSmallRequestsTo512AndLargeTo2MiB) {
  EXPECT_EQ(cuda_round_allocation(0), 512u);
  EXPECT_EQ(cuda_round_allocation(1), 512u);
  EXPECT_EQ(cuda_round_allocation(512), 512u);
  EXPECT_EQ(cuda_round_allocation(513), 1024u);
  EXPECT_EQ(cuda_round_allocation(kCudaSmallLimit), kCudaSmallLimit);
  EXPECT_EQ(cuda_round_allocation(kCudaSmallLimit + 1), kCudaLargeRound);
  EXPECT_EQ(cuda_round_allocation(kCudaLargeRound), kCudaLargeRound);
  EXPECT_EQ(cuda_round_allocation(kCudaLargeRound + 1), 2 * kCudaLargeRound);
  EXPECT_EQ(cuda_round_allocation(size_t(100) << 20), size_t(100) << 20);  // 100 MiB is 50 x 2 MiB
  for (size_t b : {size_t(3), size_t(4097), size_t(777777), size_t(5000000), size_t(123456789)}) {
    const size_t r = cuda_round_allocation(b);
    EXPECT_GE(r, b);
    EXPECT_EQ(r % kCudaSmallRound, 0u);
    if (b > kCudaSmallLimit) {
      EXPECT_EQ(r % kCudaLargeRound, 0u);
    }
  }
}

TEST(CudaAllocator, CachedBlocksServeOnlyRequestsTheyFit) {
  EXPECT_TRUE(cuda_block_fits(1024, 1024));
  EXPECT_FALSE(cuda_block_fits(1536, 1024));  // small blocks: exact size only
  EXPECT_FALSE(cuda_block_fits(512, 1024));
  const size_t big = 8 * kCudaLargeRound;
  EXPECT_TRUE(cuda_block_fits(big, big));
  EXPECT_TRUE(cuda_block_fits(big + 2 * kCudaLargeRound, big));   // a quarter larger at most
  EXPECT_FALSE(cuda_block_fits(big + 4 * kCudaLargeRound, big));  // would tie up too much
  EXPECT_FALSE(cuda_block_fits(big - kCudaLargeRound, big));
}

TEST(CudaSwitches, SentinelScopeAndTf32DefaultOff) {
  EXPECT_FALSE(cuda_sentinel_fill());
  {
    CudaSentinelScope on;
    EXPECT_TRUE(cuda_sentinel_fill());
  }
  EXPECT_FALSE(cuda_sentinel_fill());
  if (!std::getenv("ATTN_TF32")) {
    EXPECT_FALSE(cuda_tf32());
  }
  const bool before = cuda_tf32();
  set_cuda_tf32(true);
  EXPECT_TRUE(cuda_tf32());
  set_cuda_tf32(before);
}

TEST(CudaPresence, AvailabilityNeverThrowsAndMatchesTheBuild) {
  EXPECT_NO_THROW(cuda_device_count());
  if (!built_with_cuda()) {
    EXPECT_FALSE(cuda_available());
  }
  EXPECT_EQ(cuda_available(), cuda_device_count() > 0);
}

// Without a GPU (or without the backend) every way onto the GPU fails with
// an attn::Error that says which of the two it is.
TEST(CudaPresence, WithoutAGpuCudaTensorsFailClearly) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA GPU is visible: the no-GPU errors cannot be seen";
  const std::string why = built_with_cuda() ? "no CUDA GPU is visible" : "this build has no CUDA backend";
  auto expect_error = [&](const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  expect_error([] { empty({2, 3}, DType::F32, Device::CUDA); });
  expect_error([] { zeros({2}, DType::F64, Device::CUDA); });
  expect_error([] { ones({2, 2}).to(Device::CUDA); });
  expect_error([] { require_cuda("test"); });
  Generator g(1);
  Linear layer(3, 2, g);
  expect_error([&] { layer.to(Device::CUDA); });
}

// `attn train/forward --device cuda` stop before any work with the reason.
TEST(CudaPresence, DeviceCudaOnTheCommandsFailsClearlyWithoutAGpu) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA GPU is visible: the no-GPU errors cannot be seen";
  const std::string why = built_with_cuda() ? "no CUDA GPU is visible" : "this build has no CUDA backend";
  auto message_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(message_of([] { run_train_command({"--device", "cuda", "--data", "/nonexistent", "--quiet"}); }).find(why),
            std::string::npos);
  EXPECT_NE(message_of([] {
              run_forward_command({"--device", "cuda", "--model", "/nonexistent.cfg", "--weights", "/nonexistent.w",
                                   "--input", "/nonexistent.x", "--output", "/nonexistent.y"});
            }).find(why),
            std::string::npos);
  // eval and predict check the device before they read the run folder.
  EXPECT_NE(message_of([] { run_eval_command({"--device", "cuda", "--run", "/nonexistent"}); }).find(why),
            std::string::npos);
  EXPECT_NE(message_of([] { run_predict_command({"--device", "cuda", "--run", "/nonexistent"}); }).find(why),
            std::string::npos);
  EXPECT_NE(message_of([] { run_gradcheck_command({"--model", "mtsa", "--device", "cuda"}); }).find(why),
            std::string::npos);
  EXPECT_NE(message_of([] { parse_device("tpu", "train"); }).find("unknown --device 'tpu'"), std::string::npos);
  EXPECT_EQ(parse_device("cpu", "train"), Device::CPU);
}

TEST(CudaDevices, ToTheSameDeviceReturnsTheTensorItself) {
  Tensor x = ones({2, 3});
  Tensor y = x.to(Device::CPU);
  EXPECT_EQ(x.impl(), y.impl());
  Generator g(1);
  Linear layer(3, 2, g);
  Tensor w = layer.weight;
  layer.to(Device::CPU);
  EXPECT_EQ(layer.weight.impl(), w.impl());
  EXPECT_TRUE(layer.weight.requires_grad());
}

// The check every kernel call passes: a tensor on the wrong device is an
// error naming the op and both devices (built directly here, so it runs
// without a GPU).
TEST(CudaDevices, KernelCallRejectsATensorOnAnotherDevice) {
  Tensor cpu = ones({2, 3});
  try {
    check_kernel_device("binary", Device::CUDA, cpu);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("binary"), std::string::npos) << m;
    EXPECT_NE(m.find("cuda"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(check_kernel_device("binary", Device::CPU, cpu));
  EXPECT_NO_THROW(check_kernel_device("binary", Device::CUDA, Tensor()));
}

TEST(CudaDevices, MixedDevicesInOneOpNameBothDevices) {
  ATTN_REQUIRE_GPU();
  Tensor a = ones({2, 3}), b = ones({2, 3}).to(Device::CUDA);
  for (auto f : {+[](const Tensor& x, const Tensor& y) { return add(x, y); },
                 +[](const Tensor& x, const Tensor& y) { return matmul(x, transpose(y, 0, 1)); }}) {
    try {
      f(a, b);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("cpu"), std::string::npos) << m;
      EXPECT_NE(m.find("cuda"), std::string::npos) << m;
    }
  }
}

TEST(CudaCopies, RoundTripKeepsValuesDtypesAndGradientsFlowBack) {
  ATTN_REQUIRE_GPU();
  for (DType dt : {DType::F32, DType::F64, DType::U8, DType::I64}) {
    Tensor x = cast(from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64), dt);
    Tensor back = x.to(Device::CUDA).to(Device::CPU);
    EXPECT_EQ(back.dtype(), dt);
    EXPECT_EQ(back.to_vector(), x.to_vector());
  }
  // Non-contiguous source, strided copies and casts on the device.
  Tensor base = from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64);
  Tensor t = transpose(base, 0, 1);
  EXPECT_EQ(t.to(Device::CUDA).to_vector(), t.to_vector());
  Tensor dev = base.to(Device::CUDA);
  EXPECT_EQ(contiguous(transpose(dev, 0, 1)).to_vector(), t.to_vector());
  EXPECT_EQ(cast(transpose(dev, 0, 1), DType::I64).to_vector(), t.to_vector());
  Tensor filled = full({3, 2}, 2.5, DType::F32, Device::CUDA);
  EXPECT_EQ(filled.to_vector(), std::vector<double>(6, 2.5));
  // Autograd through to(): the gradient of to(CUDA) is to(CPU) of the gradient.
  Tensor leaf = from_vector({1, 2, 3}, {3}, DType::F64).set_requires_grad(true);
  Tensor y = sum(mul_scalar(leaf.to(Device::CUDA), 3.0));
  y.backward();
  ASSERT_TRUE(leaf.grad().defined());
  EXPECT_EQ(leaf.grad().device(), Device::CPU);
  EXPECT_EQ(leaf.grad().to_vector(), std::vector<double>(3, 3.0));
}

TEST(CudaAllocator, CountsBytesReusesBlocksAndFillsSentinels) {
  ATTN_REQUIRE_GPU();
  cuda_synchronize();
  Allocator& a = allocator_for(Device::CUDA);
  const MemoryStats before = a.stats();
  {
    Tensor t = empty({1000}, DType::F32, Device::CUDA);
    EXPECT_EQ(a.stats().current_bytes, before.current_bytes + 4000);
    EXPECT_GE(a.stats().peak_bytes, before.current_bytes + 4000);
  }
  EXPECT_EQ(a.stats().current_bytes, before.current_bytes);
  EXPECT_GE(cuda_cached_bytes(), cuda_round_allocation(4000));
  const size_t reserved = cuda_reserved_bytes();
  { Tensor again = empty({1000}, DType::F32, Device::CUDA); }
  EXPECT_EQ(cuda_reserved_bytes(), reserved);  // served from the cache
  {
    CudaSentinelScope sentinel;
    Tensor s = empty({7}, DType::F64, Device::CUDA);
    for (double v : s.to_vector()) EXPECT_TRUE(std::isnan(v));
    Tensor i = empty({3}, DType::I64, Device::CUDA);
    for (double v : i.to_vector()) EXPECT_EQ(v, -1.0);
  }
  cuda_empty_cache();
  EXPECT_EQ(cuda_cached_bytes(), 0u);
}

TEST(CudaAllocator, OutOfMemoryNamesTheRequestedBytes) {
  ATTN_REQUIRE_GPU();
  try {
    empty({int64_t(1) << 50}, DType::F32, Device::CUDA);  // 4 PiB
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(int64_t(4) << 50)), std::string::npos) << e.what();
  }
}

TEST(CudaModule, ToMovesParametersAndKeepsLeaves) {
  ATTN_REQUIRE_GPU();
  Generator g(1);
  Linear layer(3, 2, g);
  std::vector<double> w = layer.weight.to_vector();
  Tensor held = layer.weight;  // a handle taken before the move sees it
  layer.to(Device::CUDA);
  for (const Tensor& p : layer.parameters()) {
    EXPECT_EQ(p.device(), Device::CUDA);
    EXPECT_TRUE(p.is_leaf());
    EXPECT_TRUE(p.requires_grad());
  }
  EXPECT_EQ(held.device(), Device::CUDA);
  EXPECT_EQ(held.to_vector(), w);
  Tensor y = sum(layer(ones({4, 3}, DType::F32, Device::CUDA)));
  y.backward();
  EXPECT_EQ(layer.weight.grad().device(), Device::CUDA);
  layer.to(Device::CPU);
  EXPECT_EQ(layer.weight.device(), Device::CPU);
  EXPECT_EQ(layer.weight.grad().device(), Device::CPU);
}

TEST(CudaMatmul, Float32MatchesTheCpuWithTf32Off) {
  ATTN_REQUIRE_GPU();
  if (cuda_tf32()) GTEST_SKIP() << "ATTN_TF32=1: float32 GEMMs round their inputs to TF32";
  Generator g(3);
  Tensor a = rand_uniform({64, 96}, -1, 1, g, DType::F32), b = rand_uniform({96, 80}, -1, 1, g, DType::F32);
  std::vector<double> ref = matmul(a, b).to_vector();
  std::vector<double> got = matmul(a.to(Device::CUDA), b.to(Device::CUDA)).to_vector();
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-4 + 1e-4 * std::abs(ref[i]));
}

}  // namespace
}  // namespace attn

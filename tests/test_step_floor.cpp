// The step floor's work counts (train/bench/step_floor.h): each kind of
// kernel call is counted from its arguments, and the floor divides work by
// rate.
#include <gtest/gtest.h>

#include <cmath>

#include <functional>

#include "attn/engine/autograd.h"
#include "attn/engine/random.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/matmul/matmul_fused.h"
#include "attn/ops/modulated_linear/modulated_linear.h"
#include "attn/ops/multi_dim_attention/multi_dim_attention.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/view/view.h"
#include "attn/ops/window_attention/window_attention.h"
#include "attn/train/bench/op_profiler.h"
#include "attn/train/bench/step_floor.h"

namespace attn {
namespace {

KernelWork profiled(const std::function<void()>& step) {
  OpProfiler profiler;
  step();
  return profiler.work();
}

TEST(StepFloor, GemmFlopsAreTwoMNKPerProduct) {
  Generator g(5);
  Tensor a = rand_uniform({2, 3, 4}, -1, 1, g), b = rand_uniform({4, 5}, -1, 1, g);
  Tensor x = rand_uniform({6, 4}, -1, 1, g), w = rand_uniform({3, 4}, -1, 1, g);
  NoGrad no_grad;
  const KernelWork product = profiled([&] { matmul(a, b); });
  EXPECT_DOUBLE_EQ(product.gemm_flops, 2.0 * 2 * 3 * 5 * 4);
  EXPECT_DOUBLE_EQ(product.exps, 0.0);
  const KernelWork layer = profiled([&] { linear(x, w); });
  EXPECT_DOUBLE_EQ(layer.gemm_flops, 2.0 * 6 * 3 * 4);
  // A product with its bias (and relu): the product's FLOPs on every path.
  // Where the engine's float32 GEMM takes the bias in its stores there is no
  // other kernel; elsewhere (OpenBLAS: no AVX-512, or ATTN_AVX512=off) the
  // output rows start as a copy of the broadcast bias, which reads and writes
  // the [2, 3, 5] output's floats once each (the relu is applied in place,
  // inside the same op, not as a kernel of its own).
  Tensor bias = rand_uniform({5}, -1, 1, g);
  const KernelWork with_bias = profiled([&] { matmul_bias(a, b, bias, true); });
  EXPECT_DOUBLE_EQ(with_bias.gemm_flops, 2.0 * 2 * 3 * 5 * 4);
  const double bias_copy_bytes = 2.0 * (2 * 3 * 5) * sizeof(float);
  EXPECT_DOUBLE_EQ(with_bias.bytes, use_own_sgemm() ? 0.0 : bias_copy_bytes);
}

// A weight shared over a batch axis (per-head weights, MTSA's) gets its
// gradient from matmul_summed: the same 2 m n k as a product per entry.
TEST(StepFloor, SharedWeightGradientCountsEveryEntrysProduct) {
  Generator g(7);
  const int64_t B = 3, heads = 2, n = 4, d = 5, e = 6;
  Tensor x = rand_uniform({B, heads, n, d}, -1, 1, g), w = rand_uniform({heads, d, e}, -1, 1, g);
  w.set_requires_grad(true);
  const double product = 2.0 * B * heads * n * d * e;
  const KernelWork step = profiled([&] { sum(matmul(x, unsqueeze(w, 0))).backward(); });
  EXPECT_DOUBLE_EQ(step.gemm_flops, 2.0 * product);  // forward, then the weight's gradient
}

TEST(StepFloor, ModulatedLinearCountsOneProductPerSentenceAndGradient) {
  Generator g(9);
  const int64_t B = 2, n = 3, d = 4, h = 5;
  Tensor x = rand_uniform({B, n, d}, -1, 1, g), s = rand_uniform({B, d}, -1, 1, g);
  Tensor w = rand_uniform({h, d}, -1, 1, g), v = rand_uniform({h, d}, -1, 1, g);
  const double product = 2.0 * B * n * h * d;
  const KernelWork forward = profiled([&] {
    NoGrad no_grad;
    modulated_linear(x, s, w, v);
  });
  EXPECT_DOUBLE_EQ(forward.gemm_flops, product);
  w.set_requires_grad(true);
  const KernelWork weights_only = profiled([&] { sum(modulated_linear(x, s, w, v)).backward(); });
  EXPECT_DOUBLE_EQ(weights_only.gemm_flops, 2.0 * product);  // forward, then G_b
  x.set_requires_grad(true);
  const KernelWork with_x = profiled([&] { sum(modulated_linear(x, s, w, v)).backward(); });
  EXPECT_DOUBLE_EQ(with_x.gemm_flops, 3.0 * product);  // and grad_b M_b
}

TEST(StepFloor, FusedAttentionCountsOneExpAndOneTanhPerPairEachPass) {
  Generator g(6);
  const int64_t B = 2, n = 3, d = 4;
  Tensor q = rand_uniform({B, n, d}, -1, 1, g);
  q.set_requires_grad(true);
  Tensor k = rand_uniform({B, n, d}, -1, 1, g);
  k.set_requires_grad(true);
  Tensor v = rand_uniform({B, n, d}, -1, 1, g);
  v.set_requires_grad(true);
  Tensor mask = ones({B, n, n}, DType::U8);
  const KernelWork forward = profiled([&] {
    NoGrad no_grad;
    multi_dim_attention(q, k, v, mask, 5.0);
  });
  EXPECT_DOUBLE_EQ(forward.exps, double(B * n * n * d));
  const KernelWork both = profiled([&] { sum(multi_dim_attention(q, k, v, mask, 5.0)).backward(); });
  EXPECT_GE(both.exps, 2.0 * B * n * n * d);  // the backward recomputes every pair
  // Only the allowed pairs count: the kernels skip masked ones.
  Tensor causal = zeros({B, n, n}, DType::U8);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) causal.data<uint8_t>()[(b * n + i) * n + j] = 1;
  const KernelWork masked = profiled([&] {
    NoGrad no_grad;
    multi_dim_attention(q, k, v, causal, 5.0);
  });
  EXPECT_DOUBLE_EQ(masked.exps, double(B * (n * (n + 1) / 2) * d));
}

TEST(StepFloor, WindowAttentionCountsItsMultiplyAddsAndExps) {
  Generator g(8);
  const int64_t B = 2, h = 3, n = 5, d = 4;
  Tensor q = rand_uniform({B, h, n, d}, -1, 1, g), k = rand_uniform({B, h, n, d}, -1, 1, g);
  Tensor v = rand_uniform({B, h, n, d}, -1, 1, g);
  for (Tensor* t : {&q, &k, &v}) t->set_requires_grad(true);
  const Tensor allowed = window_band_mask(ones({B, n}, DType::U8), {1, 1});  // W = 3
  const double slots = double(B * h * n * 3);
  const KernelWork forward = profiled([&] {
    NoGrad no_grad;
    fused_window_attention(q, k, v, allowed, 0.5);
  });
  EXPECT_DOUBLE_EQ(forward.gemm_flops, 4.0 * slots * d);  // q.k and P.v
  EXPECT_DOUBLE_EQ(forward.exps, slots);
  const KernelWork both = profiled([&] { sum(fused_window_attention(q, k, v, allowed, 0.5).out).backward(); });
  EXPECT_DOUBLE_EQ(both.gemm_flops, 12.0 * slots * d);  // the backward's four passes
}

TEST(StepFloor, OtherKernelsCountTheirTensorBytes) {
  Generator g(7);
  Tensor a = rand_uniform({10}, -1, 1, g), b = rand_uniform({10}, -1, 1, g);
  NoGrad no_grad;
  const KernelWork w = profiled([&] { add(a, b); });
  EXPECT_DOUBLE_EQ(w.bytes, 3.0 * 10 * sizeof(float));  // two inputs read, one output written
  EXPECT_DOUBLE_EQ(w.gemm_flops, 0.0);
}

TEST(StepFloor, FloorIsWorkOverRate) {
  KernelWork w;
  w.gemm_flops = 4e9;
  w.exps = 2e9;
  w.bytes = 6e9;
  MachineRates r;
  r.gemm_gflops = 100;   // 40 ms
  r.exp_gper_s = 4;      // 500 ms
  r.copy_gbytes_s = 12;  // 500 ms
  const StepFloor f = step_floor(w, r);
  EXPECT_DOUBLE_EQ(f.gemm_ms, 40.0);
  EXPECT_DOUBLE_EQ(f.transcendental_ms, 500.0);
  EXPECT_DOUBLE_EQ(f.memory_ms, 500.0);
  const std::string line = format_floor(w, f, 2080.0, 1560.0, 5);
  EXPECT_NE(line.find("step / floor = 2.00"), std::string::npos) << line;
  EXPECT_NE(line.find("median of 5 unprofiled step(s) 1560.0 ms / floor = 1.50"), std::string::npos) << line;
}

// The probe that pairs each unprofiled step with the GEMM rate of that
// moment: a positive, finite rate every time it is asked, whichever float32
// GEMM runs the product.
TEST(StepFloor, GemmRateProbeMeasuresAPositiveRateEachTime) {
  GemmRateProbe probe;
  for (int i = 0; i < 2; ++i) {
    const double gflops = probe.gflops();
    EXPECT_TRUE(std::isfinite(gflops));
    EXPECT_GT(gflops, 0.0);
  }
}

}  // namespace
}  // namespace attn

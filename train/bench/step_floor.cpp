#include "attn/train/bench/step_floor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "attn/engine/parallel.h"
#include "attn/engine/tensor.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

KernelWork& operator+=(KernelWork& a, const KernelWork& b) {
  a.gemm_flops += b.gemm_flops;
  a.exps += b.exps;
  a.bytes += b.bytes;
  return a;
}

namespace {

const Tensor* arg(KernelTensors args, size_t i) {
  return i < args.size && args.items[i] && args.items[i]->defined() ? args.items[i] : nullptr;
}

double numel(const Tensor* t) { return t ? static_cast<double>(t->numel()) : 0.0; }

// Pairs of a fused attention call: the allowed entries of its [.., queries,
// keys] uint8 mask (the kernels skip the others; counted on the CPU, every
// entry elsewhere) or the elements of its window probabilities, times the
// features of one of its [.., n, d] operands.
double pairs(KernelTensors args, size_t mask, size_t features_of) {
  const Tensor* m = arg(args, mask);
  const Tensor* f = arg(args, features_of);
  if (!m || !f) return 0.0;
  double count = numel(m);
  if (m->dtype() == DType::U8 && m->device() == Device::CPU && m->is_contiguous()) {
    const uint8_t* p = m->data<uint8_t>();
    count = static_cast<double>(std::count_if(p, p + m->numel(), [](uint8_t v) { return v != 0; }));
  }
  return count * static_cast<double>(f->size(f->dim() - 1));
}

bool named(const char* op, const char* name) { return std::strcmp(op, name) == 0; }

}  // namespace

KernelWork kernel_work(const char* op, KernelTensors args) {
  KernelWork w;
  if (named(op, "matmul") || named(op, "linear") || named(op, "matmul_bias")) {
    // First operand [.., m, k], output (the last tensor) [.., m, n]: 2 m n k per product.
    const Tensor* a = arg(args, 0);
    const Tensor* out = nullptr;
    for (size_t i = args.size; i-- > 0 && !out;) out = arg(args, i);
    if (a && out) w.gemm_flops = 2.0 * numel(out) * static_cast<double>(a->size(a->dim() - 1));
    return w;
  }
  // matmul_summed (ops/matmul/matmul_kernels.h): a [E, S, R, m], g [E, S, R, n]
  // -> out [E, m, n], each output element a sum over S R products.
  if (named(op, "matmul_summed")) {
    const Tensor* a = arg(args, 0);
    const Tensor* out = arg(args, 2);
    if (a && out) w.gemm_flops = 2.0 * numel(out) * static_cast<double>(a->size(1) * a->size(2));
    return w;
  }
  // ops/modulated_linear/modulated_linear_kernels.h: one product per sentence each way, x_b
  // M_b^T forward; G_b = grad_b^T x_b (for the weights and the scale) and
  // grad_b M_b (for x) backward; each 2 B n h d.
  if (named(op, "modulated_linear")) {
    const Tensor* x = arg(args, 0);
    const Tensor* out = arg(args, 4);
    if (x && out) w.gemm_flops = 2.0 * numel(out) * static_cast<double>(x->size(2));
    return w;
  }
  if (named(op, "modulated_linear_backward")) {
    const Tensor* grad = arg(args, 0);
    const Tensor* x = arg(args, 1);
    if (!grad || !x) return w;
    const double product = 2.0 * numel(grad) * static_cast<double>(x->size(2));
    const bool any_parameter_grad = arg(args, 6) || arg(args, 7) || arg(args, 8);
    w.gemm_flops = (any_parameter_grad ? product : 0.0) + (arg(args, 5) ? product : 0.0);
    return w;
  }
  // Signatures: ops/multi_dim_attention/multi_dim_attention_kernels.h, ops/separable_attention/separable_attention_kernels.h,
  // ops/window_attention_kernels.h.
  // One exp per pair and pass: e^a is a product of per-row factors
  // (ops/multi_dim_attention/multi_dim_attention_cpu.cpp), the softmax weight is the exp.
  if (named(op, "multi_dim_attention")) {
    w.exps = pairs(args, 3, 0);
    return w;
  }
  if (named(op, "multi_dim_attention_backward")) {
    w.exps = pairs(args, 4, 1);
    return w;
  }
  // Window attention's dot products are multiply-adds like a GEMM's, counted
  // at the GEMM rate: 2 d_h per (query, window slot) for q.k and 2 d_h for
  // P.v forward; the backward makes four such passes and reuses the saved P.
  if (named(op, "window_attention")) {
    w.gemm_flops = 4.0 * pairs(args, 6, 0);
    w.exps = numel(arg(args, 6));
    return w;
  }
  if (named(op, "window_attention_backward")) {
    w.gemm_flops = 8.0 * pairs(args, 5, 1);
    return w;
  }
  if (named(op, "separable_attention")) {
    w.exps = pairs(args, 0, 1);
    return w;
  }
  if (named(op, "separable_attention_backward")) {
    w.exps = pairs(args, 1, 2);
    return w;
  }
  for (size_t i = 0; i < args.size; ++i)
    if (const Tensor* t = arg(args, i)) w.bytes += numel(t) * static_cast<double>(dtype_size(t->dtype()));
  return w;
}

namespace {

template <class F>
double best_seconds(int reps, const F& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// y = exp(x) elementwise, built for AVX2 as well as the baseline
// like the fused kernels (ATTN_SIMD_CLONES), so the rate is the one they can
// reach. (A float sum would not vectorise without -ffast-math: its order is
// fixed.)
ATTN_SIMD_CLONES void exp_into(const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = vector_math::exp(x[i]);
}

// Elements per second (in billions) through `fn`, over all threads, on rows
// that stay in cache as the fused kernels' do: each thread maps blocks of a
// small shared input into its own row.
double transcendental_rate(void (*fn)(const float*, float*, int64_t)) {
  constexpr int64_t kBlock = 4096, kInputBlocks = 16, kBlocks = 4096;
  std::vector<float> x(static_cast<size_t>(kBlock * kInputBlocks));
  for (size_t i = 0; i < x.size(); ++i) x[i] = -4.0f + 8.0f * static_cast<float>(i % 1000) / 1000.0f;
  const double s = best_seconds(5, [&] {
    parallel_for(kBlocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> y(static_cast<size_t>(kBlock));
      for (int64_t b = begin; b < end; ++b) fn(x.data() + (b % kInputBlocks) * kBlock, y.data(), kBlock);
      volatile float sink = y[kBlock / 2];  // the results are observable
      (void)sink;
    });
  });
  return static_cast<double>(kBlocks * kBlock) / s / 1e9;
}

}  // namespace

MachineRates measure_machine_rates() {
  MachineRates r;
  r.exp_gper_s = transcendental_rate(exp_into);
  {
    const int64_t n = int64_t(1) << 26;  // 256 MiB of floats each way
    std::vector<float> src(static_cast<size_t>(n), 1.0f), dst(static_cast<size_t>(n));
    auto copy = [&] {
      parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
        std::memcpy(dst.data() + begin, src.data() + begin, static_cast<size_t>(end - begin) * sizeof(float));
      });
    };
    copy();  // faults the pages in
    r.copy_gbytes_s = 2.0 * static_cast<double>(n) * sizeof(float) / best_seconds(3, copy) / 1e9;
  }
  // Last, and followed by a pause: OpenBLAS's threads (when float32 goes to
  // OpenBLAS and it threads this square product) busy-wait for about 0.1 s
  // after a call and would slow whatever runs next.
  {
    const int64_t n = 1024;
    const Tensor a = full({n, n}, 0.5, DType::F32), b = full({n, n}, 0.25, DType::F32);
    Tensor c = matmul(a, b);  // warms the threads and the packing buffers
    r.gemm_gflops = 2.0 * n * n * static_cast<double>(n) / best_seconds(3, [&] { c = matmul(a, b); }) / 1e9;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return r;
}

namespace {
constexpr int64_t kProbeSize = 1024;
}  // namespace

GemmRateProbe::GemmRateProbe()
    : a_(full({kProbeSize, kProbeSize}, 0.5, DType::F32)), b_(full({kProbeSize, kProbeSize}, 0.25, DType::F32)) {
  c_ = matmul(a_, b_);  // warms the threads and the packing buffers
}

double GemmRateProbe::gflops() {
  const double flops = 2.0 * kProbeSize * kProbeSize * static_cast<double>(kProbeSize);
  return flops / best_seconds(2, [&] { c_ = matmul(a_, b_); }) / 1e9;
}

StepFloor step_floor(const KernelWork& work, const MachineRates& rates) {
  StepFloor f;
  f.gemm_ms = work.gemm_flops / (rates.gemm_gflops * 1e6);
  f.transcendental_ms = work.exps / (rates.exp_gper_s * 1e6);
  f.memory_ms = work.bytes / (rates.copy_gbytes_s * 1e6);
  return f;
}

std::string format_rates(const MachineRates& r) {
  char line[320];
  std::snprintf(line, sizeof line,
                "machine rates (best of 3-5, all threads): GEMM %.1f GFLOP/s (the engine's float32 matmul, 1024^3); "
                "exp %.2f G/s (vectorised float32, in cache); copy %.1f GB/s (read + write)\n",
                r.gemm_gflops, r.exp_gper_s, r.copy_gbytes_s);
  return line;
}

std::string format_floor(const KernelWork& work, const StepFloor& floor, double step_ms, double median_ms,
                         int64_t steps) {
  const double total = floor.total_ms();
  char line[600];
  std::snprintf(line, sizeof line,
                "floor %.1f ms = GEMM %.2f GFLOP -> %.1f ms + fused-attention exps %.1f M "
                "-> %.1f ms + other kernels' bytes %.1f MiB -> %.1f ms; step / floor = %.2f; "
                "median of %lld unprofiled step(s) %.1f ms / floor = %.2f\n",
                total, work.gemm_flops / 1e9, floor.gemm_ms, work.exps / 1e6, floor.transcendental_ms,
                work.bytes / (1 << 20), floor.memory_ms, total > 0 ? step_ms / total : 0.0,
                static_cast<long long>(steps), median_ms, total > 0 ? median_ms / total : 0.0);
  return line;
}

}  // namespace attn

// CUDA kernels of the softmax pooling: one thread per (example, feature),
// which runs over the example's tokens; neighbouring threads read
// neighbouring features, so every token row is read coalesced. Sweeps and
// special cases as on the CPU (ops/softmax_pool/softmax_pool_cpu.cpp).
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/softmax_pool/softmax_pool_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void softmax_pool_kernel(const T* scores, const T* values, const uint8_t* mask, int64_t B, int64_t n,
                                    int64_t d, T* out, T* probs) {
  ATTN_CUDA_LOOP(i, B * d) {
    const int64_t b = i / d, f = i % d;
    T top = cuda::neg_inf<T>();
    for (int64_t t = 0; t < n; ++t)
      if (!mask || mask[b * n + t]) {
        const T s = scores[(b * n + t) * d + f];
        if (s > top || s != s) top = s;  // NaN wins, as on the CPU
      }
    const bool empty = top == cuda::neg_inf<T>();
    T z = 0, acc = 0;
    for (int64_t t = 0; t < n && !empty; ++t)
      if (!mask || mask[b * n + t]) {
        const T e = std::exp(scores[(b * n + t) * d + f] - top);
        z += e;
        acc += e * values[(b * n + t) * d + f];
      }
    out[i] = empty ? T(0) : acc / z;
    if (!probs) continue;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t at = (b * n + t) * d + f;
      probs[at] = empty || (mask && !mask[b * n + t]) ? T(0) : std::exp(scores[at] - top) / z;
    }
  }
}

template <class T>
__global__ void softmax_pool_backward_kernel(const T* grad, const T* probs, const T* values, const uint8_t* mask,
                                             const T* out, int64_t B, int64_t n, int64_t d, T* grad_scores,
                                             T* grad_values) {
  ATTN_CUDA_LOOP(i, B * d) {
    const int64_t b = i / d, f = i % d;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t at = (b * n + t) * d + f;
      const bool valid = !mask || mask[b * n + t];
      const T gp = valid ? grad[i] * probs[at] : T(0);
      grad_values[at] = gp;
      grad_scores[at] = valid ? gp * (values[at] - out[i]) : T(0);
    }
  }
}

}  // namespace

void softmax_pool_cuda(const Tensor& scores, const Tensor& values, const Tensor& mask, const Tensor& out,
                       const Tensor& probs) {
  dispatch_floating(scores.dtype(), "softmax_pool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = scores.size(0), n = scores.size(1), d = scores.size(2);
    if (B * d == 0) return;
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    T* p = probs.defined() ? probs.data<T>() : nullptr;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(B * d), cuda::kThreads, 0, cuda::stream(), softmax_pool_kernel<T>)
    (scores.data<T>(), values.data<T>(), m, B, n, d, out.data<T>(), p);
    ATTN_CUDA_CHECK_LAUNCH("softmax_pool");
  });
}

void softmax_pool_backward_cuda(const Tensor& grad, const Tensor& probs, const Tensor& values, const Tensor& mask,
                                const Tensor& out, const Tensor& grad_scores, const Tensor& grad_values) {
  dispatch_floating(values.dtype(), "softmax_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = values.size(0), n = values.size(1), d = values.size(2);
    if (B * d == 0) return;
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(B * d), cuda::kThreads, 0, cuda::stream(), softmax_pool_backward_kernel<T>)
    (grad.data<T>(), probs.data<T>(), values.data<T>(), m, out.data<T>(), B, n, d, grad_scores.data<T>(),
     grad_values.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("softmax_pool_backward");
  });
}

}  // namespace attn

// CUDA kernels of the token unfold: one thread per output element, so
// neighbouring threads read and write neighbouring features (coalesced).
// The backward gathers each token's taps in tap order, as on the CPU
// (ops/token_conv/token_conv_cpu.cpp): no atomics.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/token_conv/token_conv_kernels.h"

namespace attn {

namespace {

__device__ inline bool valid_token(const uint8_t* mask, int64_t row) { return mask == nullptr || mask[row] != 0; }

template <class T>
__global__ void token_unfold_kernel(const T* x, const uint8_t* mask, int64_t B, int64_t n, int64_t k, int64_t d,
                                    int64_t left, T* cols) {
  ATTN_CUDA_LOOP(i, B * n * k * d) {
    const int64_t f = i % d, j = (i / d) % k, row = i / (d * k);
    const int64_t b = row / n, t = row % n, s = t + j - left;
    const bool take = s >= 0 && s < n && valid_token(mask, row) && valid_token(mask, b * n + s);
    cols[i] = take ? x[(b * n + s) * d + f] : T(0);
  }
}

template <class T>
__global__ void token_unfold_backward_kernel(const T* grad_cols, const uint8_t* mask, int64_t B, int64_t n, int64_t k,
                                             int64_t d, int64_t left, T* grad_x) {
  ATTN_CUDA_LOOP(i, B * n * d) {
    const int64_t f = i % d, row = i / d;
    const int64_t b = row / n, s = row % n;
    T acc = 0;
    if (valid_token(mask, row))
      for (int64_t j = 0; j < k; ++j) {
        const int64_t t = s - j + left;
        if (t >= 0 && t < n && valid_token(mask, b * n + t)) acc += grad_cols[((b * n + t) * k + j) * d + f];
      }
    grad_x[i] = acc;
  }
}

}  // namespace

void token_unfold_cuda(const Tensor& x, const Tensor& mask, int64_t left, const Tensor& cols) {
  dispatch_floating(x.dtype(), "token_unfold", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = x.size(0), n = x.size(1), d = x.size(2), k = cols.size(2);
    const int64_t total = B * n * k * d;
    if (total == 0) return;
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(total), cuda::kThreads, 0, cuda::stream(), token_unfold_kernel<T>)
    (x.data<T>(), m, B, n, k, d, left, cols.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("token_unfold");
  });
}

void token_unfold_backward_cuda(const Tensor& grad_cols, const Tensor& mask, int64_t left, const Tensor& grad_x) {
  dispatch_floating(grad_x.dtype(), "token_unfold_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = grad_x.size(0), n = grad_x.size(1), d = grad_x.size(2), k = grad_cols.size(2);
    const int64_t total = B * n * d;
    if (total == 0) return;
    const uint8_t* m = mask.defined() ? mask.data<uint8_t>() : nullptr;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(total), cuda::kThreads, 0, cuda::stream(), token_unfold_backward_kernel<T>)
    (grad_cols.data<T>(), m, B, n, k, d, left, grad_x.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("token_unfold_backward");
  });
}

}  // namespace attn

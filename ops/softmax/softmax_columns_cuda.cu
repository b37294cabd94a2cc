// CUDA kernels of softmax over a middle axis (ops/softmax/softmax_columns_cpu.cpp):
// one thread per column of x [outer, n, inner]. Neighbouring threads own
// neighbouring features, so every sweep over n reads and writes coalesced
// rows. The sum accumulates in double; a column with no valid entry gives
// zeros.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/softmax/softmax_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void softmax_columns_forward_kernel(const T* x, const uint8_t* mask, bool per_feature, int64_t outer,
                                               int64_t n, int64_t inner, T* out) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= outer * inner) return;
  const int64_t o = c / inner, f = c % inner;
  const int64_t base = o * n * inner + f;
  auto valid = [&](int64_t j) {
    return !mask || (per_feature ? mask[base + j * inner] != 0 : mask[o * n + j] != 0);
  };
  bool any = false;
  T mx = T(0);
  for (int64_t j = 0; j < n; ++j) {
    const T v = x[base + j * inner];
    if (valid(j) && (!any || v > mx)) {
      mx = v;
      any = true;
    }
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const T e = any && valid(j) ? static_cast<T>(exp(x[base + j * inner] - mx)) : T(0);
    out[base + j * inner] = e;
    sum += e;
  }
  const T inv = sum > 0 ? static_cast<T>(1.0 / sum) : T(0);
  for (int64_t j = 0; j < n; ++j) out[base + j * inner] *= inv;
}

template <class T>
__global__ void softmax_columns_backward_kernel(const T* y, const T* grad, int64_t outer, int64_t n, int64_t inner,
                                                T* grad_in) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= outer * inner) return;
  const int64_t base = (c / inner) * n * inner + c % inner;
  double dot = 0;
  for (int64_t j = 0; j < n; ++j) dot += static_cast<double>(grad[base + j * inner]) * y[base + j * inner];
  const T d = static_cast<T>(dot);
  for (int64_t j = 0; j < n; ++j) grad_in[base + j * inner] = y[base + j * inner] * (grad[base + j * inner] - d);
}

}  // namespace

void softmax_columns_forward_cuda(const Tensor& x, const Tensor& mask, int64_t outer, int64_t n, int64_t inner,
                                  const Tensor& out) {
  dispatch_floating(x.dtype(), "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t columns = outer * inner;
    if (columns == 0 || n == 0) return;
    const uint8_t* pm = mask.defined() ? mask.data<uint8_t>() : nullptr;
    const bool per_feature = mask.defined() && mask.numel() == outer * n * inner && inner > 1;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(columns), cuda::kThreads, 0, cuda::stream(), softmax_columns_forward_kernel<T>)(
        x.data<T>(), pm, per_feature, outer, n, inner, out.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("softmax");
  });
}

void softmax_columns_backward_cuda(const Tensor& y, const Tensor& grad, int64_t outer, int64_t n, int64_t inner,
                                   const Tensor& grad_in) {
  dispatch_floating(y.dtype(), "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t columns = outer * inner;
    if (columns == 0 || n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(columns), cuda::kThreads, 0, cuda::stream(), softmax_columns_backward_kernel<T>)(
        y.data<T>(), grad.data<T>(), outer, n, inner, grad_in.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("softmax_backward");
  });
}

}  // namespace attn

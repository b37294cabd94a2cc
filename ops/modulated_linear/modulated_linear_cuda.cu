// CUDA kernels of the modulated linear map (ops/modulated_linear/modulated_linear.h). The GPU
// has the memory bandwidth to materialise every sentence's M_b = W + V
// diag(s_b) as one [B, h, d] stack, so each direction is our small kernels
// around one strided-batched cuBLAS product (matmul_cuda): forward
// out_b = x_b M_b^T; backward G_b = grad_b^T x_b, reduced over sentences for
// W's and V's gradients and over outputs for s's, and dx_b = grad_b M_b.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/matmul/matmul_kernels.h"
#include "attn/ops/modulated_linear/modulated_linear_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void build_maps_kernel(const T* w, const T* v, const T* s, int64_t B, int64_t h, int64_t d, T* maps) {
  ATTN_CUDA_LOOP(i, B * h * d) {
    const int64_t b = i / (h * d), jk = i % (h * d), k = jk % d;
    maps[i] = w[jk] + v[jk] * s[b * d + k];
  }
}

// dW[j, k] = sum_b G[b, j, k], dV[j, k] = sum_b G[b, j, k] s[b, k]; either may be null.
template <class T>
__global__ void weight_grads_kernel(const T* g, const T* s, int64_t B, int64_t h, int64_t d, T* grad_w, T* grad_v) {
  ATTN_CUDA_LOOP(jk, h * d) {
    const int64_t k = jk % d;
    T tw = 0, tv = 0;
    for (int64_t b = 0; b < B; ++b) {
      const T gb = g[b * h * d + jk];
      tw += gb;
      tv += gb * s[b * d + k];
    }
    if (grad_w) grad_w[jk] = tw;
    if (grad_v) grad_v[jk] = tv;
  }
}

// ds[b, k] = sum_j V[j, k] G[b, j, k]
template <class T>
__global__ void scale_grad_kernel(const T* g, const T* v, int64_t B, int64_t h, int64_t d, T* grad_s) {
  ATTN_CUDA_LOOP(bk, B * d) {
    const int64_t b = bk / d, k = bk % d;
    T t = 0;
    for (int64_t j = 0; j < h; ++j) t += v[j * d + k] * g[(b * h + j) * d + k];
    grad_s[bk] = t;
  }
}

template <class T>
Tensor build_maps(const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight) {
  const int64_t B = scale.size(0), h = weight.size(0), d = weight.size(1);
  Tensor maps = empty({B, h, d}, weight.dtype(), weight.device());
  if (maps.numel() == 0) return maps;
  ATTN_CUDA_LAUNCH(cuda::blocks_for(B * h * d), cuda::kThreads, 0, cuda::stream(), build_maps_kernel<T>)
  (weight.data<T>(), scaled_weight.data<T>(), scale.data<T>(), B, h, d, maps.data<T>());
  ATTN_CUDA_CHECK_LAUNCH("modulated_linear");
  return maps;
}

// The last two axes of a [B, r, c] tensor, swapped (a view).
Tensor swap_last_two(const Tensor& t) {
  return make_view(t, {t.size(0), t.size(2), t.size(1)}, {t.strides()[0], t.strides()[2], t.strides()[1]}, t.offset());
}

}  // namespace

void modulated_linear_cuda(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight,
                           const Tensor& out) {
  if (out.numel() == 0) return;
  dispatch_floating(x.dtype(), "modulated_linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor maps = build_maps<T>(scale, weight, scaled_weight);
    matmul_cuda(x, swap_last_two(maps), out, false);
  });
}

void modulated_linear_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& scale, const Tensor& weight,
                                    const Tensor& scaled_weight, const Tensor& grad_x, const Tensor& grad_scale,
                                    const Tensor& grad_weight, const Tensor& grad_scaled_weight) {
  const int64_t B = x.size(0), d = x.size(2), h = weight.size(0);
  dispatch_floating(x.dtype(), "modulated_linear_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (grad_weight.defined() || grad_scaled_weight.defined() || grad_scale.defined()) {
      Tensor g = empty({B, h, d}, x.dtype(), x.device());
      matmul_cuda(swap_last_two(grad), x, g, false);  // k = n = 0 writes zeros
      if ((grad_weight.defined() || grad_scaled_weight.defined()) && h * d > 0) {
        ATTN_CUDA_LAUNCH(cuda::blocks_for(h * d), cuda::kThreads, 0, cuda::stream(), weight_grads_kernel<T>)
        (g.data<T>(), scale.data<T>(), B, h, d, grad_weight.defined() ? grad_weight.data<T>() : nullptr,
         grad_scaled_weight.defined() ? grad_scaled_weight.data<T>() : nullptr);
        ATTN_CUDA_CHECK_LAUNCH("modulated_linear_backward");
      }
      if (grad_scale.defined() && B * d > 0) {
        ATTN_CUDA_LAUNCH(cuda::blocks_for(B * d), cuda::kThreads, 0, cuda::stream(), scale_grad_kernel<T>)
        (g.data<T>(), scaled_weight.data<T>(), B, h, d, grad_scale.data<T>());
        ATTN_CUDA_CHECK_LAUNCH("modulated_linear_backward");
      }
    }
    if (grad_x.defined() && grad_x.numel() > 0)
      matmul_cuda(grad, build_maps<T>(scale, weight, scaled_weight), grad_x, false);
  });
}

}  // namespace attn

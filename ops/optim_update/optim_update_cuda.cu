// CUDA kernels of the fused optimiser updates: one grid-stride pass per parameter.
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/optim_update/optim_update_kernels.h"

namespace attn {

namespace {

template <class T>
__global__ void adam_kernel(T* p, const T* g, T* m, T* v, int64_t n, optim_math::AdamStep s) {
  ATTN_CUDA_LOOP(i, n) { optim_math::adam(p[i], g[i], m[i], v[i], s); }
}

template <class T>
__global__ void adadelta_kernel(T* p, const T* g, T* a, T* u, int64_t n, optim_math::AdadeltaStep s) {
  ATTN_CUDA_LOOP(i, n) { optim_math::adadelta(p[i], g[i], a[i], u[i], s); }
}

template <class T>
__global__ void momentum_kernel(T* p, const T* g, T* v, int64_t n, optim_math::MomentumStep s) {
  ATTN_CUDA_LOOP(i, n) { optim_math::momentum(p[i], g[i], v[i], s); }
}

}  // namespace

void adam_update_cuda(const Tensor& p, const Tensor& g, const Tensor& m, const Tensor& v,
                      const optim_math::AdamStep& s) {
  dispatch_floating(p.dtype(), "adam_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = p.numel();
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), adam_kernel<T>)(p.data<T>(), g.data<T>(), m.data<T>(),
                                                                              v.data<T>(), n, s);
    ATTN_CUDA_CHECK_LAUNCH("adam_update_");
  });
}

void adadelta_update_cuda(const Tensor& p, const Tensor& g, const Tensor& a, const Tensor& u,
                          const optim_math::AdadeltaStep& s) {
  dispatch_floating(p.dtype(), "adadelta_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = p.numel();
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), adadelta_kernel<T>)(
        p.data<T>(), g.data<T>(), a.data<T>(), u.data<T>(), n, s);
    ATTN_CUDA_CHECK_LAUNCH("adadelta_update_");
  });
}

void momentum_update_cuda(const Tensor& p, const Tensor& g, const Tensor& v, const optim_math::MomentumStep& s) {
  dispatch_floating(p.dtype(), "sgd_momentum_update_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = p.numel();
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), momentum_kernel<T>)(p.data<T>(), g.data<T>(),
                                                                                  v.data<T>(), n, s);
    ATTN_CUDA_CHECK_LAUNCH("sgd_momentum_update_");
  });
}

}  // namespace attn

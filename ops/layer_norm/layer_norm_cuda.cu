// CUDA kernels of layer_norm. Forward and grad_x: one warp per row (D up to
// 1024) or one block per row; the row statistics accumulate in double, with
// the variance taken as the mean squared deviation from the mean (two
// sweeps, no cancellation), as on the CPU. grad_gamma and grad_beta are
// column sums over rows, done by the shared deterministic column reduction.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/layer_norm/layer_norm_kernels.h"

namespace attn {

namespace {

template <class T, bool kBlock>
__global__ void layer_norm_forward_kernel(const T* x, const T* gamma, const T* beta, double eps, int64_t rows,
                                          int64_t D, T* y, T* mean, T* rstd) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(double, smem, [32]);
  const double inv_d = 1.0 / static_cast<double>(D);
  for (int64_t r = G::first_row(); r < rows; r += G::row_step()) {
    const T* xr = x + r * D;
    T* yr = y + r * D;
    double s1 = 0;
    for (int64_t i = G::lane(); i < D; i += G::size()) s1 += static_cast<double>(xr[i]);
    const double mu = G::reduce(s1, cuda::SumOp{}, 0.0, smem) * inv_d;
    double s2 = 0;
    for (int64_t i = G::lane(); i < D; i += G::size()) {
      const double d = static_cast<double>(xr[i]) - mu;
      s2 += d * d;
    }
    const double var = G::reduce(s2, cuda::SumOp{}, 0.0, smem) * inv_d;
    const T m = static_cast<T>(mu);
    const T s = static_cast<T>(1.0 / sqrt(var + eps));
    if (G::lane() == 0) {
      mean[r] = m;
      rstd[r] = s;
    }
    for (int64_t i = G::lane(); i < D; i += G::size()) {
      T v = (xr[i] - m) * s;
      if (gamma) v = v * gamma[i];
      if (beta) v = v + beta[i];
      yr[i] = v;
    }
  }
}

// dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)), xhat = (x - mean) * rstd,
// gy = grad * gamma (grad without gamma).
template <class T, bool kBlock>
__global__ void layer_norm_grad_x_kernel(const T* grad, const T* x, const T* gamma, const T* mean, const T* rstd,
                                         int64_t rows, int64_t D, T* dx) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(double, smem, [32]);
  const double inv_d = 1.0 / static_cast<double>(D);
  for (int64_t r = G::first_row(); r < rows; r += G::row_step()) {
    const T* gr = grad + r * D;
    const T* xr = x + r * D;
    T* dr = dx + r * D;
    const T m = mean[r], s = rstd[r];
    double sa = 0, sc = 0;
    for (int64_t i = G::lane(); i < D; i += G::size()) {
      const T gy = gamma ? gr[i] * gamma[i] : gr[i];
      sa += static_cast<double>(gy);
      sc += static_cast<double>(gy) * static_cast<double>((xr[i] - m) * s);
    }
    const T a = static_cast<T>(G::reduce(sa, cuda::SumOp{}, 0.0, smem) * inv_d);
    const T c = static_cast<T>(G::reduce(sc, cuda::SumOp{}, 0.0, smem) * inv_d);
    for (int64_t i = G::lane(); i < D; i += G::size()) {
      const T gy = gamma ? gr[i] * gamma[i] : gr[i];
      dr[i] = s * (gy - a - (xr[i] - m) * s * c);
    }
  }
}

// Column j of rows i: acc[0] += grad * xhat (gamma), acc[1] += grad (beta).
template <class T>
struct ParamGradTerm {
  const T* grad;
  const T* x;
  const T* mean;
  const T* rstd;
  int64_t D;
  __device__ void operator()(int64_t i, int64_t j, double* acc) const {
    const double g = static_cast<double>(grad[i * D + j]);
    acc[0] += g * static_cast<double>((x[i * D + j] - mean[i]) * rstd[i]);
    acc[1] += g;
  }
};

template <class T>
struct ParamGradStore {
  T* grad_gamma;
  T* grad_beta;
  __device__ void operator()(int k, int64_t j, double total) const {
    T* dst = k == 0 ? grad_gamma : grad_beta;
    if (dst) dst[j] = static_cast<T>(total);
  }
};

}  // namespace

void layer_norm_forward_cuda(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, int64_t rows,
                             int64_t D, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows == 0) return;
    const T* pg = gamma.defined() ? gamma.data<T>() : nullptr;
    const T* pb = beta.defined() ? beta.data<T>() : nullptr;
    const cuda::RowLaunch l = cuda::row_launch(rows, D);
    if (l.block)
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), layer_norm_forward_kernel<T, true>)(
          x.data<T>(), pg, pb, eps, rows, D, y.data<T>(), mean.data<T>(), rstd.data<T>());
    else
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), layer_norm_forward_kernel<T, false>)(
          x.data<T>(), pg, pb, eps, rows, D, y.data<T>(), mean.data<T>(), rstd.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("layer_norm");
  });
}

void layer_norm_backward_cuda(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                              const Tensor& rstd, int64_t rows, int64_t D, const Tensor& grad_x,
                              const Tensor& grad_gamma, const Tensor& grad_beta) {
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pgrad = grad.data<T>();
    const T* px = x.data<T>();
    const T* pg = gamma.defined() ? gamma.data<T>() : nullptr;
    const T* pm = mean.data<T>();
    const T* pr = rstd.data<T>();
    T* pdg = grad_gamma.defined() ? grad_gamma.data<T>() : nullptr;
    T* pdb = grad_beta.defined() ? grad_beta.data<T>() : nullptr;
    if (grad_x.defined() && rows > 0) {
      T* pdx = grad_x.data<T>();
      const cuda::RowLaunch l = cuda::row_launch(rows, D);
      if (l.block)
        ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), layer_norm_grad_x_kernel<T, true>)(pgrad, px, pg, pm, pr, rows, D,
                                                                                    pdx);
      else
        ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), layer_norm_grad_x_kernel<T, false>)(pgrad, px, pg, pm, pr, rows,
                                                                                     D, pdx);
      ATTN_CUDA_CHECK_LAUNCH("layer_norm_backward");
    }
    if (pdg || pdb)
      cuda::launch_column_sums<2>("layer_norm_backward", rows, D, ParamGradTerm<T>{pgrad, px, pm, pr, D},
                                  ParamGradStore<T>{pdg, pdb});
  });
}

}  // namespace attn

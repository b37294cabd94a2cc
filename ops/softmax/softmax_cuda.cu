// CUDA kernels of the softmax family: one warp per row (rows up to 1024
// long) or one block per row. Three sweeps over the row, as on the CPU: the
// max over valid entries, the sum of exponentials (accumulated in double),
// then the normalised output. A row with no valid finite entry gives zeros
// (and row_empty = 1), never NaN; masked entries never enter the sums.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/softmax/softmax_kernels.h"

namespace attn {

namespace {

template <class T, bool kBlock>
__global__ void softmax_forward_kernel(bool log, const T* x, const uint8_t* mask, int64_t rows, int64_t n, T* out,
                                       uint8_t* row_empty) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(T, smem_t, [32]);
  ATTN_SHARED(double, smem_d, [32]);
  for (int64_t r = G::first_row(); r < rows; r += G::row_step()) {
    const T* xr = x + r * n;
    const uint8_t* mr = mask ? mask + r * n : nullptr;
    T* orow = out + r * n;
    // Max over valid entries; NaN never wins, -inf when there is none.
    T m = cuda::neg_inf<T>();
    for (int64_t i = G::lane(); i < n; i += G::size()) {
      const T v = xr[i];
      if ((!mr || mr[i]) && v > m) m = v;
    }
    m = G::reduce(m, cuda::MaxOp{}, cuda::neg_inf<T>(), smem_t);
    if (m == cuda::neg_inf<T>()) {
      for (int64_t i = G::lane(); i < n; i += G::size()) orow[i] = T(0);
      if (row_empty && G::lane() == 0) row_empty[r] = 1;
      continue;
    }
    double s = 0;
    for (int64_t i = G::lane(); i < n; i += G::size())
      if (!mr || mr[i]) s += static_cast<double>(std::exp(xr[i] - m));
    s = G::reduce(s, cuda::SumOp{}, 0.0, smem_d);
    // s >= 1: the max entry contributes exp(0).
    if (log) {
      const T log_s = static_cast<T>(std::log(s));
      for (int64_t i = G::lane(); i < n; i += G::size())
        orow[i] = (!mr || mr[i]) ? (xr[i] - m) - log_s : T(0);
    } else {
      const T inv = static_cast<T>(1.0 / s);
      for (int64_t i = G::lane(); i < n; i += G::size())
        orow[i] = (!mr || mr[i]) ? std::exp(xr[i] - m) * inv : T(0);
    }
    if (row_empty && G::lane() == 0) row_empty[r] = 0;
  }
}

template <class T, bool kBlock>
__global__ void softmax_backward_kernel(bool log, const T* y, const T* grad, const uint8_t* mask,
                                        const uint8_t* row_empty, int64_t rows, int64_t n, T* grad_in) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(double, smem, [32]);
  for (int64_t r = G::first_row(); r < rows; r += G::row_step()) {
    const T* yr = y + r * n;
    const T* gr = grad + r * n;
    T* dr = grad_in + r * n;
    if (!log) {
      // Masked entries and empty rows hold y = 0, so their gradient is 0.
      double dot = 0;
      for (int64_t i = G::lane(); i < n; i += G::size()) dot += static_cast<double>(gr[i]) * yr[i];
      dot = G::reduce(dot, cuda::SumOp{}, 0.0, smem);
      const T d = static_cast<T>(dot);
      for (int64_t i = G::lane(); i < n; i += G::size()) dr[i] = yr[i] * (gr[i] - d);
    } else if (row_empty && row_empty[r]) {
      for (int64_t i = G::lane(); i < n; i += G::size()) dr[i] = T(0);
    } else {
      const uint8_t* mr = mask ? mask + r * n : nullptr;
      double s = 0;
      for (int64_t i = G::lane(); i < n; i += G::size())
        if (!mr || mr[i]) s += static_cast<double>(gr[i]);
      s = G::reduce(s, cuda::SumOp{}, 0.0, smem);
      const T st = static_cast<T>(s);
      for (int64_t i = G::lane(); i < n; i += G::size())
        dr[i] = (!mr || mr[i]) ? gr[i] - std::exp(yr[i]) * st : T(0);
    }
  }
}

}  // namespace

void softmax_forward_cuda(bool log, const Tensor& x, const Tensor& mask, const Tensor& out, const Tensor& row_empty) {
  const char* name = log ? "log_softmax" : "softmax";
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.shape().empty() ? 1 : x.shape().back();
    const int64_t rows = n > 0 ? x.numel() / n : 0;
    if (rows == 0) return;
    const T* px = x.data<T>();
    const uint8_t* pm = mask.defined() ? mask.data<uint8_t>() : nullptr;
    T* po = out.data<T>();
    uint8_t* pe = row_empty.defined() ? row_empty.data<uint8_t>() : nullptr;
    const cuda::RowLaunch l = cuda::row_launch(rows, n);
    if (l.block)
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), softmax_forward_kernel<T, true>)(log, px, pm, rows, n, po, pe);
    else
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), softmax_forward_kernel<T, false>)(log, px, pm, rows, n, po, pe);
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

void softmax_backward_cuda(bool log, const Tensor& y, const Tensor& grad, const Tensor& mask, const Tensor& row_empty,
                           const Tensor& grad_in) {
  const char* name = log ? "log_softmax_backward" : "softmax_backward";
  dispatch_floating(y.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.shape().empty() ? 1 : y.shape().back();
    const int64_t rows = n > 0 ? y.numel() / n : 0;
    if (rows == 0) return;
    const T* py = y.data<T>();
    const T* pg = grad.data<T>();
    const uint8_t* pm = log && mask.defined() ? mask.data<uint8_t>() : nullptr;
    const uint8_t* pe = log && row_empty.defined() ? row_empty.data<uint8_t>() : nullptr;
    T* pd = grad_in.data<T>();
    const cuda::RowLaunch l = cuda::row_launch(rows, n);
    if (l.block)
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), softmax_backward_kernel<T, true>)(log, py, pg, pm, pe, rows, n, pd);
    else
      ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), softmax_backward_kernel<T, false>)(log, py, pg, pm, pe, rows, n, pd);
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

}  // namespace attn

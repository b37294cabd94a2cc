// CPU kernels of layer_norm. One row at a time: the row stays in cache while
// its mean, variance and output (or, backward, its two reductions and dx) are
// computed. Row statistics accumulate in double for both dtypes. The row
// loops are SIMD clones (ops/cpu/vector_math.h): the baseline build's 2-wide
// double arithmetic made the Transformer's layer norm backward 4x slower
// than its bytes.
#include "attn/ops/layer_norm/layer_norm_kernels.h"
#include "attn/ops/cpu/row_block_sums.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

// kLanes independent partial sums per reduction, added pairwise at the
// end: the loop vectorises without reassociating (no -ffast-math), and the
// rounding error grows more slowly than one sum's. Each lane is a chain of
// dependent additions, so the lanes (32: eight 4-double vectors) are what
// keeps the adder busy; with 8 a row's reduction waited on two chains
// (layer norm's backward ran at 3 cycles per element).
constexpr int kLanes = 32;

inline double sum_lanes(double* acc) {
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
  return acc[0];
}

// The sums of term_a(i) and term_b(i) over i < n, in one pass.
template <class A, class B>
inline __attribute__((always_inline)) void sum_two_terms(int64_t n, const A& term_a, const B& term_b, double& sum_a,
                                                         double& sum_b) {
  double acc_a[kLanes] = {}, acc_b[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      acc_a[k] += term_a(i + k);
      acc_b[k] += term_b(i + k);
    }
  for (int k = 0; i + k < n; ++k) {
    acc_a[k] += term_a(i + k);
    acc_b[k] += term_b(i + k);
  }
  sum_a = sum_lanes(acc_a);
  sum_b = sum_lanes(acc_b);
}

template <class F>
inline __attribute__((always_inline)) double sum_terms(int64_t n, const F& term) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += term(i + k);
  for (int k = 0; i + k < n; ++k) acc[k] += term(i + k);
  return sum_lanes(acc);
}

// Rows [b, e) of the forward pass.
template <class T>
ATTN_SIMD_CLONES void forward_rows(const T* px, const T* pg, const T* pb, double eps, int64_t D, int64_t b, int64_t e,
                                   T* py, T* pm, T* pr) {
  const double inv_d = 1.0 / static_cast<double>(D);
  for (int64_t r = b; r < e; ++r) {
    const T* xr = px + r * D;
    T* yr = py + r * D;
    // Two passes over the cached row: the mean, then squared deviations
    // from it (no cancellation, unlike E[x^2] - E[x]^2).
    const double mu = sum_terms(D, [&](int64_t i) { return static_cast<double>(xr[i]); }) * inv_d;
    const double var = sum_terms(D, [&](int64_t i) {
                         double d = static_cast<double>(xr[i]) - mu;
                         return d * d;
                       }) * inv_d;
    const T m = static_cast<T>(mu);
    const T s = static_cast<T>(1.0 / std::sqrt(var + eps));
    pm[r] = m;
    pr[r] = s;
    if (pg && pb) {
      for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - m) * s * pg[i] + pb[i];
    } else if (pg) {
      for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - m) * s * pg[i];
    } else if (pb) {
      for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - m) * s + pb[i];
    } else {
      for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - m) * s;
    }
  }
}

template <class T>
void forward_typed(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, int64_t rows, int64_t D,
                   const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  const T* px = x.data<T>();
  const T* pg = gamma.defined() ? gamma.data<T>() : nullptr;
  const T* pb = beta.defined() ? beta.data<T>() : nullptr;
  T* py = y.data<T>();
  T* pm = mean.data<T>();
  T* pr = rstd.data<T>();
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(D, 1)),
               [&](int64_t b, int64_t e) { forward_rows(px, pg, pb, eps, D, b, e, py, pm, pr); });
}

// dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) for one row, where
// xhat = (x - mean) * rstd and gy = grad * gamma (grad when there is no gamma).
template <class T, bool kGamma>
inline __attribute__((always_inline)) void grad_x_row(const T* gr, const T* xr, const T* pg, T m, T s, int64_t D,
                                                      T* dx) {
  auto gy = [&](int64_t i) { return kGamma ? gr[i] * pg[i] : gr[i]; };
  const double inv_d = 1.0 / static_cast<double>(D);
  double sum_gy = 0, sum_gy_xhat = 0;
  sum_two_terms(
      D, [&](int64_t i) { return static_cast<double>(gy(i)); },
      [&](int64_t i) { return static_cast<double>(gy(i)) * static_cast<double>((xr[i] - m) * s); }, sum_gy,
      sum_gy_xhat);
  const T a = static_cast<T>(sum_gy * inv_d);
  const T c = static_cast<T>(sum_gy_xhat * inv_d);
  for (int64_t i = 0; i < D; ++i) dx[i] = s * (gy(i) - a - (xr[i] - m) * s * c);
}

// Rows [r0, r1) of the backward pass: dx where pdx is set, and the rows'
// gamma and beta terms added to dg and db where they are set.
template <class T>
ATTN_SIMD_CLONES void backward_rows(const T* pgrad, const T* px, const T* pg, const T* pm, const T* pr, int64_t D,
                                    int64_t r0, int64_t r1, T* pdx, double* dg, double* db) {
  for (int64_t r = r0; r < r1; ++r) {
    const T* gr = pgrad + r * D;
    const T* xr = px + r * D;
    const T m = pm[r], s = pr[r];
    if (pdx) {
      if (pg) grad_x_row<T, true>(gr, xr, pg, m, s, D, pdx + r * D);
      else grad_x_row<T, false>(gr, xr, pg, m, s, D, pdx + r * D);
    }
    if (dg) {
      for (int64_t i = 0; i < D; ++i) {
        const double gi = static_cast<double>(gr[i]);
        dg[i] += gi * static_cast<double>((xr[i] - m) * s);
        db[i] += gi;
      }
    }
  }
}

template <class T>
void backward_typed(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& rstd,
                    int64_t rows, int64_t D, const Tensor& grad_x, const Tensor& grad_gamma,
                    const Tensor& grad_beta) {
  const T* pgrad = grad.data<T>();
  const T* px = x.data<T>();
  const T* pg = gamma.defined() ? gamma.data<T>() : nullptr;
  const T* pm = mean.data<T>();
  const T* pr = rstd.data<T>();
  T* pdx = grad_x.defined() ? grad_x.data<T>() : nullptr;
  T* pdg = grad_gamma.defined() ? grad_gamma.data<T>() : nullptr;
  T* pdb = grad_beta.defined() ? grad_beta.data<T>() : nullptr;
  const bool want_params = pdg || pdb;

  // Blocks of rows keep their own gamma/beta partial sums (ops/cpu/row_block_sums.h).
  const int64_t blocks = row_blocks(rows, D);
  const int64_t per_block = (rows + blocks - 1) / blocks;
  // Per block: D partial sums of grad * xhat (for gamma), then D of grad (for beta).
  std::vector<double> partial(want_params ? static_cast<size_t>(blocks * 2 * D) : 0, 0.0);

  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      double* dg = want_params ? partial.data() + blk * 2 * D : nullptr;
      backward_rows(pgrad, px, pg, pm, pr, D, blk * per_block, std::min(rows, (blk + 1) * per_block), pdx, dg,
                    want_params ? dg + D : nullptr);
    }
  });

  if (!want_params) return;
  // Blocks are combined in a fixed order: deterministic across runs and threads.
  std::vector<double> total_g(static_cast<size_t>(D), 0.0), total_b(static_cast<size_t>(D), 0.0);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const double* dg = partial.data() + blk * 2 * D;
    const double* db = dg + D;
    for (int64_t i = 0; i < D; ++i) {
      total_g[i] += dg[i];
      total_b[i] += db[i];
    }
  }
  for (int64_t i = 0; i < D; ++i) {
    if (pdg) pdg[i] = static_cast<T>(total_g[i]);
    if (pdb) pdb[i] = static_cast<T>(total_b[i]);
  }
}

}  // namespace

void layer_norm_forward_cpu(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, int64_t rows,
                            int64_t D, const Tensor& y, const Tensor& mean, const Tensor& rstd) {
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    forward_typed<typename decltype(tag)::type>(x, gamma, beta, eps, rows, D, y, mean, rstd);
  });
}

void layer_norm_backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                             const Tensor& rstd, int64_t rows, int64_t D, const Tensor& grad_x,
                             const Tensor& grad_gamma, const Tensor& grad_beta) {
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto tag) {
    backward_typed<typename decltype(tag)::type>(grad, x, gamma, mean, rstd, rows, D, grad_x, grad_gamma, grad_beta);
  });
}

}  // namespace attn

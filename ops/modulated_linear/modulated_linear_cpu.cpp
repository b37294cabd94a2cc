// CPU kernels of the modulated linear map (ops/modulated_linear/modulated_linear.h). The
// sentences are split into one contiguous range per thread; a thread builds
// each sentence's M_b = W + V diag(s_b) in its own [h, d] buffer, which stays
// in cache for the sentence's GEMM (serial OpenBLAS, as in the matmul op's
// engine split). A thread owns whole sentences, so a batch of fewer
// sentences than threads leaves threads idle: the layer is meant for
// training batches, where B is far above the thread count.
#include <algorithm>

#include "attn/engine/blas_threads.h"
#include "attn/engine/copy.h"
#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/cpu/gemm_threads.h"
#include "attn/ops/matmul/matmul_kernels.h"
#include "attn/ops/modulated_linear/modulated_linear_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

struct Dims {
  int64_t B, n, d, h;
};

Dims dims_of(const Tensor& x, const Tensor& weight) { return {x.size(0), x.size(1), x.size(2), weight.size(0)}; }

// One unit per thread (one in all for a product too small to fork for).
int64_t units_for(const Dims& s) {
  if (s.B * s.n * s.d * s.h < kSmallGemmWork) return 1;
  return std::max<int64_t>(1, std::min(parallel_threads(), s.B));
}

// Calls f(unit, first sentence, end sentence) for each unit, in parallel.
template <class F>
void for_each_unit(int64_t units, int64_t B, const F& f) {
  parallel_for(units, 0, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) f(u, u * B / units, (u + 1) * B / units);
  });
}

// m = w + v diag(s), all [h, d] row-major.
template <class T>
ATTN_SIMD_CLONES void build_map(const T* __restrict w, const T* __restrict v, const T* __restrict s, int64_t h,
                                int64_t d, T* __restrict m) {
  for (int64_t j = 0; j < h; ++j)
    for (int64_t k = 0; k < d; ++k) m[j * d + k] = w[j * d + k] + v[j * d + k] * s[k];
}

template <class T>
ATTN_SIMD_CLONES void add_row(const T* __restrict g, int64_t d, T* __restrict acc) {
  for (int64_t k = 0; k < d; ++k) acc[k] += g[k];
}

// acc += g * s, elementwise.
template <class T>
ATTN_SIMD_CLONES void add_product_row(const T* __restrict g, const T* __restrict s, int64_t d, T* __restrict acc) {
  for (int64_t k = 0; k < d; ++k) acc[k] += g[k] * s[k];
}

}  // namespace

void modulated_linear_cpu(const Tensor& x, const Tensor& scale, const Tensor& weight, const Tensor& scaled_weight,
                          const Tensor& out) {
  const Dims s = dims_of(x, weight);
  if (out.numel() == 0) return;
  use_serial_blas();
  dispatch_floating(out.dtype(), "modulated_linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.data<T>(), *ps = scale.data<T>(), *pw = weight.data<T>(), *pv = scaled_weight.data<T>();
    T* po = out.data<T>();
    const int64_t units = units_for(s);
    Tensor maps = empty({units, s.h, s.d}, out.dtype());
    for_each_unit(units, s.B, [&](int64_t u, int64_t b0, int64_t b1) {
      T* m = maps.data<T>() + u * s.h * s.d;
      for (int64_t b = b0; b < b1; ++b) {
        build_map(pw, pv, ps + b * s.d, s.h, s.d, m);
        // out_b [n, h] = x_b [n, d] M_b^T
        gemm_on_this_thread<T>(false, true, s.n, s.h, s.d, px + b * s.n * s.d, s.d, m, s.d, T(0), po + b * s.n * s.h,
                               s.h);
      }
    });
  });
}

void modulated_linear_backward_cpu(const Tensor& grad, const Tensor& x, const Tensor& scale, const Tensor& weight,
                                   const Tensor& scaled_weight, const Tensor& grad_x, const Tensor& grad_scale,
                                   const Tensor& grad_weight, const Tensor& grad_scaled_weight) {
  const Dims s = dims_of(x, weight);
  use_serial_blas();
  dispatch_floating(x.dtype(), "modulated_linear_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pg = grad.data<T>(), *px = x.data<T>(), *ps = scale.data<T>(), *pw = weight.data<T>(),
            *pv = scaled_weight.data<T>();
    const bool want_w = grad_weight.defined(), want_v = grad_scaled_weight.defined(), want_s = grad_scale.defined(),
               want_x = grad_x.defined();
    const int64_t units = units_for(s), area = s.h * s.d;
    // Per unit: G_b (or M_b for grad_x) and the unit's sums of W's and V's
    // gradients, added in unit order afterwards (the same sums for a given
    // thread count, run after run).
    Tensor scratch = zeros({units, 3, s.h, s.d}, x.dtype());
    if (want_s) fill_(grad_scale, 0.0);
    for_each_unit(units, s.B, [&](int64_t u, int64_t b0, int64_t b1) {
      T* g_b = scratch.data<T>() + u * 3 * area;
      T* acc_w = g_b + area;
      T* acc_v = acc_w + area;
      for (int64_t b = b0; b < b1; ++b) {
        const T* grad_b = pg + b * s.n * s.h;
        const T* x_b = px + b * s.n * s.d;
        const T* s_b = ps + b * s.d;
        if (want_w || want_v || want_s) {
          // G_b [h, d] = grad_b^T [h, n] x_b [n, d]; an empty sentence gives 0.
          if (s.n == 0) {
            std::fill(g_b, g_b + area, T(0));
          } else {
            gemm_on_this_thread<T>(true, false, s.h, s.d, s.n, grad_b, s.h, x_b, s.d, T(0), g_b, s.d);
          }
          // dW = sum_b G_b, dV = sum_b G_b diag(s_b), ds_b[k] = sum_j V[j, k] G_b[j, k].
          for (int64_t j = 0; j < s.h; ++j) {
            const T* g_row = g_b + j * s.d;
            if (want_w) add_row(g_row, s.d, acc_w + j * s.d);
            if (want_v) add_product_row(g_row, s_b, s.d, acc_v + j * s.d);
            if (want_s) add_product_row(g_row, pv + j * s.d, s.d, grad_scale.data<T>() + b * s.d);
          }
        }
        if (want_x) {
          // dx_b [n, d] = grad_b [n, h] M_b [h, d]
          build_map(pw, pv, s_b, s.h, s.d, g_b);
          gemm_on_this_thread<T>(false, false, s.n, s.d, s.h, grad_b, s.h, g_b, s.d, T(0),
                                 grad_x.data<T>() + b * s.n * s.d, s.d);
        }
      }
    });
    const T* sums = scratch.data<T>();
    auto total = [&](int64_t which, const Tensor& into) {
      T* out = into.data<T>();
      parallel_for(area, kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          T t = sums[which * area + i];
          for (int64_t u = 1; u < units; ++u) t += sums[(u * 3 + which) * area + i];
          out[i] = t;
        }
      });
    };
    if (want_w) total(1, grad_weight);
    if (want_v) total(2, grad_scaled_weight);
  });
}

}  // namespace attn

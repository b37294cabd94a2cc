// CUDA kernels of the fused multi-dimensional attention. One thread per
// output element (b, i, f), features fastest so a warp reads consecutive
// features of one key row (coalesced); the mask byte is the same for the
// whole warp. The forward is a single pass with an online softmax (running
// max, rescaled sums). The backward is two kernels, one per query element
// (grad_query) and one per key element (grad_key, grad_values), each
// recomputing the scores: no atomics, so results are deterministic.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/multi_dim_attention/multi_dim_attention_kernels.h"

namespace attn {

namespace {

struct Sizes {
  int64_t B, nq, nk, d;
};

Sizes sizes_of(const Tensor& query, const Tensor& key) {
  return {query.size(0), query.size(1), key.size(1), query.size(2)};
}

template <class T>
__global__ void forward_kernel(const T* q, const T* k, const T* v, const uint8_t* mask, T c, T inv_c, Sizes s,
                               T* out, T* log_norm) {
  ATTN_CUDA_LOOP(idx, s.B * s.nq * s.d) {
    const int64_t f = idx % s.d, bi = idx / s.d, b = bi / s.nq;
    const uint8_t* mr = mask + bi * s.nk;
    const T qf = q[idx];
    T m = cuda::neg_inf<T>(), z = 0, acc = 0;
    for (int64_t j = 0; j < s.nk; ++j) {
      if (!mr[j]) continue;
      const int64_t kv = (b * s.nk + j) * s.d + f;
      const T l = c * tanh((qf + k[kv]) * inv_c);
      if (l > m) {
        const T a = exp(m - l);  // 0 for the first valid key (m = -inf)
        z = z * a + T(1);
        acc = acc * a + v[kv];
        m = l;
      } else {
        const T e = exp(l - m);
        z += e;
        acc += e * v[kv];
      }
    }
    const bool empty_row = z == T(0);
    out[idx] = empty_row ? T(0) : acc / z;
    log_norm[idx] = empty_row ? T(0) : m + log(z);
  }
}

template <class T>
__global__ void grad_query_kernel(const T* g, const T* q, const T* k, const T* v, const uint8_t* mask, const T* out,
                                  const T* log_norm, T c, T inv_c, Sizes s, T* gq) {
  ATTN_CUDA_LOOP(idx, s.B * s.nq * s.d) {
    const int64_t f = idx % s.d, bi = idx / s.d, b = bi / s.nq;
    const uint8_t* mr = mask + bi * s.nk;
    const T qf = q[idx], gf = g[idx], of = out[idx], lf = log_norm[idx];
    T dq = 0;
    for (int64_t j = 0; j < s.nk; ++j) {
      if (!mr[j]) continue;
      const int64_t kv = (b * s.nk + j) * s.d + f;
      const T t = tanh((qf + k[kv]) * inv_c);
      const T gp = gf * exp(c * t - lf);
      dq += gp * (v[kv] - of) * (T(1) - t * t);
    }
    gq[idx] = dq;
  }
}

template <class T>
__global__ void grad_key_kernel(const T* g, const T* q, const T* k, const T* v, const uint8_t* mask, const T* out,
                                const T* log_norm, T c, T inv_c, Sizes s, T* gk, T* gv) {
  ATTN_CUDA_LOOP(idx, s.B * s.nk * s.d) {
    const int64_t f = idx % s.d, bj = idx / s.d, b = bj / s.nk, j = bj % s.nk;
    const T kf = k[idx], vf = v[idx];
    T dk = 0, dv = 0;
    for (int64_t i = 0; i < s.nq; ++i) {
      if (!mask[(b * s.nq + i) * s.nk + j]) continue;
      const int64_t qi = (b * s.nq + i) * s.d + f;
      const T t = tanh((q[qi] + kf) * inv_c);
      const T gp = g[qi] * exp(c * t - log_norm[qi]);
      dv += gp;
      dk += gp * (vf - out[qi]) * (T(1) - t * t);
    }
    gk[idx] = dk;
    gv[idx] = dv;
  }
}

}  // namespace

void multi_dim_attention_forward_cuda(const Tensor& query, const Tensor& key, const Tensor& values,
                                      const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm) {
  dispatch_floating(query.dtype(), "multi_dim_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes s = sizes_of(query, key);
    const int64_t n = s.B * s.nq * s.d;
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), forward_kernel<T>)(
        query.data<T>(), key.data<T>(), values.data<T>(), mask.data<uint8_t>(), static_cast<T>(scale_c),
        static_cast<T>(1.0 / scale_c), s, out.data<T>(), log_norm.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("multi_dim_attention");
  });
}

void multi_dim_attention_backward_cuda(const Tensor& grad, const Tensor& query, const Tensor& key,
                                       const Tensor& values, const Tensor& mask, double scale_c, const Tensor& out,
                                       const Tensor& log_norm, const Tensor& grad_query, const Tensor& grad_key,
                                       const Tensor& grad_values) {
  dispatch_floating(query.dtype(), "multi_dim_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes s = sizes_of(query, key);
    const T c = static_cast<T>(scale_c), inv_c = static_cast<T>(1.0 / scale_c);
    const int64_t nq_elems = s.B * s.nq * s.d, nk_elems = s.B * s.nk * s.d;
    if (nq_elems > 0) {
      ATTN_CUDA_LAUNCH(cuda::blocks_for(nq_elems), cuda::kThreads, 0, cuda::stream(), grad_query_kernel<T>)(
          grad.data<T>(), query.data<T>(), key.data<T>(), values.data<T>(), mask.data<uint8_t>(), out.data<T>(),
          log_norm.data<T>(), c, inv_c, s, grad_query.data<T>());
      ATTN_CUDA_CHECK_LAUNCH("multi_dim_attention_backward");
    }
    if (nk_elems > 0) {
      ATTN_CUDA_LAUNCH(cuda::blocks_for(nk_elems), cuda::kThreads, 0, cuda::stream(), grad_key_kernel<T>)(
          grad.data<T>(), query.data<T>(), key.data<T>(), values.data<T>(), mask.data<uint8_t>(), out.data<T>(),
          log_norm.data<T>(), c, inv_c, s, grad_key.data<T>(), grad_values.data<T>());
      ATTN_CUDA_CHECK_LAUNCH("multi_dim_attention_backward");
    }
  });
}

}  // namespace attn

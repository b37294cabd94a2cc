// CUDA kernels of the separable attention. Forward: one thread per output
// element (g, j, l), features fastest (coalesced reads of s and v), two passes
// over the allowed keys (the maximum, then the shifted sums). Backward: one
// kernel per key element (g, i, l) for grad_s and grad_v, one per pair
// (g, j, i) for grad_a, each recomputing P from log_norm: no atomics, so
// results are deterministic.
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/separable_attention/separable_attention_kernels.h"

namespace attn {

namespace {

struct Sizes {
  int64_t G, nq, nk, d;
};

Sizes sizes_of(const Tensor& a, const Tensor& s) { return {a.size(0), a.size(1), a.size(2), s.size(2)}; }

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// Dropout's keep factor of pair (j, i) and feature l of key i (1 without dropout).
template <class T>
__device__ __forceinline__ T keep_factor(const T* kp, const T* kf, int64_t pair, int64_t key_elem) {
  return (kp ? kp[pair] : T(1)) * (kf ? kf[key_elem] : T(1));
}

template <class T>
__global__ void forward_kernel(const T* a, const T* s, const T* v, const uint8_t* allowed, const T* kp, const T* kf,
                               Sizes z, T* out, T* log_norm) {
  ATTN_CUDA_LOOP(idx, z.G * z.nq * z.d) {
    const int64_t l = idx % z.d, gj = idx / z.d, g = gj / z.nq;
    const uint8_t* row = allowed + gj * z.nk;
    const T* arow = a + gj * z.nk;
    T m = cuda::neg_inf<T>();
    for (int64_t i = 0; i < z.nk; ++i)
      if (row[i]) m = fmax(m, arow[i] + s[(g * z.nk + i) * z.d + l]);
    T sum = 0, acc = 0;
    for (int64_t i = 0; i < z.nk; ++i) {
      if (!row[i]) continue;
      const int64_t key = (g * z.nk + i) * z.d + l;
      const T e = exp(arow[i] + s[key] - m);
      sum += e;
      acc += e * keep_factor(kp, kf, gj * z.nk + i, key) * v[key];
    }
    const bool empty_row = sum == T(0);
    out[idx] = empty_row ? T(0) : acc / sum;
    log_norm[idx] = empty_row ? T(0) : m + log(sum);
  }
}

template <class T>
__global__ void grad_keys_kernel(const T* grad, const T* a, const T* s, const T* v, const uint8_t* allowed,
                                 const T* kp, const T* kf, const T* out, const T* log_norm, Sizes z, T* gs, T* gv) {
  ATTN_CUDA_LOOP(key, z.G * z.nk * z.d) {
    const int64_t l = key % z.d, gi = key / z.d, g = gi / z.nk, i = gi % z.nk;
    T sum_s = 0, sum_v = 0;
    for (int64_t j = 0; j < z.nq; ++j) {
      const int64_t pair = (g * z.nq + j) * z.nk + i;
      if (!allowed[pair]) continue;
      const int64_t q = (g * z.nq + j) * z.d + l;
      const T pg = exp(a[pair] + s[key] - log_norm[q]) * grad[q];
      const T w = keep_factor(kp, kf, pair, key);
      sum_v += pg * w;
      sum_s += pg * (w * v[key] - out[q]);
    }
    gs[key] = sum_s;
    gv[key] = sum_v;
  }
}

template <class T>
__global__ void grad_pairs_kernel(const T* grad, const T* a, const T* s, const T* v, const uint8_t* allowed,
                                  const T* kp, const T* kf, const T* out, const T* log_norm, Sizes z, T* ga) {
  ATTN_CUDA_LOOP(pair, z.G * z.nq * z.nk) {
    if (!allowed[pair]) {
      ga[pair] = T(0);
      continue;
    }
    const int64_t i = pair % z.nk, gj = pair / z.nk, g = gj / z.nq;
    T sum = 0;
    for (int64_t l = 0; l < z.d; ++l) {
      const int64_t key = (g * z.nk + i) * z.d + l, q = gj * z.d + l;
      const T pg = exp(a[pair] + s[key] - log_norm[q]) * grad[q];
      sum += pg * (keep_factor(kp, kf, pair, key) * v[key] - out[q]);
    }
    ga[pair] = sum;
  }
}

}  // namespace

void separable_attention_forward_cuda(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                                      const Tensor& keep_pairs, const Tensor& keep_features, const Tensor& out,
                                      const Tensor& log_norm) {
  dispatch_floating(a.dtype(), "separable_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(a, s);
    const int64_t n = z.G * z.nq * z.d;
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), forward_kernel<T>)(
        a.data<T>(), s.data<T>(), v.data<T>(), allowed.data<uint8_t>(), data_or_null<T>(keep_pairs),
        data_or_null<T>(keep_features), z, out.data<T>(), log_norm.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("separable_attention");
  });
}

void separable_attention_backward_cuda(const Tensor& grad, const Tensor& a, const Tensor& s, const Tensor& v,
                                       const Tensor& allowed, const Tensor& keep_pairs, const Tensor& keep_features,
                                       const Tensor& out, const Tensor& log_norm, const Tensor& grad_a,
                                       const Tensor& grad_s, const Tensor& grad_v) {
  dispatch_floating(a.dtype(), "separable_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Sizes z = sizes_of(a, s);
    const T *kp = data_or_null<T>(keep_pairs), *kf = data_or_null<T>(keep_features);
    const int64_t keys = z.G * z.nk * z.d, pairs = z.G * z.nq * z.nk;
    if (keys > 0) {
      ATTN_CUDA_LAUNCH(cuda::blocks_for(keys), cuda::kThreads, 0, cuda::stream(), grad_keys_kernel<T>)(
          grad.data<T>(), a.data<T>(), s.data<T>(), v.data<T>(), allowed.data<uint8_t>(), kp, kf, out.data<T>(),
          log_norm.data<T>(), z, grad_s.data<T>(), grad_v.data<T>());
      ATTN_CUDA_CHECK_LAUNCH("separable_attention_backward");
    }
    if (pairs > 0) {
      ATTN_CUDA_LAUNCH(cuda::blocks_for(pairs), cuda::kThreads, 0, cuda::stream(), grad_pairs_kernel<T>)(
          grad.data<T>(), a.data<T>(), s.data<T>(), v.data<T>(), allowed.data<uint8_t>(), kp, kf, out.data<T>(),
          log_norm.data<T>(), z, grad_a.data<T>());
      ATTN_CUDA_CHECK_LAUNCH("separable_attention_backward");
    }
  });
}

}  // namespace attn

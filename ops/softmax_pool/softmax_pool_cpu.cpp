// CPU kernels of the softmax pooling. Every (example, feature) softmax is
// independent, so tasks are (example, block of features), each owning its
// slice of every output: no atomics, and the result does not depend on the
// thread count (the blocks depend on the shape only). Each task runs over
// the example's tokens with the features innermost (contiguous, vectorised):
// the max over valid tokens, the exps and the weighted sum, then the
// weights normalised in place (a task's weights stay in cache). float32
// takes vector_math's exp in SIMD clones; float64 the C library's.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/softmax_pool/softmax_pool_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

// A task's features: the whole row (up to kMaxFeatures) when the batch has
// examples enough to keep every thread busy, so that a task reads whole
// token rows, which the prefetcher follows (64-feature slices of 300-wide
// rows are 256 bytes 1200 apart: [64, 64, 300] ran 10-20% faster whole,
// out of cache); else slices of kSliceFeatures, more tasks for few examples.
constexpr int64_t kMaxFeatures = 512;
constexpr int64_t kSliceFeatures = 64;
constexpr int64_t kWholeRowMinExamples = 16;

int64_t task_features(int64_t B, int64_t d) {
  return B >= kWholeRowMinExamples && d <= kMaxFeatures ? std::max<int64_t>(d, 1) : kSliceFeatures;
}

template <class T>
struct Pool {
  int64_t B, n, d;
  const T *scores, *values;
  const uint8_t* mask;  // null: every token valid
  T *out, *probs;       // probs null: not kept
  const T* grad;
  T *grad_scores, *grad_values;

  bool valid(int64_t b, int64_t t) const { return mask == nullptr || mask[b * n + t] != 0; }
  int64_t row(int64_t b, int64_t t) const { return (b * n + t) * d; }
};

template <class F>
void for_each_task(int64_t B, int64_t n, int64_t d, const F& task) {
  const int64_t width = task_features(B, d);
  const int64_t blocks = (d + width - 1) / width;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * width));
  parallel_for(B * blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / blocks, f0 = (t % blocks) * width;
      task(b, f0, std::min(d, f0 + width));
    }
  });
}

template <class T>
ATTN_SIMD_CLONES void forward_task(const Pool<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const int64_t w = f1 - f0;
  const T lowest = -std::numeric_limits<T>::infinity();
  T top[kMaxFeatures], z[kMaxFeatures], acc[kMaxFeatures];
  for (int64_t f = 0; f < w; ++f) top[f] = lowest, z[f] = T(0), acc[f] = T(0);
  for (int64_t t = 0; t < p.n; ++t) {
    if (!p.valid(b, t)) continue;
    const T* __restrict s = p.scores + p.row(b, t) + f0;
    // A NaN score wins, so that it reaches the output (anomaly detection
    // looks for it there) rather than leaving the max at -inf (an example
    // whose weights are all 0).
    for (int64_t f = 0; f < w; ++f) top[f] = s[f] > top[f] || vector_math::is_nan(s[f]) ? s[f] : top[f];
  }
  for (int64_t t = 0; t < p.n; ++t) {
    if (!p.valid(b, t)) continue;
    const T* __restrict s = p.scores + p.row(b, t) + f0;
    const T* __restrict v = p.values + p.row(b, t) + f0;
    T* __restrict e_out = p.probs ? p.probs + p.row(b, t) + f0 : nullptr;
#pragma omp simd
    for (int64_t f = 0; f < w; ++f) {
      const T e = vector_math::exp(s[f] - top[f]);
      z[f] += e;
      acc[f] += e * v[f];
      if (e_out) e_out[f] = e;
    }
  }
  // No valid finite score (top still -inf): every weight is 0. Otherwise
  // z >= 1, the max contributing e^0.
  T* __restrict out = p.out + b * p.d + f0;
  for (int64_t f = 0; f < w; ++f) out[f] = top[f] == lowest ? T(0) : acc[f] / z[f];
  if (!p.probs) return;
  T inv[kMaxFeatures];
  for (int64_t f = 0; f < w; ++f) inv[f] = T(1) / z[f];
  for (int64_t t = 0; t < p.n; ++t) {
    T* __restrict probs = p.probs + p.row(b, t) + f0;
    if (!p.valid(b, t)) {
      std::fill(probs, probs + w, T(0));
      continue;
    }
#pragma omp simd
    for (int64_t f = 0; f < w; ++f) probs[f] = top[f] == lowest ? T(0) : probs[f] * inv[f];
  }
}

template <class T>
ATTN_SIMD_CLONES void backward_task(const Pool<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const int64_t w = f1 - f0;
  const T* __restrict g = p.grad + b * p.d + f0;
  const T* __restrict o = p.out + b * p.d + f0;
  for (int64_t t = 0; t < p.n; ++t) {
    T* __restrict ds = p.grad_scores + p.row(b, t) + f0;
    T* __restrict dv = p.grad_values + p.row(b, t) + f0;
    if (!p.valid(b, t)) {  // selected out: a NaN value there must not reach ds
      std::fill(ds, ds + w, T(0));
      std::fill(dv, dv + w, T(0));
      continue;
    }
    const T* __restrict probs = p.probs + p.row(b, t) + f0;
    const T* __restrict v = p.values + p.row(b, t) + f0;
#pragma omp simd
    for (int64_t f = 0; f < w; ++f) {
      const T gp = g[f] * probs[f];
      dv[f] = gp;
      ds[f] = gp * (v[f] - o[f]);
    }
  }
}

template <class T>
Pool<T> pool_of(const Tensor& values, const Tensor& mask, const Tensor& out, const Tensor& probs) {
  Pool<T> p{};
  p.B = values.size(0);
  p.n = values.size(1);
  p.d = values.size(2);
  p.values = values.data<T>();
  p.mask = mask.defined() ? mask.data<uint8_t>() : nullptr;
  p.out = out.data<T>();
  p.probs = probs.defined() ? probs.data<T>() : nullptr;
  return p;
}

}  // namespace

void softmax_pool_cpu(const Tensor& scores, const Tensor& values, const Tensor& mask, const Tensor& out,
                      const Tensor& probs) {
  dispatch_floating(scores.dtype(), "softmax_pool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Pool<T> p = pool_of<T>(values, mask, out, probs);
    p.scores = scores.data<T>();
    for_each_task(p.B, p.n, p.d, [&p](int64_t b, int64_t f0, int64_t f1) { forward_task(p, b, f0, f1); });
  });
}

void softmax_pool_backward_cpu(const Tensor& grad, const Tensor& probs, const Tensor& values, const Tensor& mask,
                               const Tensor& out, const Tensor& grad_scores, const Tensor& grad_values) {
  dispatch_floating(values.dtype(), "softmax_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Pool<T> p = pool_of<T>(values, mask, out, probs);
    p.grad = grad.data<T>();
    p.grad_scores = grad_scores.data<T>();
    p.grad_values = grad_values.data<T>();
    for_each_task(p.B, p.n, p.d, [&p](int64_t b, int64_t f0, int64_t f1) { backward_task(p, b, f0, f1); });
  });
}

}  // namespace attn

// CPU kernels of the fused multi-dimensional attention. Every feature f is an
// independent softmax, so the work splits into tasks of (batch b, a block of
// features): each task owns its slice of every output, so tasks run in
// parallel without atomics and the result does not depend on the thread
// count. Inner loops run over the contiguous features of a block and are
// compiled for AVX2 as well as the baseline (ATTN_SIMD_CLONES).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/multi_dim_attention_kernels.h"
#include "attn/ops/vector_math.h"

namespace attn {

namespace {

// Features per task: enough for the inner loops to vectorise, few enough
// that one task's score rows (nk x block) stay in cache.
constexpr int64_t kFeatureBlock = 64;

struct Dims {
  int64_t B, nq, nk, d, blocks;
};

Dims dims_of(const Tensor& query, const Tensor& key) {
  Dims s{query.size(0), query.size(1), key.size(1), query.size(2), 0};
  s.blocks = (s.d + kFeatureBlock - 1) / kFeatureBlock;
  return s;
}

// Runs task(b, f0, f1) for every (batch, feature block) in parallel.
template <class F>
void for_each_task(const Dims& s, const F& task) {
  const int64_t work_per_task = std::max<int64_t>(1, s.nq * s.nk * std::min(s.d, kFeatureBlock));
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / work_per_task);
  parallel_for(s.B * s.blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / s.blocks, f0 = (t % s.blocks) * kFeatureBlock;
      task(b, f0, std::min(s.d, f0 + kFeatureBlock));
    }
  });
}

// The keys query i of batch b may attend to.
void valid_keys(const uint8_t* mask_row, int64_t nk, std::vector<int64_t>& keys) {
  keys.clear();
  for (int64_t j = 0; j < nk; ++j)
    if (mask_row[j]) keys.push_back(j);
}

// The scores of one query row against its valid keys (into `scores`, one
// row of w per key) and their per-feature max.
template <class T>
inline __attribute__((always_inline)) void score_row(int64_t w, T c, T inv_c, const T* __restrict q,
                                                      const T* __restrict k, T* __restrict scores,
                                                      T* __restrict mx) {
  for (int64_t f = 0; f < w; ++f) {
    const T l = c * vector_math::tanh((q[f] + k[f]) * inv_c);
    scores[f] = l;
    mx[f] = mx[f] < l ? l : mx[f];
  }
}

// Adds one key's softmax weights and weighted values to the running sums.
template <class T>
inline __attribute__((always_inline)) void accumulate_row(int64_t w, const T* __restrict scores,
                                                           const T* __restrict mx, const T* __restrict v,
                                                           T* __restrict z, T* __restrict acc) {
  for (int64_t f = 0; f < w; ++f) {
    const T e = vector_math::exp(scores[f] - mx[f]);
    z[f] += e;
    acc[f] += e * v[f];
  }
}

// The backward terms of one (query row, key row) pair over w features.
template <class T>
inline __attribute__((always_inline)) void backward_pair(int64_t w, T c, T inv_c, const T* __restrict q,
                                                          const T* __restrict g, const T* __restrict o,
                                                          const T* __restrict log_norm, const T* __restrict k,
                                                          const T* __restrict v, T* __restrict dq,
                                                          T* __restrict dk, T* __restrict dv) {
  for (int64_t f = 0; f < w; ++f) {
    const T t = vector_math::tanh((q[f] + k[f]) * inv_c);
    const T gp = g[f] * vector_math::exp(c * t - log_norm[f]);  // grad * P
    dv[f] += gp;
    const T dpre = gp * (v[f] - o[f]) * (T(1) - t * t);
    dq[f] += dpre;
    dk[f] += dpre;
  }
}

// Everything a task needs, by value, so the loops see no aliasing.
template <class T>
struct Operands {
  Dims s;
  T c, inv_c;
  const T *q, *k, *v, *g, *o, *log_norm;
  const uint8_t* mask;
  T *out, *out_log_norm, *dq, *dk, *dv;
};

template <class T>
ATTN_SIMD_CLONES void forward_task(const Operands<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const Dims& s = p.s;
  const int64_t w = f1 - f0;
  std::vector<int64_t> keys;
  std::vector<T> scores(static_cast<size_t>(s.nk * w)), mx(w), z(w), acc(w);
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    if (keys.empty()) {
      std::fill(p.out + row, p.out + row + w, T(0));
      std::fill(p.out_log_norm + row, p.out_log_norm + row + w, T(0));
      continue;
    }
    std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
    for (size_t a = 0; a < keys.size(); ++a)
      score_row(w, p.c, p.inv_c, p.q + row, p.k + (b * s.nk + keys[a]) * s.d + f0, scores.data() + a * w,
                mx.data());
    std::fill(z.begin(), z.end(), T(0));
    std::fill(acc.begin(), acc.end(), T(0));
    for (size_t a = 0; a < keys.size(); ++a)
      accumulate_row(w, scores.data() + a * w, mx.data(), p.v + (b * s.nk + keys[a]) * s.d + f0, z.data(),
                     acc.data());
    // z >= 1: the largest score contributes exp(0).
    for (int64_t f = 0; f < w; ++f) {
      p.out[row + f] = acc[f] / z[f];
      p.out_log_norm[row + f] = mx[f] + std::log(z[f]);
    }
  }
}

template <class T>
ATTN_SIMD_CLONES void backward_task(const Operands<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const Dims& s = p.s;
  const int64_t w = f1 - f0;
  for (int64_t j = 0; j < s.nk; ++j) {
    const int64_t row = (b * s.nk + j) * s.d + f0;
    std::fill(p.dk + row, p.dk + row + w, T(0));
    std::fill(p.dv + row, p.dv + row + w, T(0));
  }
  std::vector<int64_t> keys;
  std::vector<T> dq(w);
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    std::fill(dq.begin(), dq.end(), T(0));
    for (int64_t j : keys) {
      const int64_t key_row = (b * s.nk + j) * s.d + f0;
      backward_pair(w, p.c, p.inv_c, p.q + row, p.g + row, p.o + row, p.log_norm + row, p.k + key_row,
                    p.v + key_row, dq.data(), p.dk + key_row, p.dv + key_row);
    }
    std::copy(dq.begin(), dq.end(), p.dq + row);
  }
}

template <class T>
Operands<T> operands(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask,
                     double scale_c) {
  Operands<T> p{};
  p.s = dims_of(query, key);
  p.c = static_cast<T>(scale_c);
  p.inv_c = static_cast<T>(1.0 / scale_c);
  p.q = query.data<T>();
  p.k = key.data<T>();
  p.v = values.data<T>();
  p.mask = mask.data<uint8_t>();
  return p;
}

}  // namespace

void multi_dim_attention_forward_cpu(const Tensor& query, const Tensor& key, const Tensor& values,
                                     const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm) {
  dispatch_floating(query.dtype(), "multi_dim_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Operands<T> p = operands<T>(query, key, values, mask, scale_c);
    p.out = out.data<T>();
    p.out_log_norm = log_norm.data<T>();
    for_each_task(p.s, [&p](int64_t b, int64_t f0, int64_t f1) { forward_task(p, b, f0, f1); });
  });
}

void multi_dim_attention_backward_cpu(const Tensor& grad, const Tensor& query, const Tensor& key,
                                      const Tensor& values, const Tensor& mask, double scale_c, const Tensor& out,
                                      const Tensor& log_norm, const Tensor& grad_query, const Tensor& grad_key,
                                      const Tensor& grad_values) {
  dispatch_floating(query.dtype(), "multi_dim_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    Operands<T> p = operands<T>(query, key, values, mask, scale_c);
    p.g = grad.data<T>();
    p.o = out.data<T>();
    p.log_norm = log_norm.data<T>();
    p.dq = grad_query.data<T>();
    p.dk = grad_key.data<T>();
    p.dv = grad_values.data<T>();
    for_each_task(p.s, [&p](int64_t b, int64_t f0, int64_t f1) { backward_task(p, b, f0, f1); });
  });
}

}  // namespace attn

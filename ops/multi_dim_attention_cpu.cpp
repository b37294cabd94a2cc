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

// The score of a pair is l = c tanh(u), u = (q + k) / c. These kernels use
// it through a = 2u and r = 1 / (1 + e^a):
//   tanh(u) = 1 - 2r, so l = c - 2c r and two scores differ by 2c (r' - r);
//   1 - tanh(u)^2 = 4 e^a r^2, with no cancellation where tanh saturates.
// That is one exp and one division per score, with no tanh polynomial and
// no score buffer: the softmax shift is the row's largest score, which sits
// at the largest key value (tanh is increasing), so it costs a max over keys.
// |a| is clamped to 60: tanh(30) rounds to 1 in float64 as well, and
// e^60 r^2 stays a normal number. The clamp turns NaN into a number, so the
// callers select NaN back in.
template <class T>
struct Logistic {
  T e, r;  // e^a and 1 / (1 + e^a)
};

template <class T>
inline __attribute__((always_inline)) Logistic<T> logistic_of(T a) {
  const T above = a > T(-60) ? a : T(-60);
  const T e = vector_math::exp_in_range(above < T(60) ? above : T(60));
  return {e, T(1) / (T(1) + e)};
}

// e^x for a shifted score x <= 0; below the normal range the weight is e^lo,
// a vanishing weight next to the shift's own e^0 = 1.
template <class T>
inline __attribute__((always_inline)) T exp_of_shifted(T x) {
  const T lo = vector_math::lowest_normal_exp_arg(T(0));
  return vector_math::exp_in_range(x > lo ? x : lo);
}

// r of each feature's largest score in a query row: the row's softmax shift.
template <class T>
inline __attribute__((always_inline)) void shift_row(int64_t w, T two_inv_c, const T* __restrict q,
                                                      const T* __restrict key_max, T* __restrict r_max) {
  for (int64_t f = 0; f < w; ++f) r_max[f] = logistic_of((q[f] + key_max[f]) * two_inv_c).r;
}

// Adds one key's softmax weights e^(l - l_max) and weighted values to the
// running sums. The key of the largest score gives exactly e^0 = 1 (the same
// a, so the same r), hence z >= 1.
template <class T>
inline __attribute__((always_inline)) void accumulate_row(int64_t w, T two_c, T two_inv_c, const T* __restrict q,
                                                           const T* __restrict k, const T* __restrict r_max,
                                                           const T* __restrict v, T* __restrict z,
                                                           T* __restrict acc) {
  for (int64_t f = 0; f < w; ++f) {
    const T a = (q[f] + k[f]) * two_inv_c;
    const T e = exp_of_shifted(two_c * (r_max[f] - logistic_of(a).r));
    const T weight = vector_math::is_nan(a) ? a : e;
    z[f] += weight;
    acc[f] += weight * v[f];
  }
}

// The backward terms of one (query row, key row) pair over w features;
// shift = c - log_norm, so shift - 2c r = l - log_norm = log P.
template <class T>
inline __attribute__((always_inline)) void backward_pair(int64_t w, T two_c, T two_inv_c, const T* __restrict q,
                                                          const T* __restrict g, const T* __restrict o,
                                                          const T* __restrict shift, const T* __restrict k,
                                                          const T* __restrict v, T* __restrict dq,
                                                          T* __restrict dk, T* __restrict dv) {
  for (int64_t f = 0; f < w; ++f) {
    const Logistic<T> s = logistic_of((q[f] + k[f]) * two_inv_c);
    const T log_p = shift[f] - two_c * s.r;
    // A NaN operand of this pair made the forward's log_norm NaN.
    const T gp = g[f] * (vector_math::is_nan(log_p) ? log_p : exp_of_shifted(log_p));
    dv[f] += gp;
    const T dpre = gp * (v[f] - o[f]) * (T(4) * s.e * s.r * s.r);
    dq[f] += dpre;
    dk[f] += dpre;
  }
}

// Everything a task needs, by value, so the loops see no aliasing.
template <class T>
struct Operands {
  Dims s;
  T c, two_c, two_inv_c;
  const T *q, *k, *v, *g, *o, *log_norm;
  const uint8_t* mask;
  T *out, *out_log_norm, *dq, *dk, *dv;
};

template <class T>
ATTN_SIMD_CLONES void forward_task(const Operands<T>& p, int64_t b, int64_t f0, int64_t f1) {
  const Dims& s = p.s;
  const int64_t w = f1 - f0;
  std::vector<int64_t> keys;
  std::vector<T> key_max(w), r_max(w), z(w), acc(w);
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    if (keys.empty()) {
      std::fill(p.out + row, p.out + row + w, T(0));
      std::fill(p.out_log_norm + row, p.out_log_norm + row + w, T(0));
      continue;
    }
    std::fill(key_max.begin(), key_max.end(), -std::numeric_limits<T>::infinity());
    for (int64_t j : keys) {
      const T* k = p.k + (b * s.nk + j) * s.d + f0;
      for (int64_t f = 0; f < w; ++f) key_max[f] = key_max[f] < k[f] ? k[f] : key_max[f];
    }
    shift_row(w, p.two_inv_c, p.q + row, key_max.data(), r_max.data());
    std::fill(z.begin(), z.end(), T(0));
    std::fill(acc.begin(), acc.end(), T(0));
    for (int64_t j : keys) {
      const int64_t key_row = (b * s.nk + j) * s.d + f0;
      accumulate_row(w, p.two_c, p.two_inv_c, p.q + row, p.k + key_row, r_max.data(), p.v + key_row, z.data(),
                     acc.data());
    }
    for (int64_t f = 0; f < w; ++f) {
      p.out[row + f] = acc[f] / z[f];
      p.out_log_norm[row + f] = (p.c - p.two_c * r_max[f]) + std::log(z[f]);  // l_max + log z
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
  std::vector<T> dq(w), shift(w);
  for (int64_t i = 0; i < s.nq; ++i) {
    const int64_t row = (b * s.nq + i) * s.d + f0;
    valid_keys(p.mask + (b * s.nq + i) * s.nk, s.nk, keys);
    std::fill(dq.begin(), dq.end(), T(0));
    for (int64_t f = 0; f < w; ++f) shift[f] = p.c - p.log_norm[row + f];
    for (int64_t j : keys) {
      const int64_t key_row = (b * s.nk + j) * s.d + f0;
      backward_pair(w, p.two_c, p.two_inv_c, p.q + row, p.g + row, p.o + row, shift.data(), p.k + key_row,
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
  p.two_c = static_cast<T>(2 * scale_c);
  p.two_inv_c = static_cast<T>(2 / scale_c);
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

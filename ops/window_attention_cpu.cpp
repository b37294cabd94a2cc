// CPU kernels of the fused window attention. Every group g (example x head) is
// independent, so tasks are groups: each owns its slice of every output, the
// backward accumulates grad_k and grad_v without atomics, and the result does
// not depend on the thread count. Inner loops run over the contiguous
// features; the only scratch is one row of W scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/window_attention_kernels.h"

namespace attn {

namespace {

struct Dims {
  int64_t G, heads, n, d, W, R;
};

Dims dims_of(const Tensor& q, const Tensor& allowed) {
  const int64_t W = allowed.size(2);
  return {q.size(0) * q.size(1), q.size(1), q.size(2), q.size(3), W, (W - 1) / 2};
}

template <class F>
void for_each_group(const Dims& s, const F& task) {
  const int64_t work = std::max<int64_t>(1, s.n * s.W * s.d);
  parallel_for(s.G, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) task(g);
  });
}

// The band offsets t of query j whose key j - R + t lies inside [0, n).
struct Band {
  int64_t lo, hi;  // t in [lo, hi)
};
Band band_of(const Dims& s, int64_t j) {
  return {std::max<int64_t>(0, s.R - j), std::min<int64_t>(s.W, s.n - j + s.R)};
}

template <class T>
T dot(const T* a, const T* b, int64_t d) {
  T s = 0;
  for (int64_t l = 0; l < d; ++l) s += a[l] * b[l];
  return s;
}

template <class T>
void forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed, double scale,
             const Tensor& out, const Tensor& probabilities) {
  const Dims s = dims_of(q, allowed);
  const T sc = static_cast<T>(scale);
  for_each_group(s, [&](int64_t g) {
    const T *qg = q.data<T>() + g * s.n * s.d, *kg = k.data<T>() + g * s.n * s.d, *vg = v.data<T>() + g * s.n * s.d;
    const uint8_t* mg = allowed.data<uint8_t>() + (g / s.heads) * s.n * s.W;
    T* og = out.data<T>() + g * s.n * s.d;
    T* pg = probabilities.data<T>() + g * s.n * s.W;
    for (int64_t j = 0; j < s.n; ++j) {
      const uint8_t* ok = mg + j * s.W;
      T* p = pg + j * s.W;
      T* o = og + j * s.d;
      std::fill(p, p + s.W, T(0));
      std::fill(o, o + s.d, T(0));
      const Band b = band_of(s, j);
      // Scores of the allowed keys (kept in p), and their maximum.
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t t = b.lo; t < b.hi; ++t) {
        if (!ok[t]) continue;
        p[t] = sc * dot(qg + j * s.d, kg + (j - s.R + t) * s.d, s.d);
        m = std::max(m, p[t]);
      }
      if (m == -std::numeric_limits<T>::infinity()) continue;  // no allowed key: zeros
      T z = 0;
      for (int64_t t = b.lo; t < b.hi; ++t)
        if (ok[t]) z += (p[t] = std::exp(p[t] - m));  // the largest is exactly 1, so z >= 1
      const T inv = T(1) / z;
      for (int64_t t = b.lo; t < b.hi; ++t) {
        if (!ok[t]) continue;
        p[t] *= inv;
        const T* vi = vg + (j - s.R + t) * s.d;
        for (int64_t l = 0; l < s.d; ++l) o[l] += p[t] * vi[l];
      }
    }
  });
}

template <class T>
void backward(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
              const Tensor& probabilities, double scale, const Tensor& grad_q, const Tensor& grad_k,
              const Tensor& grad_v) {
  const Dims s = dims_of(q, allowed);
  const T sc = static_cast<T>(scale);
  for_each_group(s, [&](int64_t g) {
    const int64_t base = g * s.n * s.d;
    const T *qg = q.data<T>() + base, *kg = k.data<T>() + base, *vg = v.data<T>() + base;
    const T* gg = grad.data<T>() + base;
    const T* pg = probabilities.data<T>() + g * s.n * s.W;
    const uint8_t* mg = allowed.data<uint8_t>() + (g / s.heads) * s.n * s.W;
    T *gq = grad_q.data<T>() + base, *gk = grad_k.data<T>() + base, *gv = grad_v.data<T>() + base;
    std::fill(gq, gq + s.n * s.d, T(0));
    std::fill(gk, gk + s.n * s.d, T(0));
    std::fill(gv, gv + s.n * s.d, T(0));
    std::vector<T> dp(static_cast<size_t>(s.W));
    for (int64_t j = 0; j < s.n; ++j) {
      const uint8_t* ok = mg + j * s.W;
      const T* p = pg + j * s.W;
      const T *gj = gg + j * s.d, *qj = qg + j * s.d;
      T* gqj = gq + j * s.d;
      const Band b = band_of(s, j);
      // dP and sum_t P dP (= grad[j] . out[j]) over the allowed keys.
      T delta = 0;
      for (int64_t t = b.lo; t < b.hi; ++t) {
        if (!ok[t]) continue;
        const int64_t i = j - s.R + t;
        dp[t] = dot(gj, vg + i * s.d, s.d);
        delta += p[t] * dp[t];
      }
      for (int64_t t = b.lo; t < b.hi; ++t) {
        if (!ok[t]) continue;
        const int64_t i = j - s.R + t;
        const T ds = sc * p[t] * (dp[t] - delta);
        const T *ki = kg + i * s.d;
        T *gki = gk + i * s.d, *gvi = gv + i * s.d;
        for (int64_t l = 0; l < s.d; ++l) {
          gqj[l] += ds * ki[l];
          gki[l] += ds * qj[l];
          gvi[l] += p[t] * gj[l];
        }
      }
    }
  });
}

}  // namespace

void window_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                  double scale, const Tensor& out, const Tensor& probabilities) {
  dispatch_floating(q.dtype(), "window_attention", [&](auto tag) {
    forward<typename decltype(tag)::type>(q, k, v, allowed, scale, out, probabilities);
  });
}

void window_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& allowed, const Tensor& probabilities, double scale,
                                   const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  dispatch_floating(q.dtype(), "window_attention_backward", [&](auto tag) {
    backward<typename decltype(tag)::type>(grad, q, k, v, allowed, probabilities, scale, grad_q, grad_k, grad_v);
  });
}

}  // namespace attn

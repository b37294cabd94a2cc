// CPU kernels of the fused window attention. Every group g (example x head) is
// independent, so tasks are groups: each owns its slice of every output, the
// backward accumulates grad_k and grad_v without atomics, and the result does
// not depend on the thread count. Inner loops run over the contiguous
// features of rows found through the operands' strides (HeadRows); the only
// scratch is one row of W scores.
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
  bool per_head_mask;
};

Dims dims_of(const Tensor& q, const Tensor& allowed) {
  const int64_t W = allowed.size(allowed.dim() - 1);
  return {q.size(0) * q.size(1), q.size(1), q.size(2), q.size(3), W, (W - 1) / 2, allowed.dim() == 4};
}

// The band mask rows of head g: its own, or its example's.
const uint8_t* mask_of(const Tensor& allowed, const Dims& s, int64_t g) {
  return allowed.data<uint8_t>() + (s.per_head_mask ? g : g / s.heads) * s.n * s.W;
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
    const int64_t b = g / s.heads, c = g % s.heads;
    const HeadRows qa = head_rows(q), ka = head_rows(k), va = head_rows(v), oa = head_rows(out);
    const T *qg = q.data<T>(), *kg = k.data<T>(), *vg = v.data<T>();
    const uint8_t* mg = mask_of(allowed, s, g);
    T* pg = probabilities.data<T>() + g * s.n * s.W;
    for (int64_t j = 0; j < s.n; ++j) {
      const uint8_t* ok = mg + j * s.W;
      T* p = pg + j * s.W;
      T* o = out.data<T>() + oa.at(b, c, j);
      std::fill(p, p + s.W, T(0));
      std::fill(o, o + s.d, T(0));
      const Band band = band_of(s, j);
      // Scores of the allowed keys (kept in p), and their maximum.
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t t = band.lo; t < band.hi; ++t) {
        if (!ok[t]) continue;
        p[t] = sc * dot(qg + qa.at(b, c, j), kg + ka.at(b, c, j - s.R + t), s.d);
        m = std::max(m, p[t]);
      }
      if (m == -std::numeric_limits<T>::infinity()) continue;  // no allowed key: zeros
      T z = 0;
      for (int64_t t = band.lo; t < band.hi; ++t)
        if (ok[t]) z += (p[t] = std::exp(p[t] - m));  // the largest is exactly 1, so z >= 1
      const T inv = T(1) / z;
      for (int64_t t = band.lo; t < band.hi; ++t) {
        if (!ok[t]) continue;
        p[t] *= inv;
        const T* vi = vg + va.at(b, c, j - s.R + t);
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
    const int64_t b = g / s.heads, c = g % s.heads;
    const HeadRows qa = head_rows(q), ka = head_rows(k), va = head_rows(v), ga = head_rows(grad);
    const HeadRows dqa = head_rows(grad_q), dka = head_rows(grad_k), dva = head_rows(grad_v);
    const T *qg = q.data<T>(), *kg = k.data<T>(), *vg = v.data<T>(), *gg = grad.data<T>();
    const T* pg = probabilities.data<T>() + g * s.n * s.W;
    const uint8_t* mg = mask_of(allowed, s, g);
    T *gq = grad_q.data<T>(), *gk = grad_k.data<T>(), *gv = grad_v.data<T>();
    for (int64_t j = 0; j < s.n; ++j) {
      std::fill(gq + dqa.at(b, c, j), gq + dqa.at(b, c, j) + s.d, T(0));
      std::fill(gk + dka.at(b, c, j), gk + dka.at(b, c, j) + s.d, T(0));
      std::fill(gv + dva.at(b, c, j), gv + dva.at(b, c, j) + s.d, T(0));
    }
    std::vector<T> dp(static_cast<size_t>(s.W));
    for (int64_t j = 0; j < s.n; ++j) {
      const uint8_t* ok = mg + j * s.W;
      const T* p = pg + j * s.W;
      const T *gj = gg + ga.at(b, c, j), *qj = qg + qa.at(b, c, j);
      T* gqj = gq + dqa.at(b, c, j);
      const Band band = band_of(s, j);
      // dP and sum_t P dP (= grad[j] . out[j]) over the allowed keys.
      T delta = 0;
      for (int64_t t = band.lo; t < band.hi; ++t) {
        if (!ok[t]) continue;
        dp[t] = dot(gj, vg + va.at(b, c, j - s.R + t), s.d);
        delta += p[t] * dp[t];
      }
      for (int64_t t = band.lo; t < band.hi; ++t) {
        if (!ok[t]) continue;
        const int64_t i = j - s.R + t;
        const T ds = sc * p[t] * (dp[t] - delta);
        const T* ki = kg + ka.at(b, c, i);
        T *gki = gk + dka.at(b, c, i), *gvi = gv + dva.at(b, c, i);
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

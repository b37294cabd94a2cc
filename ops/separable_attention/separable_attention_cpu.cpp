// CPU kernels of the separable attention. Every group g (batch x head) is
// independent, so tasks are groups: each owns its slice of every output, the
// backward accumulates without atomics, and the result does not depend on the
// thread count. Inner loops run over the contiguous features l.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/ops/separable_attention/separable_attention_kernels.h"

namespace attn {

namespace {

struct Dims {
  int64_t G, nq, nk, d;
};

Dims dims_of(const Tensor& a, const Tensor& s) { return {a.size(0), a.size(1), a.size(2), s.size(2)}; }

template <class F>
void for_each_group(const Dims& s, const F& task) {
  const int64_t work = std::max<int64_t>(1, s.nq * s.nk * s.d);
  parallel_for(s.G, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) task(g);
  });
}

// Typed views of one group's operands; keep factors are null when absent.
template <class T>
struct Group {
  const T *a, *s, *v, *kp, *kf;
  const uint8_t* allowed;
  Group(const Dims& d, int64_t g, const Tensor& ta, const Tensor& ts, const Tensor& tv, const Tensor& tm,
        const Tensor& tkp, const Tensor& tkf)
      : a(ta.data<T>() + g * d.nq * d.nk),
        s(ts.data<T>() + g * d.nk * d.d),
        v(tv.data<T>() + g * d.nk * d.d),
        kp(tkp.defined() ? tkp.data<T>() + g * d.nq * d.nk : nullptr),
        kf(tkf.defined() ? tkf.data<T>() + g * d.nk * d.d : nullptr),
        allowed(tm.data<uint8_t>() + g * d.nq * d.nk) {}
  T pair_keep(int64_t j, int64_t i, int64_t nk) const { return kp ? kp[j * nk + i] : T(1); }
};

void allowed_keys(const uint8_t* row, int64_t nk, std::vector<int64_t>& keys) {
  keys.clear();
  for (int64_t i = 0; i < nk; ++i)
    if (row[i]) keys.push_back(i);
}

template <class T>
void forward(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed, const Tensor& keep_pairs,
             const Tensor& keep_features, const Tensor& out, const Tensor& log_norm) {
  const Dims dm = dims_of(a, s);
  for_each_group(dm, [&](int64_t g) {
    const Group<T> gr(dm, g, a, s, v, allowed, keep_pairs, keep_features);
    std::vector<int64_t> keys;
    std::vector<T> mx(dm.d), z(dm.d), acc(dm.d);
    for (int64_t j = 0; j < dm.nq; ++j) {
      T* o = out.data<T>() + (g * dm.nq + j) * dm.d;
      T* ln = log_norm.data<T>() + (g * dm.nq + j) * dm.d;
      allowed_keys(gr.allowed + j * dm.nk, dm.nk, keys);
      if (keys.empty()) {
        std::fill(o, o + dm.d, T(0));
        std::fill(ln, ln + dm.d, T(0));
        continue;
      }
      // Pass 1: each feature's own maximum over the allowed keys.
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      for (int64_t i : keys) {
        const T aji = gr.a[j * dm.nk + i];
        const T* si = gr.s + i * dm.d;
        for (int64_t l = 0; l < dm.d; ++l) mx[l] = std::max(mx[l], aji + si[l]);
      }
      // Pass 2: shifted exponentials (the largest is exactly 1).
      std::fill(z.begin(), z.end(), T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      for (int64_t i : keys) {
        const T aji = gr.a[j * dm.nk + i], wp = gr.pair_keep(j, i, dm.nk);
        const T *si = gr.s + i * dm.d, *vi = gr.v + i * dm.d, *kfi = gr.kf ? gr.kf + i * dm.d : nullptr;
        for (int64_t l = 0; l < dm.d; ++l) {
          const T e = std::exp(aji + si[l] - mx[l]);
          z[l] += e;
          acc[l] += e * wp * (kfi ? kfi[l] : T(1)) * vi[l];
        }
      }
      for (int64_t l = 0; l < dm.d; ++l) {
        o[l] = acc[l] / z[l];
        ln[l] = mx[l] + std::log(z[l]);
      }
    }
  });
}

template <class T>
void backward(const Tensor& grad, const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
              const Tensor& keep_pairs, const Tensor& keep_features, const Tensor& out, const Tensor& log_norm,
              const Tensor& grad_a, const Tensor& grad_s, const Tensor& grad_v) {
  const Dims dm = dims_of(a, s);
  for_each_group(dm, [&](int64_t g) {
    const Group<T> gr(dm, g, a, s, v, allowed, keep_pairs, keep_features);
    T* ga = grad_a.data<T>() + g * dm.nq * dm.nk;
    T* gs = grad_s.data<T>() + g * dm.nk * dm.d;
    T* gv = grad_v.data<T>() + g * dm.nk * dm.d;
    std::fill(ga, ga + dm.nq * dm.nk, T(0));
    std::fill(gs, gs + dm.nk * dm.d, T(0));
    std::fill(gv, gv + dm.nk * dm.d, T(0));
    std::vector<int64_t> keys;
    for (int64_t j = 0; j < dm.nq; ++j) {
      allowed_keys(gr.allowed + j * dm.nk, dm.nk, keys);
      const T* gj = grad.data<T>() + (g * dm.nq + j) * dm.d;
      const T* oj = out.data<T>() + (g * dm.nq + j) * dm.d;
      const T* lj = log_norm.data<T>() + (g * dm.nq + j) * dm.d;
      for (int64_t i : keys) {
        const T aji = gr.a[j * dm.nk + i], wp = gr.pair_keep(j, i, dm.nk);
        const T *si = gr.s + i * dm.d, *vi = gr.v + i * dm.d, *kfi = gr.kf ? gr.kf + i * dm.d : nullptr;
        T* gsi = gs + i * dm.d;
        T* gvi = gv + i * dm.d;
        T ga_ji = 0;
        for (int64_t l = 0; l < dm.d; ++l) {
          const T p = std::exp(aji + si[l] - lj[l]);  // <= 1: log_norm includes this term
          const T w = wp * (kfi ? kfi[l] : T(1));
          const T pg = p * gj[l];
          gvi[l] += pg * w;
          const T df = pg * (w * vi[l] - oj[l]);
          gsi[l] += df;
          ga_ji += df;
        }
        ga[j * dm.nk + i] = ga_ji;
      }
    }
  });
}

}  // namespace

void separable_attention_forward_cpu(const Tensor& a, const Tensor& s, const Tensor& v, const Tensor& allowed,
                                     const Tensor& keep_pairs, const Tensor& keep_features, const Tensor& out,
                                     const Tensor& log_norm) {
  dispatch_floating(a.dtype(), "separable_attention", [&](auto tag) {
    forward<typename decltype(tag)::type>(a, s, v, allowed, keep_pairs, keep_features, out, log_norm);
  });
}

void separable_attention_backward_cpu(const Tensor& grad, const Tensor& a, const Tensor& s, const Tensor& v,
                                      const Tensor& allowed, const Tensor& keep_pairs, const Tensor& keep_features,
                                      const Tensor& out, const Tensor& log_norm, const Tensor& grad_a,
                                      const Tensor& grad_s, const Tensor& grad_v) {
  dispatch_floating(a.dtype(), "separable_attention_backward", [&](auto tag) {
    backward<typename decltype(tag)::type>(grad, a, s, v, allowed, keep_pairs, keep_features, out, log_norm,
                                           grad_a, grad_s, grad_v);
  });
}

}  // namespace attn

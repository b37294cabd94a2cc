// CPU kernels of the fused multi-dimensional attention. Every feature f is an
// independent softmax, so the work splits into tasks of (batch b, a block of
// features): each task owns its slice of every output, so tasks run in
// parallel without atomics and the result does not depend on the thread
// count. Inner loops run over the contiguous features of a block.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/cpu_loops.h"
#include "ops/multi_dim_attention_kernels.h"

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

template <class T>
void forward(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask, double scale_c,
             const Tensor& out, const Tensor& log_norm) {
  const Dims s = dims_of(query, key);
  const T c = static_cast<T>(scale_c), inv_c = static_cast<T>(1.0 / scale_c);
  const T *pq = query.data<T>(), *pk = key.data<T>(), *pv = values.data<T>();
  const uint8_t* pm = mask.data<uint8_t>();
  T *po = out.data<T>(), *pl = log_norm.data<T>();
  for_each_task(s, [&](int64_t b, int64_t f0, int64_t f1) {
    const int64_t w = f1 - f0;
    std::vector<int64_t> keys;
    std::vector<T> scores(static_cast<size_t>(s.nk * w)), mx(w), z(w), acc(w);
    for (int64_t i = 0; i < s.nq; ++i) {
      const int64_t row = (b * s.nq + i) * s.d + f0;
      valid_keys(pm + (b * s.nq + i) * s.nk, s.nk, keys);
      if (keys.empty()) {
        std::fill(po + row, po + row + w, T(0));
        std::fill(pl + row, pl + row + w, T(0));
        continue;
      }
      const T* qr = pq + row;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      for (size_t a = 0; a < keys.size(); ++a) {
        const T* kr = pk + (b * s.nk + keys[a]) * s.d + f0;
        T* lr = scores.data() + a * w;
        for (int64_t f = 0; f < w; ++f) {
          const T l = c * std::tanh((qr[f] + kr[f]) * inv_c);
          lr[f] = l;
          mx[f] = std::max(mx[f], l);
        }
      }
      std::fill(z.begin(), z.end(), T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      for (size_t a = 0; a < keys.size(); ++a) {
        const T* vr = pv + (b * s.nk + keys[a]) * s.d + f0;
        const T* lr = scores.data() + a * w;
        for (int64_t f = 0; f < w; ++f) {
          const T e = std::exp(lr[f] - mx[f]);
          z[f] += e;
          acc[f] += e * vr[f];
        }
      }
      // z >= 1: the largest score contributes exp(0).
      for (int64_t f = 0; f < w; ++f) {
        po[row + f] = acc[f] / z[f];
        pl[row + f] = mx[f] + std::log(z[f]);
      }
    }
  });
}

template <class T>
void backward(const Tensor& grad, const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask,
              double scale_c, const Tensor& out, const Tensor& log_norm, const Tensor& grad_query,
              const Tensor& grad_key, const Tensor& grad_values) {
  const Dims s = dims_of(query, key);
  const T c = static_cast<T>(scale_c), inv_c = static_cast<T>(1.0 / scale_c);
  const T *pg = grad.data<T>(), *pq = query.data<T>(), *pk = key.data<T>(), *pv = values.data<T>();
  const T *po = out.data<T>(), *pl = log_norm.data<T>();
  const uint8_t* pm = mask.data<uint8_t>();
  T *gq = grad_query.data<T>(), *gk = grad_key.data<T>(), *gv = grad_values.data<T>();
  for_each_task(s, [&](int64_t b, int64_t f0, int64_t f1) {
    const int64_t w = f1 - f0;
    for (int64_t j = 0; j < s.nk; ++j) {
      const int64_t row = (b * s.nk + j) * s.d + f0;
      std::fill(gk + row, gk + row + w, T(0));
      std::fill(gv + row, gv + row + w, T(0));
    }
    std::vector<int64_t> keys;
    std::vector<T> dq(w);
    for (int64_t i = 0; i < s.nq; ++i) {
      const int64_t row = (b * s.nq + i) * s.d + f0;
      valid_keys(pm + (b * s.nq + i) * s.nk, s.nk, keys);
      std::fill(dq.begin(), dq.end(), T(0));
      const T *qr = pq + row, *gr = pg + row, *orow = po + row, *lnr = pl + row;
      for (int64_t j : keys) {
        const int64_t key_row = (b * s.nk + j) * s.d + f0;
        const T *kr = pk + key_row, *vr = pv + key_row;
        T *gkr = gk + key_row, *gvr = gv + key_row;
        for (int64_t f = 0; f < w; ++f) {
          const T t = std::tanh((qr[f] + kr[f]) * inv_c);
          const T gp = gr[f] * std::exp(c * t - lnr[f]);  // grad * P
          gvr[f] += gp;
          const T dpre = gp * (vr[f] - orow[f]) * (T(1) - t * t);
          dq[f] += dpre;
          gkr[f] += dpre;
        }
      }
      std::copy(dq.begin(), dq.end(), gq + row);
    }
  });
}

}  // namespace

void multi_dim_attention_forward_cpu(const Tensor& query, const Tensor& key, const Tensor& values,
                                     const Tensor& mask, double scale_c, const Tensor& out, const Tensor& log_norm) {
  dispatch_floating(query.dtype(), "multi_dim_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward<T>(query, key, values, mask, scale_c, out, log_norm);
  });
}

void multi_dim_attention_backward_cpu(const Tensor& grad, const Tensor& query, const Tensor& key,
                                      const Tensor& values, const Tensor& mask, double scale_c, const Tensor& out,
                                      const Tensor& log_norm, const Tensor& grad_query, const Tensor& grad_key,
                                      const Tensor& grad_values) {
  dispatch_floating(query.dtype(), "multi_dim_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    backward<T>(grad, query, key, values, mask, scale_c, out, log_norm, grad_query, grad_key, grad_values);
  });
}

}  // namespace attn

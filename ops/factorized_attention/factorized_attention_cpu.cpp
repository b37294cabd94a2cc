// CPU kernels of the factorized attention: each pass walks one (batch, head)
// group at a time, its rows contiguous, split over threads by group. The
// float32 inner loops are SIMD clones over ops/cpu/vector_math.h's branch-free
// exp and sigmoid; masked entries are computed and then selected away, never
// multiplied by zero.
#include <algorithm>
#include <limits>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/ops/factorized_attention/factorized_attention.h"
#include "attn/ops/factorized_attention/factorized_attention_kernels.h"
#include "attn/ops/cpu/vector_math.h"

namespace attn {

namespace {

struct Dims {
  int64_t B, h, n, d;
};

// Groups (b, c) of a [B, h, n, ...] tensor, over threads.
template <class F>
void for_each_group(const Dims& z, const F& f) {
  parallel_for(z.B * z.h, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) f(g / z.h, g % z.h, g);
  });
}

// sigma = log-sigmoid: E = sigmoid(y); identity: E = exp(y - row max). The
// choice is a template argument so each loop body is one formula. A group's
// rows in one call, so the SIMD constants are set up once per group rather
// than per row of n (64 in the benchmarks), and the allowed-key flag is an
// int (a bool |= kept that loop scalar).
template <bool Sigmoid, class T>
ATTN_SIMD_CLONES void pair_weights_rows(T* __restrict r, const uint8_t* __restrict pos,
                                        const uint8_t* __restrict key_ok, T scale, int64_t n,
                                        uint8_t* __restrict has_key) {
  for (int64_t j = 0; j < n; ++j) {
    T* __restrict row = r + j * n;
    const uint8_t* __restrict pos_row = pos + j * n;
    if (!key_ok[j]) {  // a padded query attends nothing
      for (int64_t i = 0; i < n; ++i) row[i] = T(0);
      has_key[j] = 0;
      continue;
    }
    int any = 0;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      const bool ok = (pos_row[i] != 0) & (key_ok[i] != 0);  // masks: nonzero = allowed
      any |= ok ? 1 : 0;
      if (!Sigmoid) {  // the identity's shift only
        const T y = row[i] * scale;
        m = ok && y > m ? y : m;
      }
    }
    has_key[j] = any != 0;
    if (!any) m = 0;
    for (int64_t i = 0; i < n; ++i) {
      const bool ok = (pos_row[i] != 0) & (key_ok[i] != 0);
      const T y = row[i] * scale;
      const T w = Sigmoid ? vector_math::sigmoid(y) : vector_math::exp(ok ? y - m : T(0));
      row[i] = ok ? w : T(0);
    }
  }
}

// One group's [F | v F] (v's rows may be strided, its features unit): the
// identity's shift is each feature's maximum over the real keys (0 when
// there are none). The whole group in one SIMD-clone call, as the pair
// weights: its constants are set up once, not once per key row.
template <bool Sigmoid, class T>
ATTN_SIMD_CLONES void key_weights_group(const T* __restrict s, const T* __restrict v, int64_t v_row_stride,
                                        const uint8_t* __restrict key_ok, int64_t n, int64_t d,
                                        T* __restrict packed, T* __restrict m) {
  const T lowest = -std::numeric_limits<T>::infinity();
  for (int64_t l = 0; l < d; ++l) m[l] = lowest;
  if (!Sigmoid)
    for (int64_t i = 0; i < n; ++i)
      if (key_ok[i])
        for (int64_t l = 0; l < d; ++l) m[l] = s[i * d + l] > m[l] ? s[i * d + l] : m[l];
  for (int64_t l = 0; l < d; ++l) m[l] = m[l] == lowest ? T(0) : m[l];
  for (int64_t i = 0; i < n; ++i) {
    T* __restrict f = packed + i * 2 * d;
    T* __restrict vf = f + d;
    if (!key_ok[i]) {  // a padded key: whatever s and v hold there, its weights are 0
      for (int64_t l = 0; l < 2 * d; ++l) f[l] = T(0);
      continue;
    }
    const T* __restrict s_row = s + i * d;
    const T* __restrict v_row = v + i * v_row_stride;
    for (int64_t l = 0; l < d; ++l) {
      const T w = Sigmoid ? vector_math::sigmoid(s_row[l]) : vector_math::exp(s_row[l] - m[l]);
      f[l] = w;
      vf[l] = v_row[l] * w;
    }
  }
}

template <class T>
ATTN_SIMD_CLONES void output_row(const T* __restrict dn, int64_t d, T* __restrict out, bool has_key,
                                 uint8_t* unsafe) {
  const T* den = dn;
  const T* num = dn + d;
  // Written so that the loop vectorises: an int flag (a bool |= kept it
  // scalar, with a branch around each division) and the quotient taken
  // unconditionally by a safe denominator, then selected.
  int small = 0;
  for (int64_t l = 0; l < d; ++l) {
    const bool positive = den[l] > T(0);
    small |= den[l] < T(kMinDenominator) ? 1 : 0;
    const T quotient = num[l] / (positive ? den[l] : T(1));
    out[l] = positive ? quotient : T(0);
  }
  *unsafe = has_key && small != 0;
}

template <class T>
ATTN_SIMD_CLONES void output_backward_row(const T* __restrict grad, const T* __restrict out, const T* __restrict dn,
                                          int64_t d, T* __restrict packed_grad) {
  for (int64_t l = 0; l < d; ++l) {
    const bool positive = dn[l] > T(0);
    const T inv = T(1) / (positive ? dn[l] : T(1));
    const T g = grad[l];
    packed_grad[l] = positive ? -g * out[l] * inv : T(0);
    packed_grad[d + l] = positive ? g * inv : T(0);
  }
}

template <bool Sigmoid, class T>
ATTN_SIMD_CLONES void pair_backward_run(T* __restrict ge, const T* __restrict e, T scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T w = e[i];
    const T dw = Sigmoid ? w * (T(1) - w) : w;
    const T g = ge[i];
    ge[i] = w > T(0) ? g * dw * scale : T(0);
  }
}

template <bool Sigmoid, bool Accumulate, class T>
ATTN_SIMD_CLONES void key_backward_row(const T* __restrict y, const T* __restrict packed, const T* __restrict v,
                                       int64_t d, T* __restrict gv, T* __restrict gs) {
  for (int64_t l = 0; l < d; ++l) {
    const T f = packed[l];
    const T g_vf = y[d + l];
    const T g_f = g_vf * v[l] + y[l];
    gv[l] = Accumulate ? gv[l] + g_vf * f : g_vf * f;
    gs[l] = g_f * (Sigmoid ? f * (T(1) - f) : f);
  }
}

Dims dims_of(const Tensor& t) { return {t.size(0), t.size(1), t.size(2), t.size(3)}; }

}  // namespace

void factorized_pair_weights_cpu(const Tensor& r, const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                 double scale, const Tensor& row_has_key) {
  const Dims z = dims_of(r);
  const uint8_t* pos = positional.data<uint8_t>();
  const uint8_t* ok = valid.data<uint8_t>();
  uint8_t* has = row_has_key.data<uint8_t>();
  dispatch_floating(r.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* pr = r.data<T>();
    for_each_group(z, [&](int64_t b, int64_t c, int64_t g) {
      T* rows = pr + g * z.n * z.n;
      const uint8_t* pos_rows = pos + c * z.n * z.n;
      // A query's validity is its own key's: both are the token's.
      if (sigmoid_t) {
        pair_weights_rows<true>(rows, pos_rows, ok + b * z.n, static_cast<T>(scale), z.n, has + g * z.n);
      } else {
        pair_weights_rows<false>(rows, pos_rows, ok + b * z.n, static_cast<T>(scale), z.n, has + g * z.n);
      }
    });
  });
}

void factorized_key_weights_cpu(const Tensor& s, const Tensor& v, const Tensor& valid, bool sigmoid_s,
                                const Tensor& packed) {
  const Dims z = dims_of(s);
  const uint8_t* ok = valid.data<uint8_t>();
  dispatch_floating(s.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ps = s.data<T>();
    const T* pv = v.data<T>();
    T* pp = packed.data<T>();
    const int64_t* vs = v.strides().data();
    for_each_group(z, [&](int64_t b, int64_t c, int64_t g) {
      std::vector<T> shift(static_cast<size_t>(z.d));
      const T* s_group = ps + g * z.n * z.d;
      const T* v_group = pv + b * vs[0] + c * vs[1];
      T* packed_group = pp + g * z.n * 2 * z.d;
      if (sigmoid_s) {
        key_weights_group<true>(s_group, v_group, vs[2], ok + b * z.n, z.n, z.d, packed_group, shift.data());
      } else {
        key_weights_group<false>(s_group, v_group, vs[2], ok + b * z.n, z.n, z.d, packed_group, shift.data());
      }
    });
  });
}

void factorized_output_cpu(const Tensor& dn, const Tensor& row_has_key, const Tensor& out, const Tensor& row_unsafe) {
  const Dims z = dims_of(out);
  const uint8_t* has = row_has_key.data<uint8_t>();
  uint8_t* unsafe = row_unsafe.data<uint8_t>();
  dispatch_floating(out.dtype(), "factorized_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pdn = dn.data<T>();
    T* po = out.data<T>();
    for_each_group(z, [&](int64_t, int64_t, int64_t g) {
      for (int64_t j = g * z.n; j < (g + 1) * z.n; ++j)
        output_row(pdn + j * 2 * z.d, z.d, po + j * z.d, has[j] != 0, unsafe + j);
    });
  });
}

void factorized_output_backward_cpu(const Tensor& grad, const Tensor& out, const Tensor& dn,
                                    const Tensor& packed_grad) {
  const Dims z = dims_of(out);
  dispatch_floating(out.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pg = grad.data<T>();
    const T* po = out.data<T>();
    const T* pdn = dn.data<T>();
    T* px = packed_grad.data<T>();
    for_each_group(z, [&](int64_t, int64_t, int64_t g) {
      for (int64_t j = g * z.n; j < (g + 1) * z.n; ++j)
        output_backward_row(pg + j * z.d, po + j * z.d, pdn + j * 2 * z.d, z.d, px + j * 2 * z.d);
    });
  });
}

void factorized_pair_backward_cpu(const Tensor& grad_e, const Tensor& e, bool sigmoid_t, double scale) {
  const Dims z = dims_of(e);
  dispatch_floating(e.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* pg = grad_e.data<T>();
    const T* pe = e.data<T>();
    for_each_group(z, [&](int64_t, int64_t, int64_t g) {
      const int64_t block = z.n * z.n;
      if (sigmoid_t) {
        pair_backward_run<true>(pg + g * block, pe + g * block, static_cast<T>(scale), block);
      } else {
        pair_backward_run<false>(pg + g * block, pe + g * block, static_cast<T>(scale), block);
      }
    });
  });
}

void factorized_key_backward_cpu(const Tensor& y, const Tensor& packed, const Tensor& v, const Tensor& valid,
                                 bool sigmoid_s, const Tensor& grad_v, bool accumulate_v, const Tensor& grad_s) {
  const Dims z = dims_of(v);
  const uint8_t* ok = valid.data<uint8_t>();
  dispatch_floating(v.dtype(), "factorized_attention_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* py = y.data<T>();
    const T* pp = packed.data<T>();
    const T* pv = v.data<T>();
    T* gv = grad_v.data<T>();
    T* gs = grad_s.data<T>();
    const int64_t* vs = v.strides().data();
    for_each_group(z, [&](int64_t b, int64_t c, int64_t g) {
      for (int64_t i = 0; i < z.n; ++i) {
        const int64_t row = g * z.n + i;
        if (!ok[b * z.n + i]) {  // a padded key: no gradient, whatever v holds there
          if (!accumulate_v) std::fill(gv + row * z.d, gv + (row + 1) * z.d, T(0));
          std::fill(gs + row * z.d, gs + (row + 1) * z.d, T(0));
          continue;
        }
        const T* v_row = pv + b * vs[0] + c * vs[1] + i * vs[2];
        const T* y_row = py + row * 2 * z.d;
        const T* p_row = pp + row * 2 * z.d;
        T* gv_row = gv + row * z.d;
        T* gs_row = gs + row * z.d;
        if (sigmoid_s) {
          (accumulate_v ? key_backward_row<true, true, T> : key_backward_row<true, false, T>)(y_row, p_row, v_row, z.d,
                                                                                            gv_row, gs_row);
        } else {
          (accumulate_v ? key_backward_row<false, true, T> : key_backward_row<false, false, T>)(y_row, p_row, v_row,
                                                                                              z.d, gv_row, gs_row);
        }
      }
    });
  });
}

}  // namespace attn

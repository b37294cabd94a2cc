// One SRU step, forward and backward, written once for the CPU and CUDA
// kernels (ATTN_HD). ops/sru/sru.h has the
// equations. The caller walks the sentence's valid tokens in order (forward:
// steps 0..len-1; backward: len-1..0) and carries c (forward) or dL/dc
// (backward) between calls; a step touches token `pos` only, so padding is
// never read.
//
// Layout: u [B, n, 3h] (x~, a^f, a^r), highway, cs, out, grad_out, dhw
// [B, n, h], du [B, n, 3h], bias [2h] (null for none).
#pragma once
#include <cmath>
#include <cstdint>

#include "attn/ops/host_device.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {
namespace sru_math {

template <class T>
struct SruPtrs {
  int64_t B, n, h;
  bool reverse;
  const int64_t* len;
  const T* u;
  const T* hw;
  const T* bias;
  T* cs;   // c_t at each valid token
  T* out;  // h_t; padded tokens keep the zeros they were allocated with
  // Backward only.
  const T* grad_out;
  T* du;
  T* dhw;
};

// The activations as the GPU computes them; the CPU passes its own.
struct DeviceMath {
  template <class T> ATTN_HD static T sig(T x) { return unary_math::stable_sigmoid(x); }
  template <class T> ATTN_HD static T tanh(T x) { return std::tanh(x); }
};

// Step s of a sentence of `len` tokens reads token s, or len - 1 - s in reverse.
ATTN_HD int64_t token_of(int64_t s, int64_t len, bool reverse) { return reverse ? len - 1 - s : s; }

// The cell on one unit's values, free of addressing so that the CPU's loop
// over a row of units vectorises (sru_cpu.cpp) and the GPU's thread calls
// the same formulas. xt = x~_t, af, ar the gate pre-activations with their
// biases, x the highway input.

// Forward: c holds c_{t-1} on entry and c_t on return; returns h_t.
template <class M, class T>
ATTN_HD T cell_forward(T xt, T af, T ar, T x, T& c) {
  const T f = M::sig(af), r = M::sig(ar);
  c = f * c + (T(1) - f) * xt;
  return r * M::tanh(c) + (T(1) - r) * x;
}

// Backward of one step given c_t and c_{t-1} (0 before the first token) and
// dL/dh_t: dc holds dL/dc_t from the later steps on entry and dL/dc_{t-1}
// on return; writes the gradients of x~, af, ar and x.
template <class M, class T>
ATTN_HD void cell_backward(T xt, T af, T ar, T x, T c, T c_prev, T dh, T& dc, T& dxt, T& daf, T& dar, T& dx) {
  const T f = M::sig(af), r = M::sig(ar), g = M::tanh(c);
  const T d_c = dc + dh * r * (T(1) - g * g);
  dxt = d_c * (T(1) - f);
  daf = d_c * (c_prev - xt) * f * (T(1) - f);
  dar = dh * (g - x) * r * (T(1) - r);
  dx = dh * (T(1) - r);
  dc = d_c * f;
}

// Forward step of (b, token pos, j) through the pointers.
template <class M, class T>
ATTN_HD void forward_step(const SruPtrs<T>& p, int64_t b, int64_t pos, int64_t j, T& c) {
  const T* ut = p.u + (b * p.n + pos) * 3 * p.h;
  const T bf = p.bias ? p.bias[j] : T(0), br = p.bias ? p.bias[p.h + j] : T(0);
  const int64_t at = (b * p.n + pos) * p.h + j;
  p.out[at] = cell_forward<M>(ut[j], ut[p.h + j] + bf, ut[2 * p.h + j] + br, p.hw[at], c);
  p.cs[at] = c;
}

// Backward step of token pos, whose predecessor in the walk is prev (< 0 for
// the first step: c_{-1} = 0).
template <class M, class T>
ATTN_HD void backward_step(const SruPtrs<T>& p, int64_t b, int64_t pos, int64_t prev, int64_t j, T& dc) {
  const T* ut = p.u + (b * p.n + pos) * 3 * p.h;
  const T bf = p.bias ? p.bias[j] : T(0), br = p.bias ? p.bias[p.h + j] : T(0);
  const int64_t at = (b * p.n + pos) * p.h + j;
  const T c_prev = prev < 0 ? T(0) : p.cs[(b * p.n + prev) * p.h + j];
  T* d = p.du + (b * p.n + pos) * 3 * p.h;
  cell_backward<M>(ut[j], ut[p.h + j] + bf, ut[2 * p.h + j] + br, p.hw[at], p.cs[at], c_prev, p.grad_out[at], dc,
                   d[j], d[p.h + j], d[2 * p.h + j], p.dhw[at]);
}

// A whole sentence of one unit: the CUDA kernel's thread body (the CPU walks
// rows of units step by step instead, for locality and SIMD).
template <class M, class T>
ATTN_HD void forward_unit(const SruPtrs<T>& p, int64_t b, int64_t j) {
  const int64_t len = p.len[b];
  T c(0);
  for (int64_t s = 0; s < len; ++s) forward_step<M>(p, b, token_of(s, len, p.reverse), j, c);
}

template <class M, class T>
ATTN_HD void backward_unit(const SruPtrs<T>& p, int64_t b, int64_t j) {
  const int64_t len = p.len[b];
  T dc(0);
  for (int64_t s = len - 1; s >= 0; --s)
    backward_step<M>(p, b, token_of(s, len, p.reverse), s > 0 ? token_of(s - 1, len, p.reverse) : -1, j, dc);
}

}  // namespace sru_math
}  // namespace attn

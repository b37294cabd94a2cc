// The elementwise part of one time step of each recurrent cell, forward and
// backward, written once for the CPU and CUDA kernels (ATTN_HD). One call
// handles one (example b, hidden unit j); the step's matrix products are
// made by the caller (ops/recurrent/recurrent.cpp) before the call.
//
// Layout (see recurrent_kernels.h): xw [B, n, G] holds every token's input
// projection; the step's product hh [B, width] (width G, or 2h and h for the
// two stages of the TensorFlow GRU); hs, cs [S+1, B, h] the states before
// each step (hs[0] = 0); acts [S, B, G] the gate activations; extra
// [S, B, h] what a GRU's backward needs beside them; out [B, n, h].
//
// Exact lengths: step s of example b is active when s < len[b]; it reads
// and writes token pos = s (or len[b] - 1 - s in reverse). An inactive step
// copies the state and touches neither xw nor out, so whatever padding holds
// (NaN included) is never read: select, never multiply by zero.
#pragma once
#include <cmath>
#include <cstdint>

#include "attn/ops/host_device.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {
namespace recurrent_math {

// Raw pointers of one step; unused ones are null.
template <class T>
struct StepPtrs {
  int64_t B, n, h, G, step;
  bool reverse;
  int gi, gf, gg, go;  // LSTM: column block of the input, forget, candidate and output gates
  T forget_bias;
  const int64_t* len;
  const T* xw;
  const T* hh;
  const T* b_hh;
  T* hs;
  T* cs;
  T* acts;
  T* extra;
  T* out;
  // Backward only.
  const T* grad_out;  // [B, n, h]
  T* dh;              // [B, h]: in, the gradient carried to the state after this step; out, its direct part before it
  T* dc;              // [B, h]: the LSTM cell's carried gradient
  T* du;              // [B, h]: the TensorFlow GRU's update-gate gradient between its two stages
  const T* d_rh;      // [B, h]: the TensorFlow GRU's gradient of r * h (the second stage's input)
  T* dxw;             // [B, n, G]
  T* dp;              // [S, B, G]: the gradient of the step's product (its pre-activations' hh part)
};

// The activations as the device computes them: each kernel file passes its
// own (the CPU its vectorisable float32 polynomials, the GPU these).
struct DeviceMath {
  template <class T> ATTN_HD static T sig(T x) { return unary_math::stable_sigmoid(x); }
  template <class T> ATTN_HD static T tanh(T x) { return std::tanh(x); }
};

// Where one call's (example b, hidden unit j) reads and writes in this step.
struct Unit {
  int64_t b, j;
  bool on;       // the step lies within the sentence (s < len[b])
  int64_t pos;   // its token: s, or len[b] - 1 - s in reverse (0 when off)
  int64_t prev;  // (s, b, j) in hs and cs [S+1, B, h]: the state before the step
  int64_t next;  // (s + 1, b, j): the state after it
  int64_t row;   // (s, b, 0) in acts and dp [S, B, G]
  int64_t tok;   // (b, pos, 0) in xw and dxw [B, n, G]
};

template <class T>
ATTN_HD Unit unit_of(const StepPtrs<T>& p, int64_t e) {
  Unit u;
  u.b = e / p.h;
  u.j = e % p.h;
  const int64_t len = p.len[u.b], S = p.step;
  u.on = S < len;
  u.pos = !u.on ? 0 : p.reverse ? len - 1 - S : S;
  u.prev = (S * p.B + u.b) * p.h + u.j;
  u.next = ((S + 1) * p.B + u.b) * p.h + u.j;
  u.row = (S * p.B + u.b) * p.G;
  u.tok = (u.b * p.n + u.pos) * p.G;
  return u;
}

template <class T> ATTN_HD T bias(const StepPtrs<T>& p, int64_t col) { return p.b_hh ? p.b_hh[col] : T(0); }

// ---- forward ----

template <class M, class T>
ATTN_HD void lstm_forward(const StepPtrs<T>& p, int64_t e) {
  const Unit u = unit_of(p, e);
  const int64_t j = u.j, H = p.h;
  if (!u.on) {
    p.hs[u.next] = p.hs[u.prev];
    p.cs[u.next] = p.cs[u.prev];
    return;
  }
  const T* x = p.xw + u.tok;
  const T* q = p.hh + u.b * p.G;
  auto pre = [&](int g) { return x[g * H + j] + q[g * H + j] + bias(p, g * H + j); };
  const T i = M::sig(pre(p.gi)), f = M::sig(pre(p.gf) + p.forget_bias), g = M::tanh(pre(p.gg)), o = M::sig(pre(p.go));
  const T c = f * p.cs[u.prev] + i * g;
  const T hn = o * M::tanh(c);
  T* a = p.acts + u.row;
  a[p.gi * H + j] = i;
  a[p.gf * H + j] = f;
  a[p.gg * H + j] = g;
  a[p.go * H + j] = o;
  p.cs[u.next] = c;
  p.hs[u.next] = hn;
  p.out[(u.b * p.n + u.pos) * H + j] = hn;
}

// PyTorch's GRU: r, z, n in that order; n = tanh(x_n + r (h W_n + b_hn)).
template <class M, class T>
ATTN_HD void gru_torch_forward(const StepPtrs<T>& p, int64_t e) {
  const Unit u = unit_of(p, e);
  const int64_t j = u.j, H = p.h;
  if (!u.on) {
    p.hs[u.next] = p.hs[u.prev];
    return;
  }
  const T* x = p.xw + u.tok;
  const T* q = p.hh + u.b * p.G;
  const T r = M::sig(x[j] + q[j] + bias(p, j));
  const T z = M::sig(x[H + j] + q[H + j] + bias(p, H + j));
  const T qn = q[2 * H + j] + bias(p, 2 * H + j);
  const T nn = M::tanh(x[2 * H + j] + r * qn);
  const T hn = (T(1) - z) * nn + z * p.hs[u.prev];
  T* a = p.acts + u.row;
  a[j] = r;
  a[H + j] = z;
  a[2 * H + j] = nn;
  p.extra[u.prev] = qn;
  p.hs[u.next] = hn;
  p.out[(u.b * p.n + u.pos) * H + j] = hn;
}

// TensorFlow's GRUCell, first stage: r, u from [B, 2h] hh; keeps r * h for
// the candidate's product.
template <class M, class T>
ATTN_HD void gru_tf_gates_forward(const StepPtrs<T>& p, int64_t e) {
  const Unit at = unit_of(p, e);
  const int64_t j = at.j, H = p.h;
  if (!at.on) {
    p.extra[at.prev] = T(0);
    return;
  }
  const T* x = p.xw + at.tok;
  const T* q = p.hh + at.b * 2 * H;
  const T r = M::sig(x[j] + q[j]);
  const T u = M::sig(x[H + j] + q[H + j]);
  T* a = p.acts + at.row;
  a[j] = r;
  a[H + j] = u;
  p.extra[at.prev] = r * p.hs[at.prev];
}

// Second stage: c = tanh(x_c + (r h) W_c), h' = u h + (1 - u) c, hh [B, h].
template <class M, class T>
ATTN_HD void gru_tf_candidate_forward(const StepPtrs<T>& p, int64_t e) {
  const Unit at = unit_of(p, e);
  const int64_t j = at.j, H = p.h;
  if (!at.on) {
    p.hs[at.next] = p.hs[at.prev];
    return;
  }
  const T* x = p.xw + at.tok;
  T* a = p.acts + at.row;
  const T c = M::tanh(x[2 * H + j] + p.hh[at.b * H + j]);
  const T u = a[H + j];
  const T hn = u * p.hs[at.prev] + (T(1) - u) * c;
  a[2 * H + j] = c;
  p.hs[at.next] = hn;
  p.out[(at.b * p.n + at.pos) * H + j] = hn;
}

// ---- backward (steps in decreasing order) ----

// The gradient reaching the state after step S of example b: what the later
// steps carried, plus the output's at this token when the step is active.
template <class T>
ATTN_HD T incoming(const StepPtrs<T>& p, const Unit& u) {
  const T carried = p.dh[u.b * p.h + u.j];
  return u.on ? carried + p.grad_out[(u.b * p.n + u.pos) * p.h + u.j] : carried;
}

// An inactive step's product gradient: zero in its first `blocks` gate blocks.
template <class T>
ATTN_HD void zero_dp(const StepPtrs<T>& p, const Unit& u, int64_t blocks) {
  for (int64_t g = 0; g < blocks; ++g) p.dp[u.row + g * p.h + u.j] = T(0);
}

template <class M, class T>
ATTN_HD void lstm_backward(const StepPtrs<T>& p, int64_t e) {
  const Unit u = unit_of(p, e);
  const int64_t b = u.b, j = u.j, H = p.h;
  const T dh = incoming(p, u);
  if (!u.on) {  // the state passed through: dh and dc stay as they are
    zero_dp(p, u, 4);
    return;
  }
  const T* a = p.acts + u.row;
  const T i = a[p.gi * H + j], f = a[p.gf * H + j], g = a[p.gg * H + j], o = a[p.go * H + j];
  const T c = p.cs[u.next], c_prev = p.cs[u.prev];
  const T tc = M::tanh(c);
  const T dc = p.dc[b * H + j] + dh * o * (T(1) - tc * tc);
  T* d = p.dp + u.row;
  d[p.gi * H + j] = dc * g * i * (T(1) - i);
  d[p.gf * H + j] = dc * c_prev * f * (T(1) - f);
  d[p.gg * H + j] = dc * i * (T(1) - g * g);
  d[p.go * H + j] = dh * tc * o * (T(1) - o);
  T* dx = p.dxw + u.tok;
  for (int k = 0; k < 4; ++k) dx[k * H + j] = d[k * H + j];
  p.dc[b * H + j] = dc * f;
  p.dh[b * H + j] = T(0);  // the state reaches this step only through the product
}

template <class M, class T>
ATTN_HD void gru_torch_backward(const StepPtrs<T>& p, int64_t e) {
  const Unit u = unit_of(p, e);
  const int64_t b = u.b, j = u.j, H = p.h;
  const T dh = incoming(p, u);
  if (!u.on) {
    zero_dp(p, u, 3);
    return;
  }
  const T* a = p.acts + u.row;
  const T r = a[j], z = a[H + j], nn = a[2 * H + j];
  const T h_prev = p.hs[u.prev];
  const T dn = dh * (T(1) - z) * (T(1) - nn * nn);
  const T dr = dn * p.extra[u.prev] * r * (T(1) - r);
  const T dz = dh * (h_prev - nn) * z * (T(1) - z);
  T* d = p.dp + u.row;
  T* dx = p.dxw + u.tok;
  d[j] = dx[j] = dr;
  d[H + j] = dx[H + j] = dz;
  dx[2 * H + j] = dn;
  d[2 * H + j] = dn * r;
  p.dh[b * H + j] = dh * z;
}

// TensorFlow GRU, first backward stage (the candidate): leaves da_c in dp's
// third block for the caller's product d(r h) = da_c W_c^T.
template <class M, class T>
ATTN_HD void gru_tf_candidate_backward(const StepPtrs<T>& p, int64_t e) {
  const Unit at = unit_of(p, e);
  const int64_t b = at.b, j = at.j, H = p.h;
  const T dh = incoming(p, at);
  if (!at.on) {
    zero_dp(p, at, 3);
    p.du[b * H + j] = T(0);
    return;
  }
  const T* a = p.acts + at.row;
  const T u = a[H + j], c = a[2 * H + j];
  const T dac = dh * (T(1) - u) * (T(1) - c * c);
  p.dp[at.row + 2 * H + j] = dac;
  p.dxw[at.tok + 2 * H + j] = dac;
  p.du[b * H + j] = dh * (p.hs[at.prev] - c) * u * (T(1) - u);
  p.dh[b * H + j] = dh * u;
}

// Second stage: the gates, given d(r h).
template <class M, class T>
ATTN_HD void gru_tf_gates_backward(const StepPtrs<T>& p, int64_t e) {
  const Unit u = unit_of(p, e);
  const int64_t b = u.b, j = u.j, H = p.h;
  if (!u.on) return;  // dp is zero already; dh passed through
  const T* a = p.acts + u.row;
  const T r = a[j];
  const T drh = p.d_rh[b * H + j];
  const T h_prev = p.hs[u.prev];
  const T dar = drh * h_prev * r * (T(1) - r);
  const T dau = p.du[b * H + j];
  T* d = p.dp + u.row;
  T* dx = p.dxw + u.tok;
  d[j] = dx[j] = dar;
  d[H + j] = dx[H + j] = dau;
  p.dh[b * H + j] += drh * r;
}

}  // namespace recurrent_math
}  // namespace attn

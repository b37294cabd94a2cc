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

template <class T>
ATTN_HD bool active(const StepPtrs<T>& p, int64_t b, int64_t* pos) {
  const int64_t len = p.len[b];
  if (p.step >= len) return false;
  *pos = p.reverse ? len - 1 - p.step : p.step;
  return true;
}

template <class T> ATTN_HD T bias(const StepPtrs<T>& p, int64_t col) { return p.b_hh ? p.b_hh[col] : T(0); }

// ---- forward ----

template <class M, class T>
ATTN_HD void lstm_forward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step;
  const int64_t sb = (S * p.B + b) * p.h + j, nb = ((S + 1) * p.B + b) * p.h + j;
  int64_t pos;
  if (!active(p, b, &pos)) {
    p.hs[nb] = p.hs[sb];
    p.cs[nb] = p.cs[sb];
    return;
  }
  const T* x = p.xw + (b * p.n + pos) * p.G;
  const T* q = p.hh + b * p.G;
  auto pre = [&](int g) { return x[g * p.h + j] + q[g * p.h + j] + bias(p, g * p.h + j); };
  const T i = M::sig(pre(p.gi)), f = M::sig(pre(p.gf) + p.forget_bias), g = M::tanh(pre(p.gg)), o = M::sig(pre(p.go));
  const T c = f * p.cs[sb] + i * g;
  const T hn = o * M::tanh(c);
  T* a = p.acts + (S * p.B + b) * p.G;
  a[p.gi * p.h + j] = i;
  a[p.gf * p.h + j] = f;
  a[p.gg * p.h + j] = g;
  a[p.go * p.h + j] = o;
  p.cs[nb] = c;
  p.hs[nb] = hn;
  p.out[(b * p.n + pos) * p.h + j] = hn;
}

// PyTorch's GRU: r, z, n in that order; n = tanh(x_n + r (h W_n + b_hn)).
template <class M, class T>
ATTN_HD void gru_torch_forward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  const int64_t sb = (S * p.B + b) * H + j, nb = ((S + 1) * p.B + b) * H + j;
  int64_t pos;
  if (!active(p, b, &pos)) {
    p.hs[nb] = p.hs[sb];
    return;
  }
  const T* x = p.xw + (b * p.n + pos) * p.G;
  const T* q = p.hh + b * p.G;
  const T r = M::sig(x[j] + q[j] + bias(p, j));
  const T z = M::sig(x[H + j] + q[H + j] + bias(p, H + j));
  const T qn = q[2 * H + j] + bias(p, 2 * H + j);
  const T nn = M::tanh(x[2 * H + j] + r * qn);
  const T hn = (T(1) - z) * nn + z * p.hs[sb];
  T* a = p.acts + (S * p.B + b) * p.G;
  a[j] = r;
  a[H + j] = z;
  a[2 * H + j] = nn;
  p.extra[sb] = qn;
  p.hs[nb] = hn;
  p.out[(b * p.n + pos) * H + j] = hn;
}

// TensorFlow's GRUCell, first stage: r, u from [B, 2h] hh; keeps r * h for
// the candidate's product.
template <class M, class T>
ATTN_HD void gru_tf_gates_forward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  const int64_t sb = (S * p.B + b) * H + j;
  int64_t pos;
  if (!active(p, b, &pos)) {
    p.extra[sb] = T(0);
    return;
  }
  const T* x = p.xw + (b * p.n + pos) * p.G;
  const T* q = p.hh + b * 2 * H;
  const T r = M::sig(x[j] + q[j]);
  const T u = M::sig(x[H + j] + q[H + j]);
  T* a = p.acts + (S * p.B + b) * p.G;
  a[j] = r;
  a[H + j] = u;
  p.extra[sb] = r * p.hs[sb];
}

// Second stage: c = tanh(x_c + (r h) W_c), h' = u h + (1 - u) c, hh [B, h].
template <class M, class T>
ATTN_HD void gru_tf_candidate_forward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  const int64_t sb = (S * p.B + b) * H + j, nb = ((S + 1) * p.B + b) * H + j;
  int64_t pos;
  if (!active(p, b, &pos)) {
    p.hs[nb] = p.hs[sb];
    return;
  }
  const T* x = p.xw + (b * p.n + pos) * p.G;
  T* a = p.acts + (S * p.B + b) * p.G;
  const T c = M::tanh(x[2 * H + j] + p.hh[b * H + j]);
  const T u = a[H + j];
  const T hn = u * p.hs[sb] + (T(1) - u) * c;
  a[2 * H + j] = c;
  p.hs[nb] = hn;
  p.out[(b * p.n + pos) * H + j] = hn;
}

// ---- backward (steps in decreasing order) ----

// The gradient reaching the state after step S of example b: what the later
// steps carried, plus the output's at this token when the step is active.
template <class T>
ATTN_HD T incoming(const StepPtrs<T>& p, int64_t b, int64_t j, bool on, int64_t pos) {
  const T carried = p.dh[b * p.h + j];
  return on ? carried + p.grad_out[(b * p.n + pos) * p.h + j] : carried;
}

template <class T>
ATTN_HD void zero_dp(const StepPtrs<T>& p, int64_t b, int64_t j, int64_t blocks, int64_t first) {
  for (int64_t g = 0; g < blocks; ++g) p.dp[(p.step * p.B + b) * p.G + (first + g) * p.h + j] = T(0);
}

template <class M, class T>
ATTN_HD void lstm_backward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  int64_t pos = 0;
  const bool on = active(p, b, &pos);
  const T dh = incoming(p, b, j, on, pos);
  if (!on) {  // the state passed through: dh and dc stay as they are
    zero_dp(p, b, j, 4, 0);
    return;
  }
  const T* a = p.acts + (S * p.B + b) * p.G;
  const T i = a[p.gi * H + j], f = a[p.gf * H + j], g = a[p.gg * H + j], o = a[p.go * H + j];
  const T c = p.cs[((S + 1) * p.B + b) * H + j], c_prev = p.cs[(S * p.B + b) * H + j];
  const T tc = M::tanh(c);
  const T dc = p.dc[b * H + j] + dh * o * (T(1) - tc * tc);
  T* d = p.dp + (S * p.B + b) * p.G;
  d[p.gi * H + j] = dc * g * i * (T(1) - i);
  d[p.gf * H + j] = dc * c_prev * f * (T(1) - f);
  d[p.gg * H + j] = dc * i * (T(1) - g * g);
  d[p.go * H + j] = dh * tc * o * (T(1) - o);
  T* dx = p.dxw + (b * p.n + pos) * p.G;
  for (int k = 0; k < 4; ++k) dx[k * H + j] = d[k * H + j];
  p.dc[b * H + j] = dc * f;
  p.dh[b * H + j] = T(0);  // the state reaches this step only through the product
}

template <class M, class T>
ATTN_HD void gru_torch_backward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  int64_t pos = 0;
  const bool on = active(p, b, &pos);
  const T dh = incoming(p, b, j, on, pos);
  if (!on) {
    zero_dp(p, b, j, 3, 0);
    return;
  }
  const int64_t sb = (S * p.B + b) * H + j;
  const T* a = p.acts + (S * p.B + b) * p.G;
  const T r = a[j], z = a[H + j], nn = a[2 * H + j];
  const T h_prev = p.hs[sb];
  const T dn = dh * (T(1) - z) * (T(1) - nn * nn);
  const T dr = dn * p.extra[sb] * r * (T(1) - r);
  const T dz = dh * (h_prev - nn) * z * (T(1) - z);
  T* d = p.dp + (S * p.B + b) * p.G;
  T* dx = p.dxw + (b * p.n + pos) * p.G;
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
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  int64_t pos = 0;
  const bool on = active(p, b, &pos);
  const T dh = incoming(p, b, j, on, pos);
  if (!on) {
    zero_dp(p, b, j, 3, 0);
    p.du[b * H + j] = T(0);
    return;
  }
  const T* a = p.acts + (S * p.B + b) * p.G;
  const T u = a[H + j], c = a[2 * H + j];
  const T dac = dh * (T(1) - u) * (T(1) - c * c);
  p.dp[(S * p.B + b) * p.G + 2 * H + j] = dac;
  p.dxw[(b * p.n + pos) * p.G + 2 * H + j] = dac;
  p.du[b * H + j] = dh * (p.hs[(S * p.B + b) * H + j] - c) * u * (T(1) - u);
  p.dh[b * H + j] = dh * u;
}

// Second stage: the gates, given d(r h).
template <class M, class T>
ATTN_HD void gru_tf_gates_backward(const StepPtrs<T>& p, int64_t e) {
  const int64_t b = e / p.h, j = e % p.h, S = p.step, H = p.h;
  int64_t pos = 0;
  if (!active(p, b, &pos)) return;  // dp is zero already; dh passed through
  const T* a = p.acts + (S * p.B + b) * p.G;
  const T r = a[j];
  const T drh = p.d_rh[b * H + j];
  const T h_prev = p.hs[(S * p.B + b) * H + j];
  const T dar = drh * h_prev * r * (T(1) - r);
  const T dau = p.du[b * H + j];
  T* d = p.dp + (S * p.B + b) * p.G;
  T* dx = p.dxw + (b * p.n + pos) * p.G;
  d[j] = dx[j] = dar;
  d[H + j] = dx[H + j] = dau;
  p.dh[b * H + j] += drh * r;
}

}  // namespace recurrent_math
}  // namespace attn

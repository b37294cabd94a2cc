// The linear-chain CRF's recursions, written once for the CPU and CUDA
// kernels (ATTN_HD). Every function works on one sentence b of len valid
// tokens (0 < len <= n) and one tag; a caller runs a time step for every tag
// (the CPU in a loop, the GPU one thread per tag with a barrier between
// steps). The recursions run in double whatever the input dtype: log Z of a
// sentence of thousands of tokens is thousands in magnitude, and a float
// running sum would lose the per-token terms.
//
// Layout (all contiguous): emissions [B, n, K], tags [B, n], transitions
// [K, K] (row: the previous tag), start, end [K]; alpha [B, n, K] and the
// Viterbi back-pointers [B, n, K]; beta [B, 2, K] (two time steps, swapped);
// d_emissions [B, n, K]; the per-sentence gradients d_transitions [B, K, K],
// d_start, d_end [B, K].
#pragma once
#include <cmath>
#include <cstdint>

#include "attn/ops/host_device.h"

namespace attn {
namespace crf_math {

template <class T>
struct CrfPtrs {
  int64_t B, n, K;
  const int64_t* len;
  const T* emissions;
  const int64_t* tags;
  const T* transitions;
  const T* start;
  const T* end;
  double* alpha;   // forward log-potentials, or Viterbi's best scores
  double* log_z;   // [B]
  T* nll;          // [B]
  // Backward only.
  const T* grad;   // [B], dL/dnll
  double* beta;
  T* d_emissions;
  double* d_transitions;
  double* d_start;
  double* d_end;
  // Viterbi only.
  int64_t* back;
  int64_t* path;  // [B, n]
};

template <class T>
ATTN_HD double emission(const CrfPtrs<T>& p, int64_t b, int64_t t, int64_t j) {
  return static_cast<double>(p.emissions[(b * p.n + t) * p.K + j]);
}
template <class T>
ATTN_HD double transition(const CrfPtrs<T>& p, int64_t i, int64_t j) {
  return static_cast<double>(p.transitions[i * p.K + j]);
}
template <class T>
ATTN_HD double* alpha_row(const CrfPtrs<T>& p, int64_t b, int64_t t) {
  return p.alpha + (b * p.n + t) * p.K;
}

// log sum_i exp(v(i)) over i in [0, K), stable: the largest term is factored out.
template <class F>
ATTN_HD double log_sum_exp(int64_t K, const F& v) {
  double m = v(0);
  for (int64_t i = 1; i < K; ++i) m = v(i) > m ? v(i) : m;
  double s = 0;
  for (int64_t i = 0; i < K; ++i) s += std::exp(v(i) - m);
  return m + std::log(s);
}

// alpha_t(j) = e_t(j) + start(j) at t = 0, else
// e_t(j) + log sum_i exp(alpha_{t-1}(i) + A(i, j)).
template <class T>
ATTN_HD void forward_cell(const CrfPtrs<T>& p, int64_t b, int64_t t, int64_t j) {
  double a = emission(p, b, t, j);
  if (t == 0) {
    a += static_cast<double>(p.start[j]);
  } else {
    const double* prev = alpha_row(p, b, t - 1);
    a += log_sum_exp(p.K, [&](int64_t i) { return prev[i] + transition(p, i, j); });
  }
  alpha_row(p, b, t)[j] = a;
}

// The score of the gold path.
template <class T>
ATTN_HD double gold_score(const CrfPtrs<T>& p, int64_t b, int64_t len) {
  const int64_t* y = p.tags + b * p.n;
  double s = static_cast<double>(p.start[y[0]]) + static_cast<double>(p.end[y[len - 1]]);
  for (int64_t t = 0; t < len; ++t) {
    s += emission(p, b, t, y[t]);
    if (t > 0) s += transition(p, y[t - 1], y[t]);
  }
  return s;
}

// After the forward cells of every step: log Z and the NLL of sentence b.
template <class T>
ATTN_HD void finish_nll(const CrfPtrs<T>& p, int64_t b, int64_t len) {
  if (len == 0) {
    p.log_z[b] = 0;
    p.nll[b] = T(0);
    return;
  }
  const double* last = alpha_row(p, b, len - 1);
  const double z = log_sum_exp(p.K, [&](int64_t j) { return last[j] + static_cast<double>(p.end[j]); });
  p.log_z[b] = z;
  p.nll[b] = static_cast<T>(z - gold_score(p, b, len));
}

// The backward walks t = len-1 .. 0 with beta_t in one half of p.beta
// (beta_{len-1}(i) = end(i)); `cur` selects the half holding beta_t.
template <class T>
ATTN_HD double* beta_half(const CrfPtrs<T>& p, int64_t b, int cur) {
  return p.beta + (b * 2 + cur) * p.K;
}

template <class T>
ATTN_HD void init_beta(const CrfPtrs<T>& p, int64_t b, int64_t i) {
  beta_half(p, b, 0)[i] = static_cast<double>(p.end[i]);
}

// Step t's gradients of tag j (column j of the transitions: one owner per
// entry), g the sentence's upstream gradient:
//   d e_t(j) = g (P(y_t = j) - [gold y_t = j]), likewise d start at t = 0
//   and d end at t = len-1;
//   d A(i, j) += g (P(y_{t-1} = i, y_t = j) - [gold pair is (i, j)]), t > 0.
// The marginals are exp(alpha + A + e + beta - log Z) of the forward and
// backward log-potentials.
template <class T>
ATTN_HD void gradient_column(const CrfPtrs<T>& p, int64_t b, int64_t len, int64_t t, int cur, int64_t j) {
  const double g = static_cast<double>(p.grad[b]);
  const double z = p.log_z[b];
  const double beta_j = beta_half(p, b, cur)[j];
  const int64_t* y = p.tags + b * p.n;
  const double gold = y[t] == j ? 1.0 : 0.0;
  const double d = g * (std::exp(alpha_row(p, b, t)[j] + beta_j - z) - gold);
  p.d_emissions[(b * p.n + t) * p.K + j] = static_cast<T>(d);
  if (t == 0) p.d_start[b * p.K + j] = d;
  if (t == len - 1) p.d_end[b * p.K + j] = d;
  if (t == 0) return;
  const double* prev = alpha_row(p, b, t - 1);
  const double tail = emission(p, b, t, j) + beta_j - z;
  double* dA = p.d_transitions + b * p.K * p.K;
  for (int64_t i = 0; i < p.K; ++i) dA[i * p.K + j] += g * std::exp(prev[i] + transition(p, i, j) + tail);
  if (y[t] == j) dA[y[t - 1] * p.K + j] -= g;
}

// beta_{t-1}(i) = log sum_j exp(A(i, j) + e_t(j) + beta_t(j)), into the other half.
template <class T>
ATTN_HD void beta_cell(const CrfPtrs<T>& p, int64_t b, int64_t t, int cur, int64_t i) {
  const double* beta = beta_half(p, b, cur);
  beta_half(p, b, 1 - cur)[i] =
      log_sum_exp(p.K, [&](int64_t j) { return transition(p, i, j) + emission(p, b, t, j) + beta[j]; });
}

// Viterbi: alpha holds the best score of a path ending in tag j at t, back
// the previous tag of that path (the lowest index among equal scores, so
// every device picks the same path).
template <class T>
ATTN_HD void viterbi_cell(const CrfPtrs<T>& p, int64_t b, int64_t t, int64_t j) {
  double best = static_cast<double>(p.start[j]);
  int64_t from = -1;
  if (t > 0) {
    const double* prev = alpha_row(p, b, t - 1);
    from = 0;
    best = prev[0] + transition(p, 0, j);
    for (int64_t i = 1; i < p.K; ++i) {
      const double s = prev[i] + transition(p, i, j);
      if (s > best) best = s, from = i;
    }
  }
  alpha_row(p, b, t)[j] = best + emission(p, b, t, j);
  p.back[(b * p.n + t) * p.K + j] = from;
}

// The best last tag, then the back-pointers to the first; padding gets -1.
template <class T>
ATTN_HD void viterbi_backtrack(const CrfPtrs<T>& p, int64_t b, int64_t len) {
  int64_t* path = p.path + b * p.n;
  for (int64_t t = len; t < p.n; ++t) path[t] = -1;
  if (len == 0) return;
  const double* last = alpha_row(p, b, len - 1);
  int64_t tag = 0;
  double best = last[0] + static_cast<double>(p.end[0]);
  for (int64_t j = 1; j < p.K; ++j) {
    const double s = last[j] + static_cast<double>(p.end[j]);
    if (s > best) best = s, tag = j;
  }
  for (int64_t t = len - 1; t >= 0; --t) {
    path[t] = tag;
    tag = p.back[(b * p.n + t) * p.K + tag];
  }
}

}  // namespace crf_math
}  // namespace attn

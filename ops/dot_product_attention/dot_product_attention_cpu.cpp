// CPU kernels of the fused dot-product attention, one task per head
// (ops/cpu/head_tasks.h). A task copies its head into zero-padded panels
// (keys that are not valid become zero rows there: selected out, never
// weighted by zero), runs the head's products as panel_product blocks
// (ops/cpu/panel_product.h) and the softmax rows as vectorised loops, and
// writes its rows back through the operands' strides.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/ops/cpu/attention_rows.h"
#include "attn/ops/cpu/head_panels.h"
#include "attn/ops/cpu/head_tasks.h"
#include "attn/ops/cpu/panel_product.h"
#include "attn/ops/dot_product_attention/dot_product_attention_kernels.h"

namespace attn {

namespace {

// Causal: query j may attend key i only when i <= j + nk - nq (queries are
// the last nq positions of the keys' sequence).
template <bool Causal>
struct DimsOf {
  static constexpr bool causal = Causal;
  int64_t B, heads, nq, nk, d;
  DimsOf(const Tensor& q, const Tensor& k, const Tensor&)
      : B(q.size(0)), heads(q.size(1)), nq(q.size(2)), nk(k.size(2)), d(q.size(3)) {}
  int64_t head_count() const { return B * heads; }
  int64_t work() const { return nq * nk * d; }
};

// The key mask of the softmax rows and its row stride: the example's valid
// keys for every row (ld 0), or under the causal order one row per query in
// `rows` (ld nk).
template <class Dims>
const uint8_t* row_masks(const Dims& s, const uint8_t* ok, std::vector<uint8_t>& rows, int64_t& ld) {
  if (!Dims::causal) {
    ld = 0;
    return ok;
  }
  rows.resize(static_cast<size_t>(s.nq * s.nk));
  for (int64_t j = 0; j < s.nq; ++j)
    for (int64_t i = 0; i < s.nk; ++i) rows[j * s.nk + i] = ok[i] && i <= j + s.nk - s.nq;
  ld = s.nk;
  return rows.data();
}

// One head's panel sizes: queries padded to whole row blocks, keys and
// features to whole column blocks.
template <class T>
struct Panels {
  int64_t nq, nk, d;
  template <class Dims>
  explicit Panels(const Dims& s)
      : nq(round_up(std::max<int64_t>(s.nq, 1), panel_rows<T>)),
        nk(round_up(std::max<int64_t>(s.nk, 1), kPanelCols)),
        d(round_up(std::max<int64_t>(s.d, 1), kPanelCols)) {}
};

// A task's panels, zero-filled once: the products read padding that is
// never written, and the rows of keys that are not valid are zeroed per head
// (ops/cpu/head_panels.h).
template <class T>
struct ForwardScratch {
  Panels<T> pn;
  PanelBuffer<T> q, kt, v, scores, out, maxima;
  std::vector<uint8_t> rows_ok;
  template <class Dims>
  explicit ForwardScratch(const Dims& s)
      : pn(s),
        q(pn.nq * pn.d),
        kt(pn.d * pn.nk),
        v(pn.nk * pn.d),
        scores(pn.nq * pn.nk),
        out(pn.nq * pn.d),
        maxima(pn.nq) {}
};

template <class T, class Dims>
ATTN_SIMD_CLONES void forward_head(const HeadOperands<T, Dims>& p, int64_t g, ForwardScratch<T>& w) {
  const Dims& s = p.s;
  const Panels<T>& pn = w.pn;
  const int64_t b = g / s.heads, c = g % s.heads;
  const uint8_t* ok = p.mask + b * s.nk;
  // q is only ever the broadcast operand (its first d columns read), so
  // whole row blocks of queries are read where they are.
  const bool q_in_place = pn.nq == s.nq;
  const T* q = q_in_place ? p.q + p.q_at.at(b, c, 0) : w.q.data();
  if (!q_in_place) head_rows_to_panel(p.q, p.q_at, b, c, s.nq, s.d, nullptr, 0, w.q.data(), pn.d);
  // Keys that are not valid are zero columns of k^T and zero rows of v; the
  // softmax also selects their scores away.
  head_rows_to_transposed_panel(p.k, p.k_at, b, c, s.nk, s.d, ok, 0, w.kt.data(), pn.nk);
  head_rows_to_panel(p.v, p.v_at, b, c, s.nk, s.d, ok, 0, w.v.data(), pn.d);
  // Without padding the head's saved probabilities are the scores panel: the
  // softmax runs in place there and nothing is copied out.
  T* head_probs = p.out_probs + g * s.nq * s.nk;
  const bool probs_in_place = pn.nq == s.nq && pn.nk == s.nk;
  T* scores = probs_in_place ? head_probs : w.scores.data();
  panel_product(pn.nq, pn.nk, s.d, q, q_in_place ? p.q_at.row : pn.d, w.kt.data(), pn.nk, scores, pn.nk);
  int64_t ok_ld = 0;
  const uint8_t* rows_ok = row_masks(s, ok, w.rows_ok, ok_ld);
  softmax_rows(scores, s.nq, pn.nk, rows_ok, ok_ld, s.nk, p.scale, w.maxima.data());
  if (!probs_in_place) {
    for (int64_t j = 0; j < s.nq; ++j) {
      T* row = scores + j * pn.nk;
      std::fill(row + s.nk, row + pn.nk, T(0));
      std::copy(row, row + s.nk, head_probs + j * s.nk);
    }
  }
  // P V over the valid keys only: the others' rows of v are zero and so is P there.
  panel_product(pn.nq, pn.d, s.nk, scores, pn.nk, w.v.data(), pn.d, w.out.data(), pn.d);
  panel_to_head_rows(w.out.data(), pn.d, s.nq, s.d, nullptr, p.out, p.out_at, b, c, 0);
}

template <class T>
struct BackwardScratch {
  Panels<T> pn;
  PanelBuffer<T> q, k, vt, g, probs, ds, row, deltas, dq, dk, dv;
  std::vector<uint8_t> rows_ok;
  template <class Dims>
  explicit BackwardScratch(const Dims& s)
      : pn(s),
        q(pn.nq * pn.d),
        k(pn.nk * pn.d),
        vt(pn.d * pn.nk),
        g(pn.nq * pn.d),
        probs(pn.nq * pn.nk),
        ds(pn.nq * pn.nk),
        row(pn.nk),
        deltas(pn.nq),
        dq(pn.nq * pn.d),
        dk(pn.nk * pn.d),
        dv(pn.nk * pn.d) {}
};

template <class T, class Dims>
ATTN_SIMD_CLONES void backward_head(const HeadOperands<T, Dims>& p, int64_t g, BackwardScratch<T>& w) {
  const Dims& s = p.s;
  const Panels<T>& pn = w.pn;
  const int64_t b = g / s.heads, c = g % s.heads;
  const uint8_t* ok = p.mask + b * s.nk;
  head_rows_to_panel(p.q, p.q_at, b, c, s.nq, s.d, nullptr, 0, w.q.data(), pn.d);
  head_rows_to_panel(p.g, p.g_at, b, c, s.nq, s.d, nullptr, 0, w.g.data(), pn.d);
  head_rows_to_panel(p.k, p.k_at, b, c, s.nk, s.d, ok, 0, w.k.data(), pn.d);
  head_rows_to_transposed_panel(p.v, p.v_at, b, c, s.nk, s.d, ok, 0, w.vt.data(), pn.nk);
  // The saved probabilities are read in place when they need no padding.
  const T* head_probs = p.probs + g * s.nq * s.nk;
  const bool probs_in_place = pn.nq == s.nq && pn.nk == s.nk;
  const T* probs = probs_in_place ? head_probs : w.probs.data();
  if (!probs_in_place)
    for (int64_t j = 0; j < s.nq; ++j)
      std::copy(head_probs + j * s.nk, head_probs + (j + 1) * s.nk, w.probs.data() + j * pn.nk);
  // dP = grad V^T, then dS row by row (padded rows and keys stay 0).
  panel_product(pn.nq, pn.nk, s.d, w.g.data(), pn.d, w.vt.data(), pn.nk, w.ds.data(), pn.nk);
  int64_t ok_ld = 0;
  const uint8_t* rows_ok = row_masks(s, ok, w.rows_ok, ok_ld);
  softmax_backward_rows(probs, w.ds.data(), s.nq, pn.nk, rows_ok, ok_ld, s.nk, p.scale, w.row.data(),
                        w.deltas.data());
  for (int64_t j = 0; j < pn.nq; ++j) {
    T* row = w.ds.data() + j * pn.nk;
    std::fill(row + (j < s.nq ? s.nk : 0), row + pn.nk, T(0));
  }
  // grad_q = dS K; grad_k = dS^T q; grad_v = P^T grad.
  panel_product(pn.nq, pn.d, s.nk, w.ds.data(), pn.nk, w.k.data(), pn.d, w.dq.data(), pn.d);
  panel_product_at(pn.nk, pn.d, s.nq, w.ds.data(), pn.nk, w.q.data(), pn.d, w.dk.data(), pn.d);
  panel_product_at(pn.nk, pn.d, s.nq, probs, pn.nk, w.g.data(), pn.d, w.dv.data(), pn.d);
  panel_to_head_rows(w.dq.data(), pn.d, s.nq, s.d, nullptr, p.dq, p.dq_at, b, c, 0);
  // A padded key passes no gradient, whatever the queries hold.
  panel_to_head_rows(w.dk.data(), pn.d, s.nk, s.d, ok, p.dk, p.dk_at, b, c, 0);
  panel_to_head_rows(w.dv.data(), pn.d, s.nk, s.d, ok, p.dv, p.dv_at, b, c, 0);
}

template <bool Causal>
void run_forward(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                 double scale, const Tensor& out, const Tensor& probabilities) {
  run_heads<DimsOf<Causal>, ForwardScratch>(
      op, q, k, v, key_valid, scale, [&](auto& p) { p.bind_forward_outputs(out, probabilities); },
      [](const auto& p, int64_t g, auto& w) { forward_head(p, g, w); });
}

template <bool Causal>
void run_backward(const char* op, const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                  const Tensor& key_valid, const Tensor& probabilities, double scale, const Tensor& grad_q,
                  const Tensor& grad_k, const Tensor& grad_v) {
  run_heads<DimsOf<Causal>, BackwardScratch>(
      op, q, k, v, key_valid, scale, [&](auto& p) { p.bind_backward(grad, probabilities, grad_q, grad_k, grad_v); },
      [](const auto& p, int64_t g, auto& w) { backward_head(p, g, w); });
}

}  // namespace

void dot_product_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_valid,
                                       double scale, const Tensor& out, const Tensor& probabilities) {
  run_forward<false>("dot_product_attention", q, k, v, key_valid, scale, out, probabilities);
}

void dot_product_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                        const Tensor& key_valid, const Tensor& probabilities, double scale,
                                        const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  run_backward<false>("dot_product_attention_backward", grad, q, k, v, key_valid, probabilities, scale, grad_q,
                      grad_k, grad_v);
}

void causal_dot_product_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                              const Tensor& key_valid, double scale, const Tensor& out,
                                              const Tensor& probabilities) {
  run_forward<true>("causal_dot_product_attention", q, k, v, key_valid, scale, out, probabilities);
}

void causal_dot_product_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k,
                                               const Tensor& v, const Tensor& key_valid,
                                               const Tensor& probabilities, double scale, const Tensor& grad_q,
                                               const Tensor& grad_k, const Tensor& grad_v) {
  run_backward<true>("causal_dot_product_attention_backward", grad, q, k, v, key_valid, probabilities, scale, grad_q,
                     grad_k, grad_v);
}

}  // namespace attn

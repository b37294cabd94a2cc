// CPU kernels of the fused window attention, one task per head
// (ops/cpu/head_tasks.h).
//
// A task copies its head into zero-padded panels with a halo of R rows on
// each side (key i sits at panel row i + R), then walks its queries in
// blocks of panel_rows: the queries j0 .. j0 + 7 see keys j0 - R .. j0 + 7 + R,
// one contiguous panel window, so a block's scores, P v and, in the backward,
// dO v^T, dS k, dS^T q and P^T dO are small products (ops/cpu/panel_product.h)
// over a window of round_up(W + 7, 32) keys: O(n W d) work, vectorised.
// Entries outside a query's band or not allowed by the mask are selected out
// of the softmax; keys no query may attend are zero rows of the panels and
// get exactly zero gradients. Rows are read and written through the
// operands' strides (HeadRows).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attn/ops/cpu/attention_rows.h"
#include "attn/ops/cpu/head_panels.h"
#include "attn/ops/cpu/head_tasks.h"
#include "attn/ops/cpu/panel_product.h"
#include "attn/ops/window_attention/window_attention_kernels.h"

namespace attn {

namespace {

struct Dims {
  int64_t G, heads, n, d, W, R;
  bool per_head_mask;
  Dims(const Tensor& q, const Tensor&, const Tensor& allowed)
      : G(q.size(0) * q.size(1)),
        heads(q.size(1)),
        n(q.size(2)),
        d(q.size(3)),
        W(allowed.size(allowed.dim() - 1)),
        R((W - 1) / 2),
        per_head_mask(allowed.dim() == 4) {}
  int64_t head_count() const { return G; }
  int64_t work() const { return n * W * d; }
};

template <class T>
using Operands = HeadOperands<T, Dims>;

// The band mask rows of head g: its own, or its example's.
const uint8_t* mask_of(const uint8_t* allowed, const Dims& s, int64_t g) {
  return allowed + (s.per_head_mask ? g : g / s.heads) * s.n * s.W;
}

// A head's panel sizes: queries in whole blocks of panel_rows, a block's key
// window of kw columns, keys with their halo in kn rows, features in d.
template <class T>
struct Panels {
  int64_t rows, nq, kw, kn, d;
  explicit Panels(const Dims& s)
      : rows(panel_rows<T>),
        nq(round_up(std::max<int64_t>(s.n, 1), panel_rows<T>)),
        kw(round_up(panel_rows<T> + s.W - 1, kPanelCols)),
        kn(nq - panel_rows<T> + kw),
        d(round_up(std::max<int64_t>(s.d, 1), kPanelCols)) {}
};

// band[t] = 1 where band offset t of query j names a key inside [0, n)
// that the mask allows, else 0.
inline void band_of(const Dims& s, const uint8_t* mask, int64_t j, uint8_t* band) {
  const uint8_t* ok = mask + j * s.W;
  const int64_t lo = std::max<int64_t>(0, s.R - j), hi = std::min<int64_t>(s.W, s.n - j + s.R);
  for (int64_t t = 0; t < s.W; ++t) band[t] = t >= lo && t < hi && ok[t] != 0;
}

// attended[i]: some query of the head may attend key i.
void attended_keys(const Dims& s, const uint8_t* mask, std::vector<uint8_t>& band, std::vector<uint8_t>& attended) {
  std::fill(attended.begin(), attended.end(), uint8_t{0});
  for (int64_t j = 0; j < s.n; ++j) {
    band_of(s, mask, j, band.data());
    for (int64_t t = 0; t < s.W; ++t)
      if (band[t]) attended[static_cast<size_t>(j - s.R + t)] = 1;
  }
}

// A task's panels, zero-filled once. In a block's window, query j = j0 + r's
// band offset t is column r + t.
template <class T>
struct ForwardScratch {
  Panels<T> pn;
  PanelBuffer<T> q, kt, v, scores, probs, out, maxima;
  std::vector<uint8_t> band, attended;  // band: a block's rows of band masks
  explicit ForwardScratch(const Dims& s)
      : pn(s),
        q(pn.nq * pn.d),
        kt(pn.d * pn.kn),
        v(pn.kn * pn.d),
        scores(pn.rows * pn.kw),
        probs(pn.rows * pn.kw),
        out(pn.rows * pn.d),
        maxima(pn.rows),
        band(static_cast<size_t>(pn.rows * s.W)),
        attended(static_cast<size_t>(s.n)) {}
};

template <class T>
ATTN_SIMD_CLONES void forward_head(const Operands<T>& p, int64_t g, ForwardScratch<T>& w) {
  const Dims& s = p.s;
  const Panels<T>& pn = w.pn;
  const int64_t b = g / s.heads, c = g % s.heads;
  const uint8_t* mask = mask_of(p.mask, s, g);
  attended_keys(s, mask, w.band, w.attended);
  head_rows_to_panel(p.q, p.q_at, b, c, s.n, s.d, nullptr, 0, w.q.data(), pn.d);
  head_rows_to_transposed_panel(p.k, p.k_at, b, c, s.n, s.d, w.attended.data(), s.R, w.kt.data(), pn.kn);
  head_rows_to_panel(p.v, p.v_at, b, c, s.n, s.d, w.attended.data(), s.R, w.v.data(), pn.d);
  for (int64_t j0 = 0; j0 < s.n; j0 += pn.rows) {
    panel_product(pn.rows, pn.kw, s.d, w.q.data() + j0 * pn.d, pn.d, w.kt.data() + j0, pn.kn, w.scores.data(), pn.kw);
    std::fill(w.probs.begin(), w.probs.end(), T(0));
    // Row r's band (offsets t = 0 .. W-1) starts at column r: rows pn.kw + 1 apart.
    const int64_t block = std::min(pn.rows, s.n - j0);
    for (int64_t r = 0; r < block; ++r) {
      band_of(s, mask, j0 + r, w.band.data() + r * s.W);
      std::copy(w.scores.begin() + r * pn.kw + r, w.scores.begin() + r * pn.kw + r + s.W,
                w.probs.begin() + r * pn.kw + r);
    }
    // Zeros where not allowed, or everywhere in a row with nothing allowed.
    softmax_rows(w.probs.data(), block, pn.kw + 1, w.band.data(), s.W, s.W, p.scale, w.maxima.data());
    for (int64_t r = 0; r < block; ++r) {
      const T* prow = w.probs.data() + r * pn.kw + r;
      std::copy(prow, prow + s.W, p.out_probs + (g * s.n + j0 + r) * s.W);
    }
    panel_product(pn.rows, pn.d, pn.kw, w.probs.data(), pn.kw, w.v.data() + j0 * pn.d, pn.d, w.out.data(), pn.d);
    panel_to_head_rows(w.out.data(), pn.d, std::min(pn.rows, s.n - j0), s.d, nullptr, p.out, p.out_at, b, c, j0);
  }
}

template <class T>
struct BackwardScratch {
  Panels<T> pn;
  PanelBuffer<T> q, g, k, vt, probs, ds, dq, dk, dv, row, deltas;
  std::vector<uint8_t> band, attended;  // band: a block's rows of band masks
  explicit BackwardScratch(const Dims& s)
      : pn(s),
        q(pn.nq * pn.d),
        g(pn.nq * pn.d),
        k(pn.kn * pn.d),
        vt(pn.d * pn.kn),
        probs(pn.rows * pn.kw),
        ds(pn.rows * pn.kw),
        dq(pn.rows * pn.d),
        dk(pn.kn * pn.d),
        dv(pn.kn * pn.d),
        row(static_cast<size_t>(s.W)),
        deltas(pn.rows),
        band(static_cast<size_t>(pn.rows * s.W)),
        attended(static_cast<size_t>(s.n)) {}
};

template <class T>
ATTN_SIMD_CLONES void backward_head(const Operands<T>& p, int64_t g, BackwardScratch<T>& w) {
  const Dims& s = p.s;
  const Panels<T>& pn = w.pn;
  const int64_t b = g / s.heads, c = g % s.heads;
  const uint8_t* mask = mask_of(p.mask, s, g);
  attended_keys(s, mask, w.band, w.attended);
  head_rows_to_panel(p.q, p.q_at, b, c, s.n, s.d, nullptr, 0, w.q.data(), pn.d);
  head_rows_to_panel(p.g, p.g_at, b, c, s.n, s.d, nullptr, 0, w.g.data(), pn.d);
  head_rows_to_panel(p.k, p.k_at, b, c, s.n, s.d, w.attended.data(), s.R, w.k.data(), pn.d);
  head_rows_to_transposed_panel(p.v, p.v_at, b, c, s.n, s.d, w.attended.data(), s.R, w.vt.data(), pn.kn);
  std::fill(w.dk.begin(), w.dk.end(), T(0));
  std::fill(w.dv.begin(), w.dv.end(), T(0));
  for (int64_t j0 = 0; j0 < s.n; j0 += pn.rows) {
    // dP = dO v^T over the block's window (parked in ds), then dS per row.
    panel_product(pn.rows, pn.kw, s.d, w.g.data() + j0 * pn.d, pn.d, w.vt.data() + j0, pn.kn, w.ds.data(), pn.kw);
    std::fill(w.probs.begin(), w.probs.end(), T(0));
    const int64_t block = std::min(pn.rows, s.n - j0);
    for (int64_t r = 0; r < block; ++r) {
      uint8_t* band = w.band.data() + r * s.W;
      band_of(s, mask, j0 + r, band);
      const T* saved = p.probs + (g * s.n + j0 + r) * s.W;
      T* prow = w.probs.data() + r * pn.kw + r;
      for (int64_t t = 0; t < s.W; ++t) prow[t] = band[t] ? saved[t] : T(0);
    }
    // dS = scale P (dP - delta) on each row's band (rows pn.kw + 1 apart), 0
    // everywhere else in the window and in the rows past the last query.
    softmax_backward_rows(w.probs.data(), w.ds.data(), block, pn.kw + 1, w.band.data(), s.W, s.W, p.scale,
                          w.row.data(), w.deltas.data());
    for (int64_t r = 0; r < pn.rows; ++r) {
      T* dsrow = w.ds.data() + r * pn.kw;
      if (r >= block) {
        std::fill(dsrow, dsrow + pn.kw, T(0));
        continue;
      }
      std::fill(dsrow, dsrow + r, T(0));
      std::fill(dsrow + r + s.W, dsrow + pn.kw, T(0));
    }
    // dQ = dS k; dK += dS^T q; dV += P^T dO, over the block's window.
    panel_product(pn.rows, pn.d, pn.kw, w.ds.data(), pn.kw, w.k.data() + j0 * pn.d, pn.d, w.dq.data(), pn.d);
    panel_to_head_rows(w.dq.data(), pn.d, std::min(pn.rows, s.n - j0), s.d, nullptr, p.dq, p.dq_at, b, c, j0);
    panel_product_at_add(pn.kw, pn.d, pn.rows, w.ds.data(), pn.kw, w.q.data() + j0 * pn.d, pn.d,
                         w.dk.data() + j0 * pn.d, pn.d);
    panel_product_at_add(pn.kw, pn.d, pn.rows, w.probs.data(), pn.kw, w.g.data() + j0 * pn.d, pn.d,
                         w.dv.data() + j0 * pn.d, pn.d);
  }
  // Key i sits at panel row i + R; a key no query may attend gets exactly no gradient.
  const uint8_t* attended = w.attended.data();
  panel_to_head_rows(w.dk.data() + s.R * pn.d, pn.d, s.n, s.d, attended, p.dk, p.dk_at, b, c, 0);
  panel_to_head_rows(w.dv.data() + s.R * pn.d, pn.d, s.n, s.d, attended, p.dv, p.dv_at, b, c, 0);
}

}  // namespace

void window_attention_forward_cpu(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                  double scale, const Tensor& out, const Tensor& probabilities) {
  run_heads<Dims, ForwardScratch>(
      "window_attention", q, k, v, allowed, scale, [&](auto& p) { p.bind_forward_outputs(out, probabilities); },
      [](const auto& p, int64_t g, auto& w) { forward_head(p, g, w); });
}

void window_attention_backward_cpu(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& allowed, const Tensor& probabilities, double scale,
                                   const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v) {
  run_heads<Dims, BackwardScratch>(
      "window_attention_backward", q, k, v, allowed, scale,
      [&](auto& p) { p.bind_backward(grad, probabilities, grad_q, grad_k, grad_v); },
      [](const auto& p, int64_t g, auto& w) { backward_head(p, g, w); });
}

}  // namespace attn

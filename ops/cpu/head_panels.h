// What the per-head CPU kernels (dot_product_attention, window_attention)
// share: their operands (HeadOperands; ops/cpu/head_tasks.h runs them over
// the heads) and the copies between one attention head's rows (read
// through HeadRows, see ops/head_rows.h) and the zero-padded scratch panels
// on which they run their products as panel_product blocks
// (ops/cpu/panel_product.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/ops/head_rows.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/cpu/panel_copies_avx512.h"

namespace attn {

// What both per-head kernels read and write: the call's sizes (the
// kernel's own Sizes, built from q, k and the mask), the mask's data, each
// operand's data and the HeadRows that find head (b, c)'s rows in it. Built
// with the inputs; the forward's or the backward's outputs are bound after,
// and what is not bound stays null.
template <class T, class Sizes>
struct HeadOperands {
  Sizes s;
  const uint8_t* mask;
  T scale;
  const T *q, *k, *v, *g{}, *probs{};
  HeadRows q_at, k_at, v_at, g_at{}, out_at{}, dq_at{}, dk_at{}, dv_at{};
  T *out{}, *out_probs{}, *dq{}, *dk{}, *dv{};

  HeadOperands(const Tensor& query, const Tensor& key, const Tensor& values, const Tensor& mask_of_call,
               double scale_factor)
      : s(query, key, mask_of_call),
        mask(mask_of_call.data<uint8_t>()),
        scale(static_cast<T>(scale_factor)),
        q(query.data<T>()),
        k(key.data<T>()),
        v(values.data<T>()),
        q_at(head_rows(query)),
        k_at(head_rows(key)),
        v_at(head_rows(values)) {}
  void bind_forward_outputs(const Tensor& output, const Tensor& probabilities) {
    out = output.data<T>();
    out_at = head_rows(output);
    out_probs = probabilities.data<T>();
  }
  void bind_backward(const Tensor& grad, const Tensor& probabilities, const Tensor& grad_q, const Tensor& grad_k,
                     const Tensor& grad_v) {
    g = grad.data<T>();
    g_at = head_rows(grad);
    probs = probabilities.data<T>();
    dq = grad_q.data<T>();
    dq_at = head_rows(grad_q);
    dk = grad_k.data<T>();
    dk_at = head_rows(grad_k);
    dv = grad_v.data<T>();
    dv_at = head_rows(grad_v);
  }
};

// A scratch panel's storage: 64-byte aligned, so that a row of a panel
// whose leading dimension is a multiple of 16 floats starts on a cache line.
template <class T>
struct PanelAllocator {
  using value_type = T;
  PanelAllocator() = default;
  template <class U>
  PanelAllocator(const PanelAllocator<U>&) {}
  T* allocate(size_t count) {
    void* p = std::aligned_alloc(64, (count * sizeof(T) + 63) / 64 * 64);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const PanelAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const PanelAllocator<U>&) const { return false; }
};
template <class T>
using PanelBuffer = std::vector<T, PanelAllocator<T>>;

// Row r < rows of head (b, c) of x into panel row r + offset (the first d
// entries of it; in float32 with AVX-512 the rest of its first
// round_up(d, 16) entries become 0: ld must be a multiple of 16 there and
// the panel a PanelBuffer). With `keep`, a row with keep[r] == 0 becomes a
// zero row instead: a key that must not be attended is selected out of the
// products, whatever its row holds (NaN included), never weighted by zero.
template <class T>
void head_rows_to_panel(const T* x, const HeadRows& at, int64_t b, int64_t c, int64_t rows, int64_t d,
                        const uint8_t* keep, int64_t offset, T* panel, int64_t ld) {
  if constexpr (std::is_same_v<T, float>) {
    if (sgemm_avx512_available()) {
      copy_rows_to_panel_avx512(x + at.at(b, c, 0), at.row, rows, d, keep, panel + offset * ld, ld);
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = panel + (r + offset) * ld;
    if (keep && !keep[r]) {
      std::fill(dst, dst + d, T(0));
    } else {
      std::copy(x + at.at(b, c, r), x + at.at(b, c, r) + d, dst);
    }
  }
}

// The same rows transposed: panel[l * ld + r + offset] = x[row r][l]. In
// float32 on a CPU with AVX-512 the copy goes through register transposes.
template <class T>
void head_rows_to_transposed_panel(const T* x, const HeadRows& at, int64_t b, int64_t c, int64_t rows, int64_t d,
                                   const uint8_t* keep, int64_t offset, T* panel, int64_t ld) {
  if constexpr (std::is_same_v<T, float>) {
    if (sgemm_avx512_available()) {
      transpose_rows_avx512(x + at.at(b, c, 0), at.row, rows, d, keep, panel + offset, ld);
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x + at.at(b, c, r);
    const bool kept = !keep || keep[r];
    for (int64_t l = 0; l < d; ++l) panel[l * ld + r + offset] = kept ? row[l] : T(0);
  }
}

// The way back: panel row r (its first d entries) to row first + r of head
// (b, c) of x, for r < rows. With `keep`, a row with keep[r] == 0 gets zeros
// instead: a key no query may attend passes exactly no gradient, whatever
// its panel row holds (a NaN query reaches every key's row of dS^T q).
template <class T>
void panel_to_head_rows(const T* panel, int64_t ld, int64_t rows, int64_t d, const uint8_t* keep, T* x,
                        const HeadRows& at, int64_t b, int64_t c, int64_t first) {
  if constexpr (std::is_same_v<T, float>) {
    if (sgemm_avx512_available()) {
      copy_rows_avx512(panel, ld, rows, d, keep, x + at.at(b, c, first), at.row);
      return;
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = x + at.at(b, c, first + r);
    if (keep && !keep[r]) {
      std::fill(dst, dst + d, T(0));
    } else {
      std::copy(panel + r * ld, panel + r * ld + d, dst);
    }
  }
}

}  // namespace attn

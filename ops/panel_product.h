// C = A B for the small products inside a fused CPU kernel (one attention
// head: 64 x 64 x 32 at the Transformer's default size), where an OpenBLAS
// call costs more than the arithmetic. Operands are the caller's scratch
// panels, zero-padded so that every block is whole: m a multiple of
// panel_rows<T>, n a multiple of kPanelCols. A block of panel_rows<T> x
// kPanelCols outputs stays in 16 vector registers for the whole k loop, so
// each step is a few broadcasts and independent multiply-adds, never a
// reduction and never a store-to-load chain through memory. The vectors are
// GCC vector extensions: 16 floats or 8 doubles, which the AVX-512 clone of
// an ATTN_SIMD_CLONES caller keeps in one register and the others split.
#pragma once
#include <cstdint>
#include <cstring>

namespace attn {

template <class T>
struct PanelVector {
  typedef T type __attribute__((vector_size(64)));
  static constexpr int64_t lanes = 64 / static_cast<int64_t>(sizeof(T));
};

constexpr int64_t kPanelCols = 32;
template <class T>
constexpr int64_t panel_rows = 16 / (kPanelCols / PanelVector<T>::lanes);  // 8 float rows, 4 double rows

// x rounded up to a multiple of `step`.
inline int64_t round_up(int64_t x, int64_t step) { return (x + step - 1) / step * step; }

// C[m x n] = A[m x kk] B[kk x n] (Accumulate: C += A B), all row-major
// with leading dimensions lda, ldb, ldc; inlined into its caller so it
// compiles for the caller's clone.
template <class T, bool Accumulate = false>
inline __attribute__((always_inline)) void panel_product(int64_t m, int64_t n, int64_t kk, const T* A, int64_t lda,
                                                         const T* B, int64_t ldb, T* C, int64_t ldc) {
  using V = typename PanelVector<T>::type;
  constexpr int64_t L = PanelVector<T>::lanes, VW = kPanelCols / L, R = panel_rows<T>;
  for (int64_t r0 = 0; r0 < m; r0 += R)
    for (int64_t c0 = 0; c0 < n; c0 += kPanelCols) {
      V acc[R][VW];
      for (int64_t r = 0; r < R; ++r)
        for (int64_t v = 0; v < VW; ++v) {
          if (Accumulate) {
            std::memcpy(&acc[r][v], C + (r0 + r) * ldc + c0 + v * L, sizeof(V));
          } else {
            acc[r][v] = V{};
          }
        }
      for (int64_t k = 0; k < kk; ++k) {
        V b[VW];
        for (int64_t v = 0; v < VW; ++v) std::memcpy(&b[v], B + k * ldb + c0 + v * L, sizeof(V));
        for (int64_t r = 0; r < R; ++r) {
          const T a = A[(r0 + r) * lda + k];
          for (int64_t v = 0; v < VW; ++v) acc[r][v] += a * b[v];
        }
      }
      for (int64_t r = 0; r < R; ++r)
        for (int64_t v = 0; v < VW; ++v) std::memcpy(C + (r0 + r) * ldc + c0 + v * L, &acc[r][v], sizeof(V));
    }
}

// C += A B, as above.
template <class T>
inline __attribute__((always_inline)) void panel_product_add(int64_t m, int64_t n, int64_t kk, const T* A, int64_t lda,
                                                             const T* B, int64_t ldb, T* C, int64_t ldc) {
  panel_product<T, true>(m, n, kk, A, lda, B, ldb, C, ldc);
}

}  // namespace attn

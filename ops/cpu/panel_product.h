// C = A B for the small products inside a fused CPU kernel (one attention
// head: 64 x 64 x 32 at the Transformer's default size), where an OpenBLAS
// call costs more than the arithmetic. Operands are the caller's scratch
// panels, zero-padded so that every block is whole: m a multiple of
// panel_rows<T>, n a multiple of kPanelCols. A block of panel_rows<T> x
// kPanelCols outputs stays in 16 vector registers for the whole k loop, so
// each step is a few broadcasts and independent multiply-adds, never a
// reduction and never a store-to-load chain through memory. The vectors are
// GCC vector extensions: 16 floats or 8 doubles, which the AVX-512 clone of
// an ATTN_SIMD_CLONES caller keeps in one register; other CPUs take a
// narrower blocking (panel_product below).
#pragma once
#include <cstdint>
#include <cstring>

#include "attn/ops/cpu/vector_math.h"

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

// One block of C: Rows x (Vectors * lanes of V) outputs at (r0, c0), kept
// in Rows * Vectors accumulators for the whole k loop.
// With TransA, A is stored transposed ([kk x m], lda): row r's k-th value
// is A[k * lda + r]. Only the scalar that is broadcast is read differently,
// so a product with a transposed operand needs no transposed copy of it.
template <class V, int64_t Rows, int64_t Vectors, bool Accumulate, bool TransA, class T>
inline __attribute__((always_inline)) void panel_block(int64_t r0, int64_t c0, int64_t kk, const T* A, int64_t lda,
                                                       const T* B, int64_t ldb, T* C, int64_t ldc) {
  constexpr int64_t L = static_cast<int64_t>(sizeof(V) / sizeof(T));
  V acc[Rows][Vectors];
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t v = 0; v < Vectors; ++v) {
      if (Accumulate) {
        std::memcpy(&acc[r][v], C + (r0 + r) * ldc + c0 + v * L, sizeof(V));
      } else {
        acc[r][v] = V{};
      }
    }
  for (int64_t k = 0; k < kk; ++k) {
    V b[Vectors];
    for (int64_t v = 0; v < Vectors; ++v) std::memcpy(&b[v], B + k * ldb + c0 + v * L, sizeof(V));
    for (int64_t r = 0; r < Rows; ++r) {
      const T a = TransA ? A[k * lda + r0 + r] : A[(r0 + r) * lda + k];
      for (int64_t v = 0; v < Vectors; ++v) acc[r][v] += a * b[v];
    }
  }
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t v = 0; v < Vectors; ++v) std::memcpy(C + (r0 + r) * ldc + c0 + v * L, &acc[r][v], sizeof(V));
}

// C[m x n] = A[m x kk] B[kk x n] (Accumulate: C += A B), all row-major
// with leading dimensions lda, ldb, ldc; inlined into its caller so it
// compiles for the caller's clone. The register blocking depends on the CPU
// the clone runs on: with AVX-512's 32 vector registers a whole
// panel_rows x kPanelCols block is 16 accumulators; on AVX2 they are 32
// ymm halves for 16 registers and do not stay in registers (the
// Transformer's fused attention ran at 2.6 GFLOP/s on a Zen 1 CPU), so
// there each block is done as 4-row x 2-vector sub-blocks of 32-byte
// vectors: 8 accumulators, two loads of B and four broadcasts per step.
template <class T, bool Accumulate = false, bool TransA = false>
inline __attribute__((always_inline)) void panel_product(int64_t m, int64_t n, int64_t kk, const T* A, int64_t lda,
                                                         const T* B, int64_t ldb, T* C, int64_t ldc) {
  using Wide = typename PanelVector<T>::type;
  constexpr int64_t R = panel_rows<T>;
#if defined(ATTN_HAS_SIMD_CLONES)
  // The CPUs whose ATTN_SIMD_CLONES dispatch picks the AVX-512 clone.
  static const bool wide_registers = __builtin_cpu_supports("x86-64-v4");
#elif defined(__AVX512F__)
  constexpr bool wide_registers = true;
#else
  constexpr bool wide_registers = false;
#endif
  if (wide_registers) {
    for (int64_t r0 = 0; r0 < m; r0 += R)
      for (int64_t c0 = 0; c0 < n; c0 += kPanelCols)
        panel_block<Wide, R, kPanelCols / PanelVector<T>::lanes, Accumulate, TransA>(r0, c0, kk, A, lda, B, ldb, C,
                                                                                      ldc);
    return;
  }
  typedef T Narrow __attribute__((vector_size(32)));
  constexpr int64_t kSubRows = 4, kSubVectors = 2, kSubCols = kSubVectors * static_cast<int64_t>(32 / sizeof(T));
  static_assert(R % kSubRows == 0 && kPanelCols % kSubCols == 0, "sub-blocks must tile a panel block");
  for (int64_t r0 = 0; r0 < m; r0 += kSubRows)
    for (int64_t c0 = 0; c0 < n; c0 += kSubCols)
      panel_block<Narrow, kSubRows, kSubVectors, Accumulate, TransA>(r0, c0, kk, A, lda, B, ldb, C, ldc);
}

// C += A B, as above.
template <class T>
inline __attribute__((always_inline)) void panel_product_add(int64_t m, int64_t n, int64_t kk, const T* A, int64_t lda,
                                                             const T* B, int64_t ldb, T* C, int64_t ldc) {
  panel_product<T, true>(m, n, kk, A, lda, B, ldb, C, ldc);
}

// C = A^T B and C += A^T B with A stored [kk x m] (lda >= m, m padded like
// the rows above): the attention backward's dS^T q and P^T dO read dS and P
// as they are (a scalar transpose of each was a quarter of that kernel).
template <class T>
inline __attribute__((always_inline)) void panel_product_at(int64_t m, int64_t n, int64_t kk, const T* A, int64_t lda,
                                                            const T* B, int64_t ldb, T* C, int64_t ldc) {
  panel_product<T, false, true>(m, n, kk, A, lda, B, ldb, C, ldc);
}
template <class T>
inline __attribute__((always_inline)) void panel_product_at_add(int64_t m, int64_t n, int64_t kk, const T* A,
                                                                int64_t lda, const T* B, int64_t ldb, T* C,
                                                                int64_t ldc) {
  panel_product<T, true, true>(m, n, kk, A, lda, B, ldb, C, ldc);
}

}  // namespace attn

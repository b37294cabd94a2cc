// The engine's own float32 GEMM for CPUs with AVX-512: the default float32
// GEMM there, whatever kernels OpenBLAS has for the CPU (docs/engine.md,
// "The float32 GEMM"). Its calls are single-threaded, and callers thread
// batches of them the way they thread OpenBLAS's serial calls; a single
// product runs on several threads through sgemm_avx512_threaded
// (ops/matmul/matmul_cpu.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace attn {

// Where an operand's rows start, in floats from its pointer: rows come in
// groups of `group` rows `ld` apart, and group g starts g * group_stride in
// (a batch of products whose A and C are evenly spaced, seen as one tall
// product). plain(m, ld) is the usual row-major layout.
struct SgemmRows {
  int64_t group, ld, group_stride;
  int64_t at(int64_t row) const { return row / group * group_stride + row % group * ld; }
  static SgemmRows plain(int64_t rows, int64_t ld) { return {rows > 0 ? rows : 1, ld, 0}; }
};

// C (m x n, row-major, ldc) = op(A) op(B) + beta C (+ bias), op(A) m x k,
// op(B) k x n, row-major storage with leading dimensions lda and ldb as in
// cblas_sgemm. A bias (n floats, or null) is added to every row of C as the
// sums are stored, so a linear layer's output is written once instead of
// being filled with the bias first and read back; with `relu` the stored
// values are relu'd too (C = relu(op(A) op(B) + beta C + bias), NaN kept).
// Only callable where sgemm_avx512_available().
void sgemm_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const float* bias = nullptr,
                  bool relu = false);

// sgemm_avx512 on `threads` OpenMP threads (called outside any parallel
// region): each block of B is packed once for all of them, and blocks of C's
// rows go to whichever thread is free next, so that a thread on a slower or
// busier core takes fewer. The same bits as sgemm_avx512, whatever the
// thread count.
void sgemm_avx512_threaded(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const float* bias, bool relu,
                           int threads);

// count products C[t] = op(A[t]) op(B) + beta C[t] with one B (and one m, n,
// k, lda, ldc for all): B is packed once per block instead of once per
// product, which is most of a small product's cost. Each C[t] gets the same
// bits as its own sgemm_avx512 call.
void sgemm_avx512_shared_b(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* const* a,
                           int64_t lda, const float* b, int64_t ldb, float beta, float* const* c, int64_t ldc,
                           int64_t count, const float* bias = nullptr, bool relu = false);

// C = A op(B) + beta C (+ bias) for m rows of A (stored [m, k]) and of C
// placed by a_rows and c_rows: a batch of products that share B and whose A
// and C are evenly spaced runs as one product of all their rows, without a
// short last tile per product. Each element gets the bits of its own call.
void sgemm_avx512_grouped(bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, const SgemmRows& a_rows,
                          const float* b, int64_t ldb, float beta, float* c, const SgemmRows& c_rows,
                          const float* bias = nullptr, bool relu = false);

// C (m x n, ldc) = A^T B + beta C, where A's k depth rows (m floats each)
// and B's k depth rows (n floats each) are where a_rows and b_rows put them:
// a product summed over a batch (a weight shared by the batch entries, whose
// gradient sums every entry's A^T G) read in place instead of gathered into
// one [k, m] and one [k, n] matrix first. Each element gets the bits of the
// call on the gathered matrices.
void sgemm_avx512_depth_rows(int64_t m, int64_t n, int64_t k, const float* a, const SgemmRows& a_rows, const float* b,
                             const SgemmRows& b_rows, float beta, float* c, int64_t ldc);

// The CPU has AVX-512F and the environment does not switch it off
// (ATTN_AVX512=off; checked once).
bool sgemm_avx512_available();

// Which float32 GEMM the CPU kernels call: the engine's own where the CPU
// has AVX-512 (the default), or OpenBLAS always. Process-wide; tests set it
// to check both against each other.
enum class CpuSgemm { automatic, openblas };
void set_cpu_sgemm(CpuSgemm choice);
// "auto" or "openblas" (the values of the ATTN_SGEMM environment variable
// that the attn program reads); anything else is an error naming the value.
CpuSgemm cpu_sgemm_from_name(const std::string& name);
// True when float32 products go to sgemm_avx512.
bool use_own_sgemm();

}  // namespace attn

// Kernel signatures of the matmul family, and the rules every GEMM backend
// shares for reading strided (and batched) matrices without copying them.
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "attn/ops/matmul/matmul.h"

namespace attn {

// How a BLAS GEMM (row-major) reads a rows x cols matrix stored with strides
// (row_stride, col_stride): as is (unit column stride), or transposed (unit
// row stride), with leading dimension ld. ok is false when neither fits and
// the operand must be made contiguous first.
struct GemmLayout {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

inline GemmLayout gemm_layout(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  // A stride along an axis of size 1 is never used, so it cannot disqualify a layout.
  const int64_t min_ld_plain = std::max<int64_t>(1, cols);
  const int64_t ld_plain = rows <= 1 ? min_ld_plain : row_stride;
  if ((cols <= 1 || col_stride == 1) && ld_plain >= min_ld_plain && ld_plain <= INT_MAX) return {true, false, ld_plain};
  const int64_t min_ld_trans = std::max<int64_t>(1, rows);
  const int64_t ld_trans = cols <= 1 ? min_ld_trans : col_stride;
  if ((rows <= 1 || row_stride == 1) && ld_trans >= min_ld_trans && ld_trans <= INT_MAX) return {true, true, ld_trans};
  return {};
}

// Layout of the last two axes of t.
inline GemmLayout gemm_layout(const Tensor& t) {
  const int64_t r = t.dim();
  return gemm_layout(t.shape()[r - 2], t.shape()[r - 1], t.strides()[r - 2], t.strides()[r - 1]);
}

// How the batch axes (all but the last two) of a GEMM operand are laid out;
// shared by the CPU and CUDA backends (ops/matmul/matmul_batch.cpp).
// Element offsets of every batch entry of t, in row-major batch order.
std::vector<int64_t> batch_offsets(const Tensor& t, int64_t batch);
// The common step when offsets[i] == i * step for every i, else -1.
int64_t uniform_step(const std::vector<int64_t>& offsets);
// True when every batch axis of t has size 1 or stride 0 (one matrix for all).
bool batch_is_broadcast(const Tensor& t);
// True when a's batch axes continue its rows with the same stride ld, so
// [batch..., m, k] is one [batch*m, k] matrix.
bool batch_folds_into_rows(const Tensor& a, int64_t ld);

// a [E, S, R, m] and g [E, S, R, n] (any strides) as the operands of one
// GEMM per entry e: a_t [E, m, S*R] (a transposed view) and g_rows
// [E, S*R, n], each a view where the S entries continue the rows in one
// stride (a batch of contiguous rows), else of a contiguous copy. The
// matmul_summed kernels' path where their GEMM cannot read the rows in place.
struct GatheredRows {
  Tensor a_t, g_rows;
};
GatheredRows gather_summed_rows(const Tensor& a, const Tensor& g);

// What out_rows holds before a linear kernel's GEMM: the bias in every row,
// zeros when the product is empty (in == 0) and there is no bias, or the
// sum so far when accumulating. Returns whether the GEMM adds onto it
// (beta = 1). Shared by the CPU and CUDA kernels (ops/matmul/matmul_batch.cpp).
bool prepare_linear_rows(const Tensor& bias, int64_t in, bool accumulate, const Tensor& out_rows);

// out = a @ b per batch entry, or out += a @ b with `accumulate` (GEMM
// beta = 1: a gradient added into the one already pending). a [batch..., m, k]
// and b [batch..., k, n] already carry out's batch shape (stride 0 on
// broadcast axes) and a gemm_layout that is ok; out is a contiguous
// [batch..., m, n].
void matmul_cpu(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate);
// out = a @ b + bias_rows, relu'd with `relu`: a, b and out as in
// matmul_cpu, bias_rows a view of out's shape whose row axis has stride 0
// (a bias per output column, per batch entry where it varies). On the
// engine's float32 kernel the bias is added and the relu taken as the GEMM
// stores its sums; elsewhere out starts as the bias and the GEMM adds onto it.
void matmul_bias_cpu(const Tensor& a, const Tensor& b, const Tensor& bias_rows, const Tensor& out, bool relu);
// out_rows = x_rows @ weight_t (+ bias per row when defined). x_rows [rows, in]
// and weight_t [in, out] (the transposed weight view) have ok gemm layouts;
// out_rows is a contiguous [rows, out]. With `accumulate` the product is
// added to what out_rows holds (GEMM beta = 1; bias undefined): the later
// terms of linear_sum. With `relu` out_rows ends as relu of all that (a
// linear layer and its activation in one pass where the GEMM can fuse it).
void linear_cpu(const Tensor& x_rows, const Tensor& weight_t, const Tensor& bias, const Tensor& out_rows,
                bool accumulate, bool relu);

// out[e] = sum over s and r of a[e, s, r, :]^T g[e, s, r, :]: a [E, S, R, m]
// and g [E, S, R, n] with any strides, out a contiguous [E, m, n]. The
// gradient of a weight shared by the S entries of a batch axis (MTSA's
// per-head weights over the batch), whose rows R per entry continue in
// steps of one stride and jump by another between entries: the engine's
// float32 GEMM reads them where they are (sgemm_avx512_depth_rows), other
// GEMMs read a gathered copy.
void matmul_summed_cpu(const Tensor& a, const Tensor& g, const Tensor& out);

// C = op(A) op(B) + beta C, all row-major, as one GEMM on the calling thread
// by the backend the matmul op uses (OpenBLAS, or ops/cpu/sgemm_avx512.h where
// the CPU has AVX-512): the per-block products inside a fused CPU kernel.
// Call use_serial_blas() (engine/blas_threads.h) before the first one.
template <class T>
void gemm_on_this_thread(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                         const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

#ifdef ATTN_WITH_CUDA
void matmul_cuda(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate);
void linear_cuda(const Tensor& x_rows, const Tensor& weight_t, const Tensor& bias, const Tensor& out_rows,
                 bool accumulate, bool relu);
void matmul_summed_cuda(const Tensor& a, const Tensor& g, const Tensor& out);
void matmul_bias_cuda(const Tensor& a, const Tensor& b, const Tensor& bias_rows, const Tensor& out, bool relu);
#endif

}  // namespace attn

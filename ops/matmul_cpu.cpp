// CPU GEMM kernels: every product is one or more calls into OpenBLAS, with
// transposed operands passed as trans flags rather than copied.
#include <cblas.h>

#include <numeric>
#include <vector>

#include "attn/engine/blas_threads.h"
#include "attn/engine/cpu_loops.h"
#include "attn/engine/parallel.h"
#include "attn/engine/copy.h"
#include "attn/ops/gemm_threads.h"
#include "attn/ops/matmul_kernels.h"

namespace attn {

namespace {

// A product is cut into row blocks of at least this many rows.
constexpr int64_t kMinBlockRows = 16;

// C (m x n, row-major, ldc) = alpha op(A) op(B) + beta C.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// Rows r0.. of op(A): A is stored [m, k] (row r0 starts r0 * lda in) or, when
// transposed, [k, m] (column r0 starts r0 in).
template <class T>
const T* rows_from(const T* a, bool trans, int64_t lda, int64_t r0) {
  return trans ? a + r0 : a + r0 * lda;
}

// Runs `batch` products of m x n x k as units of (product, block of output
// rows), unit(i, r0, r1) being one OpenBLAS call. choose_gemm_threading
// (ops/gemm_threads.h) decides who threads them: a few large products go to
// OpenBLAS's own threads one after another; otherwise the units are spread
// over the engine's threads with OpenBLAS serial in each
// (engine/blas_threads.h), and products are cut into row blocks only when
// they are big and the batch alone does not divide evenly among the threads.
template <class Unit>
void run_products(int64_t batch, int64_t m, int64_t n, int64_t k, const Unit& unit) {
  use_serial_blas();
  const int64_t threads = parallel_threads();
  const GemmThreading how = choose_gemm_threading(batch, m, n, k, threads);
  if (how == GemmThreading::serial) {
    for (int64_t i = 0; i < batch; ++i) unit(i, 0, m);
    return;
  }
  if (how == GemmThreading::blas_threads) {
    // OpenBLAS's thread count is process-wide; parallel_threads() is 1 inside a
    // parallel region, so only a caller outside every region changes it.
    ScopedBlasThreads blas_threads(static_cast<int>(threads));
    for (int64_t i = 0; i < batch; ++i) unit(i, 0, m);
    return;
  }
  int64_t blocks = 1;
  if (m * n * k >= kSmallGemmWork && batch % threads != 0) blocks = threads / std::gcd(batch, threads);
  blocks = std::max<int64_t>(1, std::min(blocks, m / kMinBlockRows));
  const int64_t rows = (m + blocks - 1) / blocks;
  const int64_t grain = std::max<int64_t>(1, kSmallGemmWork / std::max<int64_t>(1, rows * n * k));
  parallel_for(batch * blocks, grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t i = u / blocks, r0 = (u % blocks) * rows, r1 = std::min(m, r0 + rows);
      if (r0 < r1) unit(i, r0, r1);
    }
  });
}

}  // namespace

void matmul_cpu(const Tensor& a, const Tensor& b, const Tensor& out) {
  const int64_t r = out.dim();
  const int64_t m = out.shape()[r - 2], n = out.shape()[r - 1], k = a.shape()[r - 1];
  if (out.numel() == 0) return;
  if (k == 0) {
    fill_(out, 0.0);
    return;
  }
  const int64_t batch = out.numel() / (m * n);
  const GemmLayout la = gemm_layout(a), lb = gemm_layout(b);
  dispatch_floating(out.dtype(), "matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    // [batch..., m, k] @ [k, n] with a's rows stacked: a single tall GEMM.
    if (batch > 1 && !la.trans && batch * m <= INT_MAX && batch_is_broadcast(b) && batch_folds_into_rows(a, la.ld)) {
      run_products(1, batch * m, n, k, [&](int64_t, int64_t r0, int64_t r1) {
        gemm(false, lb.trans, r1 - r0, n, k, pa + r0 * la.ld, la.ld, pb, lb.ld, T(0), pc + r0 * n, n);
      });
      return;
    }
    const std::vector<int64_t> off_a = batch_offsets(a, batch), off_b = batch_offsets(b, batch);
    run_products(batch, m, n, k, [&](int64_t i, int64_t r0, int64_t r1) {
      gemm(la.trans, lb.trans, r1 - r0, n, k, rows_from(pa + off_a[i], la.trans, la.ld, r0), la.ld, pb + off_b[i],
           lb.ld, T(0), pc + i * m * n + r0 * n, n);
    });
  });
}

void linear_cpu(const Tensor& x_rows, const Tensor& weight_t, const Tensor& bias, const Tensor& out_rows) {
  const int64_t rows = x_rows.shape()[0], in = x_rows.shape()[1], outf = out_rows.shape()[1];
  if (out_rows.numel() == 0) return;
  if (bias.defined()) {
    copy_into(out_rows, bias);  // every row starts as the bias; the GEMM adds onto it
  } else if (in == 0) {
    fill_(out_rows, 0.0);
  }
  if (in == 0) return;
  const GemmLayout lx = gemm_layout(x_rows), lw = gemm_layout(weight_t);
  dispatch_floating(out_rows.dtype(), "linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x_rows.data<T>();
    T* po = out_rows.data<T>();
    run_products(1, rows, outf, in, [&](int64_t, int64_t r0, int64_t r1) {
      gemm(lx.trans, lw.trans, r1 - r0, outf, in, rows_from(px, lx.trans, lx.ld, r0), lx.ld, weight_t.data<T>(),
           lw.ld, bias.defined() ? T(1) : T(0), po + r0 * outf, outf);
    });
  });
}

}  // namespace attn

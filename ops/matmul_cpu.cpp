// CPU GEMM kernels: every product is one or more calls into OpenBLAS, with
// transposed operands passed as trans flags rather than copied.
#include <cblas.h>

#include <vector>

#include "engine/cpu_loops.h"
#include "engine/parallel.h"
#include "ops/copy.h"
#include "ops/matmul_kernels.h"

namespace attn {

namespace {

// Below this many multiply-adds OpenBLAS runs a GEMM on the calling thread
// alone, so a batch of such products is worth spreading over threads.
constexpr int64_t kSmallGemmWork = 1 << 18;

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
      gemm(false, lb.trans, batch * m, n, k, pa, la.ld, pb, lb.ld, T(0), pc, n);
      return;
    }
    const std::vector<int64_t> off_a = batch_offsets(a, batch), off_b = batch_offsets(b, batch);
    auto run = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        gemm(la.trans, lb.trans, m, n, k, pa + off_a[i], la.ld, pb + off_b[i], lb.ld, T(0), pc + i * m * n, n);
    };
    const int64_t work = m * n * k;
    if (work <= kSmallGemmWork) {
      parallel_for(batch, std::max<int64_t>(1, kSmallGemmWork / work), run);
    } else {
      run(0, batch);  // OpenBLAS threads each product itself
    }
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
    gemm(lx.trans, lw.trans, rows, outf, in, x_rows.data<T>(), lx.ld, weight_t.data<T>(), lw.ld,
         bias.defined() ? T(1) : T(0), out_rows.data<T>(), outf);
  });
}

}  // namespace attn

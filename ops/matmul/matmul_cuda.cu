// cuBLAS GEMM kernels of the matmul family, with the semantics of
// ops/matmul/matmul_cpu.cpp: operands arrive with a gemm_layout that is ok (a
// transposed view is a trans flag, never a copy); batches run as one tall
// GEMM, one strided-batched GEMM, or one pointer-array batched GEMM (a few
// products with long sums: one GEMM each, see few_products_with_long_sums).
//
// cuBLAS is column-major. A row-major m x n product C = A B is the
// column-major product C^T = B^T A^T, and a row-major matrix read with
// (trans, ld) is, column-major, its own transpose read with the same ld, so
// each call swaps the operands and keeps every trans flag as it is.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <climits>
#include <vector>

#include "attn/engine/cuda/cuda_backend.h"
#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/error.h"
#include "attn/engine/copy.h"
#include "attn/ops/matmul/matmul_kernels.h"
#include "attn/ops/unary/unary_kernels.h"

namespace attn {

namespace {

// One handle per device and thread, created on first use and kept for the
// thread's life (never destroyed: the CUDA runtime may be gone at exit).
struct HandleSlot {
  cublasHandle_t handle = nullptr;
  bool tf32 = false;
};

cublasHandle_t cublas_handle(const char* op) {
  thread_local std::vector<HandleSlot> slots;
  int device = 0;
  ATTN_CUDA_CHECK(op, cudaGetDevice(&device));
  if (slots.size() <= static_cast<size_t>(device)) slots.resize(static_cast<size_t>(device) + 1);
  HandleSlot& s = slots[static_cast<size_t>(device)];
  const bool tf32 = cuda_tf32();
  if (!s.handle) {
    ATTN_CUBLAS_CHECK(op, cublasCreate(&s.handle));
    s.tf32 = !tf32;  // forces the math mode below
  }
  if (s.tf32 != tf32) {
    // Off: no tensor-core rounding of float32 inputs, so results match the CPU.
    ATTN_CUBLAS_CHECK(op, cublasSetMathMode(s.handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    s.tf32 = tf32;
  }
  return s.handle;
}

cublasOperation_t op_of(bool trans) { return trans ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Row-major C (m x n, ldc) = alpha op(A) op(B) + beta C.
void gemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const float alpha = 1.0f;
  ATTN_CUBLAS_CHECK("matmul", cublasSgemm(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                                          int(lda), &beta, c, int(ldc)));
}
void gemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  const double alpha = 1.0;
  ATTN_CUBLAS_CHECK("matmul", cublasDgemm(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b, int(ldb), a,
                                          int(lda), &beta, c, int(ldc)));
}

void gemm_strided(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  int64_t sa, const float* b, int64_t ldb, int64_t sb, float beta, float* c, int64_t ldc, int64_t sc,
                  int64_t batch) {
  const float alpha = 1.0f;
  ATTN_CUBLAS_CHECK("matmul", cublasSgemmStridedBatched(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b,
                                                        int(ldb), sb, a, int(lda), sa, &beta, c, int(ldc), sc,
                                                        int(batch)));
}
void gemm_strided(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                  int64_t sa, const double* b, int64_t ldb, int64_t sb, double beta, double* c, int64_t ldc, int64_t sc,
                  int64_t batch) {
  const double alpha = 1.0;
  ATTN_CUBLAS_CHECK("matmul", cublasDgemmStridedBatched(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b,
                                                        int(ldb), sb, a, int(lda), sa, &beta, c, int(ldc), sc,
                                                        int(batch)));
}

void gemm_pointers(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* const* a,
                   int64_t lda, const float* const* b, int64_t ldb, float beta, float* const* c, int64_t ldc,
                   int64_t batch) {
  const float alpha = 1.0f;
  ATTN_CUBLAS_CHECK("matmul", cublasSgemmBatched(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b, int(ldb),
                                                 a, int(lda), &beta, c, int(ldc), int(batch)));
}
void gemm_pointers(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* const* a,
                   int64_t lda, const double* const* b, int64_t ldb, double beta, double* const* c, int64_t ldc,
                   int64_t batch) {
  const double alpha = 1.0;
  ATTN_CUBLAS_CHECK("matmul", cublasDgemmBatched(h, op_of(tb), op_of(ta), int(n), int(m), int(k), &alpha, b, int(ldb),
                                                 a, int(lda), &beta, c, int(ldc), int(batch)));
}

// A handful of small products with long sums (MTSA's per-head weight
// gradients: 2 x [150, 8192] x [8192, 150]) get one GEMM call each: the
// batched routines tile only the outputs, 8 tiles for 132 SMs here (2.6
// TFLOP/s on an H100), while a single GEMM may also split the sum.
bool few_products_with_long_sums(int64_t batch, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kMaxProducts = 8, kMinSum = 2048, kMaxOutputs = 512 * 512;
  return batch <= kMaxProducts && k >= kMinSum && m * n <= kMaxOutputs;
}

}  // namespace

void matmul_cuda(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate) {
  const int64_t r = out.dim();
  const int64_t m = out.shape()[r - 2], n = out.shape()[r - 1], k = a.shape()[r - 1];
  if (out.numel() == 0) return;
  if (k == 0) {
    if (!accumulate) fill_(out, 0.0);  // an empty sum adds nothing
    return;
  }
  const int64_t batch = out.numel() / (m * n);
  ATTN_CHECK(batch <= INT_MAX, "matmul", "a batch of ", batch, " products exceeds the cuBLAS int range");
  const GemmLayout la = gemm_layout(a), lb = gemm_layout(b);
  cublasHandle_t h = cublas_handle("matmul");
  if (out.dtype() != DType::F32 && out.dtype() != DType::F64)
    throw Error(std::string("matmul: expects float32 or float64, got ") + dtype_name(out.dtype()));
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    const T beta = accumulate ? T(1) : T(0);
    if (batch == 1) {
      gemm(h, la.trans, lb.trans, m, n, k, pa, la.ld, pb, lb.ld, beta, pc, n);
      return;
    }
    // [batch..., m, k] @ [k, n] with a's rows stacked: a single tall GEMM.
    if (!la.trans && batch * m <= INT_MAX && batch_is_broadcast(b) && batch_folds_into_rows(a, la.ld)) {
      gemm(h, false, lb.trans, batch * m, n, k, pa, la.ld, pb, lb.ld, beta, pc, n);
      return;
    }
    const std::vector<int64_t> off_a = batch_offsets(a, batch), off_b = batch_offsets(b, batch);
    if (few_products_with_long_sums(batch, m, n, k)) {
      for (int64_t i = 0; i < batch; ++i)
        gemm(h, la.trans, lb.trans, m, n, k, pa + off_a[i], la.ld, pb + off_b[i], lb.ld, beta, pc + i * m * n, n);
      return;
    }
    const int64_t sa = uniform_step(off_a), sb = uniform_step(off_b);
    if (sa >= 0 && sb >= 0) {
      gemm_strided(h, la.trans, lb.trans, m, n, k, pa, la.ld, sa, pb, lb.ld, sb, beta, pc, n, m * n, batch);
      return;
    }
    // Batch axes no single stride describes: one batched call over pointer arrays.
    std::vector<const T*> host(static_cast<size_t>(3 * batch));
    for (int64_t i = 0; i < batch; ++i) {
      host[i] = pa + off_a[i];
      host[batch + i] = pb + off_b[i];
      host[2 * batch + i] = pc + i * m * n;
    }
    Tensor ptrs = empty({3 * batch}, DType::I64, Device::CUDA);
    cuda_copy_bytes(ptrs.raw_data(), host.data(), host.size() * sizeof(T*), Device::CUDA, Device::CPU);
    const T* const* dev = static_cast<const T* const*>(ptrs.raw_data());
    gemm_pointers(h, la.trans, lb.trans, m, n, k, dev, la.ld, dev + batch, lb.ld, beta,
                  const_cast<T* const*>(dev + 2 * batch), n, batch);
    // ptrs is freed into the allocator's cache at once; the stream order keeps
    // the GEMM's reads ahead of any later writer of that block.
  };
  if (out.dtype() == DType::F32) run(TypeTag<float>{});
  else run(TypeTag<double>{});
}

void linear_cuda(const Tensor& x_rows, const Tensor& weight_t, const Tensor& bias, const Tensor& out_rows,
                 bool accumulate, bool relu) {
  const int64_t rows = x_rows.shape()[0], in = x_rows.shape()[1], outf = out_rows.shape()[1];
  if (out_rows.numel() == 0) return;
  if (relu) {  // cuBLAS has no relu epilogue here: a pass after the product, in place
    linear_cuda(x_rows, weight_t, bias, out_rows, accumulate, false);
    unary_forward_cuda(UnaryOp::Relu, {}, out_rows, out_rows);
    return;
  }
  const bool add_to_out = prepare_linear_rows(bias, in, accumulate, out_rows);
  if (in == 0) return;
  const GemmLayout lx = gemm_layout(x_rows), lw = gemm_layout(weight_t);
  cublasHandle_t h = cublas_handle("linear");
  if (out_rows.dtype() == DType::F32) {
    gemm(h, lx.trans, lw.trans, rows, outf, in, x_rows.data<float>(), lx.ld, weight_t.data<float>(), lw.ld,
         add_to_out ? 1.0f : 0.0f, out_rows.data<float>(), outf);
  } else if (out_rows.dtype() == DType::F64) {
    gemm(h, lx.trans, lw.trans, rows, outf, in, x_rows.data<double>(), lx.ld, weight_t.data<double>(), lw.ld,
         add_to_out ? 1.0 : 0.0, out_rows.data<double>(), outf);
  } else {
    throw Error(std::string("linear: expects float32 or float64, got ") + dtype_name(out_rows.dtype()));
  }
}

void matmul_bias_cuda(const Tensor& a, const Tensor& b, const Tensor& bias_rows, const Tensor& out, bool relu) {
  // cuBLAS has no bias or relu epilogue here: out starts as the bias, the
  // GEMM adds onto it, and a relu is a pass in place.
  copy_into(out, bias_rows);
  matmul_cuda(a, b, out, true);
  if (relu) unary_forward_cuda(UnaryOp::Relu, {}, out, out);
}

void matmul_summed_cuda(const Tensor& a, const Tensor& g, const Tensor& out) {
  // cuBLAS reads one stride per operand and batch: the rows are gathered first.
  const GatheredRows rows = gather_summed_rows(a, g);
  matmul_cuda(rows.a_t, rows.g_rows, out, false);
}

}  // namespace attn

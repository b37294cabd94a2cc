// CPU GEMM kernels: every product is one or more calls into OpenBLAS, with
// transposed operands passed as trans flags rather than copied.
#include <cblas.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <type_traits>
#include <vector>

#include "attn/engine/blas_threads.h"
#include "attn/engine/copy.h"
#include "attn/engine/cpu_loops.h"
#include "attn/engine/dtype.h"
#include "attn/engine/error.h"
#include "attn/engine/parallel.h"
#include "attn/engine/tensor.h"
#include "attn/ops/cpu/gemm_threads.h"
#include "attn/ops/matmul/matmul_kernels.h"
#include "attn/ops/cpu/sgemm_avx512.h"
#include "attn/ops/unary/unary_kernels.h"
#include "attn/ops/unary/unary_math.h"

namespace attn {

namespace {

// A product is cut into row blocks of at least this many rows.
constexpr int64_t kMinBlockRows = 16;

// One OpenBLAS call: C (m x n, row-major, ldc) = op(A) op(B) + beta C, op(A)
// being m x k and op(B) k x n.
template <class T>
struct GemmCall {
  bool trans_a, trans_b;
  int64_t m, n, k;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T beta;
  T* c;
  int64_t ldc;
  const T* bias = nullptr;  // n values added to every row of C; only on the engine's float32 kernel
  bool relu = false;        // C = relu(...) as it is stored; only on the engine's float32 kernel
};

// The whole product of A (layout la) and B (layout lb) into contiguous C.
template <class T>
GemmCall<T> product_call(const GemmLayout& la, const T* a, const GemmLayout& lb, const T* b, int64_t m, int64_t n,
                         int64_t k, T beta, T* c) {
  return GemmCall<T>{la.trans, lb.trans, m, n, k, a, la.ld, b, lb.ld, beta, c, n};
}

// float32 goes to the engine's AVX-512 kernel where the CPU has one
// (ops/cpu/sgemm_avx512.h), else to OpenBLAS; float64 always to OpenBLAS.
void blas_gemm(const GemmCall<float>& g) {
  if (use_own_sgemm()) {
    sgemm_avx512(g.trans_a, g.trans_b, g.m, g.n, g.k, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, g.bias, g.relu);
    return;
  }
  ATTN_CHECK(g.bias == nullptr && !g.relu, "matmul", "a fused bias or relu needs the engine's float32 GEMM");
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), 1.0f, g.a, static_cast<int>(g.lda),
              g.b, static_cast<int>(g.ldb), g.beta, g.c, static_cast<int>(g.ldc));
}

void blas_gemm(const GemmCall<double>& g) {
  ATTN_CHECK(g.bias == nullptr && !g.relu, "matmul", "a fused bias or relu needs the engine's float32 GEMM");
  cblas_dgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), 1.0, g.a, static_cast<int>(g.lda),
              g.b, static_cast<int>(g.ldb), g.beta, g.c, static_cast<int>(g.ldc));
}

bool runs_own_sgemm(const GemmCall<float>&) { return use_own_sgemm(); }
bool runs_own_sgemm(const GemmCall<double>&) { return false; }

// Calls that differ only in A and C, so that one packing of B serves them all.
bool same_b_operand(const GemmCall<float>& x, const GemmCall<float>& y) {
  return x.b == y.b && x.m == y.m && x.n == y.n && x.k == y.k && x.trans_a == y.trans_a && x.trans_b == y.trans_b &&
         x.lda == y.lda && x.ldb == y.ldb && x.ldc == y.ldc && x.beta == y.beta && x.bias == y.bias &&
         x.relu == y.relu;
}

// Calls [first, last) whose A and C each start a fixed step after the
// previous call's.
bool evenly_spaced(const std::vector<GemmCall<float>>& calls, size_t first, size_t last) {
  const std::ptrdiff_t a_step = calls[first + 1].a - calls[first].a, c_step = calls[first + 1].c - calls[first].c;
  for (size_t t = first + 1; t < last; ++t)
    if (calls[t].a - calls[t - 1].a != a_step || calls[t].c - calls[t - 1].c != c_step) return false;
  return true;
}

// Units [begin, end) on this thread, call(u) describing each. On the
// engine's own kernel, units with the same B (a weight broadcast over the
// batch, as in MTSA's per-head projections) are run together so that B is
// packed once for them: as one tall product when their A and C are evenly
// spaced (sgemm_avx512_grouped), else as a list (sgemm_avx512_shared_b).
// Each C gets the same bits either way, so neither the grouping nor the
// thread count changes results.
template <class Call>
void run_units(int64_t begin, int64_t end, const Call& call) {
  using T = std::remove_cv_t<std::remove_pointer_t<decltype(call(begin).c)>>;
  if constexpr (std::is_same_v<T, float>) {
    if (end - begin > 1 && use_own_sgemm()) {
      std::vector<GemmCall<float>> calls;
      calls.reserve(static_cast<size_t>(end - begin));
      for (int64_t u = begin; u < end; ++u) calls.push_back(call(u));
      std::stable_sort(calls.begin(), calls.end(), [](const GemmCall<float>& x, const GemmCall<float>& y) {
        return std::less<const float*>()(x.b, y.b) || (x.b == y.b && x.m < y.m);
      });
      std::vector<const float*> as;
      std::vector<float*> cs;
      for (size_t first = 0; first < calls.size();) {
        size_t last = first + 1;
        while (last < calls.size() && same_b_operand(calls[first], calls[last])) ++last;
        const GemmCall<float>& g = calls[first];
        const int64_t count = static_cast<int64_t>(last - first);
        if (count > 1 && !g.trans_a && evenly_spaced(calls, first, last)) {
          // One tall product: its rows are the products' rows, group by group.
          const int64_t a_step = calls[first + 1].a - g.a, c_step = calls[first + 1].c - g.c;
          sgemm_avx512_grouped(g.trans_b, count * g.m, g.n, g.k, g.a, SgemmRows{g.m, g.lda, a_step}, g.b, g.ldb,
                               g.beta, g.c, SgemmRows{g.m, g.ldc, c_step}, g.bias, g.relu);
        } else {
          as.clear();
          cs.clear();
          for (size_t t = first; t < last; ++t) {
            as.push_back(calls[t].a);
            cs.push_back(calls[t].c);
          }
          sgemm_avx512_shared_b(g.trans_a, g.trans_b, g.m, g.n, g.k, as.data(), g.lda, g.b, g.ldb, g.beta, cs.data(),
                                g.ldc, count, g.bias, g.relu);
        }
        first = last;
      }
      return;
    }
  }
  for (int64_t u = begin; u < end; ++u) {
    const auto g = call(u);
    if (g.m > 0) blas_gemm(g);
  }
}

// Output rows [r0, r1). A is stored [m, k] (row r0 starts r0 * lda in) or,
// when transposed, [k, m] (column r0 starts r0 in).
template <class T>
GemmCall<T> rows_of(GemmCall<T> g, int64_t r0, int64_t r1) {
  g.a += g.trans_a ? r0 : r0 * g.lda;
  g.c += r0 * g.ldc;
  g.m = r1 - r0;
  return g;
}

// The reduction's slice [k0, k1): columns of op(A), rows of op(B).
template <class T>
GemmCall<T> depths_of(GemmCall<T> g, int64_t k0, int64_t k1) {
  g.a += g.trans_a ? k0 * g.lda : k0;
  g.b += g.trans_b ? k0 : k0 * g.ldb;
  g.k = k1 - k0;
  return g;
}

// C's rows [0, rows) (ldc apart) += the sums of slices 1 .. slices - 1 of a
// cut reduction (partials [slices - 1, rows, n]), added in slice order so
// that a given thread count always sums the same way; a fused relu applies
// to the total, after the last partial.
template <class T>
void add_slices_in_order(T* c, int64_t ldc, int64_t rows, int64_t n, const T* partials, int64_t slices, bool relu) {
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* row = c + i * ldc;
      for (int64_t s = 1; s < slices; ++s) {
        const T* from = partials + ((s - 1) * rows + i) * n;
        for (int64_t j = 0; j < n; ++j) row[j] += from[j];
      }
      if (relu)
        for (int64_t j = 0; j < n; ++j) row[j] = unary_math::Relu::f(row[j], T(0), T(0));
    }
  });
}

// One product as `slices` reduction slices, one per thread: slice 0 goes
// into C with the call's beta, the others into partials from the caching
// allocator (no fresh pages per call), added to C afterwards in slice order,
// so that a given thread count always sums the same way. A fused relu
// applies to the total, after the last partial.
template <class T>
void run_depth_slices(const GemmCall<T>& g, int64_t slices) {
  const int64_t area = g.m * g.n;
  Tensor partials = empty({slices - 1, g.m, g.n}, dtype_of<T>());
  T* p = partials.data<T>();
  parallel_for(slices, 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      GemmCall<T> part = depths_of(g, s * g.k / slices, (s + 1) * g.k / slices);
      part.relu = false;
      if (s > 0) {  // the bias goes into slice 0 only
        part.beta = T(0);
        part.c = p + (s - 1) * area;
        part.ldc = g.n;
        part.bias = nullptr;
      }
      blas_gemm(part);
    }
  });
  add_slices_in_order(g.c, g.ldc, g.m, g.n, p, slices, g.relu);
}

// Runs `batch` products, product(i) describing the i-th whole one.
// choose_gemm_threading (ops/cpu/gemm_threads.h) decides who threads them: a few
// large products go to OpenBLAS's own threads one after another; one short
// deep product is cut into reduction slices; otherwise units of (product,
// block of output rows) are spread over the engine's threads with OpenBLAS
// serial in each (engine/blas_threads.h), products being cut into row blocks
// only when they are big and the batch alone does not divide evenly among
// the threads.
template <class Product>
void run_products(int64_t batch, const Product& product) {
  use_serial_blas();
  const auto first = product(0);
  const int64_t m = first.m, n = first.n, k = first.k;
  const int64_t threads = parallel_threads();
  GemmThreading how = choose_gemm_threading(batch, m, n, k, threads);
  // The engine's own kernel is serial: what OpenBLAS would thread is split here.
  if (how == GemmThreading::blas_threads && runs_own_sgemm(first)) how = GemmThreading::engine_split;
  if (how == GemmThreading::serial) {
    run_units(0, batch, product);
    return;
  }
  if (how == GemmThreading::blas_threads) {
    // OpenBLAS's thread count is process-wide; parallel_threads() is 1 inside a
    // parallel region, so only a caller outside every region changes it.
    ScopedBlasThreads blas_threads(static_cast<int>(threads));
    for (int64_t i = 0; i < batch; ++i) blas_gemm(product(i));
    return;
  }
  if (how == GemmThreading::engine_split_depth) {
    run_depth_slices(first, threads);
    return;
  }
  if constexpr (std::is_same_v<decltype(first), const GemmCall<float>>) {
    // One product on the engine's kernel: its threads share each packed
    // block of B and take blocks of rows as they come free.
    if (batch == 1 && runs_own_sgemm(first)) {
      sgemm_avx512_threaded(first.trans_a, first.trans_b, m, n, k, first.a, first.lda, first.b, first.ldb, first.beta,
                            first.c, first.ldc, first.bias, first.relu, static_cast<int>(threads));
      return;
    }
  }
  int64_t blocks = 1;
  if (m * n * k >= kSmallGemmWork && batch % threads != 0) blocks = threads / std::gcd(batch, threads);
  blocks = std::max<int64_t>(1, std::min(blocks, m / kMinBlockRows));
  const int64_t rows = (m + blocks - 1) / blocks;
  const int64_t grain = std::max<int64_t>(1, kSmallGemmWork / std::max<int64_t>(1, rows * n * k));
  // A unit past the last row (m not a multiple of the block) is empty.
  const auto unit = [&](int64_t u) {
    const int64_t i = u / blocks, r0 = std::min(m, (u % blocks) * rows), r1 = std::min(m, r0 + rows);
    return rows_of(product(i), r0, r1);
  };
  parallel_for(batch * blocks, grain, [&](int64_t begin, int64_t end) { run_units(begin, end, unit); });
}

}  // namespace

template <class T>
void gemm_on_this_thread(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                         const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  blas_gemm(GemmCall<T>{trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc});
}
template void gemm_on_this_thread<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*,
                                         int64_t, float, float*, int64_t);
template void gemm_on_this_thread<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const double*,
                                          int64_t, double, double*, int64_t);

namespace {

// out = a @ b (+ out with `accumulate`), each product's C rows also getting
// its row of `bias_rows` (a view of out's shape whose row axis has stride 0,
// or undefined) and a relu as they are stored. A bias or relu needs the
// engine's float32 kernel (matmul_bias_cpu checks).
void products_into(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate, const Tensor& bias_rows,
                   bool relu) {
  const int64_t r = out.dim();
  const int64_t m = out.shape()[r - 2], n = out.shape()[r - 1], k = a.shape()[r - 1];
  if (out.numel() == 0) return;
  if (k == 0) {
    if (!accumulate) fill_(out, 0.0);  // an empty sum adds nothing
    return;
  }
  const int64_t batch = out.numel() / (m * n);
  const GemmLayout la = gemm_layout(a), lb = gemm_layout(b);
  dispatch_floating(out.dtype(), "matmul", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    const T beta = accumulate ? T(1) : T(0);
    const T* pbias = bias_rows.defined() ? bias_rows.data<T>() : nullptr;
    // [batch..., m, k] @ [k, n] with a's rows stacked: a single tall GEMM.
    if (batch > 1 && !la.trans && batch * m <= INT_MAX && batch_is_broadcast(b) && batch_folds_into_rows(a, la.ld) &&
        (!pbias || batch_is_broadcast(bias_rows))) {
      const GemmLayout rows_stacked{true, false, la.ld};
      run_products(1, [&](int64_t) {
        GemmCall<T> call = product_call(rows_stacked, pa, lb, pb, batch * m, n, k, beta, pc);
        call.bias = pbias;
        call.relu = relu;
        return call;
      });
      return;
    }
    const std::vector<int64_t> off_a = batch_offsets(a, batch), off_b = batch_offsets(b, batch);
    const std::vector<int64_t> off_bias = pbias ? batch_offsets(bias_rows, batch) : std::vector<int64_t>();
    run_products(batch, [&](int64_t i) {
      GemmCall<T> call = product_call(la, pa + off_a[i], lb, pb + off_b[i], m, n, k, beta, pc + i * m * n);
      call.bias = pbias ? pbias + off_bias[i] : nullptr;
      call.relu = relu;
      return call;
    });
  });
}

}  // namespace

void matmul_cpu(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate) {
  products_into(a, b, out, accumulate, Tensor(), false);
}

void matmul_bias_cpu(const Tensor& a, const Tensor& b, const Tensor& bias_rows, const Tensor& out, bool relu) {
  const int64_t r = out.dim();
  const bool fuses_into_gemm = out.dtype() == DType::F32 && use_own_sgemm() && a.shape()[r - 1] > 0 &&
                               bias_rows.strides()[r - 2] == 0 && bias_rows.strides()[r - 1] == 1;
  if (fuses_into_gemm) {
    products_into(a, b, out, false, bias_rows, relu);
    return;
  }
  // Elsewhere the rows start as the bias, the GEMM adds onto them, and a
  // relu is a pass over the result.
  copy_into(out, bias_rows);
  products_into(a, b, out, true, Tensor(), false);
  if (relu) unary_forward_cpu(UnaryOp::Relu, {}, out, out);  // in place: each element reads only itself
}

void matmul_summed_cpu(const Tensor& a, const Tensor& g, const Tensor& out) {
  const int64_t E = a.size(0), S = a.size(1), R = a.size(2), m = a.size(3), n = g.size(3);
  if (out.numel() == 0) return;
  if (S * R == 0) {
    fill_(out, 0.0);  // an empty sum
    return;
  }
  const bool in_place = out.dtype() == DType::F32 && use_own_sgemm() && (m <= 1 || a.strides()[3] == 1) &&
                        (n <= 1 || g.strides()[3] == 1);
  if (!in_place) {
    const GatheredRows rows = gather_summed_rows(a, g);
    matmul_cpu(rows.a_t, rows.g_rows, out, false);
    return;
  }
  // Entries over the threads; with fewer entries than threads each entry's
  // sum is cut at entry boundaries into slices, added afterwards as
  // run_depth_slices adds its own (out is one [E * m, n] matrix, and slice
  // s's partials another).
  const int64_t slices = std::max<int64_t>(1, std::min(S, parallel_threads() / E));
  const float* pa = a.data<float>();
  const float* pg = g.data<float>();
  float* pc = out.data<float>();
  Tensor partials = empty({slices - 1, E * m, n}, DType::F32);
  float* pp = partials.data<float>();
  const SgemmRows a_rows{R, a.strides()[2], a.strides()[1]}, g_rows{R, g.strides()[2], g.strides()[1]};
  parallel_for(E * slices, 1, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t e = u / slices, s = u % slices, s0 = s * S / slices, s1 = (s + 1) * S / slices;
      float* c = (s == 0 ? pc : pp + (s - 1) * E * m * n) + e * m * n;
      sgemm_avx512_depth_rows(m, n, (s1 - s0) * R, pa + e * a.strides()[0] + s0 * a.strides()[1], a_rows,
                              pg + e * g.strides()[0] + s0 * g.strides()[1], g_rows, 0.0f, c, n);
    }
  });
  if (slices > 1) add_slices_in_order(pc, n, E * m, n, pp, slices, false);
}

void linear_cpu(const Tensor& x_rows, const Tensor& weight_t, const Tensor& bias, const Tensor& out_rows,
                bool accumulate, bool relu) {
  const int64_t rows = x_rows.shape()[0], in = x_rows.shape()[1], outf = out_rows.shape()[1];
  if (out_rows.numel() == 0) return;
  // On the engine's float32 kernel the bias is added, and the relu taken, as
  // the GEMM stores its sums; otherwise the rows start as the bias, the GEMM
  // adds onto them and a relu is a pass over the result.
  const bool own_kernel = !accumulate && in > 0 && out_rows.dtype() == DType::F32 && use_own_sgemm();
  const bool fuse_bias = own_kernel && bias.defined() && bias.dim() == 1 && bias.strides()[0] == 1;
  const bool fuse_relu = own_kernel && relu;
  if (relu && !fuse_relu) {
    linear_cpu(x_rows, weight_t, bias, out_rows, accumulate, false);
    unary_forward_cpu(UnaryOp::Relu, {}, out_rows, out_rows);  // in place: each element reads only itself
    return;
  }
  const bool add_to_rows = fuse_bias ? false : prepare_linear_rows(bias, in, accumulate, out_rows);
  if (in == 0) return;
  const GemmLayout lx = gemm_layout(x_rows), lw = gemm_layout(weight_t);
  dispatch_floating(out_rows.dtype(), "linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* px = x_rows.data<T>();
    T* po = out_rows.data<T>();
    const T beta = add_to_rows ? T(1) : T(0);
    const T* pbias = fuse_bias ? bias.data<T>() : nullptr;
    run_products(1, [&](int64_t) {
      GemmCall<T> call = product_call(lx, px, lw, weight_t.data<T>(), rows, outf, in, beta, po);
      call.bias = pbias;
      call.relu = fuse_relu;
      return call;
    });
  });
}

}  // namespace attn

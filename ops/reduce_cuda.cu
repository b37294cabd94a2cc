// CUDA kernels of the reductions. reduce_rows gives each row a warp (short
// rows) or a block (long rows); sums accumulate in double as on the CPU.
// Max keeps the first position of the largest value: a NaN in a row's first
// element wins (the CPU scan starts from it), NaNs elsewhere never win.
// sum_columns uses the shared column reduction (engine/cuda/cuda_loops.cuh).
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/reduce_kernels.h"

namespace attn {

namespace {

template <class T, bool kBlock>
__global__ void sum_rows_kernel(const T* x, int64_t outer, int64_t n, T* out) {
  using G = cuda::RowGroup<kBlock>;
  ATTN_SHARED(double, smem, [32]);
  for (int64_t r = G::first_row(); r < outer; r += G::row_step()) {
    const T* row = x + r * n;
    double acc = 0;
    for (int64_t i = G::lane(); i < n; i += G::size()) acc += static_cast<double>(row[i]);
    acc = G::reduce(acc, cuda::SumOp{}, 0.0, smem);
    if (G::lane() == 0) out[r] = static_cast<T>(acc);
  }
}

template <class T, bool kBlock>
__global__ void max_rows_kernel(const T* x, int64_t outer, int64_t n, T* out, int64_t* argmax) {
  using G = cuda::RowGroup<kBlock>;
  using VI = cuda::ValIdx<T>;
  ATTN_SHARED(VI, smem, [32]);
  for (int64_t r = G::first_row(); r < outer; r += G::row_step()) {
    const T* row = x + r * n;
    VI best{cuda::neg_inf<T>(), cuda::kNoIndex};
    for (int64_t i = G::lane(); i < n; i += G::size()) {
      const T v = row[i];
      if (v != v) continue;  // NaN (row[0] is handled below)
      const VI c{v, i};
      best = cuda::ArgMaxOp{}(best, c);
    }
    best = G::reduce(best, cuda::ArgMaxOp{}, VI{cuda::neg_inf<T>(), cuda::kNoIndex}, smem);
    if (G::lane() == 0) {
      T value;
      int64_t at;
      if (n == 0) {
        value = cuda::neg_inf<T>();
        at = 0;
      } else if (row[0] != row[0] || best.i == cuda::kNoIndex) {
        value = row[0];
        at = 0;
      } else {
        value = best.v;
        at = best.i;
      }
      out[r] = value;
      if (argmax) argmax[r] = at;
    }
  }
}

// Column c of x [outer, n, inner] is (o, f) = (c / inner, c % inner).
template <class T>
struct SumColumnsTerm {
  const T* x;
  int64_t n, inner;
  __device__ void operator()(int64_t i, int64_t c, double* acc) const {
    acc[0] += static_cast<double>(x[((c / inner) * n + i) * inner + c % inner]);
  }
};

template <class T>
struct StoreColumn {
  T* out;
  __device__ void operator()(int, int64_t j, double total) const { out[j] = static_cast<T>(total); }
};

template <class T>
__global__ void max_backward_kernel(const T* grad, const int64_t* argmax, int64_t outer, int64_t n, T* grad_in) {
  ATTN_CUDA_LOOP(m, outer) { grad_in[m * n + argmax[m]] = grad[m]; }
}

}  // namespace

void reduce_rows_cuda(ReduceOp op, const Tensor& x, int64_t outer, int64_t n, const Tensor& out,
                      const Tensor& argmax) {
  const char* name = op == ReduceOp::Sum ? "sum" : "max";
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (outer == 0) return;
    const T* px = x.data<T>();
    T* po = out.data<T>();
    int64_t* pi = argmax.defined() ? argmax.data<int64_t>() : nullptr;
    const cuda::RowLaunch l = cuda::row_launch(outer, n);
    if (op == ReduceOp::Sum) {
      if (l.block) ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), sum_rows_kernel<T, true>)(px, outer, n, po);
      else ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), sum_rows_kernel<T, false>)(px, outer, n, po);
    } else {
      if (l.block) ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), max_rows_kernel<T, true>)(px, outer, n, po, pi);
      else ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), max_rows_kernel<T, false>)(px, outer, n, po, pi);
    }
    ATTN_CUDA_CHECK_LAUNCH(name);
  });
}

void sum_columns_cuda(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& out) {
  dispatch_floating(x.dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::launch_column_sums<1>("sum", n, outer * inner, SumColumnsTerm<T>{x.data<T>(), n, inner},
                                StoreColumn<T>{out.data<T>()});
  });
}

void max_backward_cuda(const Tensor& grad, const Tensor& argmax, int64_t outer, int64_t n, const Tensor& grad_in) {
  dispatch_floating(grad.dtype(), "max_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* pd = grad_in.data<T>();
    if (outer * n == 0) return;
    ATTN_CUDA_CHECK("max_backward",
                    cudaMemsetAsync(pd, 0, static_cast<size_t>(outer * n) * sizeof(T), cuda::stream()));
    ATTN_CUDA_LAUNCH(cuda::blocks_for(outer), cuda::kThreads, 0, cuda::stream(), max_backward_kernel<T>)(
        grad.data<T>(), argmax.data<int64_t>(), outer, n, pd);
    ATTN_CUDA_CHECK_LAUNCH("max_backward");
  });
}

}  // namespace attn

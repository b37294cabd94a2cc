// CUDA kernels of the reductions. reduce_rows gives each row a warp (short
// rows) or a block (long rows); when a few long rows would leave most of the
// GPU idle (a whole tensor summed to one value: one block for millions of
// elements), each row is cut into slices, a block each, and a second kernel
// combines every row's slices in order. Sums accumulate in double as on the
// CPU. Max keeps the first position of the largest value: a NaN in a row's
// first element wins (the CPU scan starts from it), NaNs elsewhere never win.
// sum_columns uses the shared column reduction (engine/cuda/cuda_loops.cuh).
#include <type_traits>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/reduce/reduce_kernels.h"

namespace attn {

namespace {

// What a row reduction accumulates (Acc), how it takes an element and
// combines two accumulations (Combine), and what it stores for a row (into
// Out: T, or double for a sum of squares).
// kSquares: each element's square (formed in double) instead, stored in double.
template <class T, bool kSquares>
struct SumRows {
  using Acc = double;
  using Out = std::conditional_t<kSquares, double, T>;
  using Combine = cuda::SumOp;
  __device__ static Acc identity() { return 0; }
  __device__ static Acc take(Acc a, T v, int64_t) {
    const double x = static_cast<double>(v);
    return a + (kSquares ? x * x : x);
  }
  __device__ static void store(const T*, int64_t, Acc a, int64_t r, Out* out, int64_t*) {
    out[r] = static_cast<Out>(a);
  }
};

template <class T>
struct MaxRows {
  using Acc = cuda::ValIdx<T>;
  using Out = T;
  using Combine = cuda::ArgMaxOp;
  __device__ static Acc identity() { return Acc{cuda::neg_inf<T>(), cuda::kNoIndex}; }
  __device__ static Acc take(Acc a, T v, int64_t i) {
    if (v != v) return a;  // NaN (row[0] is handled in store)
    return cuda::ArgMaxOp{}(a, Acc{v, i});
  }
  __device__ static void store(const T* row, int64_t n, Acc best, int64_t r, T* out, int64_t* argmax) {
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
};

// Unit u of a [rows, slices] grid reduces elements [s * len, (s + 1) * len)
// of row r = u / slices, s = u % slices. With one slice per row it stores the
// row's result; otherwise it writes its accumulation to partial[u].
template <class T, class R, bool kBlock>
__global__ void reduce_slices_kernel(const T* x, int64_t rows, int64_t n, int64_t slices, int64_t len,
                                     typename R::Out* out, int64_t* argmax, typename R::Acc* partial) {
  using G = cuda::RowGroup<kBlock>;
  using Acc = typename R::Acc;
  ATTN_SHARED(Acc, smem, [32]);
  for (int64_t u = G::first_row(); u < rows * slices; u += G::row_step()) {
    const int64_t r = u / slices;
    const int64_t begin = (u % slices) * len;
    const int64_t end = begin + len < n ? begin + len : n;
    const T* row = x + r * n;
    Acc acc = R::identity();
    for (int64_t i = begin + G::lane(); i < end; i += G::size()) acc = R::take(acc, row[i], i);
    acc = G::reduce(acc, typename R::Combine{}, R::identity(), smem);
    if (G::lane() == 0) {
      if (slices == 1) R::store(row, n, acc, r, out, argmax);
      else partial[u] = acc;
    }
  }
}

// One warp per row combines its slices' accumulations (a fixed tree for a
// given slice count, so results are run-to-run identical) and stores it.
template <class T, class R>
__global__ void combine_slices_kernel(const T* x, int64_t rows, int64_t n, int64_t slices,
                                      const typename R::Acc* partial, typename R::Out* out, int64_t* argmax) {
  using G = cuda::RowGroup<false>;
  using Acc = typename R::Acc;
  for (int64_t r = G::first_row(); r < rows; r += G::row_step()) {
    Acc acc = R::identity();
    for (int64_t s = G::lane(); s < slices; s += G::size()) acc = typename R::Combine{}(acc, partial[r * slices + s]);
    acc = cuda::warp_reduce(acc, typename R::Combine{});
    if (G::lane() == 0) R::store(x + r * n, n, acc, r, out, argmax);
  }
}

// Slices per row: enough blocks to fill any current GPU (kFillBlocks) when
// the rows alone do not, each slice at least kMinSlice elements (16 per
// thread). Depends on (rows, n) only.
constexpr int64_t kFillBlocks = 1024;
constexpr int64_t kMinSlice = 16 * cuda::kThreads;
int64_t slices_per_row(int64_t rows, int64_t n) {
  if (n <= cuda::kWarpRowLimit || rows >= kFillBlocks) return 1;
  const int64_t wanted = (kFillBlocks + rows - 1) / rows;
  return std::max<int64_t>(1, std::min<int64_t>(wanted, n / kMinSlice));
}

template <class T, class R>
void launch_row_reduction(const char* name, const T* x, int64_t rows, int64_t n, typename R::Out* out,
                          int64_t* argmax) {
  using Acc = typename R::Acc;
  const int64_t slices = slices_per_row(rows, n);
  const int64_t len = (n + slices - 1) / slices;
  Tensor scratch;
  Acc* partial = nullptr;
  if (slices > 1) {
    const int64_t words = (rows * slices * static_cast<int64_t>(sizeof(Acc)) + 7) / 8;
    scratch = empty({words}, DType::F64, Device::CUDA);
    partial = reinterpret_cast<Acc*>(scratch.data<double>());
  }
  const cuda::RowLaunch l = cuda::row_launch(rows * slices, len);
  if (l.block) {
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), reduce_slices_kernel<T, R, true>)(x, rows, n, slices, len,
                                                                                              out, argmax, partial);
  } else {
    ATTN_CUDA_LAUNCH(l.grid, l.threads, 0, cuda::stream(), reduce_slices_kernel<T, R, false>)(x, rows, n, slices, len,
                                                                                               out, argmax, partial);
  }
  ATTN_CUDA_CHECK_LAUNCH(name);
  if (slices == 1) return;
  const cuda::RowLaunch c = cuda::row_launch(rows, 1);  // a warp per row
  ATTN_CUDA_LAUNCH(c.grid, c.threads, 0, cuda::stream(), combine_slices_kernel<T, R>)(x, rows, n, slices, partial, out,
                                                                                       argmax);
  ATTN_CUDA_CHECK_LAUNCH(name);
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
  const char* name = reduce_op_name(op);
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (outer == 0) return;
    int64_t* pi = argmax.defined() ? argmax.data<int64_t>() : nullptr;
    if (op == ReduceOp::Sum) launch_row_reduction<T, SumRows<T, false>>(name, x.data<T>(), outer, n, out.data<T>(), pi);
    else if (op == ReduceOp::Max) launch_row_reduction<T, MaxRows<T>>(name, x.data<T>(), outer, n, out.data<T>(), pi);
    else launch_row_reduction<T, SumRows<T, true>>(name, x.data<T>(), outer, n, out.data<double>(), pi);
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

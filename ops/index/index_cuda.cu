// CUDA kernels of the index family. Copies map one thread to one output
// element (consecutive threads read consecutive columns of a row); scatters
// map one thread to one source element and accumulate with atomicAdd, so
// repeated indices are summed in an unspecified order (float rounding may
// differ from run to run, unlike the CPU kernels' fixed order).
#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/index/index_kernels.h"

namespace attn {

namespace {

// Lowest linear position holding a value outside [0, limit).
__global__ void first_out_of_range_kernel(const int64_t* idx, int64_t n, int64_t limit,
                                          unsigned long long* first) {
  ATTN_CUDA_LOOP(i, n) {
    const int64_t v = idx[i];
    if (v < 0 || v >= limit) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

// out[o, j, c] = x[o, idx[j], c] over [outer, k, inner].
template <class T>
__global__ void copy_rows_kernel(const T* x, int64_t n, int64_t inner, const int64_t* idx, int64_t k,
                                 int64_t total, T* out) {
  ATTN_CUDA_LOOP(e, total) {
    const int64_t c = e % inner;
    const int64_t r = e / inner;
    const int64_t o = r / k, j = r - o * k;
    out[e] = x[(o * n + idx[j]) * inner + c];
  }
}

// dst[o, idx[j], c] += src[o, j, c] over [outer, k, inner].
template <class T>
__global__ void add_rows_kernel(const T* src, int64_t k, int64_t inner, const int64_t* idx, int64_t n,
                                int64_t total, T* dst) {
  ATTN_CUDA_LOOP(e, total) {
    const int64_t c = e % inner;
    const int64_t r = e / inner;
    const int64_t o = r / k, j = r - o * k;
    cuda::atomic_add(dst + (o * n + idx[j]) * inner + c, src[e]);
  }
}

template <class T>
void copy_rows(const char* op, const T* x, int64_t outer, int64_t n, int64_t inner, const int64_t* idx, int64_t k,
               T* out) {
  const int64_t total = outer * k * inner;
  if (total == 0) return;
  ATTN_CUDA_LAUNCH(cuda::blocks_for(total), cuda::kThreads, 0, cuda::stream(), copy_rows_kernel<T>)(x, n, inner, idx, k, total,
                                                                                       out);
  ATTN_CUDA_CHECK_LAUNCH(op);
}

template <class T>
void add_rows(const char* op, const T* src, int64_t outer, int64_t k, int64_t inner, const int64_t* idx, int64_t n,
              T* dst) {
  const int64_t total = outer * k * inner;
  if (total == 0) return;
  ATTN_CUDA_LAUNCH(cuda::blocks_for(total), cuda::kThreads, 0, cuda::stream(), add_rows_kernel<T>)(src, k, inner, idx, n, total,
                                                                                      dst);
  ATTN_CUDA_CHECK_LAUNCH(op);
}

// Operands: 0 out, 1 index, 2 x (its axis stride zeroed; the index supplies it).
template <class T>
struct GatherFn {
  T* out;
  const int64_t* idx;
  const T* x;
  int64_t x_step;
  __device__ void operator()(const cuda::Offsets<3>& o) const { out[o.v[0]] = x[o.v[2] + idx[o.v[1]] * x_step]; }
};

// Operands: 0 out (its axis stride zeroed), 1 index, 2 src.
template <class T>
struct ScatterAddFn {
  T* out;
  const int64_t* idx;
  const T* src;
  int64_t out_step;
  __device__ void operator()(const cuda::Offsets<3>& o) const {
    cuda::atomic_add(out + o.v[0] + idx[o.v[1]] * out_step, src[o.v[2]]);
  }
};

template <class T>
__global__ void one_hot_kernel(const int64_t* idx, int64_t n, int64_t classes, T* out) {
  ATTN_CUDA_LOOP(i, n) { out[i * classes + idx[i]] = T(1); }
}

std::vector<int64_t> zero_axis(std::vector<int64_t> strides, int64_t axis) {
  strides[static_cast<size_t>(axis)] = 0;
  return strides;
}

}  // namespace

bool index_in_range_cuda(const Tensor& index, int64_t limit, int64_t* bad) {
  const int64_t n = index.numel();
  if (n == 0) return true;
  const int64_t* idx = index.data<int64_t>();
  Tensor first = empty({1}, DType::I64, Device::CUDA);
  unsigned long long* pf = reinterpret_cast<unsigned long long*>(first.data<int64_t>());
  // All bits set: larger than any position.
  ATTN_CUDA_CHECK("index_in_range", cudaMemsetAsync(pf, 0xFF, sizeof(unsigned long long), cuda::stream()));
  ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), first_out_of_range_kernel)(idx, n, limit, pf);
  ATTN_CUDA_CHECK_LAUNCH("index_in_range");
  unsigned long long pos = 0;
  ATTN_CUDA_CHECK("index_in_range",
                  cudaMemcpyAsync(&pos, pf, sizeof(pos), cudaMemcpyDeviceToHost, cuda::stream()));
  ATTN_CUDA_CHECK("index_in_range", cudaStreamSynchronize(cuda::stream()));
  if (pos == ~0ULL) return true;
  int64_t value = 0;
  ATTN_CUDA_CHECK("index_in_range", cudaMemcpyAsync(&value, idx + pos, sizeof(value), cudaMemcpyDeviceToHost,
                                                    cuda::stream()));
  ATTN_CUDA_CHECK("index_in_range", cudaStreamSynchronize(cuda::stream()));
  *bad = value;
  return false;
}

void index_select_cuda(const Tensor& x, int64_t outer, int64_t n, int64_t inner, const Tensor& index,
                       const Tensor& out) {
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_rows<T>("index_select", x.data<T>(), outer, n, inner, index.data<int64_t>(), index.numel(), out.data<T>());
  });
}

void index_add_cuda(const Tensor& grad, const Tensor& index, int64_t outer, int64_t n, int64_t inner,
                    const Tensor& grad_in) {
  dispatch_floating(grad.dtype(), "index_select_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_rows<T>("index_select_backward", grad.data<T>(), outer, index.numel(), inner, index.data<int64_t>(), n,
                grad_in.data<T>());
  });
}

void embedding_forward_cuda(const Tensor& weight, const Tensor& ids, const Tensor& out) {
  dispatch_floating(weight.dtype(), "embedding", [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_rows<T>("embedding", weight.data<T>(), 1, weight.shape()[0], weight.shape()[1], ids.data<int64_t>(),
                 ids.numel(), out.data<T>());
  });
}

void embedding_backward_cuda(const Tensor& grad, const Tensor& ids, const Tensor& grad_weight) {
  dispatch_floating(grad.dtype(), "embedding_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    add_rows<T>("embedding_backward", grad.data<T>(), 1, ids.numel(), grad_weight.shape()[1], ids.data<int64_t>(),
                grad_weight.shape()[0], grad_weight.data<T>());
  });
}

void gather_cuda(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& out) {
  dispatch_all(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    GatherFn<T> f{out.data<T>(), index.data<int64_t>(), x.data<T>(), x.strides()[static_cast<size_t>(axis)]};
    cuda::launch_strided<3>("gather", index.shape(), {out.strides(), index.strides(), zero_axis(x.strides(), axis)},
                            f);
  });
}

void scatter_add_cuda(const Tensor& out, int64_t axis, const Tensor& index, const Tensor& src) {
  dispatch_floating(out.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    ScatterAddFn<T> f{out.data<T>(), index.data<int64_t>(), src.data<T>(),
                      out.strides()[static_cast<size_t>(axis)]};
    cuda::launch_strided<3>("scatter_add", index.shape(),
                            {zero_axis(out.strides(), axis), index.strides(), src.strides()}, f);
  });
}

void one_hot_cuda(const Tensor& index, const Tensor& out) {
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = index.numel();
    if (n == 0) return;
    const int64_t classes = out.shape().back();
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), one_hot_kernel<T>)(index.data<int64_t>(), n,
                                                                                  classes, out.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("one_hot");
  });
}

}  // namespace attn

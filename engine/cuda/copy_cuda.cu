// CUDA kernels of engine/copy.cpp: copy_into (any strides, broadcast source,
// casts between float32, float64, uint8 and int64) and fill_.
//
// The host first merges axes that are contiguous for every operand and drops
// unit axes, so most copies run as one flat loop; a plain same-dtype
// contiguous copy is a cudaMemcpyAsync.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/error.h"
#include "attn/engine/tensor.h"

namespace attn {

namespace {

constexpr int kMaxDims = 8;
constexpr int kThreads = 256;

// Sizes and per-operand strides (in elements) of up to kMaxDims axes, innermost last.
template <int N>
struct Geometry {
  int rank = 0;
  int64_t size[kMaxDims] = {};
  int64_t stride[N][kMaxDims] = {};
};

// Merges axes i and i+1 wherever every operand steps over i exactly as over
// the whole of i+1, and drops axes of size 1.
template <int N>
Geometry<N> coalesce(const Shape& shape, const std::vector<int64_t>* const (&strides)[N], const char* op) {
  std::vector<int64_t> size;
  std::vector<std::vector<int64_t>> st(N);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!size.empty()) {
      bool merge = true;
      for (int k = 0; k < N; ++k) merge = merge && st[k].back() == (*strides[k])[d] * shape[d];
      if (merge) {
        size.back() *= shape[d];
        for (int k = 0; k < N; ++k) st[k].back() = (*strides[k])[d];
        continue;
      }
    }
    size.push_back(shape[d]);
    for (int k = 0; k < N; ++k) st[k].push_back((*strides[k])[d]);
  }
  ATTN_CHECK(size.size() <= static_cast<size_t>(kMaxDims), op, "a layout of ", size.size(),
             " non-mergeable axes exceeds the CUDA kernel's ", kMaxDims, " (shape ", shape_str(shape), ")");
  Geometry<N> g;
  g.rank = static_cast<int>(size.size());
  for (int d = 0; d < g.rank; ++d) {
    g.size[d] = size[d];
    for (int k = 0; k < N; ++k) g.stride[k][d] = st[k][d];
  }
  return g;
}

// Element offsets of logical index i for each operand.
template <int N>
__device__ __forceinline__ void offsets_of(const Geometry<N>& g, int64_t i, int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t idx = i % g.size[d];
    i /= g.size[d];
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += idx * g.stride[k][d];
  }
}

template <class D, class S>
__global__ void copy_strided_kernel(D* __restrict__ dst, const S* __restrict__ src, Geometry<2> g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    offsets_of(g, i, off);
    dst[off[0]] = static_cast<D>(src[off[1]]);
  }
}

template <class D, class S>
__global__ void copy_flat_kernel(D* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = static_cast<D>(src[i]);
}

template <class T>
__global__ void fill_strided_kernel(T* __restrict__ out, T value, Geometry<1> g, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    offsets_of(g, i, off);
    out[off[0]] = value;
  }
}

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65536 ? b : 65536);
}

template <class F>
void dispatch_dtype(DType t, const F& f) {
  switch (t) {
    case DType::F32: f(TypeTag<float>{}); return;
    case DType::F64: f(TypeTag<double>{}); return;
    case DType::U8: f(TypeTag<uint8_t>{}); return;
    case DType::I64: f(TypeTag<int64_t>{}); return;
  }
}

bool is_flat(const Geometry<2>& g) { return g.rank <= 1 && (g.rank == 0 || (g.stride[0][0] == 1 && g.stride[1][0] == 1)); }

}  // namespace

void copy_cuda(const Tensor& dst, const Tensor& src) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  const std::vector<int64_t> src_strides = broadcast_strides(src.shape(), src.strides(), dst.shape());
  const std::vector<int64_t>* const strides[2] = {&dst.strides(), &src_strides};
  const Geometry<2> g = coalesce<2>(dst.shape(), strides, "copy");
  const bool flat = is_flat(g);
  if (flat && dst.dtype() == src.dtype()) {
    ATTN_CUDA_CHECK("copy", cudaMemcpyAsync(dst.raw_data(), src.raw_data(), static_cast<size_t>(n) * dtype_size(dst.dtype()),
                                            cudaMemcpyDeviceToDevice, 0));
    return;
  }
  dispatch_dtype(dst.dtype(), [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    dispatch_dtype(src.dtype(), [&](auto stag) {
      using S = typename decltype(stag)::type;
      D* d = static_cast<D*>(dst.raw_data());
      const S* s = static_cast<const S*>(src.raw_data());
      if (flat) {
        copy_flat_kernel<D, S><<<blocks_for(n), kThreads>>>(d, s, n);
      } else {
        copy_strided_kernel<D, S><<<blocks_for(n), kThreads>>>(d, s, g, n);
      }
    });
  });
  ATTN_CUDA_CHECK_LAUNCH("copy");
}

void fill_cuda(const Tensor& t, double value) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const std::vector<int64_t>* const strides[1] = {&t.strides()};
  const Geometry<1> g = coalesce<1>(t.shape(), strides, "fill");
  dispatch_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_strided_kernel<T><<<blocks_for(n), kThreads>>>(static_cast<T*>(t.raw_data()), static_cast<T>(value), g, n);
  });
  ATTN_CUDA_CHECK_LAUNCH("fill");
}

}  // namespace attn

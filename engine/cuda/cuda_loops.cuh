// Device-side building blocks shared by the CUDA kernels of every op family:
// launch sizing and grid-stride loops, an offset calculator that walks a
// strided (possibly broadcast) shape over N operands, warp and block
// reductions, and atomics. Included only by CUDA sources (.cu) of a build with
// ATTN_WITH_CUDA. Host-side dtype dispatch and axis merging are shared with the
// CPU backend (engine/cpu_loops.h), so both devices see the same layouts.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "attn/engine/cpu_loops.h"
#include "attn/engine/cuda/cuda_check.h"
#include "attn/engine/error.h"
#include "attn/engine/shape.h"
#include "attn/engine/tensor.h"

namespace attn {
namespace cuda {

// Threads per block for elementwise and row kernels (a multiple of 32).
constexpr int kThreads = 256;
constexpr int kWarp = 32;
// Rows up to this length get one warp each; longer rows get a whole block.
constexpr int64_t kWarpRowLimit = 1024;
// Upper bound on blocks of a grid-stride launch: enough to fill any current GPU.
constexpr int64_t kMaxBlocks = 65535 * 4;

// Blocks for a grid-stride loop over n items with `threads` per block.
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(b, kMaxBlocks)));
}

// The stream every kernel of this backend runs on.
inline cudaStream_t stream() { return 0; }

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// for (int64_t i : [0, n)) spread over the whole grid.
#define ATTN_CUDA_LOOP(i, n) \
  for (int64_t i = ::attn::cuda::global_thread(); i < (n); i += ::attn::cuda::grid_threads())

// ---------------------------------------------------------------------------
// Strided iteration over N operands.

// Most axes a strided kernel handles after merging (merge_axes drops size-1
// axes and fuses axes that are contiguous for every operand).
constexpr int kMaxDims = 12;

template <int N>
struct Offsets {
  int64_t v[N];
};

// Shape and per-operand strides, passed to kernels by value.
template <int N>
struct OffsetCalc {
  int rank = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];

  // Element offsets of each operand for the linear (row-major) index i.
  __device__ __forceinline__ Offsets<N> get(int64_t i) const {
    Offsets<N> o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t s = sizes[d];
      const int64_t c = i % s;
      i /= s;
#pragma unroll
      for (int k = 0; k < N; ++k) o.v[k] += c * strides[k][d];
    }
    return o;
  }
};

// Merges the axes of `shape` and builds the calculator; `contiguous` is set
// when every operand advances by one element per linear index.
template <int N>
OffsetCalc<N> make_offset_calc(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides,
                               bool* contiguous, const char* op) {
  StridedLayout<N> L = merge_axes<N>(shape, strides);
  OffsetCalc<N> c;
  const int rank = static_cast<int>(L.shape.size());
  ATTN_CHECK(rank <= kMaxDims, op, "the CUDA kernels handle at most ", kMaxDims, " non-mergeable axes, got ", rank);
  c.rank = rank;
  bool contig = rank == 1;
  for (int d = 0; d < rank; ++d) {
    c.sizes[d] = L.shape[d];
    for (int k = 0; k < N; ++k) c.strides[k][d] = L.strides[k][d];
  }
  for (int k = 0; k < N && contig; ++k) contig = L.strides[k][0] == 1;
  for (int d = rank; d < kMaxDims; ++d) {
    c.sizes[d] = 1;
    for (int k = 0; k < N; ++k) c.strides[k][d] = 0;
  }
  *contiguous = contig;
  return c;
}

// f(offsets) for every element; offsets are all i on the contiguous path.
template <int N, class F>
__global__ void contiguous_kernel(int64_t n, F f) {
  ATTN_CUDA_LOOP(i, n) {
    Offsets<N> o;
#pragma unroll
    for (int k = 0; k < N; ++k) o.v[k] = i;
    f(o);
  }
}

template <int N, class F>
__global__ void strided_kernel(int64_t n, OffsetCalc<N> calc, F f) {
  ATTN_CUDA_LOOP(i, n) { f(calc.get(i)); }
}

// Runs the functor f (a struct with `__device__ void operator()(const
// Offsets<N>&) const`) over every element of `shape`, operand k at
// strides[k] (elements, 0 for broadcast axes) from its own data pointer.
template <int N, class F>
void launch_strided(const char* op, const Shape& shape, const std::array<std::vector<int64_t>, N>& strides,
                    const F& f) {
  const int64_t n = numel_of(shape);
  if (n == 0) return;
  bool contig = false;
  OffsetCalc<N> calc = make_offset_calc<N>(shape, strides, &contig, op);
  if (contig) {
    contiguous_kernel<N, F><<<blocks_for(n), kThreads, 0, stream()>>>(n, f);
  } else {
    strided_kernel<N, F><<<blocks_for(n), kThreads, 0, stream()>>>(n, calc, f);
  }
  ATTN_CUDA_CHECK_LAUNCH(op);
}

// -infinity of T in device code (std::numeric_limits is host-only there).
template <class T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return -__int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return -__longlong_as_double(0x7ff0000000000000LL); }

// ---------------------------------------------------------------------------
// Reductions.

struct SumOp {
  template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return a + b; }
};
// NaN never wins (as in the CPU kernels' `x > m` scans).
struct MaxOp {
  template <class V> __device__ __forceinline__ V operator()(V a, V b) const { return b > a ? b : a; }
};

__device__ __forceinline__ float shfl_xor(float v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ double shfl_xor(double v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
__device__ __forceinline__ long long shfl_xor(long long v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}
__device__ __forceinline__ int64_t shfl_xor(int64_t v, int mask) {
  return static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(v), mask));
}

// A value with its position, for argmax.
template <class T>
struct ValIdx {
  T v;
  int64_t i;  // kNoIndex when the slot has seen no element
};
constexpr int64_t kNoIndex = INT64_MAX;

template <class T>
__device__ __forceinline__ ValIdx<T> shfl_xor(ValIdx<T> a, int mask) {
  ValIdx<T> r;
  r.v = shfl_xor(a.v, mask);
  r.i = shfl_xor(a.i, mask);
  return r;
}

// Largest value, the smallest index among equal values; empty slots lose.
// Associative and commutative, so any reduction tree gives the first maximum.
struct ArgMaxOp {
  template <class T>
  __device__ __forceinline__ ValIdx<T> operator()(ValIdx<T> a, ValIdx<T> b) const {
    if (b.i == kNoIndex) return a;
    if (a.i == kNoIndex) return b;
    if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
    return a;
  }
};

// Butterfly reduction: every lane of the warp gets the result. All 32 lanes
// must take part.
template <class V, class Op>
__device__ __forceinline__ V warp_reduce(V v, Op op) {
#pragma unroll
  for (int m = kWarp / 2; m > 0; m >>= 1) v = op(v, shfl_xor(v, m));
  return v;
}

// Whole-block reduction (blockDim.x a multiple of 32, at most 1024); every
// thread gets the result. Every thread of the block must call it. `smem`
// holds at least 32 values; it may be reused right after the call returns.
template <class V, class Op>
__device__ __forceinline__ V block_reduce(V v, Op op, V identity, V* smem) {
  const int lane = threadIdx.x & (kWarp - 1);
  const int warp = threadIdx.x / kWarp;
  const int warps = blockDim.x / kWarp;
  v = warp_reduce(v, op);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {
    V w = lane < warps ? smem[lane] : identity;
    w = warp_reduce(w, op);
    if (lane == 0) smem[0] = w;
  }
  __syncthreads();
  const V r = smem[0];
  __syncthreads();
  return r;
}

// The threads that cooperate on one row: a warp (kBlock false; blockDim.x / 32
// rows per block) or the whole block (kBlock true; one row per block). Rows
// are visited grid-stride, uniformly within the group, so group reductions
// inside the row loop are safe.
template <bool kBlock>
struct RowGroup {
  __device__ __forceinline__ static int lane() { return kBlock ? static_cast<int>(threadIdx.x) : threadIdx.x & 31; }
  __device__ __forceinline__ static int size() { return kBlock ? static_cast<int>(blockDim.x) : kWarp; }
  __device__ __forceinline__ static int64_t first_row() {
    return kBlock ? static_cast<int64_t>(blockIdx.x)
                  : static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  }
  __device__ __forceinline__ static int64_t row_step() {
    return kBlock ? static_cast<int64_t>(gridDim.x) : static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  }
  template <class V, class Op>
  __device__ __forceinline__ static V reduce(V v, Op op, V identity, V* smem) {
    if (kBlock) return block_reduce(v, op, identity, smem);
    (void)identity;
    (void)smem;
    return warp_reduce(v, op);
  }
};

// Launch shape of a row kernel over `rows` rows of length n.
struct RowLaunch {
  bool block;  // one block per row (else one warp per row)
  unsigned grid;
  int threads;
};
inline RowLaunch row_launch(int64_t rows, int64_t n) {
  RowLaunch l;
  l.block = n > kWarpRowLimit;
  l.threads = kThreads;
  const int64_t rows_per_block = l.block ? 1 : kThreads / kWarp;
  const int64_t b = (rows + rows_per_block - 1) / rows_per_block;
  l.grid = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(b, kMaxBlocks)));
  return l;
}

// ---------------------------------------------------------------------------
// Column reductions: K sums down each column j of a [n, inner] problem,
// sum_i term(i, j), accumulated in double. Blocks are 32 columns x 8 row
// lanes; rows may be split into chunks (grid.y) whose partial sums go to a
// double buffer [chunks, K, inner] that a second kernel adds in chunk order.
// The split depends on (n, inner) only, so results are run-to-run identical.

constexpr int kColTile = 32;
constexpr int kColLanes = 8;

// Term: `__device__ void operator()(int64_t i, int64_t j, double* acc) const`
// adds row i's contributions to column j into acc[0..K).
template <int K, class Term>
__global__ void column_partials_kernel(int64_t n, int64_t inner, int64_t rows_per_chunk, Term term,
                                       double* partial) {
  __shared__ double sm[K][kColLanes][kColTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t chunk = blockIdx.y;
  const int64_t r0 = chunk * rows_per_chunk;
  const int64_t r1 = r0 + rows_per_chunk < n ? r0 + rows_per_chunk : n;
  const int64_t tiles = (inner + kColTile - 1) / kColTile;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t j = tile * kColTile + tx;
    double acc[K];
#pragma unroll
    for (int k = 0; k < K; ++k) acc[k] = 0;
    if (j < inner)
      for (int64_t i = r0 + ty; i < r1; i += kColLanes) term(i, j, acc);
#pragma unroll
    for (int k = 0; k < K; ++k) sm[k][ty][tx] = acc[k];
    __syncthreads();
    if (ty == 0 && j < inner) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        double s = 0;
        for (int t = 0; t < kColLanes; ++t) s += sm[k][t][tx];
        partial[(chunk * K + k) * inner + j] = s;
      }
    }
    __syncthreads();
  }
}

// Store: `__device__ void operator()(int k, int64_t j, double total) const`.
template <int K, class Store>
__global__ void column_finish_kernel(int64_t inner, int64_t chunks, const double* partial, Store store) {
  ATTN_CUDA_LOOP(e, K * inner) {
    const int k = static_cast<int>(e / inner);
    const int64_t j = e - k * inner;
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[(c * K + k) * inner + j];
    store(k, j, s);
  }
}

template <int K, class Term, class Store>
void launch_column_sums(const char* op, int64_t n, int64_t inner, const Term& term, const Store& store) {
  if (inner == 0) return;
  const int64_t tiles = (inner + kColTile - 1) / kColTile;
  // Enough blocks to fill the GPU, each chunk at least 128 rows (16 per thread).
  int64_t chunks = std::min<int64_t>((1024 + tiles - 1) / tiles, (n + 127) / 128);
  chunks = std::max<int64_t>(1, std::min<int64_t>(chunks, 1024));
  const int64_t rows_per_chunk = std::max<int64_t>(1, (n + chunks - 1) / chunks);
  Tensor partial = empty({chunks * K * inner}, DType::F64, Device::CUDA);
  dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, kMaxBlocks)), static_cast<unsigned>(chunks));
  dim3 block(kColTile, kColLanes);
  column_partials_kernel<K, Term><<<grid, block, 0, stream()>>>(n, inner, rows_per_chunk, term,
                                                                 partial.data<double>());
  ATTN_CUDA_CHECK_LAUNCH(op);
  column_finish_kernel<K, Store><<<blocks_for(K * inner), kThreads, 0, stream()>>>(inner, chunks,
                                                                                  partial.data<double>(), store);
  ATTN_CUDA_CHECK_LAUNCH(op);
}

// ---------------------------------------------------------------------------
// Atomics.

__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
  unsigned long long* a = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __double_as_longlong(v + __longlong_as_double(assumed)));
  } while (assumed != old);
#else
  atomicAdd(p, v);
#endif
}

}  // namespace cuda
}  // namespace attn

// CUDA kernels of the dropout family. Each element draws its own uniform
// 32-bit number from a stateless counter-based generator: a SplitMix64 step
// at counter (element index) over a mixed seed. The draw depends only on
// (seed, index), never on the launch configuration, so the mask is the same
// for any grid and any GPU. (It is a different stream from the CPU kernels',
// which use per-block Generators; both are uniform with the same thresholds.)
#include <cmath>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/dropout_kernels.h"

namespace attn {

namespace {

constexpr double kTwoTo32 = 4294967296.0;

__host__ __device__ __forceinline__ uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [0, 2^32) for element i of the stream `key` (a mixed seed).
__device__ __forceinline__ uint32_t draw_u32(uint64_t key, int64_t i) {
  const uint64_t z = mix64(key + (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ULL);
  return static_cast<uint32_t>(z >> 32);
}

template <class T>
__global__ void dropout_kernel(const T* x, int64_t n, uint64_t key, uint64_t threshold, T scale, T* out,
                               uint8_t* mask) {
  ATTN_CUDA_LOOP(i, n) {
    const bool keep = static_cast<uint64_t>(draw_u32(key, i)) >= threshold;
    mask[i] = keep ? 1 : 0;
    out[i] = keep ? x[i] * scale : T(0);
  }
}

template <class T>
__global__ void bernoulli_kernel(const T* probs, int64_t n, uint64_t key, T* out) {
  ATTN_CUDA_LOOP(i, n) {
    const double r = static_cast<double>(draw_u32(key, i));
    out[i] = r < static_cast<double>(probs[i]) * kTwoTo32 ? T(1) : T(0);
  }
}

// Seeds that differ in one bit give unrelated streams.
uint64_t stream_key(uint64_t seed) { return mix64(seed ^ 0x6A09E667F3BCC909ULL); }

}  // namespace

void dropout_cuda(const Tensor& x, double p, uint64_t seed, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0) return;
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    // r < threshold (probability p) drops the element.
    const uint64_t threshold = static_cast<uint64_t>(std::llround(p * kTwoTo32));
    dropout_kernel<T><<<cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream()>>>(
        x.data<T>(), n, stream_key(seed), threshold, scale, out.data<T>(), mask.data<uint8_t>());
    ATTN_CUDA_CHECK_LAUNCH("dropout");
  });
}

void bernoulli_cuda(const Tensor& probs, uint64_t seed, const Tensor& out) {
  dispatch_floating(probs.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = probs.numel();
    if (n == 0) return;
    bernoulli_kernel<T><<<cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream()>>>(probs.data<T>(), n,
                                                                                    stream_key(seed), out.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("bernoulli");
  });
}

}  // namespace attn

// CUDA kernels of the dropout family: one thread per element, each drawing
// its own number from its row's device-independent stream
// (ops/dropout/dropout_stream.h), so for the same keys the mask equals the CPU
// kernel's, for any grid and any GPU.
#include <cmath>
#include <vector>

#include "attn/engine/cuda/cuda_loops.cuh"
#include "attn/ops/dropout/dropout_kernels.h"
#include "attn/ops/dropout/dropout_stream.h"

namespace attn {

namespace {

using dropout_stream::draw_u32;
using dropout_stream::kTwoTo32;

// The row keys on the device, and the row length.
struct DeviceStreams {
  Tensor keys;  // int64 holding the uint64 keys
  int64_t row_len;
};

DeviceStreams upload(const NoiseStreams& streams, int64_t n) {
  std::vector<int64_t> bits(streams.keys.size());
  for (size_t r = 0; r < bits.size(); ++r) bits[r] = static_cast<int64_t>(streams.keys[r]);
  return {from_indices(bits, {static_cast<int64_t>(bits.size())}).to(Device::CUDA),
          n / static_cast<int64_t>(bits.size())};
}

__device__ uint32_t draw_in_row(const int64_t* keys, int64_t row_len, int64_t i) {
  const int64_t row = i / row_len;
  return draw_u32(static_cast<uint64_t>(keys[row]), i - row * row_len);
}

template <class T>
__global__ void dropout_kernel(const T* x, int64_t n, const int64_t* keys, int64_t row_len, uint64_t threshold,
                               T scale, T* out, uint8_t* mask) {
  ATTN_CUDA_LOOP(i, n) {
    const bool keep = static_cast<uint64_t>(draw_in_row(keys, row_len, i)) >= threshold;
    mask[i] = keep ? 1 : 0;
    out[i] = keep ? x[i] * scale : T(0);
  }
}

template <class T>
__global__ void dropout_backward_kernel(const T* grad, const uint8_t* mask, int64_t n, T scale, T* grad_x) {
  ATTN_CUDA_LOOP(i, n) { grad_x[i] = mask[i] ? grad[i] * scale : T(0); }
}

template <class T>
__global__ void bernoulli_kernel(const T* probs, int64_t n, const int64_t* keys, int64_t row_len, T* out) {
  ATTN_CUDA_LOOP(i, n) {
    const double r = static_cast<double>(draw_in_row(keys, row_len, i));
    out[i] = r < static_cast<double>(probs[i]) * kTwoTo32 ? T(1) : T(0);
  }
}

}  // namespace

void dropout_cuda(const Tensor& x, double p, const NoiseStreams& streams, const Tensor& out, const Tensor& mask) {
  dispatch_floating(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = x.numel();
    if (n == 0) return;
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    // r < threshold (probability p) drops the element.
    const uint64_t threshold = static_cast<uint64_t>(std::llround(p * kTwoTo32));
    const DeviceStreams d = upload(streams, n);
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), dropout_kernel<T>)
    (x.data<T>(), n, d.keys.data<int64_t>(), d.row_len, threshold, scale, out.data<T>(), mask.data<uint8_t>());
    ATTN_CUDA_CHECK_LAUNCH("dropout");
  });
}

void dropout_backward_cuda(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x) {
  dispatch_floating(grad.dtype(), "dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = grad.numel();
    if (n == 0) return;
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), dropout_backward_kernel<T>)
    (grad.data<T>(), mask.data<uint8_t>(), n, static_cast<T>(scale), grad_x.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("dropout_backward");
  });
}

void bernoulli_cuda(const Tensor& probs, const NoiseStreams& streams, const Tensor& out) {
  dispatch_floating(probs.dtype(), "bernoulli", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = probs.numel();
    if (n == 0) return;
    const DeviceStreams d = upload(streams, n);
    ATTN_CUDA_LAUNCH(cuda::blocks_for(n), cuda::kThreads, 0, cuda::stream(), bernoulli_kernel<T>)
    (probs.data<T>(), n, d.keys.data<int64_t>(), d.row_len, out.data<T>());
    ATTN_CUDA_CHECK_LAUNCH("bernoulli");
  });
}

}  // namespace attn

// Kernel signatures of the dropout family, one slot per device. Kernels take
// stream keys (not a Generator) and derive all their random bits from them,
// the shape a counter-based device generator needs. All tensors are
// contiguous.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/engine/tensor.h"

namespace attn {

// The random streams of one call: the tensor is keys.size() equal rows
// (along its leading dimension; one row: the whole tensor), and element j of
// row r draws the stream keys[r] at index j (ops/dropout/dropout_stream.h).
struct NoiseStreams {
  std::vector<uint64_t> keys;
};

// mask[i] = 1 with probability 1 - p (uint8); out[i] = x[i] * mask[i] / (1 - p).
void dropout_cpu(const Tensor& x, double p, const NoiseStreams& streams, const Tensor& out, const Tensor& mask);
// grad_x[i] = grad[i] * scale where mask[i] is set, else exactly 0 (a dropped
// element is selected out: a NaN there does not pass).
void dropout_backward_cpu(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x);
// out[i] = 1 with probability probs[i], else 0 (probs' dtype).
void bernoulli_cpu(const Tensor& probs, const NoiseStreams& streams, const Tensor& out);

#ifdef ATTN_WITH_CUDA
void dropout_cuda(const Tensor& x, double p, const NoiseStreams& streams, const Tensor& out, const Tensor& mask);
void dropout_backward_cuda(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x);
void bernoulli_cuda(const Tensor& probs, const NoiseStreams& streams, const Tensor& out);
#endif

}  // namespace attn

// Kernel signatures of the dropout family, one slot per device. Kernels take
// a seed (not a Generator) and derive all their random bits from it, the
// shape a counter-based device generator needs. All tensors are contiguous.
#pragma once
#include <cstdint>

#include "attn/engine/tensor.h"

namespace attn {

// mask[i] = 1 with probability 1 - p (uint8); out[i] = x[i] * mask[i] / (1 - p).
void dropout_cpu(const Tensor& x, double p, uint64_t seed, const Tensor& out, const Tensor& mask);
// grad_x[i] = grad[i] * scale where mask[i] is set, else exactly 0 (a dropped
// element is selected out: a NaN there does not pass).
void dropout_backward_cpu(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x);
// out[i] = 1 with probability probs[i], else 0 (probs' dtype).
void bernoulli_cpu(const Tensor& probs, uint64_t seed, const Tensor& out);

#ifdef ATTN_WITH_CUDA
void dropout_cuda(const Tensor& x, double p, uint64_t seed, const Tensor& out, const Tensor& mask);
void dropout_backward_cuda(const Tensor& grad, const Tensor& mask, double scale, const Tensor& grad_x);
void bernoulli_cuda(const Tensor& probs, uint64_t seed, const Tensor& out);
#endif

}  // namespace attn

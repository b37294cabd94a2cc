// The frame of a fused attention op with saved probabilities, shared by
// dot_product_attention and window_attention (the same attention over the
// keys of a band): the result, the kernels' signatures, the checks every
// such op makes, and the call that runs the forward kernel and records the
// backward. Each op adds its own shape checks and its mask.
#pragma once
#include <cstdint>

#include "attn/engine/kernel_table.h"
#include "attn/engine/tensor.h"

namespace attn {

struct FusedAttention {
  Tensor out;            // [B, h, nq, d]; differentiable in q, k, v
  Tensor probabilities;  // [B, h, nq, slots]: P, the softmax weights, a constant (no history)
};

// The kernels, one slot per device. q, k, v, out, grad, grad_q, grad_k and
// grad_v are [B, h, n, d] tensors with a contiguous feature axis and any
// other strides (ops/head_rows.h); mask (the op's own) and probabilities are
// contiguous. The backward writes all three gradients (no accumulation into
// existing values).
using AttentionForwardKernel = void(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    double scale, const Tensor& out, const Tensor& probabilities);
using AttentionBackwardKernel = void(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                     const Tensor& mask, const Tensor& probabilities, double scale,
                                     const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v);
struct AttentionKernels {
  DeviceKernels<AttentionForwardKernel*> forward;
  DeviceKernels<AttentionBackwardKernel*> backward;
};

// op's checks of q [B, h, nq, d] (float32 or float64) and of k and v: 4-D,
// of q's dtype and on q's device.
void check_attention_operands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v);

// op's checks that the mask (`which` in the messages) is on q's device and
// that scale is finite.
void check_attention_mask_and_scale(const char* op, const char* which, const Tensor& mask, const Tensor& q,
                                    double scale);

// Runs kernels.forward on q, k, v read in place where their feature axis is
// contiguous and the mask made contiguous: out is stored in [B, n, h, d]
// order (merging the heads is a view) and probabilities are
// [B, h, nq, slots]. When q, k or v requires a gradient, records kernels.backward
// under `op`; its gradients are stored in [B, n, h, d] order too. The
// probabilities are saved for the backward: they are what a trace records
// anyway and make dS a product, where recomputing them would redo every
// score's dot product and exponential.
FusedAttention run_fused_attention(const char* op, const AttentionKernels& kernels, const Tensor& q, const Tensor& k,
                                   const Tensor& v, const Tensor& mask, double scale, int64_t slots);

}  // namespace attn

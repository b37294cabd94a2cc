// Kernel signatures of the loss family (cross_entropy only: the other losses
// are compositions), one slot per device. logits is contiguous [N, C]; every
// per-example tensor is contiguous [N].
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// For each row i with target t = target[i] (already checked to be in [0, C)
// or ignore_index), with w = weights[t] (1 when weights is undefined; weights
// is [C] of logits' dtype):
//   row_max[i] = max_c logits[i, c]
//   row_log_sum[i] = log sum_c exp(logits[i, c] - row_max[i])
//   loss[i] = w * (row_log_sum[i] - (logits[i, t] - row_max[i]))
//   example_weight[i] = w
// Ignored rows get loss 0 and example_weight 0. Keeping the max and the log-sum
// apart (rather than their sum) keeps the backward's exp accurate at large logits.
void cross_entropy_forward_cpu(const Tensor& logits, const Tensor& target, const Tensor& weights,
                               int64_t ignore_index, const Tensor& loss, const Tensor& row_max,
                               const Tensor& row_log_sum, const Tensor& example_weight);

// grad_in[i, c] = (softmax(logits_i)_c - [c == t_i]) * example_weight[i] * grad_i * scale,
// 0 for ignored rows. grad holds N values, or 1 value used for every row.
void cross_entropy_backward_cpu(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                const Tensor& row_max, const Tensor& row_log_sum, const Tensor& example_weight,
                                const Tensor& grad, double scale, const Tensor& grad_in);

#ifdef ATTN_WITH_CUDA
void cross_entropy_forward_cuda(const Tensor& logits, const Tensor& target, const Tensor& weights,
                                int64_t ignore_index, const Tensor& loss, const Tensor& row_max,
                                const Tensor& row_log_sum, const Tensor& example_weight);
void cross_entropy_backward_cuda(const Tensor& logits, const Tensor& target, int64_t ignore_index,
                                 const Tensor& row_max, const Tensor& row_log_sum, const Tensor& example_weight,
                                 const Tensor& grad, double scale, const Tensor& grad_in);
#endif

}  // namespace attn

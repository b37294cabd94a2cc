// Training losses. cross_entropy is a fused, numerically stable kernel (it
// never materialises log-probabilities); mse_loss and kl_div are compositions
// of registered ops.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// How per-example losses are combined into the result.
enum class Reduction { Mean, Sum, None };

struct CrossEntropyOptions {
  Tensor class_weights;          // optional float [C]: rescales each class's loss
  int64_t ignore_index = -100;   // targets equal to this contribute 0 and weigh 0
  Reduction reduction = Reduction::Mean;
};

// logits: float [..., C]; target: int64 with logits' shape minus the last axis.
// loss_i = w[t_i] * (logsumexp(logits_i) - logits_i[t_i]), w = 1 without
// class weights, and 0 for ignored targets.
//   Mean: sum_i loss_i / sum_i w[t_i] over non-ignored targets (as PyTorch);
//         0 with zero gradient when every target is ignored.
//   Sum:  sum_i loss_i.   None: the loss_i, with target's shape.
// The gradient goes to logits only: targets and class weights are data.
// Throws naming the value and C when a target is outside [0, C) and is not
// ignore_index.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& options = {});

// (pred - target)^2, reduced. Shapes must match exactly (no broadcasting, which
// usually hides a bug here). Gradient to both inputs.
Tensor mse_loss(const Tensor& pred, const Tensor& target, Reduction reduction = Reduction::Mean);

// KL(target || pred) = sum target * (log target - log_pred), with 0 * log 0 = 0
// (entries where target <= 0 contribute exactly 0, never NaN).
// log_pred: log-probabilities; target: probabilities of the same shape.
//   Mean is "batchmean": the total divided by the size of axis 0 (the
//   mathematically correct KL per example when axis 0 is the batch), not by
//   the number of elements.   Sum: the total.   None: the elementwise terms.
// The gradient goes to log_pred only (d/dlog_pred = -target, / N for Mean);
// target is treated as data and receives no gradient.
Tensor kl_div(const Tensor& log_pred, const Tensor& target, Reduction reduction = Reduction::Mean);

}  // namespace attn

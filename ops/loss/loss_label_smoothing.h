// Label-smoothed cross-entropy (Szegedy et al., 2016), as tensor2tensor's
// smoothing_cross_entropy computes it for the Transformer (label_smoothing
// 0.1): the target distribution puts confidence c = 1 - eps on the true word
// and eps / (V - 1) on each other word, and the loss of a position is
//   -sum_v q_v log p_v - H(q)
//   = (c - eps/(V-1)) (lse - z_y) + eps/(V-1) (V lse - sum_v z_v) - H(q)
// with lse = logsumexp_v z_v: zero exactly when p = q. A composition of
// registered ops (cross_entropy, logsumexp, sum, where), so its backward
// runs on every device.
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

class OpRegistry;

// logits float [..., V] (V >= 2), target int64 [...]; positions whose target
// is ignore_index are selected out. Returns the mean over the other
// positions (0, with zero gradient, when there is none). 0 <= smoothing < 1.
Tensor label_smoothed_cross_entropy(const Tensor& logits, const Tensor& target, double smoothing,
                                    int64_t ignore_index);

// Its gradcheck samples, registered with the losses (ops/loss/loss_samples.cpp).
void register_label_smoothing_samples(OpRegistry& r);

}  // namespace attn

// Convolution over the token axis of [B, n, d] with SAME padding and the
// token mask (the CNN baselines of seeds 001 and 002: Multi-CNN, Kim 2014;
// Hrchy-CNN, Gehring et al. 2017).
//
// For a kernel of width k the window of token t is the tokens
// t - (k - 1) / 2 .. t + k / 2 (TensorFlow's SAME padding: an even width
// reaches one further to the right). A window position outside the sentence
// or on a padded token reads zero: its value is selected out, never
// multiplied by zero, so NaN or Inf stored there changes nothing. Outputs at
// padded tokens are exactly zero and pass no gradient.
//
// The product is one GEMM through ops/matmul over the unfolded windows
// (im2col): token_unfold builds [B, n, k, d] from the valid tokens, and
// [B, n, k d] x [k d, d_out] uses the engine's GEMM with its fused bias, on
// the CPU and on the GPU alike. The unfold costs k times the input's memory;
// k accumulated GEMMs over shifted views would not, but would run k small
// products per example instead of one large one.
#pragma once
#include "attn/engine/tensor.h"
#include "attn/ops/unary/unary_activation.h"

namespace attn {

// x [B, n, d] float, mask [B, n] uint8 (1 = valid; undefined: every token
// valid), width >= 1 -> [B, n, width, d]: entry (b, t, j) is
// x[b, t + j - (width - 1) / 2] where that token exists and is valid and t
// itself is valid, else 0. Differentiable in x: the gradient of x sums the
// windows' gradients back onto their tokens (0 at padded tokens).
Tensor token_unfold(const Tensor& x, const Tensor& mask, int64_t width);

// x [B, n, d_in], mask as above, weight [k, d_in, d_out] (the kernel's k
// taps), bias [d_out] or undefined -> [B, n, d_out]:
//   y[b, t] = bias + sum_j x[b, t + j - (k - 1) / 2] weight[j]   (valid t),
//   y[b, t] = 0                                                  (padded t),
// taps off the sentence or on padded tokens left out, and act applied to
// valid tokens as the GEMM stores its sums (the GEMM's fused relu).
// Differentiable in x, weight and bias.
Tensor token_conv(const Tensor& x, const Tensor& mask, const Tensor& weight, const Tensor& bias = Tensor(),
                  Activation act = Activation::None);

}  // namespace attn

// The backward of linear_relu's relu (ops/matmul/matmul_fused.h) with its bias gradient
// in the same pass: the incoming gradient selected where the output is
// positive (exactly 0 elsewhere, as relu's own backward) and the column sums
// of that selection. Two passes over the layer's output gradient (select,
// then sum for the bias) become one, which matters at the width of the
// Transformer's FFN ([4096, 1200] at batch 64, length 64).
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

struct ReluGradientColumns {
  Tensor grad_in;      // [rows, cols]: grad where output > 0, else 0
  Tensor column_sums;  // [cols]: the sums of grad_in's columns (accumulated in double)
};

// grad and output: floating [rows, cols] of one dtype and device. With
// in_place, grad_in is grad itself, overwritten (grad must be contiguous and
// writable: an output gradient the engine offers, see
// writable_output_gradient in engine/autograd.h); else a new tensor. Not
// differentiable itself.
ReluGradientColumns relu_gradient_columns(const Tensor& grad, const Tensor& output, bool in_place = false);

}  // namespace attn

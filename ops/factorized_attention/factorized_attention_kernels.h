// Kernel signatures of the factorized attention (ops/factorized_attention/factorized_attention.h),
// one slot per device: the elementwise passes around its GEMMs. Every tensor
// is contiguous except v, which may be strided by its first three axes (heads
// split off one feature axis) with a unit feature stride; pairs are [B, h, n, n], keys and outputs [B, h, n, d], the
// packed pairs of key weights [B, h, n, 2d] (first half F, second v F),
// rows [B, h, n] uint8; positional is uint8 [h, n, n], valid uint8 [B, n].
#pragma once
#include "attn/engine/tensor.h"

namespace attn {

// In place, raw scores r = q k^T -> E (scale = 1 / sqrt(d) applied first);
// row_has_key[b,c,j] = 1 when query j has an allowed key.
void factorized_pair_weights_cpu(const Tensor& r, const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                 double scale, const Tensor& row_has_key);
// packed = [F | v F] on real keys, 0 on padded ones.
void factorized_key_weights_cpu(const Tensor& s, const Tensor& v, const Tensor& valid, bool sigmoid_s,
                                const Tensor& packed);
// dn = E @ packed = [den | num]: out = num / den where den > 0, else 0;
// row_unsafe[b,c,j] = 1 when the query has a key and some den < kMinDenominator.
void factorized_output_cpu(const Tensor& dn, const Tensor& row_has_key, const Tensor& out, const Tensor& row_unsafe);
// packed_grad = [-grad out / den | grad / den] where den > 0, else 0.
void factorized_output_backward_cpu(const Tensor& grad, const Tensor& out, const Tensor& dn,
                                    const Tensor& packed_grad);
// In place, grad_e -> grad of the raw scores: grad_e E'(r) scale where E > 0, else 0.
void factorized_pair_backward_cpu(const Tensor& grad_e, const Tensor& e, bool sigmoid_t, double scale);
// y = E^T @ packed_grad = [grad F (direct) | grad (v F)]: grad_v = grad(vF) F,
// grad_s = (grad(vF) v + grad F) F'(s) on real keys, 0 on padded ones. With
// accumulate_v, grad_v holds a gradient already (the engine's pending one)
// and this one is added into it (padded keys add nothing) instead of a new
// tensor and a pass to add the two.
void factorized_key_backward_cpu(const Tensor& y, const Tensor& packed, const Tensor& v, const Tensor& valid,
                                 bool sigmoid_s, const Tensor& grad_v, bool accumulate_v, const Tensor& grad_s);

#ifdef ATTN_WITH_CUDA
void factorized_pair_weights_cuda(const Tensor& r, const Tensor& positional, const Tensor& valid, bool sigmoid_t,
                                  double scale, const Tensor& row_has_key);
void factorized_key_weights_cuda(const Tensor& s, const Tensor& v, const Tensor& valid, bool sigmoid_s,
                                 const Tensor& packed);
void factorized_output_cuda(const Tensor& dn, const Tensor& row_has_key, const Tensor& out, const Tensor& row_unsafe);
void factorized_output_backward_cuda(const Tensor& grad, const Tensor& out, const Tensor& dn,
                                     const Tensor& packed_grad);
void factorized_pair_backward_cuda(const Tensor& grad_e, const Tensor& e, bool sigmoid_t, double scale);
void factorized_key_backward_cuda(const Tensor& y, const Tensor& packed, const Tensor& v, const Tensor& valid,
                                  bool sigmoid_s, const Tensor& grad_v, bool accumulate_v, const Tensor& grad_s);
#endif

}  // namespace attn

// Fused windowed (banded) dot-product attention, the scale-aware heads of the
// Multi-Scale Transformer (models/multiscale.h). For q, k, v [B, h, n, d] and
// a band of width W = 2R + 1, query j may attend key i = j - R + t
// (t in [0, W)) when allowed[b, j, t] (or, per head, allowed[b, c, j, t]) != 0
// and 0 <= i < n:
//
//   s[j,t]   = scale * q[j] . k[j - R + t]
//   P[j,t]   = softmax over the allowed t of s[j,.]   (0 where not allowed)
//   out[j]   = sum_t P[j,t] v[j - R + t]
//
// Each row is shifted by its own maximum over the allowed keys only; keys that
// are not allowed (masked, or outside [0, n)) are skipped, never weighted by
// zero. A query with no allowed key gets out = 0, P = 0 and passes no
// gradient. Time O(B h n W d), memory O(B h n (W + d)): no [.., W, d]
// gather of the keys, no n x n scores.
#pragma once
#include <vector>

#include "attn/engine/tensor.h"
#include "attn/ops/dot_product_attention/dot_product_attention_fused.h"

namespace attn {

// out [B, h, n, d]; probabilities [B, h, n, W]: P above.
using WindowAttention = FusedAttention;

// q, k, v [B, h, n, d] of one floating dtype and device, any views whose
// feature axis is contiguous (split_heads views are read in place); allowed
// uint8 [B, n, W] (shared by the h heads of an example) or [B, h, n, W] (a
// band per head: heads of several window sizes in one call), W odd, on that
// device. out is stored in [B, n, h, d] order, so merge_heads of it is a
// view, and so are q's, k's and v's gradients.
WindowAttention fused_window_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed,
                                       double scale);

// The band mask of per-example radii: allowed[b, j, t] = 1 when key
// i = j - R + t has |i - j| <= radii[b], 0 <= i < n and valid[b, i] != 0
// (valid uint8 [B, n]), with R = min(max_b radii[b], n - 1), so W = 2R + 1.
// On valid's device. Radii must be >= 0; those >= n - 1 see the whole sentence.
Tensor window_band_mask(const Tensor& valid, const std::vector<int64_t>& radii);

// Per-head band masks for one call over heads of several window sizes:
// radii[c][b] is head c's radius for example b; [B, h, n, W] with
// R = min(max over every head and example, n - 1), on valid's device. Head
// c's band is window_band_mask(valid, radii[c]) centred in the wider W.
Tensor window_band_mask_per_head(const Tensor& valid, const std::vector<std::vector<int64_t>>& radii);

}  // namespace attn

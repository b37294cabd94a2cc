// The attention core of MTSA (multi-mask tensorized self-attention, seeds
// 000/001): per head, the tensorized score
//   f_ji[l] = sigma_t(R_ji) + S_il   (query j, key i, feature l; Eq. 10)
// with R_ji = <q_j, k_i> / sqrt(d_h) (Eq. 8) and a d_h x n source2token
// score S (Eq. 9), softmax over the allowed keys i separately per feature
// (Eq. 11), and H_j[l] = sum_i p_ji[l] v_i[l] (Eq. 12).
//
// It is computed as the papers' Algorithm 1, never building the
// n x n x d_h tensor: with E_R = exp(sigma_t(R)) * mask (n x n per head) and
// E_S = exp(S) (n x d_h per head),
//   H = (E_R (v * E_S)) / (E_R E_S)
// i.e. two batched GEMMs over [B, heads, ...] tensors. Memory is
// O(B h n^2 + B n d). Both shifts below cancel exactly in the ratio:
//   S minus its per-feature max over the valid positions;
//   R minus its per-query max over the allowed keys (identity sigma_t only;
//   log-sigmoid gives exp(sigma_t(R)) = sigmoid(R), already in (0, 1)).
// Where the denominator is 0 (a query with no allowed key, e.g. the first
// token under the forward mask) the output is exactly 0; selections keep
// 0/0 out of both the forward and the backward pass.
//
// The one shift of S per feature cannot follow each query's allowed keys:
// when all of a query's allowed terms lie far below the feature's maximum
// (taken over keys that query may not attend), its denominator underflows,
// the forward quotient loses its digits and the backward's grad / den
// overflows to Inf and meets the zeros of E_R and E_S as NaN. When any
// denominator of a query with allowed keys falls below 2^-64, the batch is
// computed instead by ops/separable_attention/separable_attention.h, the same Eqs. 10-12 with
// each (query, feature) softmax shifted by its own maximum (exact for any
// finite scores; O(n^2 d) exponentials, so only then).
//
// Padded positions of q, k, v and s are selected out before any product, so
// NaN or Inf there never reaches a valid token, forward or backward.
#pragma once
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/engine/tensor.h"

namespace attn {

// The scale function applied to the token2token score R (Appendix A.1).
enum class SigmaT {
  LogSigmoid,  // exp(log sigmoid(R)) = sigmoid(R): a multiplicative weight (the papers' default)
  Identity,    // exp(R): an additive score, as in plain dot-product attention
};
SigmaT sigma_t_from_name(const std::string& name);  // "logsigmoid", "identity"
const char* sigma_t_name(SigmaT s);

// The positional mask of one head. Query-major: mask[i][j] = query i may attend key j.
enum class HeadMask {
  Forward,   // keys j < i (models/masks.h Direction::Forward)
  Backward,  // keys j > i
  None,      // every key but i itself
  Window,    // |i - j| <= radius (includes i itself)
};
HeadMask head_mask_from_name(const std::string& name);  // "forward", "backward", "none", "window"
const char* head_mask_name(HeadMask m);

// Per-head masks from a comma-separated list ("forward,backward"). An empty
// list gives the papers' layout: the first half of the heads forward, the
// second half backward (heads must then be even). A single name applies to
// every head; otherwise the list needs exactly `heads` entries.
std::vector<HeadMask> parse_head_masks(const std::string& list, int64_t heads);

// [heads, n, n] uint8 positional masks, one per head.
Tensor head_mask_tensor(const std::vector<HeadMask>& masks, int64_t n, int64_t window_radius);

struct TensorizedAttentionOptions {
  SigmaT sigma_t = SigmaT::LogSigmoid;
  // The scale function of the source2token scores S (Eq. 10, App. A.1: a
  // hyper-parameter like sigma_t); identity by default.
  SigmaT sigma_s = SigmaT::Identity;
  // Attention dropout (Appendix A.3): each of the two numerator factors E_R
  // and E_S is dropped with keep probability sqrt(attn_keep_prob), after the
  // denominator has been computed. 1 = off. E_R's mask is drawn first.
  double attn_keep_prob = 1.0;
  Generator* gen = nullptr;  // needed when attn_keep_prob < 1 and training
  bool training = false;
  // The fused two-GEMM op (ops/factorized_attention/factorized_attention.h); false runs the
  // composed form it is tested against. Attention dropout and an attached
  // attention trace always take the composed form (it builds the tensors
  // they need).
  bool fused = true;
};

// Algorithm 1 for all heads at once.
//   q, k: [B, h, n, d_h] (only R = q k^T / sqrt(d_h) is formed from them),
//         or both undefined: no token2token term (Table 3's "w/o
//         token2token"), Eq. 10 becomes sigma_s(S_il) + M_ji and
//         E_R = exp(M), the positional and padding mask alone
//   v: [B, h, n, d_h] values
//   s: [B, h, n, d_h] source2token scores S (row i = key i), or undefined:
//         no source2token term ("w/o source2token"), Eq. 10 becomes
//         sigma_t(R_ji) + M_ji and E_S = 1 on every real key
// An omitted term is computed as a zero score under the identity scale
// (exp(0) = 1 exactly), whatever sigma_t / sigma_s say.
//   positional: [h, n, n] uint8 (query-major); valid: [B, n] uint8 (1 = token)
// Keys at padded positions are masked; padded queries output 0.
// Returns H [B, h, n, d_h].
Tensor tensorized_self_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& s,
                                 const Tensor& positional, const Tensor& valid,
                                 const TensorizedAttentionOptions& options = {});

}  // namespace attn

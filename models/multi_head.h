// Multi-head scaled dot-product self-attention (Vaswani et al., 2017; seed
// 003 Eq. 1-3), the attention of the Transformer baseline:
//   Q = H W^Q, K = H W^K, V = H W^V          (no biases, as in Eq. 3)
//   head_c = softmax(Q_c K_c^T / sqrt(d_h)) V_c, keys at padded positions masked
//   MHA(H) = [head_1; ...; head_h] W^O
// with d_h = D / h. The attention core is the fused
// ops/dot_product_attention/dot_product_attention.h (heads read in place, merged as a view);
// scaled_dot_product_attention below is its composed form with a general
// mask, kept as a reference. Also the head splitting the Multi-Scale
// Transformer shares.
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/linear.h"

namespace attn {

// [B, n, h * d_h] -> [B, h, n, d_h] (a view) and back (a copy).
Tensor split_heads(const Tensor& x, int64_t heads);
Tensor merge_heads(const Tensor& x);

// softmax(q k^T / sqrt(d_h)) v for q [B, h, n_q, d_h], k and v [B, h, n_k, d_h].
// mask: uint8 broadcastable to [B, h, n_q, n_k], 1 = query may attend key.
// A query with no allowed key outputs zeros (never NaN). Costs O(n_q n_k).
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask);

// Children "q", "k", "v", "out": Linear(D, D) without bias, Glorot weights.
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(int64_t features, int64_t heads, Generator& gen, DType dtype = DType::F32);
  // x [B, n, D], mask [B, n] uint8 (1 = valid) -> [B, n, D]; every query
  // attends every valid key; rows of padded positions are exactly zero.
  Tensor forward(const Tensor& x, const Tensor& mask) const;
  int64_t heads() const { return heads_; }

 private:
  int64_t features_, heads_;
  Linear wq_, wk_, wv_, wo_;
};

}  // namespace attn

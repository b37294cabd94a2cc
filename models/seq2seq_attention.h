// The attentions of the Transformer encoder-decoder (models/seq2seq_transformer.h):
// multi-head dot-product attention (Vaswani et al., 2017, Sec. 3.2) whose
// queries come from x and whose keys and values come from `memory`, a
// sequence with its own padding mask: the encoder's and the decoder's
// self-attention (memory = x; the decoder's in causal order) and the
// decoder's attention over the encoder output (cross-attention).
//
// Attention dropout (t2t attention_dropout) drops attention weights, so
// while it is active the weights are formed by matmul and the masked
// softmax; otherwise the fused kernels of
// ops/dot_product_attention/dot_product_attention.h run.
//
// Incremental decoding keeps each layer's keys and values: a step projects
// only the newest position and attends the cached keys, so step t costs
// O(t d) instead of recomputing the O(t^2 d) prefix.
#pragma once
#include "attn/engine/random.h"
#include "attn/nn/dropout.h"
#include "attn/nn/linear.h"

namespace attn {

// Keys and values of one attention, split into heads: [B, h, n, d_h].
struct KeyValues {
  Tensor k, v;
};

// Children "q", "k", "v", "out": Linear(D, D) without bias (t2t's
// multihead_attention has none); "dropout": on the attention weights.
class SequenceAttention : public Module {
 public:
  SequenceAttention(int64_t features, int64_t heads, double attention_keep, Generator& init, Generator& noise,
                    DType dtype = DType::F32);

  // The keys and values of memory [B, n, D]: what a decoding step caches.
  KeyValues keys_values(const Tensor& memory) const;
  // x [B, nq, D] attends kv (memory_valid [B, nk] uint8); causal: query j
  // attends keys i <= j + nk - nq only (x holds the last nq positions of
  // the keys' sequence). -> [B, nq, D].
  Tensor attend(const Tensor& x, const KeyValues& kv, const Tensor& memory_valid, bool causal) const;
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& memory_valid, bool causal) const {
    return attend(x, keys_values(memory), memory_valid, causal);
  }

  // One decoding step of causal self-attention: x [B, 1, D] is the newest
  // position; its key and value are appended to `cache` (undefined before
  // the first step), whose every position is valid.
  Tensor step(const Tensor& x, KeyValues& cache) const;

  int64_t heads() const { return heads_; }

 private:
  int64_t features_, heads_;
  Linear wq_, wk_, wv_, wo_;
  Dropout drop_;
};

}  // namespace attn

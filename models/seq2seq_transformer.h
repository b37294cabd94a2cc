// The Transformer encoder-decoder for translation (Vaswani et al., 2017) as
// tensor2tensor's transformer_base builds it, with the encoder's
// self-attention multi-head or MTSA (seed 001, Table 6: "We replace
// multi-head self-attention modules in the encoder of official Transformer
// implementation with MTSA module"). Pre-norm layers (t2t
// layer_preprocess_sequence "n", layer_postprocess_sequence "da"):
//   y = x + drop(Sublayer(LN(x)))
// Encoder layer: self-attention, then FFN(z) = W_2 drop(relu(W_1 z + b_1)) + b_2.
// Decoder layer: causal self-attention, attention over the encoder output
// (keys at padded source positions masked), FFN. Each stack ends in a layer
// norm. One embedding table E [V, D] (normal(0, D^-1/2)) embeds the source
// and the target and is the softmax weight: logits = h E^T (Sec. 3.4);
// embeddings are multiplied by sqrt(D), then the sinusoidal timing signal
// is added and the sum dropped out. The decoder's input at position t is
// the target word t - 1; at position 0 a zero vector (t2t shift_right).
//
// Parameter "embedding" [V, D]; children "encoder<l>" with "attn"
// (SequenceAttention or MtsaLayer), "ln1", "ffn1", "ffn2", "ln2";
// "decoder<l>" with "self_attn", "ln1", "cross_attn", "ln2", "ffn1", "ffn2",
// "ln3"; "encoder_ln", "decoder_ln".
#pragma once
#include <memory>
#include <vector>

#include "attn/models/mtsa.h"
#include "attn/models/seq2seq_attention.h"
#include "attn/models/seq2seq_config.h"
#include "attn/nn/dropout.h"
#include "attn/nn/layer_norm.h"

namespace attn {

class Seq2SeqEncoderLayer : public Module {
 public:
  Seq2SeqEncoderLayer(const Seq2SeqOptions& o, Generator& init, Generator& noise, DType dtype);
  // x [B, n, D], valid [B, n] -> [B, n, D].
  Tensor forward(const Tensor& x, const Tensor& valid) const;

 private:
  std::unique_ptr<SequenceAttention> multi_head_;
  std::unique_ptr<MtsaLayer> mtsa_;
  LayerNorm ln1_, ln2_;
  Linear ffn1_, ffn2_;
  Dropout drop_, relu_drop_;
};

// What incremental decoding keeps per decoder layer: the keys and values of
// the positions decoded so far, and of the encoder output.
struct DecoderLayerCache {
  KeyValues self, cross;
};
struct DecoderCache {
  std::vector<DecoderLayerCache> layers;
  Tensor source_valid;  // [B, ns]
  int64_t length = 0;   // positions decoded so far
  // Keeps rows `index` (int64 [B']) of every cached tensor, in that order:
  // beam search's reordering of its hypotheses.
  void select(const Tensor& index);
};

class Seq2SeqDecoderLayer : public Module {
 public:
  Seq2SeqDecoderLayer(const Seq2SeqOptions& o, Generator& init, Generator& noise, DType dtype);
  // y [B, nt, D] (causal), memory [B, ns, D] with source_valid [B, ns],
  // target_valid [B, nt] -> [B, nt, D].
  Tensor forward(const Tensor& y, const Tensor& target_valid, const Tensor& memory,
                 const Tensor& source_valid) const;
  // One position y [B, 1, D] against the cache (its self-attention keys grow by one).
  Tensor step(const Tensor& y, DecoderLayerCache& cache, const Tensor& source_valid) const;
  KeyValues memory_keys_values(const Tensor& memory) const { return cross_attn_.keys_values(memory); }

 private:
  Tensor feed_forward(const Tensor& y) const;

  SequenceAttention self_attn_, cross_attn_;
  LayerNorm ln1_, ln2_, ln3_;
  Linear ffn1_, ffn2_;
  Dropout drop_, relu_drop_;
};

class Seq2SeqTransformer : public Module {
 public:
  Seq2SeqTransformer(const Seq2SeqOptions& options, Generator& init, Generator& noise, DType dtype = DType::F32);

  // source int64 [B, ns] (pad_id at padding) -> the encoder output [B, ns, D].
  Tensor encode(const Tensor& source) const;
  // Teacher-forced logits [B, nt, V] of target int64 [B, nt] (its words,
  // each sentence ending in eos_id, then pad_id) given the encoder output.
  Tensor decode(const Tensor& memory, const Tensor& source, const Tensor& target) const {
    return logits(decoder_states(memory, source, target));
  }
  // The decoder stack's output [B, nt, D] (after its layer norm), and the
  // logits [..., V] of such states: decode() split in two, so that a
  // decoder without cache takes the logits of the last position only.
  Tensor decoder_states(const Tensor& memory, const Tensor& source, const Tensor& target) const;
  Tensor logits(const Tensor& states) const;
  Tensor forward(const Tensor& source, const Tensor& target) const { return decode(encode(source), source, target); }

  // Incremental decoding: start() caches the encoder output's keys and
  // values per layer; step() takes the previous words int64 [B] (ignored at
  // position 0, whose input is the zero vector) and returns the logits
  // [B, V] of the next position.
  DecoderCache start(const Tensor& memory, const Tensor& source) const;
  Tensor step(const Tensor& previous, DecoderCache& cache) const;

  // uint8 [B, n]: 1 where ids differ from pad_id.
  Tensor valid_of(const Tensor& ids) const;
  const Seq2SeqOptions& options() const { return options_; }

 private:
  Tensor embed(const Tensor& ids) const;  // E[ids] sqrt(D)

  Seq2SeqOptions options_;
  Tensor embedding_;
  std::vector<std::unique_ptr<Seq2SeqEncoderLayer>> encoder_;
  std::vector<std::unique_ptr<Seq2SeqDecoderLayer>> decoder_;
  LayerNorm encoder_ln_, decoder_ln_;
  Dropout drop_;
};

}  // namespace attn

#include "attn/models/seq2seq_config.h"

#include "attn/engine/error.h"

namespace attn {

EncoderSelfAttention encoder_self_attention_from_name(const std::string& name) {
  if (name == "multi_head") return EncoderSelfAttention::MultiHead;
  if (name == "mtsa") return EncoderSelfAttention::Mtsa;
  ATTN_CHECK(false, "seq2seq", "unknown encoder_attention '", name, "' (expected multi_head or mtsa)");
  return EncoderSelfAttention::MultiHead;
}

const char* encoder_self_attention_name(EncoderSelfAttention a) {
  return a == EncoderSelfAttention::Mtsa ? "mtsa" : "multi_head";
}

const ConfigSchema& seq2seq_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "seq2seq",
      {int_key("hidden", 512, 1, kWidth, "model width (t2t hidden_size); a multiple of heads").as_flag(),
       int_key("heads", 8, 1, kHeads, "attention heads of every attention (t2t num_heads)").as_flag(),
       int_key("encoder_layers", 6, 1, kLayers, "encoder layers (t2t num_hidden_layers)"),
       int_key("decoder_layers", 6, 1, kLayers, "decoder layers (t2t num_hidden_layers)"),
       int_key("filter", 2048, 1, 4 * kWidth, "inner width of the feed-forward layers (t2t filter_size)"),
       probability_key("prepostprocess_keep", 0.9,
                       "keep probability on the embedded inputs and each sublayer's output "
                       "(1 - t2t layer_prepostprocess_dropout)"),
       probability_key("attention_keep", 0.9, "keep probability of the attention weights (1 - t2t attention_dropout)"),
       probability_key("relu_keep", 0.9, "keep probability inside the feed-forward layers (1 - t2t relu_dropout)"),
       choice_key("encoder_attention", "multi_head", {"multi_head", "mtsa"},
                  "the encoder's self-attention: multi-head (t2t) or MTSA (seed 001, Table 6)"),
       choice_key("mtsa_variant", "paper", {"original", "paper"},
                  "the MTSA layer's projections when encoder_attention = mtsa (models/mtsa.h)")});
  return table;
}

Seq2SeqOptions seq2seq_options(const Config& config, int64_t vocab_size, int64_t pad_id, int64_t eos_id) {
  const ConfigSchema& keys = seq2seq_config_keys();
  Seq2SeqOptions o;
  o.vocab_size = vocab_size;
  o.pad_id = pad_id;
  o.eos_id = eos_id;
  o.hidden = keys.get_int(config, "hidden");
  o.heads = keys.get_int(config, "heads");
  o.encoder_layers = keys.get_int(config, "encoder_layers");
  o.decoder_layers = keys.get_int(config, "decoder_layers");
  o.filter = keys.get_int(config, "filter");
  o.prepostprocess_keep = keys.get_float(config, "prepostprocess_keep");
  o.attention_keep = keys.get_float(config, "attention_keep");
  o.relu_keep = keys.get_float(config, "relu_keep");
  o.encoder_attention = encoder_self_attention_from_name(keys.get_string(config, "encoder_attention"));
  o.mtsa_variant = mtsa_variant_from_name(keys.get_string(config, "mtsa_variant"));
  check_seq2seq_options(o);
  return o;
}

void check_seq2seq_options(const Seq2SeqOptions& o) {
  const char* op = "seq2seq";
  ATTN_CHECK(o.vocab_size >= 2, op, "the vocabulary needs at least padding and end of sentence, got ", o.vocab_size,
             " entries");
  ATTN_CHECK(o.hidden > 0 && o.heads > 0 && o.hidden % o.heads == 0, op, "hidden ", o.hidden,
             " must be a positive multiple of heads ", o.heads);
  ATTN_CHECK(o.encoder_layers >= 1 && o.decoder_layers >= 1, op, "encoder_layers and decoder_layers must be >= 1, got ",
             o.encoder_layers, " and ", o.decoder_layers);
  ATTN_CHECK(o.filter >= 1, op, "filter must be positive, got ", o.filter);
  for (double keep : {o.prepostprocess_keep, o.attention_keep, o.relu_keep})
    ATTN_CHECK(keep > 0 && keep <= 1, op, "keep probabilities must lie in (0, 1], got ", keep);
  ATTN_CHECK(o.pad_id >= 0 && o.pad_id < o.vocab_size && o.eos_id >= 0 && o.eos_id < o.vocab_size &&
                 o.pad_id != o.eos_id,
             op, "pad_id ", o.pad_id, " and eos_id ", o.eos_id, " must be distinct ids below the vocabulary size ",
             o.vocab_size);
}

}  // namespace attn

// The configuration of the Transformer encoder-decoder for translation
// (models/seq2seq_transformer.h): tensor2tensor's transformer_base, whose
// encoder self-attention seed 001 (Table 6) replaces with MTSA. One table of
// keys, their defaults and ranges; docs/models.md says where each default
// comes from.
#pragma once
#include <cstdint>

#include "attn/models/config.h"
#include "attn/models/config_schema.h"
#include "attn/models/mtsa.h"

namespace attn {

// The self-attention of every encoder layer.
enum class EncoderSelfAttention { MultiHead, Mtsa };
EncoderSelfAttention encoder_self_attention_from_name(const std::string& name);  // "multi_head", "mtsa"
const char* encoder_self_attention_name(EncoderSelfAttention a);

const ConfigSchema& seq2seq_config_keys();

// Starts from the table's defaults (transformer_base).
struct Seq2SeqOptions {
  int64_t vocab_size = 0;  // the shared source and target vocabulary; required
  int64_t hidden = seq2seq_config_keys().default_int("hidden");
  int64_t heads = seq2seq_config_keys().default_int("heads");
  int64_t encoder_layers = seq2seq_config_keys().default_int("encoder_layers");
  int64_t decoder_layers = seq2seq_config_keys().default_int("decoder_layers");
  int64_t filter = seq2seq_config_keys().default_int("filter");
  // Keep probabilities (1 - tensor2tensor's dropout rates).
  double prepostprocess_keep = seq2seq_config_keys().default_float("prepostprocess_keep");
  double attention_keep = seq2seq_config_keys().default_float("attention_keep");
  double relu_keep = seq2seq_config_keys().default_float("relu_keep");
  EncoderSelfAttention encoder_attention =
      encoder_self_attention_from_name(seq2seq_config_keys().default_string("encoder_attention"));
  MtsaVariant mtsa_variant = mtsa_variant_from_name(seq2seq_config_keys().default_string("mtsa_variant"));
  int64_t pad_id = 0;  // rows of this id are padding: never attended, never a target
  int64_t eos_id = 1;  // ends every target sentence
};

// Reads every key of `config` (vocab_size, pad_id and eos_id come from the
// vocabulary, not the config).
Seq2SeqOptions seq2seq_options(const Config& config, int64_t vocab_size, int64_t pad_id, int64_t eos_id);

// Throws naming the first value out of range or inconsistent (hidden not a
// multiple of heads, ids outside the vocabulary, ...).
void check_seq2seq_options(const Seq2SeqOptions& o);

}  // namespace attn

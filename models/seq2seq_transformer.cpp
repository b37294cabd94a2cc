#include "attn/models/seq2seq_transformer.h"

#include <cmath>
#include <string>

#include "attn/engine/error.h"
#include "attn/engine/random.h"
#include "attn/models/masks.h"
#include "attn/models/positional.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/index/index.h"
#include "attn/ops/join/join.h"
#include "attn/ops/matmul/matmul.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"

namespace attn {

namespace {

// Checked before any member is built, so a bad option fails with its own message.
const Seq2SeqOptions& checked(const Seq2SeqOptions& o) {
  check_seq2seq_options(o);
  return o;
}

MtsaOptions mtsa_options_of(const Seq2SeqOptions& o) {
  MtsaOptions m;
  m.heads = o.heads;
  m.variant = o.mtsa_variant;
  m.attn_keep_prob = o.attention_keep;
  return m;
}

void check_ids(const Tensor& ids, const char* what) {
  ATTN_CHECK(ids.defined() && ids.dtype() == DType::I64 && ids.dim() == 2, "seq2seq", what,
             " must be int64 [B, n], got ",
             ids.defined() ? std::string(dtype_name(ids.dtype())) + " " + shape_str(ids.shape()) : "undefined");
}

}  // namespace

Seq2SeqEncoderLayer::Seq2SeqEncoderLayer(const Seq2SeqOptions& o, Generator& init, Generator& noise, DType dtype)
    : ln1_(o.hidden, 1e-6, dtype),
      ln2_(o.hidden, 1e-6, dtype),
      ffn1_(o.hidden, o.filter, init, true, dtype),
      ffn2_(o.filter, o.hidden, init, true, dtype),
      drop_(o.prepostprocess_keep, noise),
      relu_drop_(o.relu_keep, noise) {
  if (o.encoder_attention == EncoderSelfAttention::Mtsa) {
    mtsa_ = std::make_unique<MtsaLayer>(o.hidden, o.hidden, mtsa_options_of(o), init, &noise, dtype);
    register_module("attn", *mtsa_);
  } else {
    multi_head_ = std::make_unique<SequenceAttention>(o.hidden, o.heads, o.attention_keep, init, noise, dtype);
    register_module("attn", *multi_head_);
  }
  register_module("ln1", ln1_);
  register_module("ffn1", ffn1_);
  register_module("ffn2", ffn2_);
  register_module("ln2", ln2_);
  register_module("dropout", drop_);
  register_module("relu_dropout", relu_drop_);
}

Tensor Seq2SeqEncoderLayer::forward(const Tensor& x, const Tensor& valid) const {
  const Tensor z = ln1_(x);
  const Tensor a = mtsa_ ? mtsa_->forward(z, valid) : multi_head_->forward(z, z, valid, false);
  const Tensor h = x + drop_(a);
  return h + drop_(ffn2_(relu_drop_(ffn1_.forward(ln2_(h), Activation::Relu))));
}

void DecoderCache::select(const Tensor& index) {
  for (DecoderLayerCache& l : layers)
    for (KeyValues* kv : {&l.self, &l.cross}) {
      if (kv->k.defined()) kv->k = index_select(kv->k, 0, index);
      if (kv->v.defined()) kv->v = index_select(kv->v, 0, index);
    }
  source_valid = index_select(source_valid, 0, index);
}

Seq2SeqDecoderLayer::Seq2SeqDecoderLayer(const Seq2SeqOptions& o, Generator& init, Generator& noise, DType dtype)
    : self_attn_(o.hidden, o.heads, o.attention_keep, init, noise, dtype),
      cross_attn_(o.hidden, o.heads, o.attention_keep, init, noise, dtype),
      ln1_(o.hidden, 1e-6, dtype),
      ln2_(o.hidden, 1e-6, dtype),
      ln3_(o.hidden, 1e-6, dtype),
      ffn1_(o.hidden, o.filter, init, true, dtype),
      ffn2_(o.filter, o.hidden, init, true, dtype),
      drop_(o.prepostprocess_keep, noise),
      relu_drop_(o.relu_keep, noise) {
  register_module("self_attn", self_attn_);
  register_module("ln1", ln1_);
  register_module("cross_attn", cross_attn_);
  register_module("ln2", ln2_);
  register_module("ffn1", ffn1_);
  register_module("ffn2", ffn2_);
  register_module("ln3", ln3_);
  register_module("dropout", drop_);
  register_module("relu_dropout", relu_drop_);
}

Tensor Seq2SeqDecoderLayer::feed_forward(const Tensor& y) const {
  return y + drop_(ffn2_(relu_drop_(ffn1_.forward(ln3_(y), Activation::Relu))));
}

Tensor Seq2SeqDecoderLayer::forward(const Tensor& y, const Tensor& target_valid, const Tensor& memory,
                                    const Tensor& source_valid) const {
  const Tensor z = ln1_(y);
  Tensor h = y + drop_(self_attn_.forward(z, z, target_valid, true));
  h = h + drop_(cross_attn_.forward(ln2_(h), memory, source_valid, false));
  return feed_forward(h);
}

Tensor Seq2SeqDecoderLayer::step(const Tensor& y, DecoderLayerCache& cache, const Tensor& source_valid) const {
  Tensor h = y + drop_(self_attn_.step(ln1_(y), cache.self));
  h = h + drop_(cross_attn_.attend(ln2_(h), cache.cross, source_valid, false));
  return feed_forward(h);
}

Seq2SeqTransformer::Seq2SeqTransformer(const Seq2SeqOptions& o, Generator& init, Generator& noise, DType dtype)
    : options_(checked(o)),
      encoder_ln_(o.hidden, 1e-6, dtype),
      decoder_ln_(o.hidden, 1e-6, dtype),
      drop_(o.prepostprocess_keep, noise) {
  // t2t's symbol modality: random_normal_initializer(0, hidden_size^-0.5).
  embedding_ = register_parameter(
      "embedding", rand_normal({o.vocab_size, o.hidden}, 0.0, 1.0 / std::sqrt(static_cast<double>(o.hidden)), init,
                               dtype));
  for (int64_t l = 0; l < o.encoder_layers; ++l) {
    encoder_.push_back(std::make_unique<Seq2SeqEncoderLayer>(o, init, noise, dtype));
    register_module("encoder" + std::to_string(l), *encoder_.back());
  }
  for (int64_t l = 0; l < o.decoder_layers; ++l) {
    decoder_.push_back(std::make_unique<Seq2SeqDecoderLayer>(o, init, noise, dtype));
    register_module("decoder" + std::to_string(l), *decoder_.back());
  }
  register_module("encoder_ln", encoder_ln_);
  register_module("decoder_ln", decoder_ln_);
  register_module("dropout", drop_);
}

Tensor Seq2SeqTransformer::valid_of(const Tensor& ids) const {
  return ne(ids, full({}, static_cast<double>(options_.pad_id), DType::I64, ids.device()));
}

Tensor Seq2SeqTransformer::embed(const Tensor& ids) const {
  return mul_scalar(embedding(embedding_, ids), std::sqrt(static_cast<double>(options_.hidden)));
}

Tensor Seq2SeqTransformer::logits(const Tensor& h) const { return linear(h, embedding_); }

Tensor Seq2SeqTransformer::encode(const Tensor& source) const {
  check_ids(source, "source");
  const Tensor valid = valid_of(source);
  const Tensor x = embed(source);
  Tensor h = drop_(x + sinusoidal_positions(source.size(1), options_.hidden, x.dtype(), x.device()));
  for (const auto& layer : encoder_) h = layer->forward(h, valid);
  return encoder_ln_(h);
}

Tensor Seq2SeqTransformer::decoder_states(const Tensor& memory, const Tensor& source, const Tensor& target) const {
  check_ids(source, "source");
  check_ids(target, "target");
  ATTN_CHECK(target.size(0) == source.size(0) && memory.dim() == 3 && memory.size(0) == source.size(0) &&
                 memory.size(1) == source.size(1),
             "seq2seq", "target ", shape_str(target.shape()), ", source ", shape_str(source.shape()), " and memory ",
             shape_str(memory.shape()), " do not fit");
  const int64_t nt = target.size(1);
  // Inputs: a zero vector, then the target words but the last.
  const Tensor shifted = pad(narrow(embed(target), 1, 0, nt - 1), 1, 1, 0);
  Tensor h = drop_(shifted + sinusoidal_positions(nt, options_.hidden, shifted.dtype(), shifted.device()));
  // Every input position is valid: position t predicts word t, and padded
  // targets are ignored by the loss instead.
  const Tensor input_valid = ones({target.size(0), nt}, DType::U8, target.device());
  const Tensor source_valid = valid_of(source);
  for (const auto& layer : decoder_) h = layer->forward(h, input_valid, memory, source_valid);
  return decoder_ln_(h);
}

DecoderCache Seq2SeqTransformer::start(const Tensor& memory, const Tensor& source) const {
  check_ids(source, "source");
  DecoderCache cache;
  cache.source_valid = valid_of(source);
  for (const auto& layer : decoder_) cache.layers.push_back({{}, layer->memory_keys_values(memory)});
  return cache;
}

Tensor Seq2SeqTransformer::step(const Tensor& previous, DecoderCache& cache) const {
  ATTN_CHECK(previous.dtype() == DType::I64 && previous.dim() == 1 &&
                 previous.size(0) == cache.source_valid.size(0),
             "seq2seq", "previous words must be int64 [", cache.source_valid.size(0), "], got ",
             dtype_name(previous.dtype()), " ", shape_str(previous.shape()));
  const int64_t t = cache.length;
  const Tensor position = narrow(sinusoidal_positions(t + 1, options_.hidden, embedding_.dtype(), embedding_.device()),
                                 0, t, 1);  // [1, D]
  Tensor x = t == 0 ? zeros({previous.size(0), 1, options_.hidden}, embedding_.dtype(), embedding_.device())
                    : embed(unsqueeze(previous, 1));
  Tensor h = drop_(x + position);
  for (size_t l = 0; l < decoder_.size(); ++l) h = decoder_[l]->step(h, cache.layers[l], cache.source_valid);
  ++cache.length;
  return squeeze(logits(decoder_ln_(h)), 1);
}

}  // namespace attn

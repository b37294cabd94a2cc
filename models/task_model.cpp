#include "attn/models/task_model.h"

#include "attn/engine/error.h"

namespace attn {

namespace {
EncoderContext context_for(int64_t input_dim, DType dtype, Generator& init, Generator& noise) {
  EncoderContext c;
  c.input_dim = input_dim;
  c.dtype = dtype;
  c.init = &init;
  c.noise = &noise;
  return c;
}
}  // namespace

TaskModel::TaskModel(const Config& config, TaskKind task, int64_t vocab_size, int64_t classes, DType dtype,
                     Generator& init, Generator& noise)
    : task_(task),
      // The unknown word's row trains like any other (train_unk = false: fixed at zero).
      embedding_(vocab_size, config.get_int("embedding_dim", 300), init, config.get_bool("train_embeddings", true),
                 0, config.get_bool("train_unk", true) ? -1 : 1, dtype),
      embedding_dropout_(config.get_double("keep_prob", 0.75), noise) {
  ATTN_CHECK(classes > 1, "TaskModel", "needs at least 2 classes, got ", classes);
  const int64_t dim = embedding_.weight.size(1);
  encoder_ = build_encoder(config, context_for(dim, dtype, init, noise));
  HeadOptions o;
  o.hidden = config.get_int("head_hidden", 300);
  // Seeds 001, 002 and 004: "unspecified activation functions ... relu".
  o.activation = activation_from_name(config.get("head_activation", "relu"));
  o.keep_prob = config.get_double("keep_prob", 0.75);
  o.highway = config.get_bool("highway", false);
  if (task == TaskKind::Pair) {
    const EncoderInfo* info = find_encoder(config.get("encoder", "mtsa"));
    o.pair_features = pair_features_from_name(config.get("pair_features", info ? info->pair_features : "diff_prod"));
  }
  const int64_t sd = encoder_->sentence_dim();
  switch (task) {
    case TaskKind::Classify: head_ = std::make_unique<ClassificationHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Pair: head_ = std::make_unique<PairHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Relatedness: head_ = std::make_unique<RelatednessHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Tag: head_ = std::make_unique<TaggingHead>(encoder_->token_dim(), classes, init, dtype); break;
  }
  register_module("embedding", embedding_);
  register_module("embedding_dropout", embedding_dropout_);
  register_module("encoder", *encoder_);
  register_module("head", *head_);
}

Tensor TaskModel::encode_sentence(const Tensor& ids, const Tensor& mask, bool want_tokens) {
  EncoderOutput out = encoder_->encode(embedding_dropout_(embedding_(ids)), mask);
  return want_tokens ? out.tokens : out.sentence;
}

Tensor TaskModel::logits(const TaskInputs& in) {
  ATTN_CHECK(in.ids.defined() && in.mask.defined(), "TaskModel", "inputs need ids and mask");
  switch (task_) {
    case TaskKind::Classify:
      return static_cast<ClassificationHead&>(*head_).forward(encode_sentence(in.ids, in.mask, false));
    case TaskKind::Tag:
      return static_cast<TaggingHead&>(*head_).forward(encode_sentence(in.ids, in.mask, true));
    case TaskKind::Pair:
    case TaskKind::Relatedness: {
      ATTN_CHECK(in.ids_b.defined() && in.mask_b.defined(), "TaskModel", task_name(task_),
                 " inputs need the second sentence (ids_b, mask_b)");
      Tensor u = encode_sentence(in.ids, in.mask, false);
      Tensor v = encode_sentence(in.ids_b, in.mask_b, false);
      if (task_ == TaskKind::Pair) return static_cast<PairHead&>(*head_).forward(u, v);
      return static_cast<RelatednessHead&>(*head_).forward(u, v);
    }
  }
  return Tensor();
}

}  // namespace attn

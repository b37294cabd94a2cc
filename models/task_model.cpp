#include "attn/models/task_model.h"

#include "attn/engine/error.h"
#include "attn/ops/join/join.h"
#include "attn/models/sentence_locator.h"

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

std::vector<std::string> registered_encoders() {
  std::vector<std::string> names;
  for (const EncoderInfo& info : encoder_registry()) names.push_back(info.name);
  return names;
}
}  // namespace

const ConfigSchema& task_model_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "the task model",
      {choice_key("encoder", kDefaultEncoder, registered_encoders(), "the sentence encoder (attn train --model)"),
       int_key("embedding_dim", 300, 1, kWidth, "word embedding size, the encoder's input width").as_flag(),
       bool_key("train_embeddings", true, "fine-tune the word embeddings"),
       bool_key("train_unk", true, "train the unknown word's row (false: fixed at zero)"),
       probability_key("keep_prob", 0.75, "dropout keep probability on the embeddings and in the head's MLP")
           .as_flag(),
       int_key("head_hidden", 300, 1, kWidth, "hidden units of the task head's MLP").as_flag(),
       // Seeds 001, 002 and 004: "unspecified activation functions ... relu".
       activation_key("head_activation", Activation::Relu, "activation of the task head's MLP and highway layer"),
       bool_key("highway", false, "pair task: a highway layer before the head's MLP"),
       choice_key("pair_features", "", {"diff_prod", "absdiff_diff"}, "pair task: the features of the two sentences")
           .derived_default("the encoder's paper (EncoderInfo::pair_features)"),
       int_key("relatedness_classes", 5, 2, 1000, "relatedness task: K, scores lie in 1..K"),
       // Ma and Hovy (2016), Table 1: character embeddings of 30, 30 filters
       // of window 3, dropout 0.5 on the character embeddings.
       bool_key("char_cnn", false, "a character CNN feature of each word beside its embedding"),
       int_key("char_dim", 30, 1, kWidth, "char_cnn: character embedding size"),
       int_key("char_filters", 30, 1, kWidth, "char_cnn: filters, the width of the character feature"),
       int_key("char_width", 3, 1, 64, "char_cnn: the convolution's window in characters"),
       probability_key("char_keep_prob", 0.5, "char_cnn: dropout keep probability on the character embeddings"),
       // Tan et al. 2017 (XMUNLP/Tagger DeepAtt: feature_size = 100).
       int_key("predicate_dim", 100, 1, kWidth, "srl task: width of the predicate-indicator embedding"),
       bool_key("crf", false, "tagging task: a linear-chain CRF over the head's tag scores (003 Table 4 '+ CRF')")});
  return table;
}

int64_t relatedness_classes(const Config& config) {
  return task_model_config_keys().get_int(config, "relatedness_classes");
}

TaskModel::TaskModel(const Config& config, TaskKind task, int64_t vocab_size, int64_t classes, DType dtype,
                     Generator& init, Generator& noise, int64_t char_alphabet)
    : task_(task),
      // The unknown word's row trains like any other (train_unk = false: fixed at zero).
      embedding_(vocab_size, task_model_config_keys().get_int(config, "embedding_dim"), init,
                 task_model_config_keys().get_bool(config, "train_embeddings"), 0,
                 task_model_config_keys().get_bool(config, "train_unk") ? -1 : 1, dtype),
      embedding_dropout_(task_model_config_keys().get_float(config, "keep_prob"), noise) {
  ATTN_CHECK(classes > 1, "TaskModel", "needs at least 2 classes, got ", classes);
  const ConfigSchema& keys = task_model_config_keys();
  int64_t dim = embedding_.weight.size(1);
  if (keys.get_bool(config, "char_cnn")) {
    ATTN_CHECK(char_alphabet >= 2, "TaskModel", "char_cnn = true needs the character vocabulary (got an alphabet of ",
               char_alphabet, " characters)");
    CharCnnOptions c;
    c.alphabet = char_alphabet;
    c.char_dim = keys.get_int(config, "char_dim");
    c.filters = keys.get_int(config, "char_filters");
    c.width = keys.get_int(config, "char_width");
    c.keep_prob = keys.get_float(config, "char_keep_prob");
    char_cnn_ = std::make_unique<CharCnn>(c, init, noise, dtype);
    dim += char_cnn_->output_dim();
  }
  if (task == TaskKind::Srl) {
    // Both rows train (no padding or unknown row: pad and unk ids -1).
    predicate_embedding_ =
        std::make_unique<Embedding>(2, keys.get_int(config, "predicate_dim"), init, true, -1, -1, dtype);
    dim += predicate_embedding_->weight.size(1);
  }
  encoder_ = build_encoder(config, context_for(dim, dtype, init, noise));
  HeadOptions o;
  o.hidden = keys.get_int(config, "head_hidden");
  o.activation = activation_from_name(keys.get_string(config, "head_activation"));
  o.keep_prob = keys.get_float(config, "keep_prob");
  o.highway = keys.get_bool(config, "highway");
  if (task == TaskKind::Pair) {
    // build_encoder has refused an unknown encoder.
    const EncoderInfo* info = find_encoder(encoder_name(config));
    o.pair_features = pair_features_from_name(keys.get_string(config, "pair_features", info->pair_features));
  }
  const int64_t sd = encoder_->sentence_dim();
  switch (task) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "TaskModel", "the translate task has its own model and loop (train/translation_run.h)");
      break;
    case TaskKind::Classify: head_ = std::make_unique<ClassificationHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Pair: head_ = std::make_unique<PairHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Relatedness: head_ = std::make_unique<RelatednessHead>(sd, classes, o, init, noise, dtype); break;
    case TaskKind::Tag:
    case TaskKind::Srl: head_ = std::make_unique<TaggingHead>(encoder_->token_dim(), classes, init, dtype); break;
    case TaskKind::Locate:
      head_ = std::make_unique<SentenceLocator>(config, encoder_->token_dim(), dim, o.hidden, o.activation, o.keep_prob,
                                                dtype, init, noise);
      break;
  }
  if (predicate_embedding_) register_module("predicate_embedding", *predicate_embedding_);
  register_module("embedding", embedding_);
  register_module("embedding_dropout", embedding_dropout_);
  if (char_cnn_) register_module("char_cnn", *char_cnn_);
  register_module("encoder", *encoder_);
  register_module("head", *head_);
  if (keys.get_bool(config, "crf")) {
    ATTN_CHECK(task == TaskKind::Tag, "TaskModel", "crf = true needs the tag task (a CRF scores tag paths), got the ",
               task_name(task), " task");
    crf_ = std::make_unique<Crf>(classes, init, dtype);
    register_module("crf", *crf_);
  }
}

Tensor TaskModel::encode_sentence(const Tensor& ids, const Tensor& mask, const Tensor& chars, bool want_tokens,
                                  const Tensor& predicate) {
  Tensor words = embedding_(ids);
  if (char_cnn_) {
    ATTN_CHECK(chars.defined() && chars.dim() == 3 && chars.size(0) == ids.size(0) && chars.size(1) == ids.size(1),
               "TaskModel", "char_cnn = true needs character ids [B, n, L] beside the ids ", shape_str(ids.shape()),
               chars.defined() ? ", got " + shape_str(chars.shape()) : std::string(", got none"));
    words = concat({words, char_cnn_->forward(chars)}, -1);
  }
  if (predicate_embedding_) words = concat({words, (*predicate_embedding_)(predicate)}, -1);
  EncoderOutput out = encoder_->encode(embedding_dropout_(words), mask);
  return want_tokens ? out.tokens : out.sentence;
}

Tensor TaskModel::logits(const TaskInputs& in) {
  ATTN_CHECK(in.ids.defined() && in.mask.defined(), "TaskModel", "inputs need ids and mask");
  switch (task_) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "TaskModel", "the translate task has its own model and loop (train/translation_run.h)");
      break;
    case TaskKind::Classify:
      return static_cast<ClassificationHead&>(*head_).forward(encode_sentence(in.ids, in.mask, in.chars, false));
    case TaskKind::Tag:
      return static_cast<TaggingHead&>(*head_).forward(encode_sentence(in.ids, in.mask, in.chars, true));
    case TaskKind::Srl:
      ATTN_CHECK(in.predicate.defined() && in.predicate.shape() == in.ids.shape(), "TaskModel",
                 "srl inputs need the predicate indicator [B, n] beside ids ", shape_str(in.ids.shape()));
      return static_cast<TaggingHead&>(*head_).forward(encode_sentence(in.ids, in.mask, in.chars, true, in.predicate));
    case TaskKind::Pair:
    case TaskKind::Relatedness: {
      ATTN_CHECK(in.ids_b.defined() && in.mask_b.defined(), "TaskModel", task_name(task_),
                 " inputs need the second sentence (ids_b, mask_b)");
      Tensor u = encode_sentence(in.ids, in.mask, in.chars, false);
      Tensor v = encode_sentence(in.ids_b, in.mask_b, in.chars_b, false);
      if (task_ == TaskKind::Pair) return static_cast<PairHead&>(*head_).forward(u, v);
      return static_cast<RelatednessHead&>(*head_).forward(u, v);
    }
    case TaskKind::Locate: {
      ATTN_CHECK(in.passage_ids.defined() && in.passage_mask.defined() && in.sentences.defined(), "TaskModel",
                 "locate inputs need the passage (passage_ids, passage_mask, sentences)");
      return static_cast<SentenceLocator&>(*head_).forward(*encoder_, embedding_dropout_(embedding_(in.passage_ids)),
                                                           in.passage_mask, in.sentences,
                                                           embedding_dropout_(embedding_(in.ids)), in.mask);
    }
  }
  return Tensor();
}

}  // namespace attn

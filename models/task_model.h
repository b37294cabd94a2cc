// A whole trainable model: word embeddings (with char_cnn, beside each word's
// character feature, models/char_cnn.h) -> dropout -> encoder -> task head.
// Config keys beside the encoder's: task_model_config_keys() (task_model.cpp).
// Children: "embedding", "encoder", "head" (and "char_cnn", and
// "predicate_embedding" for srl).
#pragma once
#include <memory>

#include "attn/models/char_cnn.h"
#include "attn/models/encoder.h"
#include "attn/models/heads.h"
#include "attn/util/task_kind.h"
#include "attn/nn/embedding.h"

namespace attn {

// The keys every model config may hold whatever its encoder: the encoder's
// name, the embeddings, the dropout and the task heads.
const ConfigSchema& task_model_config_keys();

// K of the relatedness task (scores 1..K), from the config.
int64_t relatedness_classes(const Config& config);

struct TaskInputs {
  Tensor ids, mask;      // [B, n] int64 / uint8
  Tensor ids_b, mask_b;  // the second sentence (pair and relatedness tasks)
  Tensor chars, chars_b;  // [B, n, L] int64 character ids of each word (0: padding), for char_cnn
  Tensor predicate;      // [B, n] int64, 1 at the predicate, 0 elsewhere (srl)
  Tensor passage_ids, passage_mask, sentences;  // locate: [B, S, m] x2 and [B, S] (ids, mask: the question)
};

class TaskModel : public Module {
 public:
  // char_alphabet: the character vocabulary's size (padding and unknown
  // included), which char_cnn = true needs; 0 without characters.
  TaskModel(const Config& config, TaskKind task, int64_t vocab_size, int64_t classes, DType dtype, Generator& init,
            Generator& noise, int64_t char_alphabet = 0);
  // classify/pair: [B, classes]; relatedness: [B, classes] over scores 1..classes;
  // tag, srl: [B, n, classes]. srl: the encoder reads each word's embedding
  // concatenated with the embedding of its predicate indicator (Tan et al.
  // 2017), so its input is embedding_dim + predicate_dim wide.
  // locate: [B, S] sentence scores, -inf at padding
  // sentences (`classes` is unused: the passage decides how many there are).
  Tensor logits(const TaskInputs& inputs);

  TaskKind task() const { return task_; }
  Encoder& encoder() { return *encoder_; }
  Embedding& embedding() { return embedding_; }

 private:
  // The word embeddings (with the character feature and, for srl, the
  // predicate indicator's embedding beside them) through dropout and the encoder.
  Tensor encode_sentence(const Tensor& ids, const Tensor& mask, const Tensor& chars, bool want_tokens,
                         const Tensor& predicate = Tensor());

  TaskKind task_;
  Embedding embedding_;
  Dropout embedding_dropout_;
  std::unique_ptr<CharCnn> char_cnn_;  // with char_cnn = true
  std::unique_ptr<Encoder> encoder_;
  std::unique_ptr<Module> head_;
  std::unique_ptr<Embedding> predicate_embedding_;  // srl only: rows "not the predicate", "the predicate"
};

}  // namespace attn

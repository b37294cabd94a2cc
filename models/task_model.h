// A whole trainable model: word embeddings -> dropout -> encoder -> task head.
// Config keys beside the encoder's: task_model_config_keys() (task_model.cpp).
// Children: "embedding", "encoder", "head", and "crf" for a tagger with crf = true.
#pragma once
#include <memory>

#include "attn/models/encoder.h"
#include "attn/models/heads.h"
#include "attn/util/task_kind.h"
#include "attn/nn/crf.h"
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
};

class TaskModel : public Module {
 public:
  TaskModel(const Config& config, TaskKind task, int64_t vocab_size, int64_t classes, DType dtype, Generator& init,
            Generator& noise);
  // classify/pair: [B, classes]; relatedness: [B, classes] over scores 1..classes;
  // tag: [B, n, classes].
  Tensor logits(const TaskInputs& inputs);

  TaskKind task() const { return task_; }
  Encoder& encoder() { return *encoder_; }
  Embedding& embedding() { return embedding_; }
  // The tagger's CRF over the tag logits (crf = true), else null: the loss
  // and every tag prediction go through it when present.
  const Crf* crf() const { return crf_.get(); }

 private:
  Tensor encode_sentence(const Tensor& ids, const Tensor& mask, bool want_tokens);

  TaskKind task_;
  Embedding embedding_;
  Dropout embedding_dropout_;
  std::unique_ptr<Encoder> encoder_;
  std::unique_ptr<Module> head_;
  std::unique_ptr<Crf> crf_;
};

}  // namespace attn

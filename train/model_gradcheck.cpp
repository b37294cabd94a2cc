#include "attn/train/model_gradcheck.h"

#include <algorithm>

#include "attn/engine/error.h"
#include "attn/models/masks.h"
#include "attn/models/model_config_check.h"
#include "attn/models/task_model.h"
#include "attn/ops/view/view.h"
#include "attn/train/data/batching.h"
#include "attn/train/evaluate.h"

namespace attn {

namespace {

// Word ids of sentences of `lengths`, padded with 0 to n: the valid positions
// cycle through 1..vocab-1 from a random start, so every row is used once
// there are enough tokens.
Tensor sentence_ids(const std::vector<int64_t>& lengths, int64_t n, int64_t vocab, Generator& gen) {
  std::vector<int64_t> ids(lengths.size() * static_cast<size_t>(n), 0);
  int64_t next = static_cast<int64_t>(gen.uniform() * static_cast<double>(vocab - 1));
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t j = 0; j < lengths[b]; ++j)
      ids[b * static_cast<size_t>(n) + static_cast<size_t>(j)] = 1 + next++ % (vocab - 1);
  return from_indices(ids, {static_cast<int64_t>(lengths.size()), n});
}

int64_t draw(int64_t count, Generator& gen) {
  return std::min(count - 1, static_cast<int64_t>(gen.uniform() * static_cast<double>(count)));
}

// Locate: three passages of 13, 2 and 1 sentences (so [3, 13, n] with
// padding sentences in the second and third), among them sentences of
// length 1; each label a real sentence of its passage. Thirteen sentences
// fill four of Bi-BloSA's sentence blocks (4 sentences each), so each
// direction of its block stage has two queries with two or more blocks to
// weigh (a softmax over one key has no gradient).
void add_passages(Batch& batch, int64_t n, int64_t vocab, Generator& gen) {
  const int64_t half = (n + 1) / 2;
  const std::vector<std::vector<int64_t>> lengths = {{n, 1, half, 2, n, 1, half, n, 2, 1, n, half, 1}, {half, 1}, {n}};
  const int64_t s = 13;
  std::vector<int64_t> flat, counts;
  std::vector<uint8_t> real;
  for (const auto& passage : lengths) {
    for (int64_t k = 0; k < s; ++k) {
      const bool is_real = k < static_cast<int64_t>(passage.size());
      flat.push_back(is_real ? passage[static_cast<size_t>(k)] : 1);  // a padding sentence: one valid <pad>
      real.push_back(is_real ? 1 : 0);
    }
    counts.push_back(static_cast<int64_t>(passage.size()));
  }
  batch.passage_ids = reshape(sentence_ids(flat, n, vocab, gen), {3, s, n});
  for (size_t row = 0; row < real.size(); ++row)
    if (!real[row]) write_element(batch.passage_ids, static_cast<int64_t>(row) * n, 0.0);
  batch.passage_mask = reshape(length_mask(flat, n), {3, s, n});
  batch.sentences = zeros({3, s}, DType::U8);
  for (size_t row = 0; row < real.size(); ++row) write_element(batch.sentences, static_cast<int64_t>(row), real[row]);
  batch.labels = from_indices({draw(counts[0], gen), draw(counts[1], gen), draw(counts[2], gen)}, {3});
}

// Three sentences (and three second sentences for the pair tasks): one of
// full length, one half as long (padded), one empty, the empty one at a
// different place in each half of a pair; the locate task's questions and
// passages (add_passages).
Batch small_batch(const ModelGradcheckSpec& s, int64_t classes, Generator& gen) {
  const int64_t n = s.tokens, half = (s.tokens + 1) / 2;
  const std::vector<int64_t> a = {n, half, 0}, b = {half, 0, n};
  Batch batch;
  batch.indices = {0, 1, 2};
  batch.ids = sentence_ids(a, n, s.vocab, gen);
  batch.mask = length_mask(a, n);
  if (s.task == TaskKind::Pair || s.task == TaskKind::Relatedness) {
    batch.ids_b = sentence_ids(b, n, s.vocab, gen);
    batch.mask_b = length_mask(b, n);
  }
  switch (s.task) {
    case TaskKind::Translate:
      ATTN_CHECK(false, "gradcheck", "the translate task has its own model and loop (train/translation_run.h)");
      break;
    case TaskKind::Classify:
    case TaskKind::Pair:
      batch.labels = from_indices({draw(classes, gen), draw(classes, gen), draw(classes, gen)}, {3});
      break;
    case TaskKind::Relatedness:
      // Scores inside (1, K), away from the integers where the target's two
      // nonzero classes change (the target is data, but a score on an integer
      // is a corner case the check need not lean on).
      for (int i = 0; i < 3; ++i)
        batch.scores.push_back(1.0 + static_cast<double>(draw(classes - 1, gen)) + gen.uniform(0.1, 0.9));
      break;
    case TaskKind::Tag:
    case TaskKind::Srl: {
      std::vector<int64_t> tags(3 * static_cast<size_t>(n), kIgnoreTag);
      for (size_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < a[i]; ++j)
          tags[i * static_cast<size_t>(n) + static_cast<size_t>(j)] = draw(classes, gen);
      batch.tags = from_indices(tags, {3, n});
      if (s.task == TaskKind::Srl) {
        // The predicate of each non-empty sentence at a drawn position.
        std::vector<int64_t> indicator(3 * static_cast<size_t>(n), 0);
        for (size_t i = 0; i < 3; ++i)
          if (a[i] > 0) indicator[i * static_cast<size_t>(n) + static_cast<size_t>(draw(a[i], gen))] = 1;
        batch.predicate = from_indices(indicator, {3, n});
      }
      break;
    }
    case TaskKind::Locate: add_passages(batch, n, s.vocab, gen); break;
  }
  return batch;
}

// Zero-initialised parameters (biases) get values drawn from [0.05, 0.15]. At
// a zero bias, the empty sentence's zero vector and the zero padded rows put
// a relu exactly on its kink, where a central difference sees the mean of the
// two one-sided slopes and the tape one of them: a failure of the point, not
// of the backward. Positive, because the small initial embeddings make a
// bias dominate its unit's input: a negative one would leave the unit dead
// for every sentence, and a layer of dead units passes no gradient down.
void move_off_zero(const Module& model, Generator& gen) {
  for (const auto& [name, p] : model.named_parameters())
    for (int64_t k = 0; k < p.numel(); ++k)
      if (read_element(p, k) == 0.0) write_element(p, k, gen.uniform(0.05, 0.15));
}

}  // namespace

Config small_model_config(const std::string& encoder, int64_t width, int64_t hidden, int64_t heads) {
  const EncoderInfo* info = find_encoder(encoder);
  ATTN_CHECK(info, "gradcheck", "unknown encoder '", encoder, "'");
  Config c;
  c.set("encoder", encoder);
  c.set("embedding_dim", std::to_string(width));
  c.set("head_hidden", std::to_string(4 * width));
  c.set("keep_prob", "1");
  const ConfigSchema& keys = info->config_keys();
  if (keys.find("hidden")) c.set("hidden", std::to_string(hidden));
  if (keys.find("heads")) c.set("heads", std::to_string(heads));
  if (keys.find("filters")) c.set("filters", std::to_string(hidden));
  // Deep stacks at small widths: with many relu layers some unit lies within
  // a central-difference step of its kink, which fails the point, not the
  // backward. Three layers still check how layers compose.
  if (keys.find("layers") && keys.default_int("layers") > 3) c.set("layers", "3");
  if (keys.find("ffn_dim")) c.set("ffn_dim", std::to_string(4 * hidden));
  return c;
}

ModuleGradcheckResult gradcheck_task_model(const ModelGradcheckSpec& spec) {
  ATTN_CHECK(spec.tokens >= 2, "gradcheck", "needs at least 2 tokens (a padded sentence), got ", spec.tokens);
  ATTN_CHECK(spec.vocab >= 2, "gradcheck", "needs a vocabulary of at least 2 words (padding and one), got ",
             spec.vocab);
  Config config = spec.config;
  check_model_config(config, "the model config");
  const int64_t classes = spec.task == TaskKind::Relatedness ? relatedness_classes(config) : spec.classes;
  Generator init(spec.seed), noise(spec.seed + 1), data(spec.seed + 2);
  TaskModel model(config, spec.task, spec.vocab, classes, DType::F64, init, noise);
  config.check_all_used("the model config");
  model.set_training(false);
  // A selection policy's hard choice has no gradient; selecting every valid
  // token (its warm-up) makes the mechanism behind it a smooth function.
  if (model.encoder().has_selection_policy()) model.encoder().set_select_all(true);
  move_off_zero(model, data);
  if (spec.device != Device::CPU) model.to(spec.device);
  Batch batch = small_batch(spec, classes, data);
  move_batch(batch, spec.device);
  const TaskInputs inputs = inputs_of(batch);

  ModuleGradcheckOptions o;
  o.check.samples = spec.samples;
  o.check.tolerance = spec.tolerance;
  o.check.seed = spec.seed;
  o.check.allow_unreached = true;  // the readout a tagging head does not use
  Encoder& encoder = model.encoder();
  o.skip = [&encoder](const std::string&, const Tensor& p) { return encoder.is_policy_parameter(p); };
  return gradcheck_module(
      model, [&] { return training_loss(spec.task, model.logits(inputs), batch, model.crf()); }, o);
}

}  // namespace attn

#include "attn/train/translation_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "attn/engine/autograd.h"
#include "attn/engine/error.h"
#include "attn/nn/safetensors.h"
#include "attn/ops/loss/loss_label_smoothing.h"
#include "attn/train/checkpoint.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/evaluate.h"
#include "attn/train/finite_check.h"
#include "attn/train/interrupt.h"
#include "attn/train/optim/adam.h"
#include "attn/train/optim/lr_schedule.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/run/run_lock.h"
#include "attn/train/seq2seq_training.h"
#include "attn/train/text/pretokenize.h"
#include "attn/util/atomic_file.h"
#include "attn/util/text.h"

namespace attn {

namespace {

const char* const kOp = "translate";

std::string codes_path(const std::string& dir) { return RunFiles{dir}.file("bpe.codes"); }

// A split as BPE units, with the raw target lines BLEU compares against.
struct Split {
  std::vector<Example> examples;
  std::vector<std::string> references;
};

Split encode_split(const ParallelText& text, const Bpe& bpe) {
  Split s;
  for (size_t i = 0; i < text.source.size(); ++i) {
    Example e;
    e.tokens = bpe.encode_words(pretokenize(text.source[i]));
    e.tokens_b = bpe.encode_words(pretokenize(text.target[i]));
    s.examples.push_back(std::move(e));
    s.references.push_back(text.target[i]);
  }
  return s;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::vector<std::string> translate_with(Seq2SeqTransformer& model, const Bpe& bpe, const Vocabulary& vocab,
                                        const std::vector<std::string>& lines, BeamSearchOptions search) {
  // translate_lines takes whitespace-separated words: here the units.
  std::vector<std::string> units;
  for (const std::string& line : lines) units.push_back(joined(bpe.encode_words(pretokenize(line))));
  std::vector<std::string> out = translate_lines(model, units, vocab, search);
  for (std::string& line : out) line = detokenize_units(text::split_whitespace(line));
  return out;
}

std::vector<std::string> sources_of(const ParallelText& text) { return text.source; }

// Batches of about `tokens` units: pairs sorted by their longer side (ties
// in random order), cut where one more pair would pass the budget counted
// as t2t counts it (sentences x the longest side, padding included), then
// the batches shuffled.
std::vector<std::vector<size_t>> token_batches(const std::vector<Example>& train, int64_t tokens, Generator& g) {
  std::vector<size_t> order(train.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(g.uniform() * static_cast<double>(i))]);
  auto length = [&](size_t i) { return std::max(train[i].tokens.size(), train[i].tokens_b.size() + 1); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return length(a) < length(b); });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  for (size_t i : order) {
    const size_t longest = std::max(length(i), current.empty() ? size_t{0} : length(current.back()));
    if (!current.empty() && static_cast<int64_t>((current.size() + 1) * longest) > tokens) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.push_back(i);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  for (size_t i = batches.size(); i > 1; --i)
    std::swap(batches[i - 1], batches[static_cast<size_t>(g.uniform() * static_cast<double>(i))]);
  return batches;
}

void save_weights(const std::string& path, const Seq2SeqTransformer& model, int64_t step) {
  const NamedTensors state = model.named_state();
  require_finite(state, "at step " + std::to_string(step) + " (not written to " + path + ")");
  save_model_weights(path, state, {{"step", std::to_string(step)}});
}

void remove_earlier_run(const RunFiles& run) {
  for (const std::string& path : {run.model_config(), run.run_config(), run.vocab(), codes_path(run.dir), run.best(),
                                  run.last(), run.metrics(), run.steps(), run.test_metrics(), run.file(kTestTranslationsFile), run.labels(),
                                  run.curves()})
    std::remove(path.c_str());
}

Config run_settings_of(const TranslationRunOptions& o) {
  Config c;
  c.set("task", "translate");
  c.set("data", o.data);
  c.set("format", o.format);
  c.set("src", o.src);
  c.set("tgt", o.tgt);
  c.set("bpe_merges", std::to_string(o.bpe_merges));
  c.set("batch_tokens", std::to_string(o.batch_tokens));
  c.set("steps", std::to_string(o.steps));
  c.set("learning_rate", json_metric_value(o.learning_rate));
  c.set("warmup_steps", std::to_string(o.warmup_steps));
  c.set("max_len", std::to_string(o.max_len));
  c.set("seed", std::to_string(o.seed));
  c.set("beam", std::to_string(o.test_search.beam_size));
  c.set("alpha", json_metric_value(o.test_search.alpha));
  if (!o.preset.empty()) c.set("preset", o.preset);
  return c;
}

// Every key's value, so the run never depends on later changes of a default.
Config seq2seq_config_of(const Seq2SeqOptions& m) {
  Config c;
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.9g", v);
    return std::string(buf);
  };
  c.set("hidden", std::to_string(m.hidden));
  c.set("heads", std::to_string(m.heads));
  c.set("encoder_layers", std::to_string(m.encoder_layers));
  c.set("decoder_layers", std::to_string(m.decoder_layers));
  c.set("filter", std::to_string(m.filter));
  c.set("prepostprocess_keep", number(m.prepostprocess_keep));
  c.set("attention_keep", number(m.attention_keep));
  c.set("relu_keep", number(m.relu_keep));
  c.set("encoder_attention", encoder_self_attention_name(m.encoder_attention));
  c.set("mtsa_variant", mtsa_variant_name(m.mtsa_variant));
  return c;
}

}  // namespace

std::string bleu_json(const BleuScore& s) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "{\"bleu\": %s, \"precisions\": [%s, %s, %s, %s], \"brevity_penalty\": %s, \"hyp_len\": %lld, "
                "\"ref_len\": %lld}",
                json_metric_value(s.bleu).c_str(), json_metric_value(s.precisions[0]).c_str(),
                json_metric_value(s.precisions[1]).c_str(), json_metric_value(s.precisions[2]).c_str(),
                json_metric_value(s.precisions[3]).c_str(), json_metric_value(s.brevity_penalty).c_str(),
                static_cast<long long>(s.hyp_len), static_cast<long long>(s.ref_len));
  return buf;
}

TranslationRunResult run_translation_training(const TranslationRunOptions& o) {
  ATTN_CHECK(o.steps > 0, kOp, "the number of steps must be positive, got ", o.steps);
  ATTN_CHECK(o.batch_tokens > 0 && o.max_len > 0 && o.bpe_merges >= 0 && o.warmup_steps > 0 && o.eval_every >= 0,
             kOp, "batch tokens, max length and warm-up must be positive, merges and eval-every not negative");
  // Everything read and checked before the folder is touched.
  const ParallelText train_text = read_parallel_split(o.data, "train", o.src, o.tgt);
  const ParallelText dev_text = read_parallel_split(o.data, "dev", o.src, o.tgt);
  const ParallelText test_text = read_parallel_split(o.data, "test", o.src, o.tgt);
  for (const ParallelText* t : {&dev_text, &test_text})
    for (size_t i = 0; i < t->source.size(); ++i)
      ATTN_CHECK(!text::split_whitespace(t->source[i]).empty() && !text::split_whitespace(t->target[i]).empty(), kOp,
                 t->source_file, " / ", t->target_file, ": pair ", i + 1,
                 " has a blank side; dev and test are scored line by line, so every pair needs both");
  std::vector<std::string> bpe_lines;
  for (const auto* side : {&train_text.source, &train_text.target})
    for (const std::string& line : *side) bpe_lines.push_back(joined(pretokenize(line)));
  const Bpe bpe = Bpe::learn(bpe_lines, o.bpe_merges);
  Split train = encode_split(train_text, bpe);
  const Split dev = encode_split(dev_text, bpe), test = encode_split(test_text, bpe);
  const size_t read_pairs = train.examples.size();
  std::vector<Example> kept;
  for (Example& e : train.examples)
    if (!e.tokens.empty() && !e.tokens_b.empty() && static_cast<int64_t>(e.tokens.size()) <= o.max_len &&
        static_cast<int64_t>(e.tokens_b.size()) <= o.max_len &&
        static_cast<int64_t>(std::max(e.tokens.size(), e.tokens_b.size() + 1)) <= o.batch_tokens)
      kept.push_back(std::move(e));
  train.examples = std::move(kept);
  ATTN_CHECK(!train.examples.empty(), kOp, "no training pair of ", train_text.source_file,
             " is non-blank, within --max-len ", o.max_len, " units and within the batch of ", o.batch_tokens,
             " tokens");
  const Vocabulary vocab = translation_vocabulary(train.examples, 1);
  const Seq2SeqOptions model_options =
      seq2seq_options(o.model, vocab.size(), Vocabulary::kPad, end_of_sentence_id(vocab));
  o.model.check_all_used("the translation model config");
  const Config model_config = seq2seq_config_of(model_options);
  Generator init(o.seed), noise(o.seed + 1), order(o.seed + 2);
  Seq2SeqTransformer model(model_options, init, noise);

  RunFolderLock lock(o.run_dir);
  const RunFiles run{o.run_dir};
  remove_stale_temporaries(o.run_dir);
  if (const std::string earlier = existing_run_file(run); !earlier.empty() || path_exists(codes_path(o.run_dir))) {
    ATTN_CHECK(o.overwrite, kOp, "the run folder ", o.run_dir, " already holds a run (",
               earlier.empty() ? codes_path(o.run_dir) : earlier,
               "); give another --run, or --overwrite to replace it");
    remove_earlier_run(run);
  }
  write_file_atomically(run.model_config(), model_config.to_text());
  write_file_atomically(run.run_config(), run_settings_of(o).to_text());
  bpe.save(codes_path(o.run_dir));
  vocab.save(run.vocab());
  if (o.verbose)
    std::fprintf(stderr,
                 "translate: %zu training pairs (%zu dropped: blank, longer than %lld units or the batch), %zu dev, "
                 "%zu test; %lld BPE merges, %lld vocabulary entries; %s encoder self-attention\n",
                 train.examples.size(), read_pairs - train.examples.size(), static_cast<long long>(o.max_len),
                 dev.examples.size(), test.examples.size(), static_cast<long long>(bpe.merges()),
                 static_cast<long long>(vocab.size()), encoder_self_attention_name(model_options.encoder_attention));

  LrSchedule schedule;
  schedule.kind = LrScheduleKind::RsqrtWarmup;
  schedule.learning_rate = o.learning_rate;
  schedule.warmup_steps = o.warmup_steps;
  schedule.hidden = model_options.hidden;
  AdamOptions adam_options;  // t2t transformer_base: beta1 0.9, beta2 0.997, epsilon 1e-9
  adam_options.beta2 = 0.997;
  adam_options.eps = 1e-9;
  Adam adam(model.parameters(), adam_options);
  constexpr double kLabelSmoothing = 0.1;  // t2t transformer_base

  TranslationRunResult result;
  result.best_dev_bleu = -1;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<size_t>> batches;
  size_t next = 0;
  double loss_sum = 0;
  int64_t loss_count = 0;
  BeamSearchOptions greedy;
  greedy.beam_size = 1;
  auto evaluate_dev = [&](int64_t step) {
    const BleuScore dev_bleu = corpus_bleu(translate_with(model, bpe, vocab, sources_of(dev_text), greedy), dev.references);
    save_weights(run.last(), model, step);
    if (dev_bleu.bleu > result.best_dev_bleu) {
      result.best_dev_bleu = dev_bleu.bleu;
      result.best_step = step;
      save_weights(run.best(), model, step);
    }
    const double mean_loss = loss_count > 0 ? loss_sum / static_cast<double>(loss_count) : 0;
    append_line(run.metrics(), "{\"step\": " + std::to_string(step) + ", \"train_loss\": " +
                                   json_metric_value(mean_loss) + ", \"lr\": " + json_metric_value(schedule.at(step - 1)) +
                                   ", \"dev_bleu\": " + json_metric_value(dev_bleu.bleu) + "}");
    if (o.verbose)
      std::fprintf(stderr, "translate: step %lld dev %s (greedy)\n", static_cast<long long>(step),
                   format_bleu(dev_bleu).c_str());
    loss_sum = 0;
    loss_count = 0;
    model.set_training(true);
  };
  model.set_training(true);
  install_interrupt_handler();
  for (int64_t step = 1; step <= o.steps; ++step) {
    if (interrupt_requested()) {
      // Ctrl-C: the weights so far are kept (no resume: Adam's state is not saved).
      save_weights(run.last(), model, step - 1);
      if (o.verbose)
        std::fprintf(stderr, "translate: interrupted before step %lld; weights in %s, no test decoding\n",
                     static_cast<long long>(step), run.last().c_str());
      result.interrupted = true;
      result.steps = step - 1;
      return result;
    }
    if (next == batches.size()) {
      batches = token_batches(train.examples, o.batch_tokens, order);
      next = 0;
    }
    std::vector<Example> batch;
    for (size_t i : batches[next]) batch.push_back(train.examples[i]);
    ++next;
    const TranslationBatch b = translation_batch(batch, 0, batch.size(), vocab);
    adam.set_lr(schedule.at(step - 1));
    adam.zero_grad();
    const Tensor loss = label_smoothed_cross_entropy(model.forward(b.source, b.target), b.target, kLabelSmoothing,
                                                     Vocabulary::kPad);
    const double value = loss.item();
    ATTN_CHECK(std::isfinite(value), kOp, "the training loss is not finite at step ", step,
               "; stopping (nothing of this step is saved); try a lower --lr or a longer --warmup");
    loss.backward();
    adam.step();
    loss_sum += value;
    ++loss_count;
    if (o.verbose && o.log_every > 0 && step % o.log_every == 0)
      std::fprintf(stderr, "translate: step %lld/%lld loss %.4f lr %.3g %zu sentences %.1f s\n",
                   static_cast<long long>(step), static_cast<long long>(o.steps), value, schedule.at(step - 1),
                   batch.size(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if ((o.eval_every > 0 && step % o.eval_every == 0) || step == o.steps) evaluate_dev(step);
  }
  result.steps = o.steps;
  result.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  model.set_training(false);
  // The model is now the last checkpoint's (Table 6 reports the last checkpoint).
  const std::vector<std::string> test_out = translate_with(model, bpe, vocab, sources_of(test_text), o.test_search);
  result.test = corpus_bleu(test_out, test.references);
  std::string test_lines;
  for (const std::string& line : test_out) test_lines += line + "\n";
  write_file_atomically(RunFiles{o.run_dir}.file(kTestTranslationsFile), test_lines);
  char tail[256];
  std::snprintf(tail, sizeof(tail), ", \"best_dev_bleu\": %s, \"best_step\": %lld, \"steps\": %lld, \"train_seconds\": %.1f",
                json_metric_value(result.best_dev_bleu).c_str(), static_cast<long long>(result.best_step),
                static_cast<long long>(result.steps), result.train_seconds);
  result.test_json = "{\"test\": " + bleu_json(result.test) + ", \"weights\": \"last.safetensors\", \"beam\": " +
                     std::to_string(o.test_search.beam_size) + ", \"alpha\": " +
                     json_metric_value(o.test_search.alpha) + tail + ", \"task\": \"translate\", \"encoder_attention\": \"" +
                     encoder_self_attention_name(model_options.encoder_attention) + "\", \"run\": \"" + o.run_dir + "\"}";
  write_file_atomically(run.test_metrics(), result.test_json + "\n");
  if (o.verbose) std::fprintf(stderr, "translate: test %s (beam %lld)\n", format_bleu(result.test).c_str(),
                              static_cast<long long>(o.test_search.beam_size));
  return result;
}

bool is_translation_run(const std::string& dir) {
  const RunFiles run{dir};
  if (!text::is_regular_file(run.run_config())) return false;
  return Config::load(run.run_config()).get("task", "") == "translate";
}

TranslationRun load_translation_run(const std::string& dir, const std::string& weights_file) {
  const RunFiles files{dir};
  ATTN_CHECK(text::is_regular_file(files.run_config()), kOp, "no run in ", dir, ": ", files.run_config(),
             " is missing (attn train --task translate writes it)");
  TranslationRun r;
  r.dir = dir;
  r.run_config = Config::load(files.run_config());
  const std::string task = r.run_config.get("task", "classify");
  ATTN_CHECK(task == "translate", kOp, dir, " is a run of the ", task,
             " task, not a translation run (attn train --task translate makes those)");
  for (const std::string& path : {files.model_config(), codes_path(dir), files.vocab(), files.file(weights_file)})
    ATTN_CHECK(text::is_regular_file(path), kOp, "the run ", dir, " lacks ", path);
  r.bpe = Bpe::load(codes_path(dir));
  r.vocab = Vocabulary::load(files.vocab());
  const Config model_config = Config::load(files.model_config());
  const Seq2SeqOptions options =
      seq2seq_options(model_config, r.vocab.size(), Vocabulary::kPad, end_of_sentence_id(r.vocab));
  r.init = std::make_unique<Generator>(1);
  r.noise = std::make_unique<Generator>(2);
  r.model = std::make_unique<Seq2SeqTransformer>(options, *r.init, *r.noise);
  const std::map<std::string, Tensor> state = load_model_weights(files.file(weights_file));
  require_finite(state, "'" + files.file(weights_file) + "'");
  try {
    load_into_module(*r.model, state, true);
  } catch (const Error& e) {
    throw Error(std::string(kOp) + ": the weights in " + files.file(weights_file) + " do not fit the model " +
                files.model_config() + " describes: " + e.user_message());
  }
  r.model->set_training(false);
  return r;
}

std::vector<std::string> translate_text(const TranslationRun& run, const std::vector<std::string>& lines,
                                        BeamSearchOptions search) {
  return translate_with(*run.model, run.bpe, run.vocab, lines, search);
}

SplitBleu translation_split_bleu(const TranslationRun& run, const std::string& data, const std::string& split,
                                 BeamSearchOptions search) {
  const ParallelText text =
      read_parallel_split(data, split, run.run_config.get("src", "en"), run.run_config.get("tgt", "de"));
  SplitBleu r;
  r.bleu = corpus_bleu(translate_text(run, text.source, search), text.target);
  r.sentences = static_cast<int64_t>(text.source.size());
  return r;
}

}  // namespace attn

// A translation run (seed 001, Table 6) from parallel text to test BLEU, and
// the run folder it leaves: what `attn train --task translate`, `attn
// translate` and `attn eval` on such a run share. The text of every split is
// pretokenised (train/text/pretokenize.h) and cut into joint BPE units
// learned on the training source and target together (train/text/bpe.h);
// one vocabulary of those units serves both sides. Outputs are detokenised
// and scored with sacreBLEU's corpus BLEU (train/metrics_bleu.h) against the
// raw reference lines. docs/training.md, "Translation", is the user's guide.
//
// Run folder: run.cfg (task = translate and the settings), model.cfg (the
// seq2seq keys of models/seq2seq_config.h), bpe.codes, vocab.txt,
// last.safetensors (the weights at the last evaluation and at the end),
// best.safetensors (the best dev BLEU), metrics.jsonl (one line per dev
// evaluation), test_metrics.json (beam search on the test split with the
// last weights: Table 6 reports the last checkpoint), test_translations.txt
// (those test outputs, one a line: `attn bleu` or sacreBLEU can score them).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/engine/random.h"
#include "attn/models/config.h"
#include "attn/models/seq2seq_search.h"
#include "attn/train/data/vocab.h"
#include "attn/train/metrics_bleu.h"
#include "attn/train/text/bpe.h"

namespace attn {

// Sennrich et al. (2016) and t2t's WMT14 en-de setups use a joint
// vocabulary of about 32K subword units (t2t translate_ende_wmt32k).
constexpr int64_t kDefaultBpeMerges = 32000;
constexpr const char* kTestTranslationsFile = "test_translations.txt";

struct TranslationRunOptions {
  std::string data;               // folder read by read_parallel_split
  std::string src = "en", tgt = "de";
  int64_t bpe_merges = kDefaultBpeMerges;
  Config model;                   // seq2seq config keys; unset keys take transformer_base's values
  int64_t batch_tokens = 2048;    // t2t batch_size: source-or-target subword units (padding included) per step
  int64_t steps = 0;              // > 0
  double learning_rate = 0.2;     // t2t transformer_base learning_rate, with the rsqrt_warmup schedule
  int64_t warmup_steps = 8000;    // t2t transformer_base learning_rate_warmup_steps
  int64_t max_len = 256;          // training pairs with a side longer than this many units are dropped (t2t max_length)
  int64_t eval_every = 0;         // steps between dev evaluations; 0: only at the end
  int64_t log_every = 100;        // steps between progress lines (0: none)
  BeamSearchOptions test_search;  // beam 4, alpha 0.6 (t2t decode_hparams)
  uint64_t seed = 1;
  std::string run_dir;
  std::string preset;             // recorded in run.cfg
  std::string format = "parallel";  // recorded in run.cfg
  bool overwrite = false;
  bool verbose = true;
};

struct TranslationRunResult {
  BleuScore test;
  double best_dev_bleu = 0;
  int64_t best_step = 0;
  int64_t steps = 0;
  double train_seconds = 0;
  std::string test_json;  // what test_metrics.json holds (one line)
  bool interrupted = false;  // Ctrl-C: last.safetensors holds the weights so far; no test decoding
};

// Trains and writes the run folder; holds the folder's lock throughout.
TranslationRunResult run_translation_training(const TranslationRunOptions& o);

// A trained run rebuilt from its folder, in evaluation mode.
struct TranslationRun {
  std::string dir;
  Config run_config;
  Bpe bpe;
  Vocabulary vocab;
  std::unique_ptr<Generator> init, noise;
  std::unique_ptr<Seq2SeqTransformer> model;
};
// True when DIR's run.cfg names the translate task (false when it has none).
bool is_translation_run(const std::string& dir);
// Throws naming the missing or malformed file, or a run of another task.
TranslationRun load_translation_run(const std::string& dir, const std::string& weights_file = "last.safetensors");

// Raw sentences in, detokenised translations out, one per line; an empty
// (or all-whitespace) line gives an empty line.
std::vector<std::string> translate_text(const TranslationRun& run, const std::vector<std::string>& lines,
                                        BeamSearchOptions search);

// BLEU of the run on split "train", "dev" or "test" of DATA (the folder
// read_parallel_split reads, with the run's languages), decoded with `search`.
struct SplitBleu {
  BleuScore bleu;
  int64_t sentences = 0;
};
SplitBleu translation_split_bleu(const TranslationRun& run, const std::string& data, const std::string& split,
                                 BeamSearchOptions search);

// {"bleu": .., "precisions": [..], "brevity_penalty": .., "hyp_len": .., "ref_len": ..}
std::string bleu_json(const BleuScore& s);

}  // namespace attn

// The translation run end to end, through the functions `attn train --task
// translate`, `attn translate` and `attn eval` call: synthetic SVO -> SOV
// parallel text written as `attn synth-translation` writes it, a tiny
// Transformer trained on it, the run folder, and the run reloaded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attn/train/synthetic/svo_translation.h"
#include "attn/train/translation_run.h"
#include "attn/util/atomic_file.h"
#include "attn/util/text.h"
#include "test_util.h"
#include "thread_count.h"

namespace attn {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// 300 training, 30 dev and 30 test pairs, as attn synth-translation writes them.
void write_synthetic(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const auto pairs = svo_to_sov_pairs(360, 1);
  const struct {
    const char* split;
    size_t begin, end;
  } splits[] = {{"train", 0, 300}, {"dev", 300, 330}, {"test", 330, 360}};
  for (const auto& s : splits) {
    std::string en, de;
    for (size_t i = s.begin; i < s.end; ++i) {
      en += pairs[i].first + "\n";
      de += pairs[i].second + "\n";
    }
    write_file_atomically(dir + "/" + s.split + ".en", en);
    write_file_atomically(dir + "/" + s.split + ".de", de);
  }
}

// One layer each side, width 32, no dropout: 200 steps of ~400 tokens train
// in about 2 s in Release.
TranslationRunOptions tiny_run(const std::string& data, const std::string& run) {
  TranslationRunOptions o;
  o.data = data;
  o.run_dir = run;
  o.bpe_merges = 100;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"hidden", "32"}, {"heads", "2"}, {"encoder_layers", "1"}, {"decoder_layers", "1"}, {"filter", "64"},
           {"prepostprocess_keep", "1"}, {"attention_keep", "1"}, {"relu_keep", "1"}})
    o.model.set(key, value);
  o.batch_tokens = 400;
  o.steps = 200;
  o.learning_rate = 0.1;
  o.warmup_steps = 40;
  o.log_every = 0;
  o.verbose = false;
  return o;
}

TEST(TranslationRun, LearnsSyntheticTranslationAndTheRunTranslatesAsItsTestDecoding) {
  // Width-32 matrices: more threads only wait on each other (0.8 s on one,
  // many times that with spinning threads on a busy machine).
  ThreadCount one(1);
  const std::string tmp = testing_support::scratch_dir();
  const std::string data = tmp + "/data", run = tmp + "/run";
  write_synthetic(data);
  const TranslationRunResult r = run_translation_training(tiny_run(data, run));
  // The grammar is a word-for-word lexicon with reordering: an untrained
  // model scores ~0 and this one 68 (deterministic seeds); 40 leaves room
  // for rounding differences between machines, and is far above what
  // copying word order or a unigram model would reach (no 4-gram matches).
  EXPECT_GE(r.test.bleu, 40.0);
  EXPECT_EQ(r.steps, 200);
  for (const char* f : {"run.cfg", "model.cfg", "bpe.codes", "vocab.txt", "last.safetensors", "best.safetensors",
                        "metrics.jsonl", "test_metrics.json", "test_translations.txt"})
    EXPECT_TRUE(text::is_regular_file(run + "/" + f)) << f;
  EXPECT_EQ(lines_of(run + "/test_metrics.json").at(0), r.test_json);

  ASSERT_TRUE(is_translation_run(run));
  const TranslationRun loaded = load_translation_run(run);
  BeamSearchOptions search;  // the run's: beam 4, alpha 0.6
  // attn eval's path decodes the test split as the run did (the CTest
  // cli.translate_path checks attn translate's lines against the file).
  const SplitBleu again = translation_split_bleu(loaded, data, "test", search);
  EXPECT_DOUBLE_EQ(again.bleu.bleu, r.test.bleu);
  EXPECT_EQ(again.sentences, 30);
  // An empty line stays empty and does not shift the others.
  const std::vector<std::string> input = lines_of(data + "/test.en"), decoded = lines_of(run + "/test_translations.txt");
  ASSERT_EQ(decoded.size(), 30u);
  EXPECT_EQ(translate_text(loaded, {input[0], "", input[1]}, search),
            (std::vector<std::string>{decoded[0], "", decoded[1]}));
}

TEST(TranslationRun, RefusesAFolderHoldingARunWithoutOverwriteAndARunOfAnotherTask) {
  const std::string tmp = testing_support::scratch_dir();
  const std::string data = tmp + "/data", run = tmp + "/run";
  write_synthetic(data);
  TranslationRunOptions o = tiny_run(data, run);
  o.steps = 1;
  o.test_search.beam_size = 1;  // an untrained model decodes to the length cap: keep that cheap
  o.test_search.max_length = 3;
  run_translation_training(o);
  const std::string before = lines_of(run + "/test_metrics.json").at(0);
  EXPECT_THROW(run_translation_training(o), Error);
  EXPECT_EQ(lines_of(run + "/test_metrics.json").at(0), before);  // nothing written is lost
  std::filesystem::create_directories(tmp + "/other");
  write_file_atomically(tmp + "/other/run.cfg", "task = classify\n");
  try {
    load_translation_run(tmp + "/other");
    FAIL() << "a classify run loaded as a translation run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a run of the classify task"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn

// The CRF tagger (model config crf = true) through the trainer the CLI
// uses: on generated tags whose order the words alone cannot give, it beats
// the per-token softmax tagger; its CRF parameters reach the run folder and
// come back with `load_saved_run`; predictions are Viterbi paths; crf on a
// non-tag task is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "attn/engine/autograd.h"
#include "attn/ops/crf/crf.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/train/checkpoint.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/task_data.h"
#include "attn/train/evaluate.h"
#include "attn/train/model_gradcheck.h"
#include "attn/train/run/saved_run.h"
#include "attn/train/trainer.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;
using testing_support::error_of;

// Tags X, Y, Z follow a chain: after tag k comes tag k + 1 (mod 3) with
// probability 0.85, else a tag drawn uniformly. Each tag has four words of
// its own; after the first token, a word is replaced by "amb" with
// probability 0.3, a word every tag uses. A tagger that sees one word at a
// time (the bag-of-words encoder's token features are the embeddings
// themselves) can only guess an "amb" token's tag: about 1/3 right, about
// 0.8 token accuracy in all. Through the transitions, a CRF can read it off
// the previous tag: about 0.9 of the "amb" tokens right, 0.97 in all.
std::string chain_file(std::mt19937& rng, int sentences) {
  const char* names[] = {"X", "Y", "Z"};
  std::uniform_real_distribution<double> u(0, 1);
  std::string text;
  for (int s = 0; s < sentences; ++s) {
    const int n = 6 + static_cast<int>(rng() % 5);
    int tag = static_cast<int>(rng() % 3);
    for (int t = 0; t < n; ++t) {
      if (t > 0) tag = u(rng) < 0.85 ? (tag + 1) % 3 : static_cast<int>(rng() % 3);
      const std::string word = t > 0 && u(rng) < 0.3 ? std::string("amb")
                                                      : std::string(1, "xyz"[tag]) + std::to_string(rng() % 4);
      text += word + "\t" + names[tag] + "\n";
    }
    text += "\n";
  }
  return text;
}

std::string write_chain_data(const std::string& dir) {
  std::mt19937 rng(3);
  write(dir, "data/train.tsv", chain_file(rng, 300));
  write(dir, "data/dev.tsv", chain_file(rng, 60));
  write(dir, "data/test.tsv", chain_file(rng, 150));
  return dir + "/data";
}

TrainOptions tagger_options(const std::string& data, const std::string& run_dir, bool crf) {
  TrainOptions o;
  o.data.data = data;
  o.data.task = TaskKind::Tag;
  o.data.format = "conll";
  o.data.verbose = false;
  o.run_dir = run_dir;
  o.model.set("encoder", "bow");
  o.model.set("embedding_dim", "8");
  o.model.set("keep_prob", "1.0");
  if (crf) o.model.set("crf", "true");
  o.min_count = 1;
  o.batch_size = 20;
  o.epochs = 8;
  o.lr = 0.05;
  o.verbose = false;
  return o;
}

TEST(CrfTagger, BeatsTheSoftmaxTaggerWhereTagsFollowTransitions) {
  const std::string dir = fresh_dir();
  const std::string data = write_chain_data(dir);
  const TrainResult softmax = train_model(tagger_options(data, dir + "/softmax", false));
  const TrainResult crf = train_model(tagger_options(data, dir + "/crf", true));
  const double a_softmax = softmax.test.metrics.at("token_accuracy"), a_crf = crf.test.metrics.at("token_accuracy");
  std::printf("chain tags: test token accuracy softmax %.4f, crf %.4f\n", a_softmax, a_crf);
  // The softmax tagger cannot pass about 0.8 (above); the CRF gets most
  // "amb" tokens from the transitions.
  EXPECT_LT(a_softmax, 0.86);
  EXPECT_GT(a_crf, 0.93);
  EXPECT_GT(a_crf - a_softmax, 0.08);

  // The run folder holds the CRF: rebuilt from it, the model has the saved
  // parameters and scores the test split exactly as the trainer did.
  const TrainOptions o = tagger_options(data, dir + "/crf", true);
  SavedRun run = load_saved_run(o.run_dir);
  ASSERT_NE(run.model->crf(), nullptr);
  const std::map<std::string, Tensor> saved = load_model_weights(o.run_dir + "/best.safetensors");
  const Crf& layer = *run.model->crf();
  for (const auto& [name, param] : {std::pair<std::string, Tensor>{"crf.transitions", layer.transitions},
                                    {"crf.start", layer.start},
                                    {"crf.end", layer.end}}) {
    ASSERT_TRUE(saved.count(name)) << name << " missing from the checkpoint";
    EXPECT_EQ(param.to_vector(), saved.at(name).to_vector()) << name;
  }
  // The learned transitions are the chain's: from tag k, tag k + 1 scores highest.
  const std::vector<double> A = layer.transitions.to_vector();
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      if (j != (k + 1) % 3) {
        EXPECT_GT(A[k * 3 + (k + 1) % 3], A[k * 3 + j]) << "from tag " << k << " to " << j;
      }
  const Dataset test_data = load_task_data(o.data);
  EvalOptions eo;
  eo.batch_size = o.batch_size;
  const EvalResult again = evaluate(*run.model, test_data.test, run.vocab, run.labels, eo);
  EXPECT_EQ(again.metrics, crf.test.metrics);

  // predict() gives each sentence's Viterbi path, which here differs from the
  // tokens' own best tags (the "amb" tokens).
  const std::vector<Example> first(test_data.test.begin(), test_data.test.begin() + 20);
  const std::vector<Prediction> predicted = predict(*run.model, first, run.vocab, eo);
  NoGrad no_grad;
  BatchOptions bo;
  bo.batch_size = 20;
  bo.shuffle = false;
  bo.bucket_by_length = true;
  BatchIterator it(first, run.vocab, TaskKind::Tag, bo, nullptr);
  Batch batch;
  ASSERT_TRUE(it.next(batch));
  const Tensor logits = run.model->logits(inputs_of(batch));
  const std::vector<int64_t> viterbi = to_indices(layer.decode(logits, batch.mask));
  const std::vector<int64_t> token_best = to_indices(argmax(logits, -1));
  const int64_t n = batch.ids.size(1);
  int64_t differ = 0;
  for (int64_t i = 0; i < batch.size(); ++i) {
    const std::vector<int64_t>& tags = predicted[batch.indices[i]].tags;
    ASSERT_EQ(static_cast<int64_t>(tags.size()), static_cast<int64_t>(first[batch.indices[i]].tokens.size()));
    for (size_t t = 0; t < tags.size(); ++t) {
      EXPECT_EQ(tags[t], viterbi[i * n + static_cast<int64_t>(t)]) << "sentence " << batch.indices[i] << ", token " << t;
      differ += tags[t] != token_best[i * n + static_cast<int64_t>(t)];
    }
  }
  EXPECT_GT(differ, 0) << "no token where the path and the per-token argmax disagree: the check checks nothing";
}

TEST(CrfTagger, CrfOnAnotherTaskIsRefused) {
  Config config;
  config.set("encoder", "bow");
  config.set("embedding_dim", "4");
  config.set("crf", "true");
  Generator init(1), noise(2);
  for (TaskKind task : {TaskKind::Classify, TaskKind::Pair, TaskKind::Relatedness})
    EXPECT_THAT(error_of([&] { TaskModel(config, task, 10, 3, DType::F32, init, noise); }),
                ::testing::HasSubstr("crf = true needs the tag task"))
        << task_name(task);
  EXPECT_NO_THROW(TaskModel(config, TaskKind::Tag, 10, 3, DType::F32, init, noise));
}

TEST(CrfTagger, AModelWithoutCrfHasNoCrfParameters) {
  Config config;
  config.set("encoder", "bow");
  config.set("embedding_dim", "4");
  Generator init(1), noise(2);
  TaskModel model(config, TaskKind::Tag, 10, 3, DType::F32, init, noise);
  EXPECT_EQ(model.crf(), nullptr);
  for (const auto& [name, p] : model.named_parameters()) EXPECT_EQ(name.rfind("crf.", 0), std::string::npos) << name;
}

// With a CRF the training loss is the mean of the sentences' NLL, and a
// data-parallel process's share divides its sum by the whole batch's
// sentence count, so the shares' losses add up to the whole batch's.
TEST(CrfTagger, TrainingLossIsTheMeanOverSentencesAndSharesAddUp) {
  const std::string dir = fresh_dir();
  const std::vector<Example> examples = load_tagging_dir(write_chain_data(dir)).train;
  const Vocabulary vocab = Vocabulary::build(examples, 1);
  Generator init(5), noise(6);
  TaskModel model(Config::parse("encoder = bow\nembedding_dim = 6\nkeep_prob = 1.0\ncrf = true\n"), TaskKind::Tag,
                  vocab.size(), 3, DType::F64, init, noise);
  BatchOptions options;
  options.batch_size = 12;
  options.shuffle = false;
  BatchIterator whole(examples, vocab, TaskKind::Tag, options, nullptr);
  Batch batch;
  ASSERT_TRUE(whole.next(batch));
  const Tensor logits = model.logits(inputs_of(batch));
  const double expected = training_loss(TaskKind::Tag, logits, batch, model.crf()).item();
  const std::vector<double> per_sentence = model.crf()->nll(logits, batch.tags, batch.mask).to_vector();
  double mean = 0;
  for (double v : per_sentence) mean += v / static_cast<double>(per_sentence.size());
  // 12 positive sentence losses added in two orders: each sum is within
  // 12 u of the sum of their magnitudes, 12 |expected|; u = 2^-53 < 1.2e-16.
  EXPECT_NEAR(expected, mean, 24 * 1.2e-16 * 12 * std::abs(expected));
  EXPECT_GT(expected, 1.0);
  double summed = 0;
  for (int rank = 0; rank < 3; ++rank) {
    BatchIterator shared(examples, vocab, TaskKind::Tag, options, nullptr);
    shared.set_share({rank, 3});
    Batch share;
    ASSERT_TRUE(shared.next(share));
    summed += training_loss(TaskKind::Tag, model.logits(inputs_of(share)), share, model.crf()).item();
  }
  EXPECT_NEAR(summed, expected, 24 * 1.2e-16 * 12 * std::abs(expected));
}

// The whole tagger with its CRF against central differences (float64, the
// small batch of `attn gradcheck --model`: a full, a half-length and an
// empty sentence): the CRF's three tensors are reached and pass.
TEST(CrfTagger, GradcheckOfTheWholeTaggerReachesTheCrf) {
  ModelGradcheckSpec spec;
  spec.config = small_model_config("bilstm");
  spec.config.set("crf", "true");
  spec.task = TaskKind::Tag;
  const ModuleGradcheckResult m = gradcheck_task_model(spec);
  EXPECT_TRUE(m.result.passed) << m.result.failure;
  ASSERT_EQ(m.names.size(), m.result.inputs.size());
  int crf_tensors = 0;
  for (size_t i = 0; i < m.names.size(); ++i)
    if (m.names[i].rfind("crf.", 0) == 0) {
      ++crf_tensors;
      EXPECT_TRUE(m.result.inputs[i].reached) << m.names[i];
      EXPECT_GT(m.result.inputs[i].checked, 0) << m.names[i];
    }
  EXPECT_EQ(crf_tensors, 3);
}

}  // namespace
}  // namespace attn

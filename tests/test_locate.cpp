// The locate task of seed 002 Sec. 4.2 / App. B: the sentence splitter, the
// SQuAD loader and its errors, passage batching, the sentence locator's
// masking and gradients, and a learning stand-in trained by the trainer.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "test_data_util.h"
#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/models/task_model.h"
#include "attn/train/batch_noise.h"
#include "attn/train/cli/commands.h"
#include "attn/train/cli/presets.h"
#include "attn/train/data/batching.h"
#include "attn/train/data/formats/loaders.h"
#include "attn/train/data/sentence_splitter.h"
#include "attn/train/data/task_data.h"
#include "attn/train/data/vocab.h"
#include "attn/train/evaluate.h"
#include "attn/train/model_gradcheck.h"
#include "attn/train/trainer.h"
#include "attn/util/json.h"

namespace attn {
namespace {

using namespace test_data;

std::string fixture_dir() { return std::string(ATTN_SOURCE_DIR) + "/data/fixtures/squad"; }

// ---------- the sentence splitter ----------

TEST(SentenceSplitter, SplitsAtEndPunctuationAndKeepsAbbreviationsAndInitials) {
  EXPECT_THAT(sentence_texts("Mr. Smith met Dr. Jones in the U.S. capital. J. R. R. Tolkien wrote it! Did he? Yes."),
              ElementsAre("Mr. Smith met Dr. Jones in the U.S. capital.", "J. R. R. Tolkien wrote it!", "Did he?",
                          "Yes."));
  // A lowercase word after a period continues the sentence; closing quotes
  // stay with the sentence they end.
  EXPECT_THAT(sentence_texts("It cost 3 vs. 4 dollars. \"Go home.\" She left."),
              ElementsAre("It cost 3 vs. 4 dollars.", "\"Go home.\"", "She left."));
  EXPECT_THAT(sentence_texts("pi is 3.14 exactly. Next"), ElementsAre("pi is 3.14 exactly.", "Next"));
  EXPECT_TRUE(split_sentences("  \n ").empty());
}

TEST(SentenceSplitter, SpansCoverTheTextWithoutGaps) {
  const std::string text = "  One. Two!  Three? Four";
  const std::vector<SentenceSpan> spans = split_sentences(text);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans.front().begin, 0u);
  EXPECT_EQ(spans.back().end, text.size());
  for (size_t k = 1; k < spans.size(); ++k) EXPECT_EQ(spans[k].begin, spans[k - 1].end);
}

// ---------- the loader ----------

TEST(SquadLoader, ReadsTheFixtureAsSentenceLocation) {
  DataSpec spec;
  spec.task = TaskKind::Locate;
  spec.data = fixture_dir();
  const Dataset d = load_task_data(spec);  // --format auto picks squad for locate
  EXPECT_EQ(d.task, TaskKind::Locate);
  EXPECT_EQ(d.train.size() + d.dev.size(), 11u);
  // dev: the questions of one of train's three paragraphs (a seeded 10%,
  // at least one), whose passage no training question shares.
  ASSERT_FALSE(d.dev.empty());
  for (const Example& e : d.dev) {
    EXPECT_EQ(e.passage, d.dev.front().passage);
    for (const Example& t : d.train) EXPECT_NE(t.passage, e.passage);
  }
  EXPECT_EQ(d.test.size(), 5u);  // dev-v1.1.json
  // "Who was the chief engineer?": the third sentence; "Joseph B." is an initial, not an end.
  const Example& engineer = d.test[1];
  EXPECT_THAT(engineer.tokens, ElementsAre("who", "was", "the", "chief", "engineer", "?"));
  ASSERT_EQ(engineer.passage.size(), 3u);
  EXPECT_EQ(engineer.label, 2);
  EXPECT_THAT(engineer.passage[2], ElementsAre("joseph", "b", ".", "strauss", "was", "the", "chief", "engineer", "."));
  // answer_start counts characters: "Lake Geneva" comes after the two-byte 'ô'.
  std::vector<Example> all = d.train;
  all.insert(all.end(), d.dev.begin(), d.dev.end());
  bool found = false;
  for (const Example& e : all)
    if (e.tokens == Tokens{"which", "lake", "does", "the", "rhône", "flow", "through", "?"}) {
      found = true;
      EXPECT_EQ(e.label, 1);
      EXPECT_EQ(e.passage.size(), 3u);
    }
  EXPECT_TRUE(found);
  EXPECT_THAT(dataset_summary(d), HasSubstr("train 0 of 11, test 0 of 5"));
}

// A SQuAD file of one paragraph and one question.
std::string squad_json(const std::string& context, const std::string& question, const std::string& answers) {
  return "{\"data\": [{\"title\": \"t\", \"paragraphs\": [{\"context\": " + json_quote(context) +
         ", \"qas\": [{\"id\": \"q1\", \"question\": " + json_quote(question) + ", \"answers\": " + answers +
         "}]}]}], \"version\": \"1.1\"}";
}

std::string load_error(const std::string& train_text) {
  const std::string dir = fresh_dir();
  write(dir, "squad/train-v1.1.json", train_text);
  write(dir, "squad/dev-v1.1.json", squad_json("One. Two.", "Which?", "[{\"answer_start\": 5, \"text\": \"Two\"}]"));
  return error_of([&] { load_squad(dir + "/squad/train-v1.1.json", dir + "/squad/dev-v1.1.json"); });
}

TEST(SquadLoader, CountsAnswersThatRunIntoTheNextSentence) {
  const std::string dir = fresh_dir();
  const std::string context = "It rained. Then it snowed. Spring came.";
  write(dir, "squad/train-v1.1.json",
        squad_json(context, "What happened?", "[{\"answer_start\": 3, \"text\": \"rained. Then\"}]"));
  write(dir, "squad/dev-v1.1.json",
        squad_json(context, "When?", "[{\"answer_start\": 27, \"text\": \"Spring\"}, {\"answer_start\": 0, \"text\": \"It\"}]"));
  const Dataset d = load_squad(dir + "/squad/train-v1.1.json", dir + "/squad/dev-v1.1.json");
  ASSERT_EQ(d.train.size() + d.dev.size(), 1u);
  const Example& e = d.train.empty() ? d.dev[0] : d.train[0];
  EXPECT_EQ(e.label, 0);          // the sentence of the answer's start
  EXPECT_EQ(d.test[0].label, 2);  // the first answer decides (the authors' answers[0])
  EXPECT_THAT(d.notes, HasSubstr("train 1 of 1, test 0 of 1"));
}

TEST(SquadLoader, RejectsBadInputNamingTheProblem) {
  EXPECT_THAT(load_error("{\"data\": [}"), HasSubstr("not SQuAD JSON"));
  EXPECT_THAT(load_error("{\"version\": \"1.1\"}"), HasSubstr("missing \"data\""));
  EXPECT_THAT(load_error(squad_json("One. Two.", "Which?", "[{\"answer_start\": 40, \"text\": \"Two\"}]")),
              HasSubstr("answer_start '40' is not a character of the context"));
  EXPECT_THAT(load_error(squad_json("One. Two.", "Which?", "[{\"answer_start\": -1, \"text\": \"One\"}]")),
              HasSubstr("is not a character of the context"));
  EXPECT_THAT(load_error(squad_json("One. Two.", "Which?", "[]")), HasSubstr("(id q1): the question has no answers"));
  EXPECT_THAT(load_error(squad_json("One. Two.", "Which?", "[{\"answer_start\": 0, \"text\": \"Two\"}]")),
              HasSubstr("is not in the context at answer_start 0"));
  EXPECT_THAT(load_error(squad_json("   ", "Which?", "[{\"answer_start\": 0, \"text\": \" \"}]")),
              HasSubstr("the context is empty"));
  EXPECT_THAT(load_error(squad_json("One. Two.", "Which?", "[{\"answer_start\": \"0\", \"text\": \"One\"}]")),
              HasSubstr("\"answer_start\" is string, not number"));
  const std::string dir = fresh_dir();
  DataSpec spec;
  spec.task = TaskKind::Locate;
  spec.data = dir;
  spec.format = "squad";
  EXPECT_THAT(error_of([&] { load_task_data(spec); }), HasSubstr("-v1.1.json (or its usual variants) found in"));
}

// ---------- batching ----------

Example locate_example(std::vector<Tokens> passage, Tokens question, int64_t label) {
  Example e;
  e.passage = std::move(passage);
  e.tokens = std::move(question);
  e.label = label;
  return e;
}

TEST(LocateBatching, PadsPassagesAndMarksRealSentences) {
  const std::vector<Example> examples = {locate_example({{"a", "b", "c"}, {"d"}, {"e", "f"}}, {"a", "x"}, 2),
                                         locate_example({{"g"}}, {"g"}, 0)};
  const Vocabulary vocab = Vocabulary::build(examples, 1, 0);
  BatchOptions o;
  o.shuffle = false;
  o.bucket_by_length = false;
  o.batch_size = 2;
  BatchIterator it(examples, vocab, TaskKind::Locate, o, nullptr);
  Batch b;
  ASSERT_TRUE(it.next(b));
  EXPECT_EQ(b.passage_ids.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(b.passage_mask.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(b.sentences.to_vector(), (std::vector<double>{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(b.labels.to_vector(), (std::vector<double>{2, 0}));
  // The second passage: "g", then two padding sentences of one valid <pad>.
  EXPECT_EQ(b.passage_mask.to_vector(),
            (std::vector<double>{1, 1, 1, 1, 0, 0, 1, 1, 0, /**/ 1, 0, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(b.passage_ids.at({1, 0, 0}), static_cast<double>(vocab.id("g")));
  EXPECT_EQ(b.passage_ids.at({1, 1, 0}), static_cast<double>(Vocabulary::kPad));
  EXPECT_FALSE(it.next(b));

  std::vector<Example> bad = {locate_example({{"a"}}, {"a"}, 1)};
  EXPECT_THAT(error_of([&] { BatchIterator(bad, vocab, TaskKind::Locate, o, nullptr); }),
              HasSubstr("names answer sentence 1 of a passage with 1 sentences"));
  bad = {locate_example({}, {"a"}, 0)};
  EXPECT_THAT(error_of([&] { BatchIterator(bad, vocab, TaskKind::Locate, o, nullptr); }),
              HasSubstr("has no passage sentences"));
}

// ---------- the model ----------

Config locator_config(const std::string& encoder) {
  Config c = small_model_config(encoder);
  return c;
}

TEST(SentenceLocator, PaddingSentencesAreSelectedOutWhateverTheyHold) {
  const std::vector<Example> examples = {locate_example({{"a", "b"}, {"c"}, {"d", "e", "a"}}, {"a", "c"}, 1),
                                         locate_example({{"b", "c"}}, {"e"}, 0)};
  const Vocabulary vocab = Vocabulary::build(examples, 1, 0);
  BatchOptions o;
  o.shuffle = false;
  o.bucket_by_length = false;
  BatchIterator it(examples, vocab, TaskKind::Locate, o, nullptr);
  Batch b;
  ASSERT_TRUE(it.next(b));
  Generator init(3), noise(4);
  TaskModel model(locator_config("bilstm"), TaskKind::Locate, vocab.size(), 2, DType::F32, init, noise);
  model.set_training(false);
  NoGrad no_grad;
  const Tensor scores = model.logits(inputs_of(b));
  ASSERT_EQ(scores.shape(), (Shape{2, 3}));
  EXPECT_TRUE(std::isinf(scores.at({1, 1})) && scores.at({1, 1}) < 0);
  EXPECT_TRUE(std::isinf(scores.at({1, 2})) && scores.at({1, 2}) < 0);
  for (int64_t k = 0; k < 3; ++k) EXPECT_TRUE(std::isfinite(scores.at({0, k})));
  // A padding sentence holding real words changes no real sentence's score.
  Batch other = b;
  other.passage_ids = clone(b.passage_ids);
  write_element(other.passage_ids, (1 * 3 + 2) * 3, static_cast<double>(vocab.id("a")));
  const Tensor again = model.logits(inputs_of(other));
  EXPECT_EQ(again.at({1, 0}), scores.at({1, 0}));
  EXPECT_EQ(again.at({0, 2}), scores.at({0, 2}));
  // The loss is finite.
  EXPECT_TRUE(std::isfinite(task_loss(TaskKind::Locate, scores, b).item()));
}

// Dropout inside the sentence encoder (the Transformer's) runs on B * S
// sentence rows, each keyed by its example: an example's scores are the same
// in the whole batch and in a data-parallel process's share of it.
TEST(SentenceLocator, DropoutInsideTheSentenceEncoderIsKeyedByExample) {
  const std::vector<Example> examples = {locate_example({{"a", "b"}, {"c"}, {"d", "e", "a"}}, {"a", "c"}, 1),
                                         locate_example({{"b", "c"}, {"e", "d"}}, {"e"}, 0)};
  const Vocabulary vocab = Vocabulary::build(examples, 1, 0);
  BatchOptions o;
  o.shuffle = false;
  o.bucket_by_length = false;
  BatchIterator it(examples, vocab, TaskKind::Locate, o, nullptr);
  Batch whole, share;
  ASSERT_TRUE(it.next(whole));
  it.reset();
  it.set_share({1, 2});
  ASSERT_TRUE(it.next(share));
  ASSERT_EQ(share.size(), 1);
  Config c = small_model_config("transformer");
  c.set("keep_prob", "0.5");
  Generator init(3), noise(4);
  TaskModel model(c, TaskKind::Locate, vocab.size(), 2, DType::F64, init, noise);
  model.set_training(true);
  NoGrad no_grad;
  Tensor a, b, again;
  {
    const BatchNoise keys(&noise, 9, 0, whole);
    a = model.logits(inputs_of(whole));
  }
  {
    const BatchNoise keys(&noise, 9, 0, share);
    b = model.logits(inputs_of(share));
  }
  {
    const BatchNoise keys(&noise, 9, 1, whole);  // another step draws other noise
    again = model.logits(inputs_of(whole));
  }
  for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(a.at({1, k}), b.at({0, k})) << k;
  EXPECT_NE(a.at({1, 0}), again.at({1, 0}));
}

TEST(SentenceLocator, RefusesAnEncoderWithASelectionPolicy) {
  Generator init(3), noise(4);
  EXPECT_THAT(error_of([&] { TaskModel(small_model_config("resan"), TaskKind::Locate, 10, 2, DType::F32, init, noise); }),
              HasSubstr("the locate task cannot use encoder 'resan'"));
}

// Float64 gradients through the whole locator on passages with padding
// sentences and length-1 sentences (train/model_gradcheck.cpp's locate batch).
void expect_locator_gradients_match(const std::string& encoder) {
  ModelGradcheckSpec spec;
  spec.config = locator_config(encoder);
  spec.task = TaskKind::Locate;
  const ModuleGradcheckResult m = gradcheck_task_model(spec);
  EXPECT_TRUE(m.result.passed) << encoder << ": " << m.result.failure;
  size_t head = 0;
  for (size_t i = 0; i < m.names.size(); ++i) {
    const std::string& name = m.names[i];
    // The encoders' own sentence readouts ("s2t") are unused: the locator
    // reads their token outputs through its own source2token.
    const bool readout = name.rfind("encoder.s2t.", 0) == 0 || name.rfind("head.sentence_fusion.s2t.", 0) == 0;
    EXPECT_EQ(m.result.inputs[i].reached, !readout) << encoder << ": " << name;
    if (name.rfind("head.", 0) == 0 && !readout) {
      ++head;
      EXPECT_GT(m.result.inputs[i].max_abs_gradient, 0.0) << encoder << ": " << name;
    }
  }
  EXPECT_GE(head, 10u) << encoder;
}

TEST(SentenceLocator, GradientsMatchCentralDifferencesInFloat64) {
  for (const char* encoder : {"bilstm", "biblosan", "multicnn", "transformer"}) expect_locator_gradients_match(encoder);
}

// ---------- presets ----------

// Every row of the Bi-BloSAN paper's Table 4 that our encoders cover, with
// its dev accuracy and parameter count.
TEST(LocatePresets, EveryRowOfTable4HasAPresetWithItsFigure) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"bilstm-squad", "68.01 (0.71m"},   {"bigru-squad", "67.98 (0.57m"},       {"bisru-squad", "67.32 (0.32m"},
      {"multicnn-squad", "63.58 (0.60m"}, {"transformer-squad", "64.82 (0.45m"}, {"biblosan-squad", "68.38 (0.82m"}};
  for (const auto& [name, figure] : rows) {
    const Preset* p = find_preset(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_THAT(p->result, HasSubstr("dev accuracy " + figure)) << name;
    EXPECT_THAT(p->source, HasSubstr("Bi-BloSAN paper, Sec. 4.2 and App. B (Fig. 7); Table 4")) << name;
    std::map<std::string, std::string> settings;
    for (const PresetSetting& s : p->settings) settings[s.key] = s.value;
    EXPECT_EQ(settings["task"], "locate");
    EXPECT_EQ(settings["format"], "squad");
    EXPECT_EQ(settings["model"], name.substr(0, name.find('-')));
    // Sec. 4.2: Adadelta, batch 32, keep probability 0.8, L2 1e-4, width 100.
    EXPECT_EQ(settings["optimizer"], "adadelta");
    EXPECT_EQ(settings["batch"], "32");
    EXPECT_EQ(settings["keep-prob"], "0.8");
    EXPECT_EQ(settings["weight-decay"], "1e-4");
    EXPECT_EQ(settings["model:embedding_dim"], "100");
    EXPECT_EQ(settings["head-hidden"], "100");
  }
}

// ---------- learning ----------

// SQuAD files of generated passages: 3 to 5 sentences of common words, each
// with one of ten marker words (distinct within a passage, so found nowhere
// else in it); the question holds the answer sentence's marker among common
// words.
std::string generated_squad(std::mt19937& rng, int paragraphs) {
  const char* common[] = {"the", "a", "of", "river", "city", "was", "built", "old", "people", "many", "near", "is"};
  std::string out = "{\"version\": \"1.1\", \"data\": [{\"title\": \"generated\", \"paragraphs\": [";
  for (int p = 0; p < paragraphs; ++p) {
    const int sentences = 3 + static_cast<int>(rng() % 3);
    std::vector<int> markers(10);
    for (int i = 0; i < 10; ++i) markers[static_cast<size_t>(i)] = i;
    std::shuffle(markers.begin(), markers.end(), rng);
    const int answer = static_cast<int>(rng() % static_cast<unsigned>(sentences));
    std::string context, marker;
    size_t answer_start = 0;
    for (int s = 0; s < sentences; ++s) {
      std::string sentence = "The";
      for (int w = 0; w < 5; ++w) {
        std::string word = common[rng() % 12];
        if (w == 2) {
          word = "m" + std::to_string(markers[static_cast<size_t>(s)]);
          if (s == answer) {
            marker = word;
            answer_start = context.size() + sentence.size() + 1;
          }
        }
        sentence += " " + word;
      }
      context += sentence + ". ";
    }
    const std::string question = std::string("What ") + common[rng() % 12] + " " + marker + " " + common[rng() % 12] + "?";
    out += std::string(p ? ", " : "") + "{\"context\": " + json_quote(context) + ", \"qas\": [{\"id\": \"" +
           std::to_string(p) + "\", \"question\": " + json_quote(question) + ", \"answers\": [{\"answer_start\": " +
           std::to_string(answer_start) + ", \"text\": " + json_quote(marker) + "}]}]}";
  }
  return out + "]}]}";
}

// Trained by the trainer `attn train` runs, from SQuAD files on disk.
TEST(LocateLearning, FindsTheSentenceSharingAMarkerWithTheQuestion) {
  const std::string dir = fresh_dir();
  std::mt19937 rng(11);
  write(dir, "squad/train-v1.1.json", generated_squad(rng, 300));
  write(dir, "squad/dev-v1.1.json", generated_squad(rng, 150));
  TrainOptions o;
  o.data.task = TaskKind::Locate;
  o.data.data = dir + "/squad";
  o.data.format = "squad";
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", "bow");
  o.model.set("embedding_dim", "16");
  o.model.set("head_hidden", "16");
  o.model.set("keep_prob", "0.9");
  o.min_count = 1;
  o.batch_size = 16;
  o.epochs = 20;
  o.lr = 0.02;
  o.verbose = false;
  const TrainResult r = train_model(o);
  // Chance is the mean of 1/S over the test passages, about 0.26 (S = 3, 4, 5).
  EXPECT_EQ(r.primary, "accuracy");
  RecordProperty("test_accuracy", std::to_string(r.test.metrics.at("accuracy")));
  EXPECT_GT(r.test.metrics.at("accuracy"), 0.7) << "dev " << r.best_dev;

  // attn eval scores the run's test split as the trainer did.
  int code = -1;
  const Json eval = Json::parse(run_command(run_eval_command, {"--run", o.run_dir, "--batch", "64"}, "", &code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(eval.at("examples").as_number(), 150);
  // The JSON carries 6 significant digits (json_metric_value's %.6g): half a
  // unit in the 6th digit of a value below 1.
  EXPECT_NEAR(eval.at("test").at("accuracy").as_number(), r.test.metrics.at("accuracy"), 5e-7);

  // attn predict: question<TAB>passage in, the sentence's index out (a
  // blank line stays blank); a line without a passage is an error.
  const std::string input =
      "What is m3 ?\tThe old m1 city. The river m3 was near. The m5 people.\n\nWhat m7 ?\tThe m7 city.\n";
  const std::string out = run_command(run_predict_command, {"--run", o.run_dir, "--json"}, input, &code);
  EXPECT_EQ(code, 0);
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << out;
  const int64_t first = static_cast<int64_t>(Json::parse(lines[0]).at("sentence").as_number());
  EXPECT_TRUE(first >= 0 && first < 3) << lines[0];
  EXPECT_EQ(lines[1], "{}");
  EXPECT_EQ(lines[2], "{\"sentence\": 0}");  // a one-sentence passage
  EXPECT_THAT(error_of([&] { run_command(run_predict_command, {"--run", o.run_dir}, "no passage here\n", &code); }),
              HasSubstr("stdin line 1: expected the question and the passage separated by a tab"));
}

}  // namespace
}  // namespace attn

// The SRL stack learns: generated CoNLL-05 files where each argument is fixed
// by its distance and direction from the predicate ([A0 the two words before]
// [V] [A1 the two words after]; a sentence edge clips them), read by the
// conll05 loader and trained by train_model, the trainer `attn train` runs,
// with the deepatt encoder and either attention (dropout off, 15 epochs of
// 400 sentences). The test span F1 must clear 0.85, far above what tagging
// without the predicate could reach.
#include <random>

#include "attn/train/cli/commands.h"
#include "attn/train/cli/picture_commands.h"
#include "attn/train/trainer.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;

// One sentence of 5..9 filler words with one predicate at a random row, in
// the words + props layout of load_conll05.
std::string srl_sentence(std::mt19937& rng) {
  const int n = 5 + static_cast<int>(rng() % 5), p = static_cast<int>(rng() % static_cast<unsigned>(n));
  std::string text;
  for (int i = 0; i < n; ++i) {
    const std::string word = filler_words()[rng() % filler_words().size()];
    std::string cell = "*";
    const int a0 = std::max(0, p - 2), a1 = std::min(n - 1, p + 2);
    if (i == p) cell = "(V*)";
    else if (i < p && i >= a0) cell = std::string(i == a0 ? "(A0*" : "*") + (i == p - 1 ? ")" : "");
    else if (i > p && i <= a1) cell = std::string(i == p + 1 ? "(A1*" : "*") + (i == a1 ? ")" : "");
    text += word + " " + (i == p ? "go" : "-") + " " + cell + "\n";
  }
  return text + "\n";
}

std::string write_srl_data(const std::string& dir) {
  std::mt19937 rng(11);
  const auto file = [&](int sentences) {
    std::string text;
    for (int s = 0; s < sentences; ++s) text += srl_sentence(rng);
    return text;
  };
  write(dir, "data/train.txt", file(400));
  write(dir, "data/dev.txt", file(60));
  write(dir, "data/test.txt", file(120));
  return dir + "/data";
}

TrainResult train_srl(const std::string& attention, std::string* run_dir = nullptr) {
  const std::string dir = fresh_dir();
  TrainOptions o;
  o.data.data = write_srl_data(dir);
  o.data.task = TaskKind::Srl;
  o.data.format = "conll05";
  o.data.verbose = false;
  o.run_dir = dir + "/run-" + attention;
  o.model.set("encoder", "deepatt");
  o.model.set("attention", attention);
  o.model.set("embedding_dim", "8");
  o.model.set("predicate_dim", "8");
  o.model.set("hidden", "16");
  o.model.set("heads", "4");
  o.model.set("layers", "2");
  o.model.set("ffn_dim", "32");
  for (const char* keep : {"keep_prob", "residual_keep_prob", "relu_keep_prob", "attn_keep_prob"}) o.model.set(keep, "1");
  o.batch_size = 20;
  o.epochs = 15;
  o.lr = 0.01;
  o.verbose = false;
  if (run_dir) *run_dir = o.run_dir;
  return train_model(o);
}

void expect_learns(const std::string& attention, std::string* run_dir = nullptr) {
  const TrainResult r = train_srl(attention, run_dir);
  const double f1 = r.test.metrics.at("srl_f1");
  std::printf("srl %s: test span F1 %.3f (P %.3f, R %.3f), token accuracy %.3f\n", attention.c_str(), f1,
              r.test.metrics.at("srl_precision"), r.test.metrics.at("srl_recall"), r.test.metrics.at("token_accuracy"));
  EXPECT_EQ(r.primary, "srl_f1");
  // Without the predicate a tagger can only guess where the spans lie: the
  // words are random fillers, so nothing else tells it.
  EXPECT_GT(f1, 0.85) << attention;
}

TEST(SrlLearning, DeepAttWithMultiHeadLearnsArgumentsFromTheirDistanceToThePredicate) {
  std::string run;
  expect_learns("multi_head", &run);
  // `attn predict` on the run: words, a tab, the predicate's word number.
  int code = -1;
  const std::string out = run_command(run_predict_command, {"--run", run},
                                      "The cat sat on mat\t3\n\nred sun rain big\t1\n", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out, "B-A0 I-A0 B-V B-A1 I-A1\n\nB-V B-A1 I-A1 O\n");
  EXPECT_THAT(error_of([&] { run_command(run_predict_command, {"--run", run}, "the cat sat\t4\n", &code); }),
              HasSubstr("stdin line 1: the predicate's word number must be an integer in [1, 3], got '4'"));
  EXPECT_THAT(error_of([&] { run_command(run_predict_command, {"--run", run}, "the cat sat\n", &code); }),
              HasSubstr("stdin line 1: an srl input is the words, a tab and the predicate's word number"));

  // `attn explain` reads the same line and draws the tags it predicts under
  // the tokens, naming the predicate.
  const std::string pictures = run + "/explain_srl";
  EXPECT_EQ(run_explain_command({"--run", run, "--text", "The cat sat on mat\t3", "--token", "2", "--out", pictures}),
            0);
  const std::string svg = read_file_bytes(pictures + "/sentence_1.svg");
  for (const char* tag : {">B-A0<", ">I-A0<", ">B-V<", ">B-A1<", ">I-A1<"}) EXPECT_THAT(svg, HasSubstr(tag));
  // The header wraps its text: "... the predicate" / "is token 2 (...)".
  EXPECT_THAT(svg, HasSubstr("the predicate"));
  EXPECT_THAT(svg, HasSubstr("is token 2 (&quot;sat&quot;)"));
  EXPECT_THAT(error_of([&] { run_explain_command({"--run", run, "--text", "the cat sat", "--out", pictures}); }),
              HasSubstr("an srl input is the words, a tab and the predicate's word number"));
}

TEST(SrlLearning, DeepAttWithMtsaLearnsArgumentsFromTheirDistanceToThePredicate) { expect_learns("mtsa"); }

}  // namespace
}  // namespace attn

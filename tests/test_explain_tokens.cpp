// `attn explain` on a tag run: each token with its predicted tag under it,
// and the chosen token's row of every attention map as bars over the keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "attn/train/cli/picture_commands.h"
#include "attn/util/cli_args.h"
#include "attn/train/evaluate.h"
#include "attn/train/pictures/explain.h"
#include "attn/train/pictures/explain_svg.h"
#include "attn/train/trainer.h"
#include "test_data_util.h"

namespace attn {
namespace {

using namespace test_data;
using ::testing::Not;

// Every text node's content, one per <text>.
std::vector<std::string> text_nodes(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    out.push_back(svg.substr(start, svg.find('<', start) - start));
  }
  return out;
}

// The tag texts (class="tag"), in order.
std::vector<std::string> tag_nodes(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<text class=\"tag\""); at != std::string::npos;
       at = svg.find("<text class=\"tag\"", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    out.push_back(svg.substr(start, svg.find('<', start) - start));
  }
  return out;
}

// The data-weight of every bar, in drawing order.
std::vector<std::string> bar_weights(const std::string& svg) {
  std::vector<std::string> out;
  const std::string key = "data-weight=\"";
  for (size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const size_t start = at + key.size();
    out.push_back(svg.substr(start, svg.find('"', start) - start));
  }
  return out;
}

// A DiSAN tagger's explanation made up without a model: the alignment of
// query i to key j is (10 i + j) / 100 in the forward direction and
// (10 i + j) / 1000 in the backward one, so each row is recognisable.
Explanation made_up_disan_tagger() {
  Explanation e;
  e.encoder = "disan";
  e.tokens = {"eu", "rejects", "german", "call"};
  e.original_length = 4;
  e.labels = {"B-MISC", "B-ORG", "O"};
  e.tags = {"B-ORG", "O", "B-MISC", "O"};
  const int64_t n = 4;
  std::vector<double> forward, backward, s2t(static_cast<size_t>(n), 0.25);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      forward.push_back(j < i ? static_cast<double>(10 * i + j) / 100 : 0.0);
      backward.push_back(j > i ? static_cast<double>(10 * i + j) / 1000 : 0.0);
    }
  e.trace.record("forward.alignment", from_vector(forward, {1, n, n, 1}));
  e.trace.record("backward.alignment", from_vector(backward, {1, n, n, 1}));
  e.trace.record("source2token", from_vector(s2t, {1, n, 1}));
  return e;
}

TEST(ExplainTokens, ThePictureHoldsEveryPredictedTagAndTheChosenTokensRow) {
  const Explanation e = made_up_disan_tagger();
  ExplainPictureOptions options;
  options.token = 2;
  const std::string svg = render_explanation_svg(e, options);
  EXPECT_EQ(tag_nodes(svg), e.tags);
  const std::vector<std::string> texts = text_nodes(svg);
  for (const std::string& token : e.tokens)
    EXPECT_NE(std::find(texts.begin(), texts.end(), token), texts.end()) << token;
  // Token 2's forward row (keys 0 and 1: 0.2, 0.21; later keys masked) and
  // backward row (key 3: 0.023); no other row, and no sentence readout.
  EXPECT_EQ(bar_weights(svg), (std::vector<std::string>{"0.2", "0.21", "0", "0", "0", "0", "0", "0.023"}));
  EXPECT_THAT(svg, Not(HasSubstr("source2token")));
  EXPECT_THAT(svg, HasSubstr("the attention of token 2"));
  EXPECT_THAT(svg, HasSubstr("(&quot;german&quot;, tagged B-MISC)"));

  options.token = 0;
  EXPECT_EQ(bar_weights(render_explanation_svg(e, options)),
            (std::vector<std::string>{"0", "0", "0", "0", "0", "0.001", "0.002", "0.003"}));
  for (int64_t bad : {4, -1}) {
    options.token = bad;
    EXPECT_THAT(error_of([&] { render_explanation_svg(e, options); }),
                HasSubstr("--token " + std::to_string(bad) + " is out of range: the sentence has 4 tokens (0 to 3)"));
  }
}

TEST(ExplainTokens, AnyTagSetIsDrawnByName) {
  // Tags are names, whatever the tag set (SRL roles, BIO chunks): the
  // picture shows them as given, escaped.
  Explanation e = made_up_disan_tagger();
  e.tags = {"B-ARG0", "B-V", "B-ARG1", "I-ARG1<x>"};
  const std::string svg = render_explanation_svg(e, {});
  EXPECT_EQ(tag_nodes(svg), (std::vector<std::string>{"B-ARG0", "B-V", "B-ARG1", "I-ARG1&lt;x&gt;"}));
}

TEST(ExplainTokens, WindowAndBlockMapsGiveTheChosenTokensRow) {
  // Multi-Scale Transformer: [CLS] is row and key 0, so token t is row t + 1.
  // One head of window 3: query j's weight for key k is (10 j + k) / 100.
  Explanation ms;
  ms.encoder = "mstrans";
  ms.tokens = {"a", "b", "c"};
  ms.original_length = 3;
  ms.tags = {"O", "B-X", "O"};
  const int64_t n = 4, w = 3;
  std::vector<double> p, ok;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < w; ++t) {
      const int64_t key = j + t - 1;
      const bool inside = key >= 0 && key < n;
      p.push_back(inside ? static_cast<double>(10 * j + key) / 100 : 0.0);
      ok.push_back(inside);
    }
  ms.trace.record("layer0.scale=3.window", from_vector(p, {1, 1, n, w}));
  ms.trace.record("layer0.scale=3.window_mask", from_vector(ok, {1, 1, n, w}));
  ExplainPictureOptions options;
  options.token = 1;  // "b", row 2 after [CLS]
  const std::string svg = render_explanation_svg(ms, options);
  EXPECT_EQ(bar_weights(svg), (std::vector<std::string>{"0", "0.21", "0.22", "0.23"}));
  EXPECT_THAT(svg, HasSubstr("font-weight=\"bold\" fill=\"#b2182b\">b</text>"));

  // Bi-BloSAN, blocks of 2 over 4 tokens: token 3 is the second token of
  // block 2. Intra-block weights are 0.5 where the direction allows; the
  // forward inter-block weight of block i for block j is (2 i + j + 1) / 10.
  Explanation bi;
  bi.encoder = "biblosan";
  bi.tokens = {"a", "b", "c", "d"};
  bi.original_length = 4;
  bi.tags = {"O", "O", "O", "B-X"};
  for (const std::string dir : {"forward", "backward"}) {
    std::vector<double> intra, inter;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) intra.push_back(dir == "forward" ? (j < i ? 0.5 : 0.0) : (j > i ? 0.5 : 0.0));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) inter.push_back(static_cast<double>(2 * i + j + 1) / 10);
    bi.trace.record(dir + ".intra", from_vector(intra, {2, 2, 2, 1}));
    bi.trace.record(dir + ".inter", from_vector(inter, {1, 2, 2, 1}));
  }
  bi.trace.record("source2token", from_vector({0.25, 0.25, 0.25, 0.25}, {1, 4, 1}));
  options.token = 3;
  // forward intra (token 3 attends to token 2), forward inter (block 2 to
  // block 1: 0.3), backward intra and inter (nothing after token 3).
  EXPECT_EQ(bar_weights(render_explanation_svg(bi, options)),
            (std::vector<std::string>{"0", "0", "0.5", "0", "0.3", "0", "0", "0", "0", "0", "0", "0"}));
}

// CoNLL-style token<TAB>tag files: "alpha" is B-X, every other word O.
std::string write_tagging(const std::string& dir) {
  const char* words[] = {"the", "cat", "alpha", "sat", "on", "mat", "alpha", "dog"};
  std::string train, test;
  for (int s = 0; s < 40; ++s) {
    std::string sentence;
    for (int k = 0; k < 4 + s % 3; ++k) {
      const std::string w = words[(s * 3 + k * 5) % 8];
      sentence += w + "\t" + (w == "alpha" ? "B-X" : "O") + "\n";
    }
    (s < 32 ? train : test) += sentence + "\n";
  }
  write(dir, "tags/train.tsv", train);
  write(dir, "tags/test.tsv", test);
  return dir + "/tags";
}

TEST(ExplainTokens, ATaggersPictureShowsTheTagsPredictGives) {
  const std::string dir = fresh_dir();
  TrainOptions o;
  o.data.task = TaskKind::Tag;
  o.data.data = write_tagging(dir);
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", "disan");
  o.model.set("embedding_dim", "8");
  o.model.set("head_hidden", "8");
  o.model.set("hidden", "8");
  o.min_count = 1;
  o.batch_size = 8;
  o.max_steps = 3;
  o.verbose = false;
  train_model(o);

  SavedRun run = load_saved_run(o.run_dir);
  const Explanation e = explain_tagged_sentence(run, "The cat ALPHA sat", 60);
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"the", "cat", "alpha", "sat"}));
  Example ex;
  ex.tokens = e.tokens;
  ex.tags.assign(4, 0);
  EvalOptions eo;
  const std::vector<int64_t> ids = predict(*run.model, {ex}, run.vocab, eo).at(0).tags;
  ASSERT_EQ(e.tags.size(), 4u);
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(e.tags[t], run.labels.at(static_cast<size_t>(ids[t])));
  EXPECT_TRUE(e.trace.has("forward.alignment"));
  ExplainPictureOptions options;
  options.token = 2;
  EXPECT_EQ(tag_nodes(render_explanation_svg(e, options)), e.tags);

  auto command_error = [](const std::vector<std::string>& args) {
    try {
      run_explain_command(args);
    } catch (const std::exception& err) {
      return std::string(err.what());
    }
    return std::string("(no error)");
  };
  const std::string out = dir + "/pictures";
  EXPECT_THAT(command_error({"--run", o.run_dir, "--text", "the cat", "--token", "2", "--out", out}),
              HasSubstr("--token 2 is out of range: the sentence has 2 tokens (0 to 1)"));
  EXPECT_THAT(command_error({"--run", o.run_dir, "--text", "the cat", "--token", "-1", "--out", out}),
              HasSubstr("--token"));
  EXPECT_THAT(command_error({"--run", o.run_dir, "--text", "the cat", "--token", "x", "--out", out}),
              HasSubstr("--token"));
  ::testing::internal::CaptureStdout();
  const int rc = run_explain_command({"--run", o.run_dir, "--text", "the cat alpha", "--token", "2", "--out", out});
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(tag_nodes(read_file_bytes(out + "/sentence_1.svg")).size(), 3u);
  EXPECT_THAT(read_file_bytes(out + "/sentence_1.svg"), HasSubstr("(&quot;alpha&quot;, tagged "));
}

TEST(ExplainTokens, TokenIsRefusedForASentenceRun) {
  const std::string dir = fresh_dir();
  TrainOptions o;
  o.data.data = write_alpha_beta_tsv(dir);
  o.data.format = "tsv";
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", "bow");
  o.model.set("embedding_dim", "8");
  o.model.set("head_hidden", "8");
  o.min_count = 1;
  o.batch_size = 16;
  o.max_steps = 1;
  o.verbose = false;
  train_model(o);
  try {
    run_explain_command({"--run", o.run_dir, "--text", "alpha cat", "--token", "1", "--out", dir + "/p"});
    ADD_FAILURE() << "--token was accepted for a classify run";
  } catch (const UsageError& err) {
    EXPECT_THAT(err.what(), HasSubstr("--token picks the token of a tag or srl run"));
  }
}

}  // namespace
}  // namespace attn

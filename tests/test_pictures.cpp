// `attn explain` and `attn plot`: the attention trace records the weights of
// the very forward pass that produced the output (they are probabilities
// over the allowed keys, zero where masked, and reproduce the output), the
// explain picture holds the sentence and the prediction and is legible at the
// README's 900 px (sized to its content, whole tokens, a colour scale per
// map), the plot's axes follow the data from step 0, the training loop keeps
// curves.svg, and bad input fails naming the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "attn/util/atomic_file.h"
#include "attn/models/attention_trace.h"
#include "attn/models/encoder.h"
#include "attn/models/masks.h"
#include "attn/models/resan.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/reduce/reduce.h"
#include "test_data_util.h"
#include "test_util.h"
#include "attn/train/cli/picture_commands.h"
#include "attn/train/evaluate.h"
#include "attn/train/pictures/explain.h"
#include "attn/train/pictures/explain_svg.h"
#include "attn/train/run/run_folder.h"
#include "attn/train/trainer.h"
#include "attn/train/pictures/training_curves.h"

namespace attn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_support;

constexpr int64_t kBatch = 2, kLen = 7, kInput = 5;
const std::vector<int64_t> kLengths = {7, 4};  // the second example is padded

// Float32 sums of at most a few hundred terms in [0, 1].
constexpr double kSumTol = 1e-5;

struct Traced {
  std::unique_ptr<Encoder> encoder;
  EncoderOutput out;
  AttentionTrace trace;
  Tensor mask;
};

Traced run_traced(const std::string& name, const std::vector<std::pair<std::string, std::string>>& keys = {}) {
  Config c;
  c.set("encoder", name);
  c.set("hidden", "8");
  for (const auto& [k, v] : keys) c.set(k, v);
  // Fresh generators per call: each encoder's weights (and ReSAN's
  // selection) do not depend on which tests ran before in the process.
  Generator init(3), noise(4);
  EncoderContext ctx{kInput, DType::F32, &init, &noise};
  Traced t;
  t.encoder = build_encoder(c, ctx);
  t.encoder->set_training(false);
  Generator data(9);
  Tensor x = rand_uniform({kBatch, kLen, kInput}, -1, 1, data);
  t.mask = length_mask(kLengths, kLen);
  AttachAttentionTrace attach(t.trace);
  t.out = t.encoder->encode(x, t.mask);
  return t;
}

bool valid(int64_t b, int64_t i) { return i < kLengths[static_cast<size_t>(b)]; }

// p [.., queries, keys, d] (row-major, `rows` query rows of `keys` keys):
// every query row sums to 1 over its allowed keys per feature when it has
// one, is 0 when it has none, and masked keys get exactly 0.
void expect_rows_are_distributions(const std::vector<double>& p, int64_t rows, int64_t keys, int64_t d,
                                   const std::function<bool(int64_t row, int64_t key)>& allowed, const std::string& what) {
  for (int64_t r = 0; r < rows; ++r) {
    bool any = false;
    for (int64_t k = 0; k < keys; ++k) any = any || allowed(r, k);
    for (int64_t f = 0; f < d; ++f) {
      double total = 0;
      for (int64_t k = 0; k < keys; ++k) {
        const double v = p[static_cast<size_t>((r * keys + k) * d + f)];
        if (!allowed(r, k)) {
          EXPECT_EQ(v, 0.0) << what << " row " << r << " key " << k << " is masked";
        }
        total += v;
      }
      EXPECT_NEAR(total, any ? 1.0 : 0.0, kSumTol) << what << " row " << r << " feature " << f;
    }
  }
}

// The sentence readout is sum_i P_i * token_i with the recorded P: the
// picture shows the weights that produced the output.
void expect_source2token_reproduces_sentence(const Traced& t) {
  const Tensor& p = t.trace.get("source2token");  // [B, n, d]
  ASSERT_EQ(p.shape(), t.out.tokens.shape());
  const int64_t d = p.size(2);
  expect_rows_are_distributions(p.to_vector(), kBatch, kLen, d,
                                [](int64_t b, int64_t i) { return valid(b, i); }, "source2token");
  const std::vector<double> expected = sum(p * t.out.tokens, {1}).to_vector(), got = t.out.sentence.to_vector();
  ASSERT_EQ(expected.size(), got.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], expected[k], 1e-5) << "sentence entry " << k;
}

bool direction_allows(const std::string& dir, int64_t i, int64_t j) {
  return dir == "forward" ? j < i : dir == "backward" ? j > i : j != i;
}

TEST(AttentionTrace, RecordsNothingWhenNoneIsAttached) {
  AttentionTrace unattached;
  {
    AttentionTrace outer;
    AttachAttentionTrace attach(outer);
    { AttentionTraceScope scope("fw"); trace_attention("p", [] { return ones({2}); }); }
    trace_attention("q", [] { return ones({1}); });
    EXPECT_TRUE(outer.has("fw.p"));
    EXPECT_TRUE(outer.has("q"));
    EXPECT_EQ(outer.names(), (std::vector<std::string>{"fw.p", "q"}));
  }
  EXPECT_EQ(active_attention_trace(), nullptr);
  bool computed = false;
  trace_attention("r", [&] {
    computed = true;
    return ones({1});
  });
  EXPECT_FALSE(computed) << "the weights are computed only when a trace is attached";
  EXPECT_TRUE(unattached.names().empty());
  EXPECT_THAT(error_of([&] { unattached.get("x"); }), HasSubstr("nothing was recorded as 'x'"));
}

TEST(AttentionTrace, MtsaAlignmentsMasksAndSourceToToken) {
  Traced t = run_traced("mtsa", {{"heads", "2"}});
  expect_source2token_reproduces_sentence(t);
  const Tensor& mask = t.trace.get("mask");       // [B, h, n, n]
  const Tensor& align = t.trace.get("alignment");  // [B, h, n, n, d_h]
  const Tensor& t2t = t.trace.get("token2token");  // [B, h, n, n]
  ASSERT_EQ(mask.shape(), Shape({kBatch, 2, kLen, kLen}));
  ASSERT_EQ(align.shape(), Shape({kBatch, 2, kLen, kLen, 4}));
  const std::vector<double> m = mask.to_vector(), w = t2t.to_vector(), a = align.to_vector();
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t c = 0; c < 2; ++c) {
      const std::string dir = c == 0 ? "forward" : "backward";  // the default head masks
      auto allowed = [&](int64_t i, int64_t j) { return valid(b, i) && valid(b, j) && direction_allows(dir, i, j); };
      const size_t at = static_cast<size_t>((b * 2 + c) * kLen * kLen);
      for (int64_t i = 0; i < kLen; ++i)
        for (int64_t j = 0; j < kLen; ++j) {
          const size_t k = at + static_cast<size_t>(i * kLen + j);
          EXPECT_EQ(m[k] != 0, allowed(i, j)) << "head " << c << " mask at " << i << "," << j;
          if (allowed(i, j)) EXPECT_TRUE(w[k] > 0 && w[k] < 1) << "sigmoid weight " << w[k];
          else EXPECT_EQ(w[k], 0.0);
        }
      const std::vector<double> head(a.begin() + static_cast<std::ptrdiff_t>(at * 4),
                                     a.begin() + static_cast<std::ptrdiff_t>((at + kLen * kLen) * 4));
      expect_rows_are_distributions(head, kLen, kLen, 4, allowed, "mtsa " + dir + " head");
    }
}

TEST(AttentionTrace, DisanAlignmentsSumToOneOverKeys) {
  Traced t = run_traced("disan");
  expect_source2token_reproduces_sentence(t);
  for (const std::string dir : {"forward", "backward"}) {
    const Tensor& p = t.trace.get(dir + ".alignment");
    ASSERT_EQ(p.shape(), Shape({kBatch, kLen, kLen, 8}));
    const std::vector<double> all = p.to_vector();
    for (int64_t b = 0; b < kBatch; ++b) {
      const size_t per = static_cast<size_t>(kLen * kLen * 8);
      expect_rows_are_distributions({all.begin() + static_cast<std::ptrdiff_t>(b * per),
                                     all.begin() + static_cast<std::ptrdiff_t>((b + 1) * per)},
                                    kLen, kLen, 8,
                                    [&](int64_t i, int64_t j) { return valid(b, i) && valid(b, j) && direction_allows(dir, i, j); },
                                    "disan " + dir);
    }
  }
}

TEST(AttentionTrace, BiblosanIntraAndInterBlockAlignments) {
  Traced t = run_traced("biblosan", {{"block_len", "3"}});
  expect_source2token_reproduces_sentence(t);
  const int64_t r = 3, m = 3;  // ceil(7 / 3) blocks
  for (const std::string dir : {"forward", "backward"}) {
    const Tensor& intra = t.trace.get(dir + ".intra");
    const Tensor& inter = t.trace.get(dir + ".inter");
    ASSERT_EQ(intra.shape(), Shape({kBatch * m, r, r, 8}));
    ASSERT_EQ(inter.shape(), Shape({kBatch, m, m, 8}));
    const std::vector<double> pi = intra.to_vector(), po = inter.to_vector();
    for (int64_t blk = 0; blk < kBatch * m; ++blk) {
      const int64_t b = blk / m, first = (blk % m) * r;
      const size_t per = static_cast<size_t>(r * r * 8);
      expect_rows_are_distributions({pi.begin() + static_cast<std::ptrdiff_t>(blk * per),
                                     pi.begin() + static_cast<std::ptrdiff_t>((blk + 1) * per)},
                                    r, r, 8,
                                    [&](int64_t i, int64_t j) {
                                      return valid(b, first + i) && valid(b, first + j) && direction_allows(dir, i, j);
                                    },
                                    "biblosan " + dir + " intra");
    }
    for (int64_t b = 0; b < kBatch; ++b) {
      const size_t per = static_cast<size_t>(m * m * 8);
      // Example 1 has 4 tokens: blocks 0 and 1 hold valid tokens, block 2 none.
      auto block_valid = [&](int64_t blk) { return valid(b, blk * r); };
      expect_rows_are_distributions({po.begin() + static_cast<std::ptrdiff_t>(b * per),
                                     po.begin() + static_cast<std::ptrdiff_t>((b + 1) * per)},
                                    m, m, 8,
                                    [&](int64_t i, int64_t j) {
                                      return block_valid(i) && block_valid(j) && direction_allows(dir, i, j);
                                    },
                                    "biblosan " + dir + " inter");
    }
  }
}

TEST(AttentionTrace, MultiScaleWindowsSumToOneInsideTheWindow) {
  Traced t = run_traced("mstrans", {{"heads", "2"}, {"layers", "2"}, {"scales", "3,n/2"}});
  int windows = 0;
  for (const std::string& name : t.trace.names()) {
    if (name.size() < 7 || name.compare(name.size() - 7, 7, ".window") != 0) continue;
    ++windows;
    const Tensor& p = t.trace.get(name);                  // [B, c, n+1, w]
    const Tensor& ok = t.trace.get(name + "_mask");        // [B, 1, n+1, w]
    const int64_t heads = p.size(1), n = p.size(2), w = p.size(3);
    ASSERT_EQ(n, kLen + 1) << "[CLS] is position 0";
    const std::vector<double> pv = p.to_vector(), okv = ok.to_vector();
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t c = 0; c < heads; ++c) {
        const size_t at = static_cast<size_t>((b * heads + c) * n * w);
        expect_rows_are_distributions({pv.begin() + static_cast<std::ptrdiff_t>(at),
                                       pv.begin() + static_cast<std::ptrdiff_t>(at + n * w)},
                                      n, w, 1,
                                      [&](int64_t j, int64_t s) { return okv[static_cast<size_t>((b * n + j) * w + s)] != 0; },
                                      name);
      }
  }
  EXPECT_EQ(windows, 4) << "2 layers x 2 scales";
  EXPECT_TRUE(t.trace.has("layer1.scale=n/2.window"));
}

TEST(AttentionTrace, ResanAlignmentOnlyBetweenSelectedHeadsAndDependents) {
  Traced t = run_traced("resan");
  expect_source2token_reproduces_sentence(t);
  const auto& resan = dynamic_cast<const Resan&>(*t.encoder);
  const std::vector<double> heads = resan.last_selection().z_head.to_vector();
  const std::vector<double> deps = resan.last_selection().z_dep.to_vector();
  int64_t selected_pairs = 0;  // the check below means something only when some pair is allowed
  for (int64_t b = 0; b < kBatch; ++b)
    for (int64_t i = 0; i < kLen; ++i)
      for (int64_t j = 0; j < kLen; ++j)
        selected_pairs += valid(b, i) && valid(b, j) && i != j && heads[static_cast<size_t>(b * kLen + i)] != 0 &&
                          deps[static_cast<size_t>(b * kLen + j)] != 0;
  ASSERT_GT(selected_pairs, 0);
  for (const std::string dir : {"forward", "backward"}) {
    const std::vector<double> all = t.trace.get(dir + ".alignment").to_vector();
    for (int64_t b = 0; b < kBatch; ++b) {
      auto allowed = [&](int64_t i, int64_t j) {
        return valid(b, i) && valid(b, j) && direction_allows(dir, i, j) &&
               heads[static_cast<size_t>(b * kLen + i)] != 0 && deps[static_cast<size_t>(b * kLen + j)] != 0;
      };
      const size_t per = static_cast<size_t>(kLen * kLen * 8);
      expect_rows_are_distributions({all.begin() + static_cast<std::ptrdiff_t>(b * per),
                                     all.begin() + static_cast<std::ptrdiff_t>((b + 1) * per)},
                                    kLen, kLen, 8, allowed, "resan " + dir);
    }
  }
}

// A small MTSA classifier trained for one epoch on marker sentences.
std::string trained_run(const std::string& dir) {
  TrainOptions o;
  o.data.data = test_data::write_marker_data(dir, 96, 32, 32, 5);
  o.data.format = "tsv";
  o.data.verbose = false;
  o.run_dir = dir + "/run";
  o.model.set("encoder", "mtsa");
  o.model.set("embedding_dim", "8");
  o.model.set("head_hidden", "8");
  o.model.set("hidden", "8");
  o.min_count = 1;
  o.batch_size = 16;
  o.epochs = 1;
  o.eval_every = 3;
  o.verbose = false;
  train_model(o);
  return o.run_dir;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What a reader of an SVG sees as text: every text node, joined by spaces
// (a title wrapped over two <text> lines reads as one).
std::string picture_text(const std::string& svg) {
  std::string out;
  for (size_t at = svg.find('>'); at != std::string::npos; at = svg.find('>', at + 1)) {
    const size_t end = svg.find('<', at);
    if (end == std::string::npos) break;
    const std::string text = svg.substr(at + 1, end - at - 1);
    if (text.find_first_not_of(" \n") != std::string::npos) out += (out.empty() ? "" : " ") + text;
  }
  return out;
}

// The value of the first `name="..."` after position `from` in an SVG.
std::string attribute(const std::string& svg, const std::string& name, size_t from = 0) {
  const size_t at = svg.find(" " + name + "=\"", from);
  if (at == std::string::npos) return "(no " + name + ")";
  const size_t start = at + name.size() + 3;
  return svg.substr(start, svg.find('"', start) - start);
}

double svg_width(const std::string& svg) { return std::stod(attribute(svg, "width", svg.find("<svg"))); }

// Every text node's content, one per <text>...</text> or <tspan>.
std::vector<std::string> text_nodes(const std::string& svg) {
  std::vector<std::string> out;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    out.push_back(svg.substr(start, svg.find('<', start) - start));
  }
  return out;
}

// An MTSA explanation made up without a model: two heads (forward and
// backward mask), weights that vary over the pairs, alignments that are
// distributions over the allowed keys, two features.
Explanation made_up_mtsa(const std::vector<std::string>& tokens) {
  Explanation e;
  e.encoder = "mtsa";
  e.tokens = tokens;
  e.original_length = static_cast<int64_t>(tokens.size());
  e.labels = {"ham", "spam"};
  e.probabilities = {0.2, 0.8};
  e.predicted = 1;
  const int64_t n = static_cast<int64_t>(tokens.size()), heads = 2, d = 2;
  std::vector<double> t2t, mask, align, s2t(static_cast<size_t>(n * d), 1.0 / static_cast<double>(n));
  for (int64_t c = 0; c < heads; ++c)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t keys = c == 0 ? i : n - 1 - i;
      for (int64_t j = 0; j < n; ++j) {
        const bool ok = c == 0 ? j < i : j > i;
        mask.push_back(ok);
        t2t.push_back(ok ? 0.5 + 0.4 * std::sin(static_cast<double>(i * n + j)) : 0.0);
        for (int64_t f = 0; f < d; ++f) align.push_back(ok ? 1.0 / static_cast<double>(keys) : 0.0);
      }
    }
  e.trace.record("token2token", from_vector(t2t, {1, heads, n, n}));
  e.trace.record("mask", from_vector(mask, {1, heads, n, n}));
  e.trace.record("alignment", from_vector(align, {1, heads, n, n, d}));
  e.trace.record("source2token", from_vector(s2t, {1, n, d}));
  return e;
}

std::vector<std::string> words_of(const std::string& sentence) {
  std::vector<std::string> out;
  std::istringstream in(sentence);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

const std::string kSpamSentence =
    "congratulations ! you have been selected to receive a free cruise , call now to claim your prize";

// At the README's width (900 px, or the picture's own when narrower) every
// label is at least 11 px and each heat map's grid at least 200 px across.
TEST(ExplainPicture, ShortSentenceIsLegibleAt900Px) {
  const std::string svg = render_explanation_svg(made_up_mtsa(words_of(kSpamSentence)));
  const double width = svg_width(svg);
  EXPECT_LE(width, 900) << "a sentence of 18 tokens fits the README's width";
  const double scale = std::min(1.0, 900 / width);
  double smallest = 1e9;
  for (size_t at = svg.find("font-size=\""); at != std::string::npos; at = svg.find("font-size=\"", at + 1))
    smallest = std::min(smallest, std::stod(svg.substr(at + 11)));
  EXPECT_GE(smallest * scale, 11) << "the smallest type, as read at 900 px";
  // The grey rectangle behind each map's cells is the map's full grid.
  const size_t grid = svg.find("fill=\"#d0d0d0\"/>");
  ASSERT_NE(grid, std::string::npos);
  const double grid_width = std::stod(attribute(svg, "width", svg.rfind("<rect", grid)));
  EXPECT_GE(grid_width * scale, 200) << "the heat map as read at 900 px";
}

TEST(ExplainPicture, SizedToItsContent) {
  const double short_width = svg_width(render_explanation_svg(made_up_mtsa(words_of("free cruise , call"))));
  const double long_width = svg_width(render_explanation_svg(made_up_mtsa(words_of(kSpamSentence))));
  EXPECT_LT(short_width, long_width) << "four tokens need a narrower picture than eighteen";
  EXPECT_GE(short_width, 600) << "the header and titles still have room";
  // A sentence of 60 tokens (--max-tokens' default) still fits one map to a row near the README's width.
  std::string sixty;
  for (int i = 0; i < 60; ++i) sixty += "word" + std::to_string(i) + " ";
  EXPECT_LE(svg_width(render_explanation_svg(made_up_mtsa(words_of(sixty)))), 1000);
}

TEST(ExplainPicture, LabelsAreWholeTokens) {
  const std::string longest = "supercalifragilisticexpialidocious";
  const std::string svg = render_explanation_svg(made_up_mtsa(words_of("congratulations , " + longest + " cruise")));
  const std::vector<std::string> texts = text_nodes(svg);
  // Each token labels the rows and the columns of both heads' two maps, and the source2token bars.
  EXPECT_EQ(std::count(texts.begin(), texts.end(), longest), 2 * 2 * 2 + 1);
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "congratulations"), 2 * 2 * 2 + 1);
  for (const std::string& text : texts)
    EXPECT_FALSE(text.size() >= 2 && text.compare(text.size() - 2, 2, "..") == 0) << "a cut label: " << text;
}

// The RNN and CNN baselines fuse context without attention weights: their
// picture shows the source2token readout on top of them.
TEST(ExplainPicture, AnEncoderWithoutAttentionWeightsShowsItsReadout) {
  const std::vector<std::string> tokens = words_of("free cruise , call now");
  Explanation e = made_up_mtsa(tokens);
  e.encoder = "multicnn";
  AttentionTrace readout_only;
  readout_only.record("source2token", e.trace.get("source2token"));
  e.trace = readout_only;
  const std::string svg = render_explanation_svg(e);
  EXPECT_THAT(svg, HasSubstr("source2token weights"));
  EXPECT_THAT(svg, HasSubstr("multicnn: its context fusion has no attention weights"));
  const std::vector<std::string> texts = text_nodes(svg);
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "cruise"), 1);  // the bars' label
}

TEST(ExplainPicture, EveryHeatMapHasAColourScale) {
  const std::string svg = render_explanation_svg(made_up_mtsa(words_of("free cruise , call now")));
  EXPECT_THAT(svg, HasSubstr("<linearGradient id=\"attn-shade\""));
  int scales = 0;
  for (size_t at = svg.find("<g class=\"colour-scale\""); at != std::string::npos;
       at = svg.find("<g class=\"colour-scale\"", at + 1)) {
    ++scales;
    const std::string scale = svg.substr(at, svg.find("</g>", at) - at);
    EXPECT_THAT(scale, HasSubstr("fill=\"url(#attn-shade)\""));
    EXPECT_THAT(scale, HasSubstr(">0</text>"));
    EXPECT_THAT(scale, HasSubstr(">masked</text>")) << "every head masks some pairs";
  }
  EXPECT_EQ(scales, 4) << "2 heads x (token2token, alignment)";
  EXPECT_THAT(svg, HasSubstr(">1</text>")) << "token2token weights lie on one scale, 0 to 1";
  EXPECT_THAT(svg, HasSubstr(">each row's largest</text>")) << "alignments are shaded row by row";
}

TEST(Explain, PictureOfTheForwardPassThatPredicted) {
  const std::string dir = test_data::fresh_dir();
  const std::string run_dir = trained_run(dir);
  const std::string curves = read_all(RunFiles{run_dir}.curves());
  EXPECT_THAT(curves, HasSubstr("training loss")) << "train keeps curves.svg in the run folder";
  EXPECT_THAT(curves, HasSubstr("dev accuracy"));

  SavedRun run = load_saved_run(run_dir);
  const std::string sentence = "the cat & alpha <sat> on the mat";
  const Explanation e = explain_sentence(run, sentence, 60);
  double total = 0;
  for (double p : e.probabilities) total += p;
  EXPECT_NEAR(total, 1.0, 1e-6);
  Example ex;
  ex.tokens = e.tokens;
  ex.label = 0;
  EvalOptions eo;
  eo.max_len = run.max_len;
  EXPECT_EQ(e.predicted, predict(*run.model, {ex}, run.vocab, eo).at(0).label) << "explain predicts as predict does";

  const std::string svg = render_explanation_svg(e);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("sentence: the cat &amp; alpha &lt; sat &gt; on the mat"));
  EXPECT_THAT(svg, HasSubstr("prediction: " + run.labels.at(static_cast<size_t>(e.predicted)) + " with probability"));
  EXPECT_THAT(picture_text(svg), HasSubstr("head 1 (forward mask): token2token"));
  EXPECT_THAT(picture_text(svg), HasSubstr("head 2 (backward mask): alignment"));
  EXPECT_THAT(picture_text(svg), HasSubstr("source2token weights"));
  EXPECT_THAT(picture_text(render_explanation_svg(e, {3})), HasSubstr("feature 3"));

  // A long sentence is cut, and the picture says so.
  std::string long_sentence;
  for (int i = 0; i < 70; ++i) long_sentence += "word" + std::to_string(i) + " ";
  const Explanation cut = explain_sentence(run, long_sentence, 60);
  EXPECT_EQ(cut.tokens.size(), 60u);
  EXPECT_THAT(picture_text(render_explanation_svg(cut)), HasSubstr("the first 60 of its 70 tokens"));

  // Bad input fails naming the problem.
  EXPECT_THAT(error_of([&] { explain_sentence(run, "  \t ", 60); }), HasSubstr("has no tokens"));
  EXPECT_THAT(error_of([&] { render_explanation_svg(e, {4}); }),
              HasSubstr("--feature 4 is out of range: the alignment weights have 4 features"));
  EXPECT_THAT(error_of([&] { load_saved_run(dir + "/no_such_run"); }), HasSubstr("is not a run folder"));
  auto command_error = [](const std::vector<std::string>& args) {
    try {
      run_explain_command(args);
    } catch (const std::exception& err) {
      return std::string(err.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(command_error({"--text", "alpha"}), HasSubstr("--run is required"));
  EXPECT_THAT(command_error({"--run", run_dir, "--text", " "}), HasSubstr("--text is empty"));
  EXPECT_THAT(command_error({"--run", dir + "/missing", "--text", "alpha"}), HasSubstr("is not a run folder"));
  EXPECT_THAT(command_error({"--run", run_dir, "--text", "alpha", "--feature", "-2"}), HasSubstr("feature"));
  EXPECT_EQ(run_explain_command({"--run", run_dir, "--text", "alpha cat", "--out", dir + "/pictures"}), 0);
  EXPECT_THAT(read_all(dir + "/pictures/sentence_1.svg"), HasSubstr("sentence: alpha cat"));
}

TEST(Plot, ReadsRunsAndRefusesBadLogs) {
  const std::string dir = test_data::fresh_dir();
  const std::string good = test_data::write(dir, "a/metrics.jsonl",
                                            "{\"accuracy\": 0.5, \"loss\": 0.7, \"step\": 10, \"train_loss\": 0.69}\n"
                                            "{\"accuracy\": 0.75, \"loss\": 0.5, \"step\": 20, \"train_loss\": 0.4}\n");
  test_data::write(dir, "b/metrics.jsonl", "{\"accuracy\": 0.6, \"step\": 10, \"train_loss\": 0.6}\n");
  const std::string svg = render_training_curves({read_metrics_log(good, "run a"),
                                                  read_metrics_log(dir + "/b/metrics.jsonl", "run b")});
  EXPECT_THAT(svg, HasSubstr("dev accuracy"));
  EXPECT_THAT(svg, HasSubstr("data-series=\"run a\""));
  EXPECT_THAT(svg, HasSubstr("data-series=\"run b\""));
  EXPECT_THAT(render_training_curves({read_metrics_log(good, "a")}, "loss"), HasSubstr("dev loss"));
  // A diverged run's null loss is left out of the line, not an error.
  const std::string diverged = test_data::write(dir, "d/metrics.jsonl",
                                                "{\"accuracy\": 0.5, \"step\": 1, \"train_loss\": 0.7}\n"
                                                "{\"accuracy\": 0.5, \"step\": 2, \"train_loss\": null}\n");
  EXPECT_TRUE(std::isnan(read_metrics_log(diverged, "d").evaluations.at(1).at("train_loss")));
  EXPECT_THAT(render_training_curves({read_metrics_log(diverged, "d")}), HasSubstr("dev accuracy"));
  EXPECT_EQ(metrics_json({{"loss", std::nan("")}, {"step", 3}}), "{\"loss\": null, \"step\": 3}");

  EXPECT_THAT(error_of([&] { read_metrics_log(dir + "/none/metrics.jsonl", "x"); }), HasSubstr("cannot read"));
  const std::string empty = test_data::write(dir, "e/metrics.jsonl", "");
  EXPECT_THAT(error_of([&] { read_metrics_log(empty, "e"); }), HasSubstr("holds no evaluations"));
  const std::string torn = test_data::write(dir, "t/metrics.jsonl", "{\"step\": 1, \"accuracy\": 0.5}\n{\"step\": 2, \"acc");
  EXPECT_THAT(error_of([&] { read_metrics_log(torn, "t"); }), HasSubstr("line 2 is not JSON"));
  const std::string text = test_data::write(dir, "s/metrics.jsonl", "{\"step\": 1, \"accuracy\": \"high\"}\n");
  EXPECT_THAT(error_of([&] { read_metrics_log(text, "s"); }), HasSubstr("\"accuracy\" is not a number"));
  const std::string no_step = test_data::write(dir, "n/metrics.jsonl", "{\"accuracy\": 0.5}\n");
  EXPECT_THAT(error_of([&] { read_metrics_log(no_step, "n"); }), HasSubstr("has no \"step\""));
  EXPECT_THAT(error_of([&] { render_training_curves({read_metrics_log(good, "a")}, "pearson"); }),
              HasSubstr("has no metric 'pearson'"));
}

// The axis ranges a chart drew, from its panels' plot areas: {lo, hi} of
// panel `panel`'s `axis` ("x" or "y").
std::pair<double, double> axis_range(const std::string& svg, int panel, const std::string& axis) {
  size_t at = svg.find("class=\"plot-area\"");
  for (int k = 0; k < panel && at != std::string::npos; ++k) at = svg.find("class=\"plot-area\"", at + 1);
  if (at == std::string::npos) return {std::nan(""), std::nan("")};
  std::istringstream in(attribute(svg, "data-" + axis + "-axis", at));
  std::pair<double, double> range{std::nan(""), std::nan("")};
  in >> range.first >> range.second;
  return range;
}

TEST(Plot, MetricAxisFollowsTheData) {
  const std::string dir = test_data::fresh_dir();
  const std::string log = test_data::write(dir, "a/metrics.jsonl",
                                           "{\"accuracy\": 0.80, \"step\": 25, \"train_loss\": 0.52}\n"
                                           "{\"accuracy\": 0.91, \"step\": 50, \"train_loss\": 0.31}\n"
                                           "{\"accuracy\": 0.95, \"step\": 75, \"train_loss\": 0.24}\n");
  const std::string svg = render_training_curves({read_metrics_log(log, "a")});
  const auto [lo, hi] = axis_range(svg, 1, "y");  // panel 1: dev accuracy
  EXPECT_GT(lo, 0.7) << "the axis is not stretched down to 0";
  EXPECT_LE(lo, 0.80);
  EXPECT_GE(hi, 0.95);
  EXPECT_LT(hi, 1.0);
  EXPECT_THAT(svg, HasSubstr(">0.85</text>")) << "ticks inside the data's range";
  const auto [loss_lo, loss_hi] = axis_range(svg, 0, "y");
  EXPECT_GT(loss_lo, 0.1);
  EXPECT_LE(loss_lo, 0.24);
  EXPECT_GE(loss_hi, 0.52);
  // A flat line still gets an axis around its value.
  const std::string flat = test_data::write(dir, "f/metrics.jsonl",
                                            "{\"accuracy\": 0.5, \"step\": 1}\n{\"accuracy\": 0.5, \"step\": 2}\n");
  const auto [flat_lo, flat_hi] = axis_range(render_training_curves({read_metrics_log(flat, "f")}), 1, "y");
  EXPECT_LT(flat_lo, 0.5);
  EXPECT_GT(flat_hi, 0.5);
}

TEST(Plot, StepAxisStartsAtZeroAndDrawsStepZero) {
  const std::string dir = test_data::fresh_dir();
  // The trainer's first evaluation is after --eval-every steps: the axis still starts where training did.
  const std::string later = test_data::write(dir, "a/metrics.jsonl",
                                             "{\"accuracy\": 0.6, \"step\": 40, \"train_loss\": 0.6}\n"
                                             "{\"accuracy\": 0.7, \"step\": 80, \"train_loss\": 0.5}\n");
  const std::string svg = render_training_curves({read_metrics_log(later, "a")});
  EXPECT_EQ(axis_range(svg, 0, "x").first, 0);
  EXPECT_EQ(axis_range(svg, 1, "x").first, 0);
  // An evaluation at step 0 (the model before training) is a point on the left edge.
  const std::string from_zero = test_data::write(dir, "z/metrics.jsonl",
                                                 "{\"accuracy\": 0.5, \"step\": 0}\n"
                                                 "{\"accuracy\": 0.7, \"step\": 80, \"train_loss\": 0.5}\n");
  const std::string zero_svg = render_training_curves({read_metrics_log(from_zero, "z")});
  const size_t dev_area = zero_svg.find("class=\"plot-area\"", zero_svg.find("class=\"plot-area\"") + 1);
  const size_t dev_line = zero_svg.find("<polyline", dev_area);
  ASSERT_NE(dev_line, std::string::npos);
  const std::string points = attribute(zero_svg, "points", dev_line);
  EXPECT_EQ(points.substr(0, points.find(',')), attribute(zero_svg, "x", zero_svg.rfind("<rect", dev_area)));
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 2) << "both evaluations are drawn: " << points;
}

TEST(Plot, DrawsTheStepLogWhereARunHasOne) {
  const std::string dir = test_data::fresh_dir();
  const std::string metrics = test_data::write(dir, "a/metrics.jsonl",
                                               "{\"accuracy\": 0.5, \"step\": 4, \"train_loss\": 0.69}\n"
                                               "{\"accuracy\": 0.75, \"step\": 8, \"train_loss\": 0.4}\n");
  const std::string steps = test_data::write(
      dir, "a/steps.jsonl",
      "{\"step\":2,\"epoch\":1,\"loss\":0.7,\"mean_loss\":0.7,\"grad_norm\":3.5,\"clipped\":false,\"lr\":0.001,"
      "\"examples_per_s\":900,\"tokens_per_s\":9000,\"allocator_bytes\":2097152}\n"
      "{\"step\":4,\"epoch\":1,\"loss\":0.5,\"mean_loss\":0.6,\"grad_norm\":7,\"clipped\":true,\"lr\":0.001,"
      "\"examples_per_s\":null,\"tokens_per_s\":null,\"allocator_bytes\":3145728}\n");
  const MetricsLog step_log = read_step_log(steps, "a");
  ASSERT_EQ(step_log.evaluations.size(), 2u);
  EXPECT_EQ(step_log.evaluations[0].at("clipped"), 0);
  EXPECT_EQ(step_log.evaluations[1].at("clipped"), 1);
  EXPECT_TRUE(std::isnan(step_log.evaluations[1].at("examples_per_s")));
  // A run without a step log (missing, or emptied by a resume before its
  // first logged step) has no lines, and alone plots as before: two panels.
  EXPECT_TRUE(read_step_log(dir + "/b/steps.jsonl", "b").evaluations.empty());
  const std::string empty = test_data::write(dir, "c/steps.jsonl", "");
  EXPECT_TRUE(read_step_log(empty, "c").evaluations.empty());
  const MetricsLog b = read_metrics_log(metrics, "b");
  const std::string without = render_training_curves({b}, "", {read_step_log(empty, "b")});
  EXPECT_TRUE(std::isnan(axis_range(without, 2, "x").first)) << "no third panel";
  EXPECT_THAT(without, Not(HasSubstr("gradient norm")));

  // With one: the step panels in two more rows, the steps' values on them;
  // the run without a log shares the legend.
  const std::string svg =
      render_training_curves({read_metrics_log(metrics, "a"), b}, "", {step_log, read_step_log(empty, "b")});
  for (const char* title : {"loss of each logged step", "gradient norm before clipping",
                            "training examples per second", "allocator memory in use"})
    EXPECT_THAT(svg, HasSubstr(title));
  EXPECT_THAT(svg, HasSubstr("width=\"900.0\"")) << "two columns, as wide as the plot without steps";
  EXPECT_EQ(axis_range(svg, 2, "x").first, 0) << "the step axes start at 0 too";
  const auto [loss_lo, loss_hi] = axis_range(svg, 2, "y");
  EXPECT_LE(loss_lo, 0.5);
  EXPECT_GE(loss_hi, 0.7);
  const auto [norm_lo, norm_hi] = axis_range(svg, 3, "y");
  EXPECT_LE(norm_lo, 3.5);
  EXPECT_GE(norm_hi, 7);
  const auto [mib_lo, mib_hi] = axis_range(svg, 5, "y");  // 2 and 3 MiB
  EXPECT_LE(mib_lo, 2.0);
  EXPECT_GE(mib_hi, 3.0);
  EXPECT_LT(mib_hi, 10.0) << "drawn in MiB, not bytes";
  EXPECT_THAT(error_of([&] { render_training_curves({b}, "", {step_log, step_log}); }),
              HasSubstr("2 step logs for 1 runs"));
  // A step log that is not one: named like a bad metrics.jsonl.
  const std::string text = test_data::write(dir, "d/steps.jsonl", "{\"step\": 1, \"loss\": \"low\"}\n");
  EXPECT_THAT(error_of([&] { read_step_log(text, "d"); }), HasSubstr("\"loss\" is not a number"));
}

TEST(Plot, UnknownMetricListsTheMetricsTheRunHas) {
  const std::string dir = test_data::fresh_dir();
  const std::string log = test_data::write(
      dir, "a/metrics.jsonl",
      "{\"accuracy\": 0.5, \"epoch\": 1, \"loss\": 0.7, \"macro_f1\": 0.4, \"step\": 10, \"train_loss\": 0.69}\n");
  const std::string message = error_of([&] { render_training_curves({read_metrics_log(log, "runs/a")}, "f1"); });
  EXPECT_THAT(message, HasSubstr("run 'runs/a' has no metric 'f1'"));
  EXPECT_THAT(message, HasSubstr("accuracy, loss, macro_f1, train_loss"));
  EXPECT_THAT(message, Not(HasSubstr("epoch"))) << "step and epoch are the x axis, not metrics";
  // A metric some evaluations lack names the step.
  const std::string gap = test_data::write(dir, "g/metrics.jsonl",
                                           "{\"accuracy\": 0.5, \"step\": 10}\n{\"loss\": 0.5, \"step\": 20}\n");
  EXPECT_THAT(error_of([&] { render_training_curves({read_metrics_log(gap, "g")}, "accuracy"); }),
              HasSubstr("run 'g' has no metric 'accuracy' at step 20"));
}

}  // namespace
}  // namespace attn

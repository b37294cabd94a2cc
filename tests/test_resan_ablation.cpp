// ReSAN's ablations (seed 004, Table 2): each variant removes what its row
// says, shown by a gradient that is exactly zero where the removed path was
// and, on the same inputs and selection, not zero in a model that has it.
// Also: what each variant builds, padding, empty sequences and config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "model_checks.h"
#include "seeded_encoder_context.h"
#include "test_util.h"
#include "attn/engine/copy.h"
#include "attn/models/masks.h"
#include "attn/models/resan.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/view/view.h"

namespace attn {
namespace {

using namespace testing_support;

ResanOptions tiny(ResaVariant v, bool bidirectional = false) {
  ResanOptions o;
  o.hidden = 3;
  o.rss_hidden = 3;
  o.variant = v;
  o.bidirectional = bidirectional;
  o.keep_prob = 1.0;
  o.activation = Activation::Elu;
  return o;
}

// A model in evaluation mode (rss_eval = threshold: a fixed selection).
// The model keeps a pointer to its noise generator, which the sampling of
// training mode draws from, so the generator lives with it.
class EvalModel {
 public:
  EvalModel(ResaVariant v, bool bidirectional) : noise_(std::make_unique<Generator>(4)) {
    Generator init(3);
    model_ = std::make_unique<Resan>(3, tiny(v, bidirectional), init, *noise_, DType::F64);
    model_->set_training(false);
  }
  Resan* operator->() const { return model_.get(); }
  Resan& operator*() const { return *model_; }

 private:
  std::unique_ptr<Generator> noise_;  // on the heap: it stays put when the handle moves
  std::unique_ptr<Resan> model_;
};

EvalModel eval_model(ResaVariant v, bool bidirectional = false) { return EvalModel(v, bidirectional); }

// d f(encode(x)) / d x for a fresh leaf copy of x.
Tensor input_gradient(Resan& model, const Tensor& x, const Tensor& mask,
                      const std::function<Tensor(const EncoderOutput&)>& f) {
  Tensor leaf = contiguous(x.detach());
  leaf.set_requires_grad(true);
  f(model.encode(leaf, mask)).backward();
  return leaf.grad();
}

double row_abs_sum(const Tensor& g, int64_t b, int64_t j) {
  double s = 0;
  for (int64_t k = 0; k < g.size(2); ++k) s += std::abs(g.at({b, j, k}));
  return s;
}

// Copies every parameter of `from` to the same-named one of `to`.
void copy_shared_parameters(const Module& from, Module& to) {
  auto dst = params_of(to);
  for (const auto& [name, p] : from.named_parameters())
    if (dst.count(name)) copy_into(dst.at(name), p.detach());
}

// Two examples of 6 and 5 tokens, every test's input.
struct Inputs {
  Tensor x = random_input({2, 6, 3}, 5).detach();
  Tensor mask = length_mask({6, 5}, 6);
};

// w/o unselected heads and w/o dependency restricted drop the unselected
// heads: a token that is neither a selected head nor a selected dependent
// no longer reaches the sentence. In the full model it does (its mean-pooled
// context and its gate output enter the readout).
TEST(ResanAblation, DroppedHeadsNoLongerReachTheSentence) {
  const Inputs in;
  const Tensor& kX = in.x;
  const Tensor& kMask = in.mask;
  auto full = eval_model(ResaVariant::Full);
  for (ResaVariant v : {ResaVariant::NoUnselectedHeads, ResaVariant::SharedRss}) {
    SCOPED_TRACE(resa_variant_name(v));
    auto model = eval_model(v);
    copy_shared_parameters(*model, *full);
    if (v == ResaVariant::SharedRss) {  // the full model's two RSS take the one RSS's weights
      for (const auto& [name, p] : model->named_parameters())
        if (name.rfind("rss.", 0) == 0)
          for (const char* to : {"rss_head.", "rss_dep."}) copy_into(params_of(*full).at(to + name.substr(4)), p.detach());
    }
    auto sentence = [](const EncoderOutput& o) { return sum(o.sentence); };
    Tensor g = input_gradient(*model, kX, kMask, sentence);
    const RssState s = model->last_selection();
    Tensor g_full = input_gradient(*full, kX, kMask, sentence);
    ASSERT_EQ(full->last_selection().z_head.to_vector(), s.z_head.to_vector());
    int neither = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 6; ++j) {
        if (kMask.at({b, j}) == 0 || s.z_head.at({b, j}) != 0 || s.z_dep.at({b, j}) != 0) continue;
        ++neither;
        EXPECT_EQ(row_abs_sum(g, b, j), 0.0) << "example " << b << " token " << j;
        EXPECT_GT(row_abs_sum(g_full, b, j), 0.0) << "example " << b << " token " << j;
      }
    ASSERT_GT(neither, 0) << "the selection must leave a token out of both roles";
  }
}

// w/o hard attention: no RSS, no policy, every token is head and dependent,
// so a head's output reads every other token. With RSS a head's output has
// exactly zero gradient at an unselected dependent.
TEST(ResanAblation, NoHardAttentionLetsEveryHeadReadEveryToken) {
  const Inputs in;
  const Tensor& kX = in.x;
  const Tensor& kMask = in.mask;
  auto model = eval_model(ResaVariant::NoHardAttention);
  EXPECT_FALSE(model->has_selection_policy());
  EXPECT_TRUE(model->rss_parameters().empty());
  for (const auto& [name, p] : model->named_parameters()) EXPECT_NE(name.rfind("rss", 0), 0u) << name;
  auto full = eval_model(ResaVariant::Full);
  copy_shared_parameters(*model, *full);

  int checked = 0;
  for (int64_t i = 0; i < 5; ++i) {
    auto token_i = [i](const EncoderOutput& o) { return sum(narrow(narrow(o.tokens, 0, 0, 1), 1, i, 1)); };
    Tensor g = input_gradient(*model, kX, kMask, token_i);
    Tensor g_full = input_gradient(*full, kX, kMask, token_i);
    const RssState s = full->last_selection();
    if (s.z_head.at({0, i}) == 0) continue;
    for (int64_t j = 0; j < 6; ++j) {
      if (j == i) continue;
      EXPECT_GT(row_abs_sum(g, 0, j), 0.0) << "head " << i << " token " << j;
      if (s.z_dep.at({0, j}) == 0) {
        ++checked;
        EXPECT_EQ(row_abs_sum(g_full, 0, j), 0.0) << "head " << i << " unselected dependent " << j;
      }
    }
  }
  ASSERT_GT(checked, 0) << "the full model must select a head and leave a dependent out";
  model->encode(kX, kMask);
  EXPECT_EQ(model->last_selection().z_head.to_vector(), kMask.to_vector());
  EXPECT_FALSE(model->policy_selection().log_pi.defined());

  // It is the full model with every token selected.
  full->set_select_all(true);
  EXPECT_LT(max_abs_diff(flat_outputs(model->encode(kX, kMask)), flat_outputs(full->encode(kX, kMask))), 1e-12);
}

// w/o soft self-attention: no token-to-token attention, so a token's output
// has zero gradient at every other token (the full model's does not), and
// the readout sees the RSS's selected tokens only.
TEST(ResanAblation, NoSoftSelfAttentionRelatesNoTokenPair) {
  const Inputs in;
  const Tensor& kX = in.x;
  const Tensor& kMask = in.mask;
  auto model = eval_model(ResaVariant::NoSoftSelfAttention);
  EXPECT_TRUE(model->has_selection_policy());
  EXPECT_EQ(model->token_dim(), 3);
  auto names = params_of(*model);
  for (const auto& [name, p] : names)
    EXPECT_TRUE(name.rfind("rss.", 0) == 0 || name.rfind("s2t.", 0) == 0) << name;
  auto full = eval_model(ResaVariant::Full);

  for (int64_t i = 0; i < 6; ++i) {
    auto token_i = [i](const EncoderOutput& o) { return sum(narrow(narrow(o.tokens, 0, 0, 1), 1, i, 1)); };
    Tensor g = input_gradient(*model, kX, kMask, token_i);
    for (int64_t j = 0; j < 6; ++j) {
      if (j == i) continue;
      EXPECT_EQ(row_abs_sum(g, 0, j), 0.0) << "token " << i << " at token " << j;
    }
  }
  auto last_token = [](const EncoderOutput& o) { return sum(narrow(narrow(o.tokens, 0, 0, 1), 1, 5, 1)); };
  Tensor g_full = input_gradient(*full, kX, kMask, last_token);
  double others = 0;
  for (int64_t j = 0; j < 5; ++j) others += row_abs_sum(g_full, 0, j);
  EXPECT_GT(others, 0.0);

  Tensor g = input_gradient(*model, kX, kMask, [](const EncoderOutput& o) { return sum(o.sentence); });
  const Tensor z = model->last_selection().z_head;
  EXPECT_EQ(z.to_vector(), model->last_selection().z_dep.to_vector());
  int selected = 0, dropped = 0;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 6; ++j) {
      if (kMask.at({b, j}) == 0) continue;
      if (z.at({b, j}) != 0) {
        ++selected;
        EXPECT_GT(row_abs_sum(g, b, j), 0.0);
      } else {
        ++dropped;
        EXPECT_EQ(row_abs_sum(g, b, j), 0.0) << "unselected token " << j << " of example " << b;
      }
    }
  ASSERT_GT(selected, 0);
  ASSERT_GT(dropped, 0);
}

// w/o all attentions: the sentence is the mean of x, so feature k of the
// sentence has gradient 1 / len at feature k of each valid token and exactly
// zero at every other feature; a source2token readout (here the one left in
// w/o soft self-attention, everything selected) mixes features.
TEST(ResanAblation, NoAttentionsAveragesEachFeatureOnItsOwn) {
  const Inputs in;
  const Tensor& kX = in.x;
  const Tensor& kMask = in.mask;
  auto model = eval_model(ResaVariant::NoAttentions);
  EXPECT_TRUE(model->named_parameters().empty());
  EXPECT_FALSE(model->has_selection_policy());
  auto s2t_only = eval_model(ResaVariant::NoSoftSelfAttention);
  s2t_only->set_select_all(true);
  for (int64_t k = 0; k < 3; ++k) {
    auto feature_k = [k](const EncoderOutput& o) { return sum(narrow(o.sentence, 1, k, 1)); };
    Tensor g = input_gradient(*model, kX, kMask, feature_k);
    Tensor g_s2t = input_gradient(*s2t_only, kX, kMask, feature_k);
    double mixed = 0;
    for (int64_t b = 0; b < 2; ++b) {
      const double len = b == 0 ? 6 : 5;
      for (int64_t j = 0; j < 6; ++j)
        for (int64_t f = 0; f < 3; ++f) {
          const double want = f == k && kMask.at({b, j}) != 0 ? 1.0 / len : 0.0;
          EXPECT_DOUBLE_EQ(g.at({b, j, f}), want) << "example " << b << " token " << j << " feature " << f;
          if (f != k) mixed += std::abs(g_s2t.at({b, j, f}));
        }
    }
    EXPECT_GT(mixed, 0.0) << "feature " << k;
  }
}

TEST(ResanAblation, NewVariantsIgnorePaddingAndSurviveEmptySequences) {
  for (ResaVariant v : {ResaVariant::NoHardAttention, ResaVariant::NoSoftSelfAttention, ResaVariant::NoAttentions}) {
    SCOPED_TRACE(resa_variant_name(v));
    auto model = eval_model(v);
    expect_padding_invariant(*model, random_input({3, 4, 3}, 6), length_mask({4, 2, 0}, 4));
    model->set_training(true);
    Tensor x = random_input({2, 3, 3}, 7);
    EncoderOutput out = model->encode(x, length_mask({0, 2}, 3));
    for (int64_t k = 0; k < model->sentence_dim(); ++k) EXPECT_EQ(out.sentence.at({0, k}), 0.0);
    sum(out.sentence).backward();
    for (double g : x.grad().to_vector()) ASSERT_TRUE(std::isfinite(g));
  }
}

TEST(ResanAblation, BuilderNamesTheVariantsAndWidths) {
  SeededEncoderContext ctx(3, 8, 9);
  for (const char* name : {"no_hard_attention", "no_soft_self_attention", "no_attentions"}) {
    Config c = Config::parse(std::string("hidden = 4\nresa_variant = ") + name + "\n");
    std::unique_ptr<Encoder> e = build_resan_encoder(c, ctx);
    c.check_all_used("resan");
    auto& model = static_cast<Resan&>(*e);
    EXPECT_STREQ(resa_variant_name(model.options().variant), name);
    EXPECT_EQ(e->sentence_dim(), std::string(name) == "no_hard_attention" ? 8 : 3) << name;
  }
  EXPECT_TRUE(has_hard_attention(ResaVariant::SharedRss));
  EXPECT_FALSE(has_hard_attention(ResaVariant::NoAttentions));
  EXPECT_TRUE(has_soft_self_attention(ResaVariant::NoHardAttention));
  EXPECT_FALSE(has_soft_self_attention(ResaVariant::NoSoftSelfAttention));
}

}  // namespace
}  // namespace attn

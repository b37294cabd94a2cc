// The translation model of seed 001 Table 6 (models/seq2seq_*.h): the causal
// fused attention against its composed form and against the causal order
// itself; float64 gradchecks of the cross-attention, the decoder layer and
// the whole model's label-smoothed loss; cached incremental decoding against
// the full teacher-forced pass; greedy decoding against step-by-step argmax
// of the full pass; beam search against exhaustive search; source padding;
// float32 finiteness; label smoothing and the learning-rate schedule
// against their formulas.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "attn/engine/autograd.h"
#include "attn/engine/copy.h"
#include "attn/models/masks.h"
#include "attn/models/multi_head.h"
#include "attn/models/seq2seq_search.h"
#include "attn/models/seq2seq_transformer.h"
#include "attn/nn/gradcheck_module.h"
#include "attn/ops/binary/binary.h"
#include "attn/ops/dot_product_attention/dot_product_attention.h"
#include "attn/ops/gradcheck.h"
#include "attn/ops/loss/loss_label_smoothing.h"
#include "attn/ops/loss/loss.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/softmax/softmax.h"
#include "attn/ops/view/view.h"
#include "attn/train/optim/lr_schedule.h"
#include "model_checks.h"
#include "test_util.h"

namespace attn {
namespace {

using namespace testing_support;

Seq2SeqOptions tiny_options(EncoderSelfAttention attention = EncoderSelfAttention::MultiHead) {
  Seq2SeqOptions o;
  o.vocab_size = 7;
  o.hidden = 8;
  o.heads = 2;
  o.encoder_layers = 2;
  o.decoder_layers = 2;
  o.filter = 6;
  o.prepostprocess_keep = o.attention_keep = o.relu_keep = 1.0;
  o.encoder_attention = attention;
  return o;
}

Tensor ids(const std::vector<int64_t>& values, int64_t rows) {
  return from_indices(values, {rows, static_cast<int64_t>(values.size()) / rows});
}

// Full-Jacobian float64 gradcheck of f over `inputs` (leaves) and the
// module's parameters; every parameter must get some gradient.
void expect_module_gradcheck(const Module& m, const std::vector<Tensor>& inputs, const std::function<Tensor()>& f) {
  OpCase c;
  c.label = "seq2seq";
  c.inputs = inputs;
  for (const Tensor& p : m.parameters()) c.inputs.push_back(p);
  c.fn = [f](const std::vector<Tensor>&) { return f(); };
  const CaseResult r = gradcheck_case(c, Tolerance{});
  EXPECT_TRUE(r.passed) << r.failure << " (max abs error " << r.max_abs_error << ")";
  Tensor y = f();
  Generator g(5);
  y.backward(rand_uniform(y.shape(), -1, 1, g, y.dtype()));
  for (const auto& [name, p] : m.named_parameters()) {
    EXPECT_GT(max_abs(p.grad().defined() ? p.grad() : zeros({1}, DType::F64)), 0.0)
        << "parameter '" << name << "' gets no gradient";
    p.zero_grad();
  }
  for (const Tensor& x : inputs) {
    EXPECT_GT(max_abs(x.grad()), 0.0) << "an input gets no gradient";
    x.zero_grad();
  }
}

// ---- causal_dot_product_attention ----

TEST(CausalAttention, FusedMatchesComposedInBothDtypesWithGradients) {
  for (DType dt : {DType::F64, DType::F32}) {
    for (int64_t nq : {int64_t{37}, int64_t{5}}) {
      const int64_t nk = 37, d = 6;
      std::vector<Tensor> leaves;
      for (uint64_t i = 0; i < 3; ++i)
        leaves.push_back(cast(random_input({2, 2, i == 0 ? nq : nk, d}, 40 + i), dt).detach().set_requires_grad(true));
      const Tensor valid = length_mask({37, 20}, nk);
      const Tensor w = cast(random_input({2, 2, nq, d}, 50), dt).detach();
      std::vector<Tensor> outs, grads;
      for (bool fused : {true, false}) {
        for (const Tensor& t : leaves) t.zero_grad();
        const DotProductAttention a =
            fused ? causal_dot_product_attention(leaves[0], leaves[1], leaves[2], valid, 0.4)
                  : causal_dot_product_attention_composed(leaves[0], leaves[1], leaves[2], valid, 0.4);
        sum(a.out * w).backward();
        outs.push_back(a.out.detach());
        outs.push_back(a.probabilities);
        for (const Tensor& t : leaves) grads.push_back(t.grad());
      }
      // Each result is a sum of at most nk = 37 products of values in
      // [-1, 1] and probabilities; two summation orders differ by at most
      // about nk roundings of the largest partial sum (<= 37 * 3 * 2.2).
      const double eps = dt == DType::F64 ? std::numeric_limits<double>::epsilon()
                                          : std::numeric_limits<float>::epsilon();
      const double tol = 4 * nk * eps * 37 * 3 * 2.2;
      EXPECT_LE(max_abs_diff(outs[0], outs[2]), tol);
      EXPECT_LE(max_abs_diff(outs[1], outs[3]), tol);
      for (int i = 0; i < 3; ++i) EXPECT_LE(max_abs_diff(grads[i], grads[3 + i]), tol) << "gradient " << i;
      EXPECT_GT(max_abs(grads[1]), 0.0);
    }
  }
}

TEST(CausalAttention, LaterKeysReachNoEarlierQuery) {
  const int64_t n = 6;
  Tensor q = random_input({1, 2, n, 4}, 60), k = random_input({1, 2, n, 4}, 61), v = random_input({1, 2, n, 4}, 62);
  const Tensor valid = ones({1, n}, DType::U8);
  const Tensor base = causal_dot_product_attention(q, k, v, valid, 0.5).out;
  // Overwrite keys and values from position 3 on (NaN included): rows 0..2 keep their values exactly.
  Tensor k2 = clone(k.detach()), v2 = clone(v.detach());
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 3; i < n; ++i)
      for (int64_t l = 0; l < 4; ++l) {
        k2.data<double>()[((c * n) + i) * 4 + l] = std::nan("");
        v2.data<double>()[((c * n) + i) * 4 + l] = 100.0;
      }
  const Tensor changed = causal_dot_product_attention(q, k2, v2, valid, 0.5).out;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t l = 0; l < 4; ++l) EXPECT_EQ(base.at({0, c, j, l}), changed.at({0, c, j, l}));
  // Position 0 attends itself only: its output is its own value.
  for (int64_t l = 0; l < 4; ++l) EXPECT_NEAR(base.at({0, 1, 0, l}), v.at({0, 1, 0, l}), 1e-15);
}

TEST(CausalAttention, OneLastQueryAttendsEveryKey) {
  Tensor q = random_input({2, 2, 1, 3}, 63), k = random_input({2, 2, 5, 3}, 64), v = random_input({2, 2, 5, 3}, 65);
  const Tensor valid = length_mask({5, 3}, 5);
  EXPECT_LE(max_abs_diff(causal_dot_product_attention(q, k, v, valid, 0.7).out,
                         dot_product_attention(q, k, v, valid, 0.7).out),
            1e-15);
  EXPECT_THAT(error_of([&] { causal_dot_product_attention(k, q, q, length_mask({1, 1}, 1), 1.0); }),
              ::testing::HasSubstr("queries must be the last positions"));
}

// ---- gradchecks ----

TEST(Seq2Seq, GradcheckCrossAttentionWithSourcePadding) {
  Generator init(1), noise(2);
  SequenceAttention attn(4, 2, 1.0, init, noise, DType::F64);
  Tensor x = random_input({2, 3, 4}, 3), memory = random_input({2, 5, 4}, 4);
  const Tensor valid = length_mask({5, 2}, 5);
  expect_module_gradcheck(attn, {x, memory}, [&] { return attn.forward(x, memory, valid, false); });
}

// With attention dropout on, the weights come from the masked softmax
// instead of the fused kernels; at keep probability 1 - 1e-9 nothing is
// dropped (about 1e-7 odds over these weights) and the kept ones are
// scaled by 1 / keep, so both paths agree to ~1e-9 relative: the same keys
// are attended, causal and padded alike.
TEST(Seq2Seq, AttentionDropoutPathAttendsTheKeysTheFusedPathDoes) {
  for (bool causal : {true, false}) {
    Generator init(24), noise(25);
    SequenceAttention attn(4, 2, 1.0 - 1e-9, init, noise, DType::F64);
    const Tensor x = random_input({2, 5, 4}, 26), memory = causal ? x : random_input({2, 5, 4}, 27);
    const Tensor valid = length_mask({5, 3}, 5);
    attn.set_training(false);
    const Tensor fused = attn.forward(x, memory, valid, causal);
    attn.set_training(true);
    const Tensor composed = attn.forward(x, memory, valid, causal);
    EXPECT_LE(max_abs_diff(fused, composed), 1e-8 * std::max(1.0, max_abs(fused))) << (causal ? "causal" : "cross");
  }
}

TEST(Seq2Seq, GradcheckDecoderLayer) {
  Seq2SeqOptions o = tiny_options();
  o.hidden = 4;
  o.filter = 3;
  Generator init(5), noise(6);
  Seq2SeqDecoderLayer layer(o, init, noise, DType::F64);
  Tensor y = random_input({2, 3, 4}, 7), memory = random_input({2, 4, 4}, 8);
  const Tensor target_valid = ones({2, 3}, DType::U8), source_valid = length_mask({4, 1}, 4);
  expect_module_gradcheck(layer, {y, memory},
                          [&] { return layer.forward(y, target_valid, memory, source_valid); });
}

TEST(Seq2Seq, GradcheckLabelSmoothedLossOfTheWholeModelBothEncoders) {
  for (EncoderSelfAttention a : {EncoderSelfAttention::MultiHead, EncoderSelfAttention::Mtsa}) {
    Seq2SeqOptions o = tiny_options(a);
    o.hidden = 4;
    o.filter = 3;
    o.encoder_layers = o.decoder_layers = 1;
    Generator init(9), noise(10);
    Seq2SeqTransformer model(o, init, noise, DType::F64);
    model.set_training(false);
    const Tensor source = ids({2, 3, 4, 5, 3, 0}, 2), target = ids({4, 2, 1, 3, 1, 0}, 2);
    // Sampled elements of every parameter (the full Jacobian of all of them
    // takes seconds): each parameter tensor gets 2 central differences.
    ModuleGradcheckOptions go;
    go.check.samples = 2;
    const ModuleGradcheckResult r = gradcheck_module(
        model, [&] { return label_smoothed_cross_entropy(model.forward(source, target), target, 0.1, 0); }, go);
    EXPECT_TRUE(r.result.passed) << encoder_self_attention_name(a) << ": " << r.result.failure;
    EXPECT_GT(r.result.checked, 30);
  }
}

// ---- decoding ----

// The teacher-forced logits of the full pass and of the cached steps agree.
void expect_cache_matches_full_pass(DType dt, EncoderSelfAttention a) {
  Generator init(11), noise(12);
  Seq2SeqTransformer model(tiny_options(a), init, noise, dt);
  model.set_training(false);
  NoGrad no_grad;
  const Tensor source = ids({2, 3, 4, 5, 3, 6, 0, 0}, 2), target = ids({4, 2, 5, 1, 3, 6, 1, 0}, 2);
  const Tensor full = cast(model.forward(source, target), DType::F64);
  DecoderCache cache = model.start(model.encode(source), source);
  double worst = 0, largest = 0;
  for (int64_t t = 0; t < target.size(1); ++t) {
    const Tensor previous = t == 0 ? zeros({2}, DType::I64) : contiguous(squeeze(narrow(target, 1, t - 1, 1), 1));
    const Tensor step = cast(model.step(previous, cache), DType::F64);
    worst = std::max(worst, max_abs_diff(step, squeeze(narrow(full, 1, t, 1), 1)));
    largest = std::max(largest, max_abs(step));
  }
  // Both passes do the same arithmetic but for the summation order of the
  // attention (over at most 4 keys) and of the products over D = 8 or
  // filter 6 features; each of the 2 + 2 layers' ~10 reductions adds a few
  // roundings of values of order 10, amplified at most ~10x by the layer
  // norms: 1e4 roundings of the largest logit bounds it.
  const double eps = dt == DType::F64 ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
  EXPECT_LE(worst, 1e4 * eps * std::max(1.0, largest)) << dtype_name(dt) << " " << encoder_self_attention_name(a);
}

TEST(Seq2Seq, CachedStepsGiveTheLogitsOfTheFullPass) {
  for (DType dt : {DType::F64, DType::F32})
    for (EncoderSelfAttention a : {EncoderSelfAttention::MultiHead, EncoderSelfAttention::Mtsa})
      expect_cache_matches_full_pass(dt, a);
}

// A zero row for eos_id gives it logit 0, below the best of the others'
// random logits at most steps: decoded sentences run for several words
// instead of ending at once, so the searches are tested on real choices.
void quiet_eos(const Seq2SeqTransformer& model) {
  Tensor table = params_of(model)["embedding"];
  for (int64_t l = 0; l < table.size(1); ++l) table.data<double>()[model.options().eos_id * table.size(1) + l] = 0;
}

// Greedy decoding takes, at every step, the argmax of the full pass over the
// words so far, with or without the cache.
TEST(Seq2Seq, GreedyEqualsArgmaxOfTheFullPassAndBeamOfOne) {
  Generator init(13), noise(14);
  Seq2SeqTransformer model(tiny_options(), init, noise, DType::F64);
  model.set_training(false);
  quiet_eos(model);
  const Tensor source = ids({2, 3, 4, 5, 6, 2}, 2);
  const int64_t max_length = 6;
  const std::vector<WordIds> greedy = greedy_decode(model, source, max_length);
  NoGrad no_grad;
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor one = narrow(source, 0, b, 1);
    WordIds words;
    for (int64_t t = 0; t < max_length; ++t) {
      std::vector<int64_t> prefix = words;
      prefix.push_back(0);  // the position to predict
      const Tensor logits = model.forward(one, ids(prefix, 1));
      int64_t best = -1;  // the first largest logit but padding's
      for (int64_t v = 0; v < model.options().vocab_size; ++v)
        if (v != model.options().pad_id && (best < 0 || logits.at({0, t, v}) > logits.at({0, t, best}))) best = v;
      if (best == model.options().eos_id) break;
      words.push_back(best);
    }
    EXPECT_EQ(greedy[b], words) << "sentence " << b;
    EXPECT_GE(words.size(), 2u) << "sentence " << b << " checks too few steps";
  }
  GreedyOptions uncached;
  uncached.max_length = max_length;
  uncached.use_cache = false;
  EXPECT_EQ(greedy_decode(model, source, uncached), greedy);
  GreedyOptions fixed = uncached;
  fixed.stop_at_eos = false;
  for (bool use_cache : {true, false}) {
    fixed.use_cache = use_cache;
    for (const WordIds& w : greedy_decode(model, source, fixed)) EXPECT_EQ(w.size(), static_cast<size_t>(max_length));
  }
  BeamSearchOptions one;
  one.beam_size = 1;
  one.max_length = max_length;
  EXPECT_EQ(beam_search(model, source, one), greedy);
}

// Log probability of `words` then eos_id under the full pass.
double sentence_log_prob(const Seq2SeqTransformer& model, const Tensor& source, WordIds words) {
  words.push_back(model.options().eos_id);
  NoGrad no_grad;
  const Tensor lp = log_softmax(model.forward(source, ids(words, 1)), -1);
  double total = 0;
  for (size_t t = 0; t < words.size(); ++t) total += lp.at({0, static_cast<int64_t>(t), words[t]});
  return total;
}

TEST(Seq2Seq, WideBeamFindsTheExhaustiveBest) {
  // Vocabulary: pad 0, eos 1, words 2, 3: 1 + 2 + 4 sentences end by length 3.
  Seq2SeqOptions o = tiny_options();
  o.vocab_size = 4;
  int longer = 0;  // cases whose best is not the empty sentence
  for (uint64_t seed = 15; seed < 23; ++seed) {
    Generator init(seed), noise(seed + 100);
    Seq2SeqTransformer model(o, init, noise, DType::F64);
    model.set_training(false);
    // eos_id's row is word 2's, sharpened: the two share every logit, so
    // whether a sentence ends is a real choice at every step.
    Tensor table = params_of(model)["embedding"];
    for (int64_t i = 0; i < table.numel(); ++i) table.data<double>()[i] *= 3.0;
    for (int64_t l = 0; l < o.hidden; ++l) table.data<double>()[o.eos_id * o.hidden + l] = table.at({2, l});
    const Tensor source = ids({2, 3, 3}, 1);
    BeamSearchOptions bo;
    bo.beam_size = 9;  // every live prefix survives
    bo.max_length = 3;
    WordIds best;
    double best_score = -std::numeric_limits<double>::infinity();
    std::vector<WordIds> all{{}};
    for (int len = 1; len <= 2; ++len)
      for (int64_t code = 0; code < (1 << len); ++code) {
        WordIds w;
        for (int i = 0; i < len; ++i) w.push_back(2 + ((code >> i) & 1));
        all.push_back(w);
      }
    for (const WordIds& w : all) {
      const double score =
          sentence_log_prob(model, source, w) / length_penalty(static_cast<int64_t>(w.size()) + 1, bo.alpha);

      if (score > best_score) {
        best_score = score;
        best = w;
      }
    }
    EXPECT_EQ(beam_search(model, source, bo)[0], best) << "seed " << seed;
    longer += !best.empty();
  }
  EXPECT_GE(longer, 2);
}

TEST(Seq2Seq, SourcePaddingChangesNoOutput) {
  for (EncoderSelfAttention a : {EncoderSelfAttention::MultiHead, EncoderSelfAttention::Mtsa}) {
    Generator init(18), noise(19);
    Seq2SeqTransformer model(tiny_options(a), init, noise, DType::F64);
    model.set_training(false);
    const Tensor alone = ids({3, 4, 5}, 1), batch = ids({3, 4, 5, 0, 0, 2, 6, 5, 4, 3}, 2);
    const Tensor target = ids({4, 2, 1}, 1);
    NoGrad no_grad;
    const Tensor batch_target = ids({4, 2, 1, 5, 2, 1}, 2);
    const Tensor l1 = model.forward(alone, target), l2 = narrow(model.forward(batch, batch_target), 0, 0, 1);
    EXPECT_LE(max_abs_diff(l1, l2), 1e-12) << encoder_self_attention_name(a);
    BeamSearchOptions bo;
    bo.max_length = 5;
    EXPECT_EQ(beam_search(model, alone, bo)[0], beam_search(model, batch, bo)[0]);
    EXPECT_EQ(greedy_decode(model, alone, 5)[0], greedy_decode(model, batch, 5)[0]);
  }
}

TEST(Seq2Seq, Float32ForwardAndBackwardAreFiniteWithDropoutAndAnEmptySource) {
  for (EncoderSelfAttention a : {EncoderSelfAttention::MultiHead, EncoderSelfAttention::Mtsa}) {
    Seq2SeqOptions o = tiny_options(a);
    o.prepostprocess_keep = o.attention_keep = o.relu_keep = 0.9;
    Generator init(20), noise(21);
    Seq2SeqTransformer model(o, init, noise, DType::F32);
    model.set_training(true);
    // The second source is all padding: its decoder attends no source key.
    const Tensor source = ids({2, 3, 4, 5, 0, 0, 0, 0}, 2), target = ids({4, 2, 5, 1, 1, 0, 0, 0}, 2);
    const Tensor loss = label_smoothed_cross_entropy(model.forward(source, target), target, 0.1, 0);
    ASSERT_TRUE(std::isfinite(loss.item()));
    loss.backward();
    for (const auto& [name, p] : model.named_parameters()) {
      ASSERT_TRUE(p.grad().defined()) << name;
      for (double g : p.grad().to_vector()) ASSERT_TRUE(std::isfinite(g)) << name;
    }
    model.set_training(false);
    BeamSearchOptions bo;
    bo.max_length = 3;
    EXPECT_EQ(beam_search(model, source, bo).size(), 2u);  // no NaN to trip the search
  }
}

TEST(Seq2Seq, BadInputsFailWithTheirName) {
  Generator init(22), noise(23);
  Seq2SeqOptions o = tiny_options();
  o.heads = 3;
  EXPECT_THAT(error_of([&] { Seq2SeqTransformer m(o, init, noise); }), ::testing::HasSubstr("multiple of heads"));
  o = tiny_options();
  o.eos_id = 0;
  EXPECT_THAT(error_of([&] { Seq2SeqTransformer m(o, init, noise); }), ::testing::HasSubstr("distinct"));
  Seq2SeqTransformer model(tiny_options(), init, noise);
  EXPECT_THAT(error_of([&] { model.encode(zeros({2, 3})); }), ::testing::HasSubstr("source must be int64"));
  BeamSearchOptions bo;
  EXPECT_THAT(error_of([&] { beam_search(model, ids({2, 3}, 1), bo); }), ::testing::HasSubstr("max_length"));
  bo.max_length = 3;
  bo.beam_size = 0;
  EXPECT_THAT(error_of([&] { beam_search(model, ids({2, 3}, 1), bo); }), ::testing::HasSubstr("beam_size"));
  Config c;
  c.set("encoder_attention", "lstm");
  EXPECT_THAT(error_of([&] { seq2seq_options(c, 7, 0, 1); }), ::testing::HasSubstr("encoder_attention"));
}

// ---- the loss and the schedule ----

TEST(LabelSmoothing, MatchesTheSmoothedDistributionsCrossEntropyMinusItsEntropy) {
  const Tensor logits = random_input({2, 3, 5}, 24);
  const Tensor target = ids({1, 4, 0, 2, 0, 3}, 2);  // 0 = padding, ignored
  const double eps = 0.1, low = eps / 4, conf = 1 - eps;
  const double entropy = -(conf * std::log(conf) + 4 * low * std::log(low));
  double total = 0;
  int count = 0;
  const Tensor lp = log_softmax(logits, -1);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t) {
      const int64_t y = target.at({b, t}) == 0 ? -1 : static_cast<int64_t>(target.at({b, t}));
      if (y < 0) continue;
      double ce = 0;
      for (int64_t v = 0; v < 5; ++v) ce -= (v == y ? conf : low) * lp.at({b, t, v});
      total += ce - entropy;
      ++count;
    }
  EXPECT_NEAR(label_smoothed_cross_entropy(logits, target, eps, 0).item(), total / count, 1e-13);
  CrossEntropyOptions plain;
  plain.ignore_index = 0;
  EXPECT_NEAR(label_smoothed_cross_entropy(logits, target, 0.0, 0).item(), cross_entropy(logits, target, plain).item(),
              1e-13);
  EXPECT_EQ(label_smoothed_cross_entropy(logits, zeros({2, 3}, DType::I64), eps, 0).item(), 0.0);
  EXPECT_THAT(error_of([&] { label_smoothed_cross_entropy(logits, target, 1.0, 0); }),
              ::testing::HasSubstr("smoothing"));
}

TEST(LrSchedule, RsqrtWarmupRisesLinearlyPeaksAndDecaysAsTheInverseSquareRoot) {
  LrSchedule s;
  s.kind = lr_schedule_from_name("rsqrt_warmup");
  s.learning_rate = 0.2;
  s.warmup_steps = 8000;
  s.hidden = 512;
  const double peak = 0.2 * 10 / std::sqrt(512.0 * 8000.0);
  EXPECT_NEAR(s.at(7999), peak, 1e-15);
  EXPECT_NEAR(s.at(3999), peak / 2, 1e-15);  // linear: step 4000 of 8000
  EXPECT_NEAR(s.at(31999), peak / 2, 1e-15);  // 1/sqrt: 4x the warm-up steps
  EXPECT_LT(s.at(8000), peak);
  LrSchedule constant;
  constant.learning_rate = 0.01;
  EXPECT_EQ(constant.at(123), 0.01);
  EXPECT_THAT(error_of([] { lr_schedule_from_name("cosine"); }), ::testing::HasSubstr("unknown schedule"));
  s.warmup_steps = 0;
  EXPECT_THAT(error_of([&] { s.at(1); }), ::testing::HasSubstr("warmup_steps"));
}

}  // namespace
}  // namespace attn
